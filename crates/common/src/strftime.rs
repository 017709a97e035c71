//! strftime(timestamp, format): DuckDB's specifiers, for both backends. The GPU's twin is
//! strings.cu's `str_strftime` (same specifiers, same widths); the binder checks a format
//! with [`check_format`] first, so neither meets an unknown specifier.

use crate::date::{civil_from_days, day_of_week, day_of_year, iso_day_of_week, iso_week, split_timestamp, MONTH_NAMES};

/// The most bytes a format may write (the GPU writes each value in a buffer this large).
pub const MAX_BYTES: usize = 256;

/// The days' English names, Sunday first (strftime's %A; %a is their first three letters).
pub const DAY_NAMES: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/// The specifiers that take `-` (no padding): %-d, %-m, %-y, %-H, %-I, %-M, %-S, %-j.
const UNPADDED: &[u8] = b"dmyHIMSj";
/// The others: weekday and month names and numbers, years, ISO weeks, fractions of a
/// second, the zone (UTC: `+00` and nothing), and the composite %c %x %X %T.
const PLAIN: &[u8] = b"aAwubhBYGpfgnzZUWVcxXT%";

/// The most bytes a specifier writes (a year takes up to 7: `-123456`).
fn widest(spec: u8) -> usize {
    match spec {
        b'A' | b'B' => 9,
        b'Y' | b'G' => 7,
        b'n' => 9,
        b'c' => 7 + 15,
        b'x' => 7 + 6,
        b'f' => 6,
        b'X' | b'T' => 8,
        b'j' | b'a' | b'b' | b'h' | b'g' | b'z' => 3,
        b'%' | b'Z' | b'w' | b'u' => 1,
        _ => 2,
    }
}

/// Checks `format` as DuckDB's strftime and strptime parse it; the most bytes it can
/// write, or DuckDB's message (which names the whole format) for an empty one or the first
/// specifier it does not know.
pub fn check_format(format: &str) -> Result<usize, String> {
    let failed = |why: &str| format!("Failed to parse format specifier {format}: {why}");
    if format.is_empty() {
        return Err(failed("Empty format string"));
    }
    let f = format.as_bytes();
    let (mut i, mut most) = (0, 0);
    while i < f.len() {
        if f[i] != b'%' {
            most += 1;
            i += 1;
            continue;
        }
        if i + 1 == f.len() {
            return Err(failed("Trailing format character %"));
        }
        // (`%-` at the end is the specifier `-`.)
        let unpadded = f[i + 1] == b'-' && i + 2 < f.len();
        let at = if unpadded { i + 2 } else { i + 1 };
        let spec = f[at];
        let known = if unpadded { UNPADDED.contains(&spec) } else { UNPADDED.contains(&spec) || PLAIN.contains(&spec) };
        if !known {
            let end = (at + 1..=format.len()).find(|k| format.is_char_boundary(*k)).unwrap_or(format.len());
            return Err(failed(&format!("Unrecognized format for strftime/strptime: {}", &format[i..end])));
        }
        most += widest(spec);
        i = at + 1;
    }
    Ok(most)
}

/// A year as %Y writes it: four digits from 0 to 9999, else as it is (`12345`, `-44`).
fn year_text(y: i64) -> String {
    if (0..=9999).contains(&y) {
        format!("{y:04}")
    } else {
        y.to_string()
    }
}

/// `us` (a TIMESTAMP) written by `format` (checked by [`check_format`]).
pub fn strftime(us: i64, format: &str) -> String {
    let (days, time) = split_timestamp(us);
    let (y, m, d) = civil_from_days(days);
    let (h, mi, s, micros) = (time / 3_600_000_000, time / 60_000_000 % 60, time / 1_000_000 % 60, time % 1_000_000);
    let wday = day_of_week(days);
    let yday = day_of_year(days);
    let f = format.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < f.len() {
        if f[i] != b'%' {
            // (Copied by characters: the format is UTF-8.)
            let end = (i + 1..=f.len()).find(|k| format.is_char_boundary(*k)).unwrap_or(f.len());
            out.push_str(&format[i..end]);
            i = end;
            continue;
        }
        let unpadded = f.get(i + 1) == Some(&b'-');
        let spec = f[if unpadded { i + 2 } else { i + 1 }];
        i += if unpadded { 3 } else { 2 };
        let two = |v: i64| if unpadded { v.to_string() } else { format!("{v:02}") };
        let hour12 = if h % 12 == 0 { 12 } else { h % 12 };
        match spec {
            b'a' => out.push_str(&DAY_NAMES[wday as usize][..3]),
            b'A' => out.push_str(DAY_NAMES[wday as usize]),
            b'w' => out.push_str(&wday.to_string()),
            b'u' => out.push_str(&iso_day_of_week(days).to_string()),
            b'd' => out.push_str(&two(d as i64)),
            b'b' | b'h' => out.push_str(&MONTH_NAMES[m as usize - 1][..3]),
            b'B' => out.push_str(MONTH_NAMES[m as usize - 1]),
            b'm' => out.push_str(&two(m as i64)),
            b'y' => out.push_str(&two((y % 100).abs())),
            b'Y' => out.push_str(&year_text(y)),
            b'G' => out.push_str(&year_text(iso_week(days).0)),
            b'H' => out.push_str(&two(h)),
            b'I' => out.push_str(&two(hour12)),
            b'p' => out.push_str(if h < 12 { "AM" } else { "PM" }),
            b'M' => out.push_str(&two(mi)),
            b'S' => out.push_str(&two(s)),
            b'f' => out.push_str(&format!("{micros:06}")),
            b'g' => out.push_str(&format!("{:03}", micros / 1000)),
            b'n' => out.push_str(&format!("{:09}", micros * 1000)),
            b'z' => out.push_str("+00"),
            b'Z' => {}
            b'j' => out.push_str(&if unpadded { yday.to_string() } else { format!("{yday:03}") }),
            b'U' => out.push_str(&format!("{:02}", (yday - 1 + 7 - wday) / 7)),
            b'W' => out.push_str(&format!("{:02}", (yday - 1 + 7 - (wday + 6) % 7) / 7)),
            b'V' => out.push_str(&format!("{:02}", iso_week(days).1)),
            b'c' => out.push_str(&strftime(us, "%Y-%m-%d %H:%M:%S")),
            b'x' => out.push_str(&strftime(us, "%Y-%m-%d")),
            b'X' | b'T' => out.push_str(&strftime(us, "%H:%M:%S")),
            _ => out.push('%'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::date::parse_timestamp;

    fn at(ts: &str, format: &str) -> String {
        check_format(format).unwrap();
        strftime(parse_timestamp(ts).unwrap(), format)
    }

    /// DuckDB 2.0.1's answers.
    #[test]
    fn duckdb_answers() {
        let ts = "2024-03-05 07:08:09.012345";
        assert_eq!(at(ts, "%a %A %w %u"), "Tue Tuesday 2 2");
        assert_eq!(at(ts, "%d %-d %b %h %B %m %-m"), "05 5 Mar Mar March 03 3");
        assert_eq!(at(ts, "%y %-y %Y %G"), "24 24 2024 2024");
        assert_eq!(at(ts, "%H %-H %I %-I %p"), "07 7 07 7 AM");
        assert_eq!(at(ts, "%M %-M %S %-S %f %g %n"), "08 8 09 9 012345 012 012345000");
        assert_eq!(at(ts, "%j %-j %U %W %V"), "065 65 09 10 10");
        assert_eq!(at(ts, "%c | %x | %X"), "2024-03-05 07:08:09 | 2024-03-05 | 07:08:09");
        assert_eq!(at(ts, "%% %z|%Z é %T"), "% +00| é 07:08:09");
        assert_eq!(at("0044-03-15", "%Y|%y|%G|%V|%U|%W|%j|%a"), "0044|44|0044|11|11|11|075|Tue");
        assert_eq!(at("12345-01-01", "%Y|%y|%G|%V|%U|%W|%j|%a"), "12345|45|12345|01|00|01|001|Mon");
        assert_eq!(at("0005-01-01", "%Y|%y|%G|%V|%U|%W|%j|%a"), "0005|05|0004|53|00|00|001|Sat");
        assert_eq!(at("2024-12-30", "%Y|%y|%G|%V|%U|%W|%j|%a"), "2024|24|2025|01|52|53|365|Mon");
        assert_eq!(at("2021-01-03", "%Y|%y|%G|%V|%U|%W|%j|%a"), "2021|21|2020|53|01|00|003|Sun");
        assert_eq!(at("2024-01-01 00:00:00", "%I %p"), "12 AM");
        assert_eq!(at("2024-01-01 12:30:00", "%I %p"), "12 PM");
    }

    #[test]
    fn unknown_specifiers_are_duckdb_errors() {
        assert!(check_format("%q").unwrap_err().contains("Failed to parse format specifier %q"));
        assert_eq!(
            check_format("ab%q").unwrap_err(),
            "Failed to parse format specifier ab%q: Unrecognized format for strftime/strptime: %q"
        );
        assert!(check_format("ab%").unwrap_err().contains("Trailing format character"));
        assert!(check_format("%Y%-").unwrap_err().ends_with("Unrecognized format for strftime/strptime: %-"));
        assert_eq!(check_format("").unwrap_err(), "Failed to parse format specifier : Empty format string");
        assert!(check_format("%-a").is_err());
        assert!(check_format("%é").is_err());
        assert_eq!(check_format("%Y-%m").unwrap(), 7 + 1 + 2);
    }
}
