//! INTERVAL values as DuckDB 2.0.1 keeps and computes them: months, days and microseconds
//! apart (a month has no fixed number of days, a day no fixed number of microseconds
//! across a clock change), each may be negative. Two intervals compare, group and hash
//! after carrying microseconds into days and days into 30-day months (`normalized`), so
//! `INTERVAL 30 DAY = INTERVAL 1 MONTH`. The arithmetic, the parts EXTRACT reads and the
//! text are DuckDB's (`interval.cpp`, `multiply.cpp`, `date_part.cpp`,
//! `IntervalToStringCast`); prelude.cu's `iv_*` functions are the GPU's twins.

use crate::date::{MICROS_PER_DAY, MICROS_PER_HOUR, MICROS_PER_MINUTE, MICROS_PER_SECOND};
use crate::{Error, Result};
use std::cmp::Ordering;

pub const DAYS_PER_MONTH: i64 = 30;
pub const MONTHS_PER_YEAR: i32 = 12;
const SECS_PER_DAY: i64 = 86_400;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Interval {
    pub months: i32,
    pub days: i32,
    pub micros: i64,
}

/// The error of an interval computation out of range (the GPU's `ERR_INTERVAL_RANGE`).
pub const OUT_OF_RANGE: &str = "INTERVAL out of range";

fn out_of_range(_what: &str) -> Error {
    Error::exec(OUT_OF_RANGE)
}

impl Interval {
    pub fn new(months: i32, days: i32, micros: i64) -> Interval {
        Interval { months, days, micros }
    }

    /// (months, days, micros) with the microseconds carried into days and the days into
    /// 30-day months, the remainders never negative: what comparisons, grouping and
    /// hashing see.
    pub fn normalized(&self) -> (i64, i64, i64) {
        let carry_days = self.micros.div_euclid(MICROS_PER_DAY);
        let micros = self.micros.rem_euclid(MICROS_PER_DAY);
        let days = self.days as i64 + carry_days;
        let carry_months = days.div_euclid(DAYS_PER_MONTH);
        (self.months as i64 + carry_months, days.rem_euclid(DAYS_PER_MONTH), micros)
    }

    /// SQL's order of intervals: by their normalized (months, days, micros).
    pub fn compare(&self, other: &Interval) -> Ordering {
        self.normalized().cmp(&other.normalized())
    }

    /// TIMESTAMP - TIMESTAMP: the microseconds between them as whole days and the rest
    /// (both truncated toward zero, so both have the difference's sign).
    pub fn from_micros(us: i64) -> Interval {
        Interval { months: 0, days: (us / MICROS_PER_DAY) as i32, micros: us % MICROS_PER_DAY }
    }

    pub fn timestamp_difference(a: i64, b: i64) -> Result<Interval> {
        // (The GPU's ERR_TIMESTAMP_RANGE message.)
        let d = a.checked_sub(b).ok_or_else(|| Error::exec("TIMESTAMP out of range"))?;
        Ok(Interval::from_micros(d))
    }

    pub fn checked_add(&self, o: &Interval) -> Result<Interval> {
        Ok(Interval {
            months: self.months.checked_add(o.months).ok_or_else(|| out_of_range("months addition"))?,
            days: self.days.checked_add(o.days).ok_or_else(|| out_of_range("days addition"))?,
            micros: self.micros.checked_add(o.micros).ok_or_else(|| out_of_range("micros addition"))?,
        })
    }

    pub fn checked_sub(&self, o: &Interval) -> Result<Interval> {
        Ok(Interval {
            months: self.months.checked_sub(o.months).ok_or_else(|| out_of_range("months subtraction"))?,
            days: self.days.checked_sub(o.days).ok_or_else(|| out_of_range("days subtraction"))?,
            micros: self.micros.checked_sub(o.micros).ok_or_else(|| out_of_range("micros subtraction"))?,
        })
    }

    pub fn checked_neg(&self) -> Result<Interval> {
        Ok(Interval {
            months: self.months.checked_neg().ok_or_else(|| out_of_range("negation"))?,
            days: self.days.checked_neg().ok_or_else(|| out_of_range("negation"))?,
            micros: self.micros.checked_neg().ok_or_else(|| out_of_range("negation"))?,
        })
    }

    /// Times an integer: each field, the factor first cast to a 32-bit integer.
    pub fn mul_int(&self, k: i64) -> Result<Interval> {
        let k32 = i32::try_from(k).map_err(|_| out_of_range("factor"))?;
        let overflow = || out_of_range("multiplication");
        Ok(Interval {
            months: self.months.checked_mul(k32).ok_or_else(overflow)?,
            days: self.days.checked_mul(k32).ok_or_else(overflow)?,
            micros: self.micros.checked_mul(k).ok_or_else(overflow)?,
        })
    }

    /// Times a DOUBLE (PostgreSQL's `interval_mul`, as DuckDB took it): whole months and
    /// days of the products, their fractions cascaded down into days and seconds (rounded
    /// to microseconds), the microseconds multiplied last.
    pub fn mul_f64(&self, k: f64) -> Result<Interval> {
        let overflow = || out_of_range("multiplication");
        let int32 = |d: f64| -> Result<i32> {
            if d.is_nan() || d < i32::MIN as f64 || d > i32::MAX as f64 {
                return Err(overflow());
            }
            Ok(d as i32)
        };
        let round_us = |x: f64| (x * MICROS_PER_SECOND as f64).round_ties_even() / MICROS_PER_SECOND as f64;
        let months = int32(self.months as f64 * k)?;
        let mut days = int32(self.days as f64 * k)?;
        let month_remainder = round_us((self.months as f64 * k - months as f64) * DAYS_PER_MONTH as f64);
        let day_remainder = month_remainder as i32;
        let mut sec_remainder = round_us(
            (self.days as f64 * k - days as f64 + month_remainder - day_remainder as f64) * SECS_PER_DAY as f64,
        );
        if sec_remainder.abs() >= SECS_PER_DAY as f64 {
            let whole = (sec_remainder / SECS_PER_DAY as f64) as i32;
            days = days.wrapping_add(whole);
            sec_remainder -= whole as f64 * SECS_PER_DAY as f64;
        }
        days = days.wrapping_add(day_remainder);
        let micros = (self.micros as f64 * k + sec_remainder * MICROS_PER_SECOND as f64).round_ties_even();
        if micros.is_nan() || !((i64::MIN as f64)..-(i64::MIN as f64)).contains(&micros) {
            return Err(overflow());
        }
        Ok(Interval { months, days, micros: micros as i64 })
    }

    /// Divided by a DOUBLE: times its inverse (an error for 0, as DuckDB's).
    pub fn div_f64(&self, k: f64) -> Result<Interval> {
        if k == 0.0 {
            // (The CPU backend's message, which names the expression where it is raised.)
            return Err(Error::exec("division by zero"));
        }
        self.mul_f64(1.0 / k)
    }

    /// The whole interval in microseconds (a month as 30 days: DuckDB's `GetMicro`), or an
    /// error past BIGINT.
    pub fn total_micros(&self) -> Result<i64> {
        let months = (self.months as i64).checked_mul(DAYS_PER_MONTH * MICROS_PER_DAY);
        let days = (self.days as i64).checked_mul(MICROS_PER_DAY);
        months
            .zip(days)
            .and_then(|(m, d)| self.micros.checked_add(m)?.checked_add(d))
            .ok_or_else(|| out_of_range("microseconds"))
    }

    /// EXTRACT(epoch FROM …): seconds, a year as 365.25 days and a month as 30.
    pub fn epoch_seconds(&self) -> f64 {
        let years = (self.months / MONTHS_PER_YEAR) as i64;
        let days = 365 * years + DAYS_PER_MONTH * (self.months % MONTHS_PER_YEAR) as i64 + self.days as i64;
        let seconds = days * SECS_PER_DAY + years * (SECS_PER_DAY / 4);
        seconds as f64 + self.micros as f64 / MICROS_PER_SECOND as f64
    }

    /// DuckDB's text: `1 year 2 months 3 days 04:05:06.789`, each part only where not
    /// zero, `00:00:00` for an empty interval.
    pub fn to_text(&self) -> String {
        let mut parts: Vec<String> = vec![];
        let mut unit = |v: i64, name: &str| {
            if v != 0 {
                parts.push(format!("{v} {name}{}", if v == 1 || v == -1 { "" } else { "s" }));
            }
        };
        if self.months != 0 {
            let years = self.months / MONTHS_PER_YEAR;
            unit(years as i64, "year");
            unit((self.months - years * MONTHS_PER_YEAR) as i64, "month");
        }
        unit(self.days as i64, "day");
        if self.micros != 0 {
            let sign = if self.micros < 0 { "-" } else { "" };
            let m = self.micros.unsigned_abs();
            let (h, min, s, f) = (
                m / MICROS_PER_HOUR as u64,
                m / MICROS_PER_MINUTE as u64 % 60,
                m / MICROS_PER_SECOND as u64 % 60,
                m % MICROS_PER_SECOND as u64,
            );
            let mut t = format!("{sign}{h:02}:{min:02}:{s:02}");
            if f != 0 {
                t.push_str(format!(".{f:06}").trim_end_matches('0'));
            }
            parts.push(t);
        } else if parts.is_empty() {
            return "00:00:00".into();
        }
        parts.join(" ")
    }
}

/// The unit of an interval's text (DuckDB's date part specifiers an interval takes): its
/// field and how many of it one unit is; None for another name.
fn text_unit(name: &str) -> Option<Unit> {
    use Unit::*;
    Some(match name.to_ascii_lowercase().as_str() {
        "year" | "yr" | "y" | "years" | "yrs" => Months(12),
        "month" | "mon" | "months" | "mons" => Month,
        "day" | "days" | "d" | "dayofmonth" => Day,
        "decade" | "dec" | "decades" | "decs" => Months(120),
        "century" | "cent" | "centuries" | "c" => Months(1200),
        "millennium" | "mil" | "millenniums" | "millennia" | "mils" | "millenium" => Months(12000),
        "microseconds" | "microsecond" | "us" | "usec" | "usecs" | "usecond" | "useconds" => Microsecond,
        "milliseconds" | "millisecond" | "ms" | "msec" | "msecs" | "msecond" | "mseconds" => Micros(1000),
        "second" | "sec" | "seconds" | "secs" | "s" => Micros(MICROS_PER_SECOND),
        "minute" | "min" | "minutes" | "mins" | "m" => Micros(MICROS_PER_MINUTE),
        "hour" | "hr" | "hours" | "hrs" | "h" => Micros(MICROS_PER_HOUR),
        "week" | "weeks" | "w" | "weekofyear" => Week,
        "quarter" | "quarters" => Quarter,
        // (Fields of dates an interval has not: DuckDB refuses them too.)
        _ => return None,
    })
}

#[derive(Clone, Copy)]
enum Unit {
    Months(i64),
    Quarter,
    Month,
    Week,
    Day,
    Micros(i64),
    Microsecond,
}

/// DuckDB's `IntervalTryAddition`: `target += number * per`, then the fraction's share
/// of `per`, rounded half away from zero.
fn add_scaled<T: TryFrom<i64> + Copy + Into<i64>>(target: &mut T, number: i64, per: i64, fraction: f64) -> Option<()> {
    let mut v: i64 = (*target).into();
    v = v.checked_add(number.checked_mul(per)?)?;
    if fraction.abs() > 1e-10 {
        v = v.checked_add((fraction * per as f64).round() as i64)?;
    }
    *target = T::try_from(v).ok()?;
    Some(())
}

impl Interval {
    /// An interval's text as DuckDB reads it (`Interval::FromCString`): numbers (with a
    /// sign, and a fraction that goes down to the smaller fields) each followed by a unit,
    /// a time `[-]H:MM[:SS[.ffffff]]` last, a lone number as seconds, `ago` at the end
    /// negating all. None where the text is not such an interval.
    pub fn parse(text: &str) -> Option<Interval> {
        let b = text.as_bytes();
        let mut iv = Interval::default();
        let mut found = false;
        let mut pos = if b.first() == Some(&b'@') { 1 } else { 0 };
        if b.is_empty() || matches!(b[0], b'P' | b'p') {
            return None;
        }
        let space = |c: u8| c == b' ' || c == b'\t' || c == b'\n';
        loop {
            while pos < b.len() && space(b[pos]) {
                pos += 1;
            }
            if pos == b.len() {
                return found.then_some(iv);
            }
            let negative = match b[pos] {
                b'0'..=b'9' => false,
                b'-' => {
                    pos += 1;
                    true
                }
                b'a' | b'A' => {
                    if !text[pos..].trim_end_matches([' ', '\t', '\n']).eq_ignore_ascii_case("ago") {
                        return None;
                    }
                    if iv.months == i32::MIN || iv.days == i32::MIN {
                        return None;
                    }
                    return found.then(|| Interval::new(-iv.months, -iv.days, iv.micros.wrapping_neg()));
                }
                _ => return None,
            };
            let start = pos;
            while pos < b.len() && b[pos].is_ascii_digit() {
                pos += 1;
            }
            if pos < b.len() && b[pos] == b':' {
                // A time, the interval's last part.
                let (us, end) = parse_time(&b[start..])?;
                if !b[start + end..].iter().all(|c| space(*c)) {
                    return None;
                }
                iv.micros = iv.micros.checked_add(us)?;
                if negative {
                    iv.micros = -iv.micros;
                }
                return Some(iv);
            }
            if pos == start {
                return None;
            }
            let mut number: i64 = text[start..pos].parse().ok()?;
            let mut fraction = 0.0;
            if pos < b.len() && b[pos] == b'.' {
                let dot = pos;
                pos += 1;
                while pos < b.len() && b[pos].is_ascii_digit() {
                    pos += 1;
                }
                if pos > dot + 1 {
                    fraction = text[dot..pos].parse().ok()?;
                }
            }
            if negative {
                number = -number;
                fraction = -fraction;
            }
            while pos < b.len() && space(b[pos]) {
                pos += 1;
            }
            let name_start = pos;
            while pos < b.len() && b[pos].is_ascii_alphabetic() {
                pos += 1;
            }
            let name = &text[name_start..pos];
            if name.is_empty() && !found {
                // A lone number: seconds.
                add_scaled(&mut iv.micros, number, MICROS_PER_SECOND, fraction)?;
                return b[pos..].iter().all(|c| space(*c)).then_some(iv);
            }
            match text_unit(name)? {
                Unit::Months(per) => add_scaled(&mut iv.months, number, per, fraction)?,
                Unit::Quarter => {
                    add_scaled(&mut iv.months, number, 3, 0.0)?;
                    let months = (fraction * 3.0) as i32;
                    add_scaled(&mut iv.months, months as i64, 1, 0.0)?;
                    add_scaled(&mut iv.days, 0, DAYS_PER_MONTH, fraction * 3.0 - months as f64)?;
                }
                Unit::Month => {
                    add_scaled(&mut iv.months, number, 1, 0.0)?;
                    let days = (fraction * DAYS_PER_MONTH as f64) as i32;
                    add_scaled(&mut iv.days, days as i64, 1, 0.0)?;
                    add_scaled(&mut iv.micros, 0, MICROS_PER_DAY, fraction * DAYS_PER_MONTH as f64 - days as f64)?;
                }
                Unit::Week => {
                    add_scaled(&mut iv.days, number, 7, 0.0)?;
                    let days = (fraction * 7.0) as i32;
                    add_scaled(&mut iv.days, days as i64, 1, 0.0)?;
                    add_scaled(&mut iv.micros, 0, MICROS_PER_DAY, fraction * 7.0 - days as f64)?;
                }
                Unit::Day => {
                    add_scaled(&mut iv.days, number, 1, 0.0)?;
                    add_scaled(&mut iv.micros, 0, MICROS_PER_DAY, fraction)?;
                }
                Unit::Micros(per) => add_scaled(&mut iv.micros, number, per, fraction)?,
                Unit::Microsecond => add_scaled(&mut iv.micros, number, 1, 0.0)?,
            }
            found = true;
        }
    }
}

/// `H:MM[:SS[.ffffff]]` at the start of `b` (hours up to 9 digits, minutes and seconds one
/// or two digits below 60, further fraction digits ignored): its microseconds and length.
fn parse_time(b: &[u8]) -> Option<(i64, usize)> {
    let mut pos = 0;
    let mut hours: i64 = 0;
    while pos < b.len() && b[pos].is_ascii_digit() {
        if pos == 9 {
            return None;
        }
        hours = hours * 10 + (b[pos] - b'0') as i64;
        pos += 1;
    }
    let two_digits = |pos: &mut usize| -> Option<i64> {
        let start = *pos;
        while *pos < b.len() && *pos - start < 2 && b[*pos].is_ascii_digit() {
            *pos += 1;
        }
        if *pos == start {
            return None;
        }
        let v: i64 = std::str::from_utf8(&b[start..*pos]).ok()?.parse().ok()?;
        (v < 60).then_some(v)
    };
    if pos == 0 || b.get(pos) != Some(&b':') {
        return None;
    }
    pos += 1;
    let minutes = if pos == b.len() { 0 } else { two_digits(&mut pos)? };
    let mut seconds = 0;
    if pos < b.len() && b[pos] == b':' {
        pos += 1;
        seconds = if pos == b.len() { 0 } else { two_digits(&mut pos)? };
    }
    let mut micros = 0;
    if pos < b.len() && b[pos] == b'.' {
        pos += 1;
        let mut mult = 100_000;
        while pos < b.len() && b[pos].is_ascii_digit() {
            micros += (b[pos] - b'0') as i64 * mult;
            mult /= 10;
            pos += 1;
        }
    }
    let us = hours * MICROS_PER_HOUR + minutes * MICROS_PER_MINUTE + seconds * MICROS_PER_SECOND + micros;
    Some((us, pos))
}

/// An Arrow interval as the engine's (nanoseconds truncated to microseconds).
pub fn interval_of(v: arrow::datatypes::IntervalMonthDayNano) -> Interval {
    Interval::new(v.months, v.days, v.nanoseconds / 1000)
}

/// The engine's interval as Arrow's, or an error where its microseconds pass Arrow's
/// nanoseconds (about 292 years of them).
pub fn arrow_interval(iv: &Interval) -> Result<arrow::datatypes::IntervalMonthDayNano> {
    let nanos = iv.micros.checked_mul(1000).ok_or_else(|| {
        Error::exec(format!(
            "INTERVAL '{}' is out of the range Arrow holds (its microseconds times 1000 pass BIGINT)",
            iv.to_text()
        ))
    })?;
    Ok(arrow::datatypes::IntervalMonthDayNano::new(iv.months, iv.days, nanos))
}

/// The parts EXTRACT / date_part read of an interval (DuckDB's `DatePart` operators of
/// `interval_t`); None for a field an interval has not (`dow`, `week`, …: DuckDB's error
/// names them) and for epoch (`epoch_seconds`).
pub fn part(iv: &Interval, field: crate::date::DateField) -> Option<i64> {
    use crate::date::DateField as F;
    let m = iv.months as i64;
    Some(match field {
        F::Year => m / 12,
        F::Month => m % 12,
        F::Day => iv.days as i64,
        F::Quarter => m % 12 / 3 + 1,
        F::Hour => iv.micros / MICROS_PER_HOUR,
        F::Minute => iv.micros % MICROS_PER_HOUR / MICROS_PER_MINUTE,
        F::Second => iv.micros % MICROS_PER_MINUTE / MICROS_PER_SECOND,
        F::Millisecond => iv.micros % MICROS_PER_MINUTE / 1000,
        F::Microsecond => iv.micros % MICROS_PER_MINUTE,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(months: i32, days: i32, micros: i64) -> Interval {
        Interval::new(months, days, micros)
    }

    #[test]
    fn compares_as_duckdb() {
        assert_eq!(iv(0, 30, 0).compare(&iv(1, 0, 0)), Ordering::Equal);
        assert_eq!(iv(0, 0, 24 * MICROS_PER_HOUR).compare(&iv(0, 1, 0)), Ordering::Equal);
        // 1 month -4 days is 26 days (the remainders borrow, never negative).
        assert_eq!(iv(1, -4, 0).compare(&iv(0, 26, 0)), Ordering::Equal);
        assert_eq!(iv(0, 0, -MICROS_PER_HOUR).compare(&iv(0, 0, 0)), Ordering::Less);
        assert_eq!(iv(0, 31, 0).compare(&iv(1, 0, 0)), Ordering::Greater);
    }

    #[test]
    fn text_is_duckdbs() {
        assert_eq!(iv(0, 1, 2 * MICROS_PER_HOUR).to_text(), "1 day 02:00:00");
        assert_eq!(
            iv(14, 3, 4 * MICROS_PER_HOUR + 5 * MICROS_PER_MINUTE + 6_789_000).to_text(),
            "1 year 2 months 3 days 04:05:06.789"
        );
        assert_eq!(iv(0, 0, 36 * MICROS_PER_HOUR).to_text(), "36:00:00");
        assert_eq!(iv(0, 0, -36 * MICROS_PER_HOUR).to_text(), "-36:00:00");
        assert_eq!(iv(0, -61, -(3 * MICROS_PER_HOUR + 500_000)).to_text(), "-61 days -03:00:00.5");
        assert_eq!(iv(0, 0, 0).to_text(), "00:00:00");
        assert_eq!(iv(1, -4, 0).to_text(), "1 month -4 days");
        assert_eq!(iv(-12, -1, -MICROS_PER_HOUR).to_text(), "-1 year -1 day -01:00:00");
        assert_eq!(iv(0, 0, 1000 * MICROS_PER_HOUR).to_text(), "1000:00:00");
    }

    #[test]
    fn text_reads_as_duckdbs() {
        let t = |s: &str| Interval::parse(s).map(|iv| iv.to_text());
        assert_eq!(t("1.5 days").as_deref(), Some("1 day 12:00:00"));
        assert_eq!(t("30.5 seconds").as_deref(), Some("00:00:30.5"));
        assert_eq!(t("1.5 months").as_deref(), Some("1 month 15 days"));
        assert_eq!(t("1.5 years").as_deref(), Some("1 year 6 months"));
        assert_eq!(t("2.5 weeks").as_deref(), Some("17 days 12:00:00"));
        assert_eq!(t("-1.5 hours").as_deref(), Some("-01:30:00"));
        assert_eq!(t("1 day 02:00:00").as_deref(), Some("1 day 02:00:00"));
        assert_eq!(t("1 month -4 days").as_deref(), Some("1 month -4 days"));
        assert_eq!(t("36 hours").as_deref(), Some("36:00:00"));
        assert_eq!(t("1 day ago").as_deref(), Some("-1 day"));
        assert_eq!(t("42").as_deref(), Some("00:00:42"));
        assert_eq!(t("abc"), None);
        assert_eq!(t(""), None);
        assert_eq!(t("1 dow"), None);
    }

    #[test]
    fn arithmetic_is_duckdbs() {
        let day = iv(0, 1, 0);
        let month = iv(1, 0, 0);
        assert_eq!(day.mul_f64(1.5).unwrap().to_text(), "1 day 12:00:00");
        assert_eq!(month.mul_f64(1.5).unwrap().to_text(), "1 month 15 days");
        assert_eq!(day.mul_f64(0.1).unwrap().to_text(), "02:24:00");
        assert_eq!(month.mul_f64(0.1).unwrap().to_text(), "3 days");
        assert_eq!(month.div_f64(3.0).unwrap().to_text(), "10 days");
        assert_eq!(day.div_f64(7.0).unwrap().to_text(), "03:25:42.857143");
        assert_eq!(iv(0, 10, 0).div_f64(3.0).unwrap().to_text(), "3 days 08:00:00");
        assert_eq!(month.div_f64(2.5).unwrap().to_text(), "12 days");
        assert_eq!(
            Interval::from_micros(-(61 * MICROS_PER_DAY + 3 * MICROS_PER_HOUR + 500_000)).to_text(),
            "-61 days -03:00:00.5"
        );
        assert_eq!(iv(12, 0, 0).epoch_seconds(), 31557600.0);
        assert_eq!(iv(0, 0, -36 * MICROS_PER_HOUR).epoch_seconds(), -129600.0);
    }
}
