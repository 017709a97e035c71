//! Calendar arithmetic on DATE values (days since 1970-01-01) and TIMESTAMP values
//! (microseconds since 1970-01-01 00:00:00, no time zone), proleptic Gregorian, in integers
//! only. The same algorithms are CUDA device functions in codegen's prelude.cu (`ts_*`), so
//! CPU and GPU agree.

/// Days since 1970-01-01 for a civil date (H. Hinnant's days_from_civil).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// Civil date (year, month, day) of days since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

pub fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

pub fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(y) => 29,
        _ => 28,
    }
}

/// Adds months to a date, clamping the day to the target month's length (PostgreSQL/DuckDB).
pub fn add_months(days: i64, months: i64) -> i64 {
    let (y, m, d) = civil_from_days(days);
    let total = y * 12 + (m as i64 - 1) + months;
    let ny = total.div_euclid(12);
    let nm = (total.rem_euclid(12) + 1) as u32;
    days_from_civil(ny, nm, d.min(days_in_month(ny, nm)))
}

/// Parses `YYYY-MM-DD`.
pub fn parse_date(s: &str) -> Option<i64> {
    let mut it = s.trim().splitn(3, '-');
    let y: i64 = it.next()?.parse().ok()?;
    // Far beyond any DATE (i32 days) or TIMESTAMP; keeps the arithmetic below in range.
    if y.abs() > 10_000_000 {
        return None;
    }
    let m: u32 = it.next()?.parse().ok()?;
    let d: u32 = it.next()?.parse().ok()?;
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some(days_from_civil(y, m, d))
}

/// DuckDB's text of a date: `YYYY-MM-DD`, years before 1 as `0001-03-01 (BC)` (year 0 is
/// 1 BC).
pub fn format_date(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    if y <= 0 {
        return format!("{:04}-{m:02}-{d:02} (BC)", 1 - y);
    }
    format!("{y:04}-{m:02}-{d:02}")
}

/// The months' English names (monthname(), SSB's d_month).
pub const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

pub const MICROS_PER_SECOND: i64 = 1_000_000;
pub const MICROS_PER_MINUTE: i64 = 60 * MICROS_PER_SECOND;
pub const MICROS_PER_HOUR: i64 = 60 * MICROS_PER_MINUTE;
pub const MICROS_PER_DAY: i64 = 24 * MICROS_PER_HOUR;

/// A timestamp as (days since 1970-01-01, microseconds into that day); floors, so
/// 1969-12-31 23:59:59.5 is day -1 at 23:59:59.5, not day 0.
pub fn split_timestamp(us: i64) -> (i64, i64) {
    (us.div_euclid(MICROS_PER_DAY), us.rem_euclid(MICROS_PER_DAY))
}

/// `days` + `micros` as a timestamp, None outside the i64 range (computed in i128 so no
/// intermediate step overflows; the GPU's `ts_make` does the same).
pub fn make_timestamp(days: i64, micros: i128) -> Option<i64> {
    i64::try_from(days as i128 * MICROS_PER_DAY as i128 + micros).ok()
}

/// Midnight of a date.
pub fn timestamp_from_date(days: i64) -> Option<i64> {
    make_timestamp(days, 0)
}

/// Parses `YYYY-MM-DD[( |T)HH:MM[:SS[.ffffff]]]` (DuckDB's TIMESTAMP text without a time
/// zone: 1- or 2-digit time fields, digits past the sixth fractional one dropped, 24:00:00
/// allowed as the next midnight). None where the text is not such a timestamp.
pub fn parse_timestamp(s: &str) -> Option<i64> {
    let s = s.trim();
    let (date_text, time_text) = match s.find([' ', 'T']) {
        Some(i) => (&s[..i], s[i + 1..].trim_start()),
        None => (s, ""),
    };
    let days = parse_date(date_text)?;
    if date_text.starts_with(['+', ' ']) {
        return None;
    }
    if time_text.is_empty() {
        return if s.len() == date_text.len() { timestamp_from_date(days) } else { None };
    }
    let (hms, frac) = match time_text.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (time_text, None),
    };
    let field = |t: &str| -> Option<i64> {
        if t.is_empty() || t.len() > 2 || !t.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    let parts: Vec<&str> = hms.split(':').collect();
    let (h, m, sec) = match parts.as_slice() {
        [h, m] if frac.is_none() => (field(h)?, field(m)?, 0),
        [h, m, sec] => (field(h)?, field(m)?, field(sec)?),
        _ => return None,
    };
    let mut micros = 0i64;
    if let Some(f) = frac {
        if !f.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        // Microsecond precision: further digits are dropped (DuckDB truncates too).
        for (i, b) in f.bytes().take(6).enumerate() {
            micros += (b - b'0') as i64 * 10i64.pow(5 - i as u32);
        }
    }
    let end_of_day = h == 24 && m == 0 && sec == 0 && micros == 0;
    if !(h < 24 || end_of_day) || m > 59 || sec > 59 {
        return None;
    }
    make_timestamp(days, (h * MICROS_PER_HOUR + m * MICROS_PER_MINUTE + sec * MICROS_PER_SECOND + micros) as i128)
}

/// DuckDB's text of a timestamp: `YYYY-MM-DD HH:MM:SS`, then the fraction of a second
/// only where it is not zero, without trailing zeros (`2024-01-05 10:30:00.5`).
pub fn format_timestamp(us: i64) -> String {
    let (days, t) = split_timestamp(us);
    let (h, m, s, f) =
        (t / MICROS_PER_HOUR, t / MICROS_PER_MINUTE % 60, t / MICROS_PER_SECOND % 60, t % MICROS_PER_SECOND);
    let mut out = format!("{} {h:02}:{m:02}:{s:02}", format_date(days));
    if f != 0 {
        out.push_str(format!(".{f:06}").trim_end_matches('0'));
    }
    out
}

/// A timestamp plus an interval of months, days and microseconds (each may be negative):
/// the months move the date, clamping the day to the month's length and keeping the time
/// of day (DuckDB), then the days and microseconds are added. None outside the range.
pub fn add_interval(us: i64, months: i32, days: i32, micros: i64) -> Option<i64> {
    let (d, t) = split_timestamp(us);
    let d = if months != 0 { add_months(d, months as i64) } else { d };
    make_timestamp(d, t as i128 + days as i128 * MICROS_PER_DAY as i128 + micros as i128)
}

/// Day of the week, 0 = Sunday (1970-01-01 was a Thursday).
pub fn day_of_week(days: i64) -> i64 {
    (days + 4).rem_euclid(7)
}

/// ISO day of the week, 1 = Monday.
pub fn iso_day_of_week(days: i64) -> i64 {
    (days + 3).rem_euclid(7) + 1
}

/// (ISO year, ISO week) of a day: the week's Thursday decides the year (as prelude.cu's
/// `ts_part`).
pub fn iso_week(days: i64) -> (i64, i64) {
    let thursday = days - (iso_day_of_week(days) - 1) + 3;
    let (y, _, _) = civil_from_days(thursday);
    (y, (thursday - days_from_civil(y, 1, 1)) / 7 + 1)
}

/// Day of the year, 1 = January 1st.
pub fn day_of_year(days: i64) -> i64 {
    let (y, _, _) = civil_from_days(days);
    days - days_from_civil(y, 1, 1) + 1
}

/// The units of `date_trunc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TruncUnit {
    Year,
    Quarter,
    Month,
    /// ISO week: back to Monday.
    Week,
    Day,
    Hour,
    Minute,
    Second,
    Millisecond,
    Microsecond,
}

impl TruncUnit {
    /// DuckDB's spellings of the unit (case-insensitive).
    pub fn parse(s: &str) -> Option<TruncUnit> {
        Some(match unit_name(s)? {
            "year" => TruncUnit::Year,
            "quarter" => TruncUnit::Quarter,
            "month" => TruncUnit::Month,
            "week" => TruncUnit::Week,
            "day" => TruncUnit::Day,
            "hour" => TruncUnit::Hour,
            "minute" => TruncUnit::Minute,
            "second" => TruncUnit::Second,
            "millisecond" => TruncUnit::Millisecond,
            "microsecond" => TruncUnit::Microsecond,
            _ => return None,
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            TruncUnit::Year => "year",
            TruncUnit::Quarter => "quarter",
            TruncUnit::Month => "month",
            TruncUnit::Week => "week",
            TruncUnit::Day => "day",
            TruncUnit::Hour => "hour",
            TruncUnit::Minute => "minute",
            TruncUnit::Second => "second",
            TruncUnit::Millisecond => "millisecond",
            TruncUnit::Microsecond => "microsecond",
        }
    }
}

/// A date part's name as DuckDB spells it (case-insensitive, with its synonyms), in one
/// canonical form shared by `date_trunc` units and EXTRACT fields.
/// A date part's DuckDB name by any of its spellings (case-insensitive).
pub fn unit_name(s: &str) -> Option<&'static str> {
    Some(match s.trim().to_ascii_lowercase().as_str() {
        "year" | "years" | "y" | "yr" | "yrs" => "year",
        "quarter" | "quarters" => "quarter",
        "month" | "months" | "mon" | "mons" => "month",
        "week" | "weeks" | "w" | "weekofyear" => "week",
        "day" | "days" | "d" | "dayofmonth" => "day",
        "hour" | "hours" | "h" | "hr" | "hrs" => "hour",
        "minute" | "minutes" | "m" | "min" | "mins" => "minute",
        "second" | "seconds" | "s" | "sec" | "secs" => "second",
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" | "msecond" | "mseconds" => "millisecond",
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" | "usecond" | "useconds" => "microsecond",
        "dow" | "dayofweek" | "weekday" => "dow",
        "doy" | "dayofyear" => "doy",
        "epoch" => "epoch",
        "isodow" => "isodow",
        "isoyear" => "isoyear",
        "decade" | "decades" | "dec" | "decs" => "decade",
        "century" | "centuries" | "c" | "cent" => "century",
        "millennium" | "millennia" | "millenniums" | "mil" | "mils" => "millennium",
        _ => return None,
    })
}

/// `date_trunc(unit, ts)`: the start of the unit holding `us` (floored, so correct before
/// 1970). None where that start is outside the range.
pub fn trunc_timestamp(unit: TruncUnit, us: i64) -> Option<i64> {
    let below_day = |step: i64| us.checked_sub(us.rem_euclid(step));
    let (d, _) = split_timestamp(us);
    let day = match unit {
        TruncUnit::Microsecond => return Some(us),
        TruncUnit::Millisecond => return below_day(1000),
        TruncUnit::Second => return below_day(MICROS_PER_SECOND),
        TruncUnit::Minute => return below_day(MICROS_PER_MINUTE),
        TruncUnit::Hour => return below_day(MICROS_PER_HOUR),
        TruncUnit::Day => d,
        TruncUnit::Week => d - (d + 3).rem_euclid(7),
        TruncUnit::Month | TruncUnit::Quarter | TruncUnit::Year => {
            let (y, m, _) = civil_from_days(d);
            let m = match unit {
                TruncUnit::Year => 1,
                TruncUnit::Quarter => (m - 1) / 3 * 3 + 1,
                _ => m,
            };
            days_from_civil(y, m, 1)
        }
    };
    timestamp_from_date(day)
}

/// Fields of EXTRACT / date_part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DateField {
    Year,
    Quarter,
    Month,
    Day,
    Hour,
    Minute,
    /// Whole seconds (0-59), as DuckDB's `second`.
    Second,
    /// Seconds and milliseconds in milliseconds (0-59999), as DuckDB.
    Millisecond,
    /// Seconds and microseconds in microseconds (0-59999999), as DuckDB.
    Microsecond,
    /// Day of the week, 0 = Sunday.
    DayOfWeek,
    /// Day of the year, from 1.
    DayOfYear,
    /// Seconds since 1970-01-01 as DOUBLE.
    Epoch,
    /// ISO day of the week, 1 = Monday … 7 = Sunday.
    IsoDayOfWeek,
    /// ISO 8601 week number (1-53; week 1 holds the year's first Thursday).
    Week,
    /// The year of the ISO week.
    IsoYear,
}

impl DateField {
    /// An EXTRACT / date_part field by its DuckDB name (case-insensitive).
    pub fn parse(name: &str) -> Option<DateField> {
        use DateField as F;
        Some(match unit_name(name)? {
            "year" => F::Year,
            "quarter" => F::Quarter,
            "month" => F::Month,
            "day" => F::Day,
            "hour" => F::Hour,
            "minute" => F::Minute,
            "second" => F::Second,
            "millisecond" => F::Millisecond,
            "microsecond" => F::Microsecond,
            "dow" => F::DayOfWeek,
            "doy" => F::DayOfYear,
            "epoch" => F::Epoch,
            "week" => F::Week,
            "isodow" => F::IsoDayOfWeek,
            "isoyear" => F::IsoYear,
            _ => return None,
        })
    }

    /// Whether the field of a DATE depends on the day only (computed on the day number, as
    /// before TIMESTAMP existed); the others see the DATE as its midnight.
    pub fn is_day_field(&self) -> bool {
        matches!(self, DateField::Year | DateField::Month | DateField::Day)
    }
}

/// An integer field of a timestamp (Epoch is `us / 1e6` as f64, see `epoch_seconds`).
pub fn timestamp_part(field: DateField, us: i64) -> i64 {
    let (d, t) = split_timestamp(us);
    let civil = || civil_from_days(d);
    match field {
        DateField::Year => civil().0,
        DateField::Quarter => (civil().1 as i64 - 1) / 3 + 1,
        DateField::Month => civil().1 as i64,
        DateField::Day => civil().2 as i64,
        DateField::Hour => t / MICROS_PER_HOUR,
        DateField::Minute => t / MICROS_PER_MINUTE % 60,
        DateField::Second => t / MICROS_PER_SECOND % 60,
        DateField::Millisecond => t % MICROS_PER_MINUTE / 1000,
        DateField::Microsecond => t % MICROS_PER_MINUTE,
        DateField::DayOfWeek => day_of_week(d),
        DateField::DayOfYear => day_of_year(d),
        DateField::IsoDayOfWeek => iso_day_of_week(d),
        DateField::Week => iso_week(d).1,
        DateField::IsoYear => iso_week(d).0,
        // (EXTRACT(epoch) is a DOUBLE, `epoch_seconds`; this is its floor.)
        DateField::Epoch => us.div_euclid(MICROS_PER_SECOND),
    }
}

/// EXTRACT(epoch FROM ts): seconds as DOUBLE, the microseconds divided once (DuckDB's
/// rounding).
pub fn epoch_seconds(us: i64) -> f64 {
    us as f64 / MICROS_PER_SECOND as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn roundtrip() {
        assert_eq!(parse_date("1970-01-01"), Some(0));
        assert_eq!(parse_date("1998-12-01"), Some(10561));
        assert_eq!(format_date(10561), "1998-12-01");
        assert_eq!(parse_date("1994-02-30"), None);
        assert_eq!(format_date(add_months(parse_date("1994-01-31").unwrap(), 1)), "1994-02-28");
        assert_eq!(format_date(add_months(parse_date("1994-01-01").unwrap(), 12)), "1995-01-01");
        assert_eq!(format_date(add_months(parse_date("1994-03-15").unwrap(), -3)), "1993-12-15");
        for z in -800_000..800_000i64 {
            if z % 997 == 0 {
                let (y, m, d) = civil_from_days(z);
                assert_eq!(days_from_civil(y, m, d), z);
            }
        }
    }

    fn ts(s: &str) -> i64 {
        parse_timestamp(s).unwrap_or_else(|| panic!("{s}"))
    }

    #[test]
    fn timestamps_parse_and_print() {
        assert_eq!(parse_timestamp("1970-01-01 00:00:00"), Some(0));
        assert_eq!(parse_timestamp("1970-01-01"), Some(0));
        assert_eq!(ts("2024-01-05 10:30:00"), ts("2024-01-05T10:30"));
        assert_eq!(ts(" 2024-01-05  1:2:3 "), ts("2024-01-05 01:02:03"));
        assert_eq!(ts("2024-01-05 24:00:00"), ts("2024-01-06"));
        assert_eq!(ts("2024-01-05 10:30:00.1234567"), ts("2024-01-05 10:30:00.123456"));
        assert_eq!(format_timestamp(ts("2024-01-05 10:30:00")), "2024-01-05 10:30:00");
        assert_eq!(format_timestamp(ts("2024-01-05 10:30:00.5")), "2024-01-05 10:30:00.5");
        assert_eq!(format_timestamp(ts("2024-01-05 10:30:00.000120")), "2024-01-05 10:30:00.00012");
        for bad in [
            "",
            "abc",
            "2024-01-05 25:00:00",
            "2024-01-05 24:00:01",
            "2024-02-30 10:00:00",
            "2024-01-05 10",
            "2024-01-05 10:30:60",
            "2024-01-05 10:30:00+02",
            "2024-01-05 10:30:00 UTC",
            "2024-01-05 +1:30:00",
            "2024-01-05 10:3a:00",
            "99999999-01-01",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
        // Before 1970: the day is floored, the time of day stays positive.
        let t = ts("1969-12-31 23:59:59.5");
        assert_eq!(t, -500_000);
        assert_eq!(split_timestamp(t), (-1, MICROS_PER_DAY - 500_000));
        assert_eq!(format_timestamp(t), "1969-12-31 23:59:59.5");
        assert_eq!(format_timestamp(ts("1900-03-01 00:00:00.000001")), "1900-03-01 00:00:00.000001");
        // (Years before 1 as DuckDB writes them: year 0 is 1 BC.)
        assert_eq!(format_timestamp(i64::MIN), "290309-12-21 (BC) 19:59:05.224192");
        assert_eq!(format_timestamp(i64::MAX), "294247-01-10 04:00:54.775807");
    }

    #[test]
    fn interval_addition() {
        let add = |s: &str, m: i32, d: i32, us: i64| add_interval(ts(s), m, d, us).map(format_timestamp);
        assert_eq!(add("2024-01-31 10:30:00", 1, 0, 0).as_deref(), Some("2024-02-29 10:30:00"));
        assert_eq!(add("2023-01-31 10:30:00", 1, 0, 0).as_deref(), Some("2023-02-28 10:30:00"));
        assert_eq!(add("2024-03-31 10:30:00", -1, 0, 0).as_deref(), Some("2024-02-29 10:30:00"));
        assert_eq!(add("2024-02-29 10:30:00", 12, 0, 0).as_deref(), Some("2025-02-28 10:30:00"));
        assert_eq!(add("2024-01-31 23:30:00", 0, 0, 2 * MICROS_PER_HOUR).as_deref(), Some("2024-02-01 01:30:00"));
        assert_eq!(add("2024-03-01 00:30:00", 0, 0, -MICROS_PER_HOUR).as_deref(), Some("2024-02-29 23:30:00"));
        // Dec 31 + 2 months clamps to Feb 28, then a day and half a second.
        assert_eq!(add("1969-12-31 23:59:59.5", 2, 1, 500_000).as_deref(), Some("1970-03-02 00:00:00"));
        assert_eq!(add("2024-01-31 12:00:00", 1, 1, MICROS_PER_HOUR).as_deref(), Some("2024-03-01 13:00:00"));
        assert_eq!(add_interval(i64::MAX, 0, 0, 1), None);
        assert_eq!(add_interval(i64::MIN, 0, -1, 0), None);
    }

    #[test]
    fn truncation_and_fields() {
        let tr = |u: &str, s: &str| format_timestamp(trunc_timestamp(TruncUnit::parse(u).unwrap(), ts(s)).unwrap());
        assert_eq!(tr("year", "2024-05-05 10:30:00"), "2024-01-01 00:00:00");
        assert_eq!(tr("quarter", "2024-05-05 10:30:00"), "2024-04-01 00:00:00");
        assert_eq!(tr("quarter", "1969-12-31 23:59:59.999999"), "1969-10-01 00:00:00");
        assert_eq!(tr("month", "2024-05-05 10:30:00"), "2024-05-01 00:00:00");
        assert_eq!(tr("week", "2024-05-05 10:30:00"), "2024-04-29 00:00:00");
        assert_eq!(tr("week", "1970-01-01 00:00:00"), "1969-12-29 00:00:00");
        assert_eq!(tr("week", "1969-12-28 23:00:00"), "1969-12-22 00:00:00");
        assert_eq!(tr("week", "2024-04-29 00:00:00"), "2024-04-29 00:00:00");
        assert_eq!(tr("day", "1969-05-05 10:30:00.5"), "1969-05-05 00:00:00");
        assert_eq!(tr("hour", "1969-05-05 10:30:00.5"), "1969-05-05 10:00:00");
        assert_eq!(tr("minute", "1969-05-05 10:30:10.5"), "1969-05-05 10:30:00");
        assert_eq!(tr("second", "1969-12-31 23:59:59.5"), "1969-12-31 23:59:59");
        assert_eq!(tr("ms", "2024-05-05 10:10:10.123456"), "2024-05-05 10:10:10.123");
        assert_eq!(TruncUnit::parse("fortnight"), None);
        assert_eq!(trunc_timestamp(TruncUnit::Year, i64::MIN), None);
        assert_eq!(trunc_timestamp(TruncUnit::Millisecond, i64::MIN), None);
        assert_eq!(trunc_timestamp(TruncUnit::Second, i64::MAX), Some(i64::MAX - 775_807));
        let t = ts("1969-05-05 10:30:10.5");
        let f = |field| timestamp_part(field, t);
        assert_eq!(
            [f(DateField::Year), f(DateField::Quarter), f(DateField::Month), f(DateField::Day)],
            [1969, 2, 5, 5]
        );
        assert_eq!(
            [
                f(DateField::Hour),
                f(DateField::Minute),
                f(DateField::Second),
                f(DateField::Millisecond),
                f(DateField::Microsecond)
            ],
            [10, 30, 10, 10500, 10_500_000]
        );
        assert_eq!([f(DateField::DayOfWeek), f(DateField::DayOfYear)], [1, 125]);
        assert_eq!(epoch_seconds(t), -20784589.5);
        assert_eq!(day_of_week(parse_date("2024-05-05").unwrap()), 0);
        assert_eq!(day_of_year(parse_date("2024-12-31").unwrap()), 366);
    }
}
