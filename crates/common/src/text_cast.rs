//! CAST of text to numbers, booleans and dates, as DuckDB 2.0.1 reads text. The CPU
//! backend and constant folding call these; codegen's `text_cast.cu` holds their CUDA
//! twins (same names, same steps), so both backends accept, refuse and round alike.
//!
//! Each cast answers a value, `Invalid` (DuckDB's "Could not convert string", or NULL under
//! TRY_CAST) or `Unsupported`: text DuckDB reads by rules this engine does not follow
//! (hexadecimal and binary integers, exponents in integers and decimals, more than 19
//! significant digits or far exponents in doubles, dates with a time, BC or a named day).
//! An unsupported row is an error under CAST and TRY_CAST alike, never a guess.

use crate::date::{days_from_civil, days_in_month};
use crate::{DataType, Error};

/// The outcome of reading one text value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TextCast<T> {
    Value(T),
    Invalid,
    Unsupported,
}

use TextCast::{Invalid, Unsupported, Value};

impl<T> TextCast<T> {
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> TextCast<U> {
        self.and_then(|v| Value(f(v)))
    }

    /// The outcome of reading on from a value (Invalid and Unsupported stay as they are).
    pub fn and_then<U>(self, f: impl FnOnce(T) -> TextCast<U>) -> TextCast<U> {
        match self {
            Value(v) => f(v),
            Invalid => Invalid,
            Unsupported => Unsupported,
        }
    }
}

/// The types text reads as (the targets of a CAST of text).
pub fn reads_as(ty: &DataType) -> bool {
    matches!(
        ty,
        DataType::Int32
            | DataType::Int64
            | DataType::Float64
            | DataType::Decimal { .. }
            | DataType::Boolean
            | DataType::Date
            | DataType::Timestamp
    )
}

/// The error of text that does not read as `ty` (DuckDB's words). `text` is the value
/// where it is known (the GPU reports only the type).
pub fn conversion_error(ty: &DataType, text: Option<&[u8]>) -> Error {
    match text {
        Some(t) => Error::exec(format!("Could not convert string '{}' to {ty}", String::from_utf8_lossy(t))),
        None => Error::exec(format!("Could not convert string to {ty}")),
    }
}

/// The error of text DuckDB reads by rules this engine does not follow (`Unsupported`).
pub fn unsupported_error(ty: &DataType, text: Option<&[u8]>) -> Error {
    let forms = match ty {
        DataType::Int32 | DataType::Int64 => "hexadecimal, binary or exponent notation",
        DataType::Decimal { .. } => "exponent notation",
        DataType::Float64 => "more than 19 significant digits or an exponent beyond exact reading",
        _ => "a time zone, 24:00, BC, a year of more than 6 digits or a named date",
    };
    let value = text.map_or(String::new(), |t| format!(" '{}'", String::from_utf8_lossy(t)));
    Error::not_supported(format!("CAST of text{value} to {ty} in {forms}"))
}

/// DuckDB's white space around numbers and dates (`StringUtil::CharacterIsSpace`).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

fn trim(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|b| !is_space(*b)).unwrap_or(s.len());
    let end = s.iter().rposition(|b| !is_space(*b)).map_or(start, |e| e + 1);
    &s[start..end]
}

/// The parts of a number: its sign, the digits before and after the point (underscores
/// dropped) and the position of an exponent marker, if any.
struct Number {
    negative: bool,
    int_digits: Vec<u8>,
    frac_digits: Vec<u8>,
    /// Index in the trimmed text of 'e' / 'E'.
    exponent_at: Option<usize>,
}

/// Reads `[+-] digits [. digits]` from trimmed text; at least one digit. Underscores are
/// allowed between two digits when `underscores` (everywhere but in exponents' signs).
/// Stops at 'e' / 'E'; anything else is invalid.
fn scan_number(s: &[u8], underscores: bool) -> Option<Number> {
    let mut i = 0;
    let negative = s.first() == Some(&b'-');
    if matches!(s.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let (mut int_digits, mut frac_digits) = (vec![], vec![]);
    if !digit_run(s, &mut i, underscores, &mut int_digits) {
        return None;
    }
    if s.get(i) == Some(&b'.') {
        i += 1;
        if !digit_run(s, &mut i, underscores, &mut frac_digits) {
            return None;
        }
    }
    if int_digits.is_empty() && frac_digits.is_empty() {
        return None;
    }
    let exponent_at = match s.get(i) {
        None => None,
        Some(b'e' | b'E') => Some(i),
        Some(_) => return None,
    };
    Some(Number { negative, int_digits, frac_digits, exponent_at })
}

/// A run of digits from `i` into `out` (underscores between two digits when
/// `underscores`); false on an underscore not followed by a digit.
fn digit_run(s: &[u8], i: &mut usize, underscores: bool, out: &mut Vec<u8>) -> bool {
    while *i < s.len() {
        let b = s[*i];
        if b.is_ascii_digit() {
            out.push(b - b'0');
        } else if b == b'_' && underscores && !out.is_empty() && s[*i - 1].is_ascii_digit() {
            if !s.get(*i + 1).is_some_and(|n| n.is_ascii_digit()) {
                return false;
            }
        } else {
            break;
        }
        *i += 1;
    }
    true
}

/// Whether trimmed text starts with a hexadecimal or binary prefix (`0x1F`, `0b101`).
fn radix_prefix(s: &[u8]) -> bool {
    s.len() >= 2 && s[0] == b'0' && matches!(s[1], b'x' | b'X' | b'b' | b'B')
}

/// CAST(text AS INTEGER / BIGINT): `[+-]digits[.digits]`, rounded half away from zero by
/// the first digit after the point (`'2.5'` is 3), within `lo..=hi`.
pub fn text_to_int(text: &[u8], lo: i64, hi: i64) -> TextCast<i64> {
    let s = trim(text);
    if radix_prefix(s) {
        return Unsupported;
    }
    let Some(n) = scan_number(s, true) else { return Invalid };
    if n.exponent_at.is_some() {
        return Unsupported;
    }
    let mut magnitude: u64 = 0;
    for d in &n.int_digits {
        magnitude = match magnitude.checked_mul(10).and_then(|m| m.checked_add(*d as u64)) {
            Some(m) => m,
            None => return Invalid,
        };
    }
    if n.frac_digits.first().is_some_and(|d| *d >= 5) {
        magnitude = match magnitude.checked_add(1) {
            Some(m) => m,
            None => return Invalid,
        };
    }
    let limit = if n.negative { lo.unsigned_abs() } else { hi as u64 };
    if magnitude > limit {
        return Invalid;
    }
    Value(if n.negative { (magnitude as i64).wrapping_neg() } else { magnitude as i64 })
}

/// CAST(text AS DECIMAL(precision, scale)): `[+-]digits[.digits]`, the digits past
/// `scale` rounded half away from zero; fewer than `precision` digits in all.
pub fn text_to_decimal(text: &[u8], precision: u8, scale: u8) -> TextCast<i128> {
    let s = trim(text);
    let Some(n) = scan_number(s, true) else { return Invalid };
    if n.exponent_at.is_some() {
        return Unsupported;
    }
    let limit = 10u128.pow(precision as u32);
    let mut magnitude: u128 = 0;
    let frac = (0..scale as usize).map(|k| n.frac_digits.get(k).copied().unwrap_or(0));
    for d in n.int_digits.iter().copied().chain(frac) {
        magnitude = match magnitude.checked_mul(10) {
            Some(m) if m + (d as u128) < limit => m + d as u128,
            _ => return Invalid,
        };
    }
    if n.frac_digits.get(scale as usize).is_some_and(|d| *d >= 5) {
        magnitude += 1;
    }
    if magnitude >= limit {
        return Invalid;
    }
    Value(if n.negative { -(magnitude as i128) } else { magnitude as i128 })
}

/// The most significant decimal digits a DOUBLE is read from exactly (fit a u64).
const DOUBLE_DIGITS: usize = 19;

/// CAST(text AS DOUBLE): `[+-]digits[.digits][e[+-]digits]` (underscores between digits),
/// `inf`, `infinity` and `nan` in any case; the nearest DOUBLE (ties to even), exactly as
/// DuckDB's reader rounds. Read exactly from at most 19 significant digits whose value
/// w * 10^e has w * 10^e < 2^128 (e >= 0) or e >= -21 (or w <= 2^53 and e >= -22);
/// other text (`1e-400`, 25 significant digits) is unsupported.
pub fn text_to_double(text: &[u8]) -> TextCast<f64> {
    let s = trim(text);
    let negative = s.first() == Some(&b'-');
    let body = if matches!(s.first(), Some(b'+' | b'-')) { &s[1..] } else { s };
    let lower = body.to_ascii_lowercase();
    if lower == b"inf" || lower == b"infinity" {
        return Value(if negative { f64::NEG_INFINITY } else { f64::INFINITY });
    }
    if lower == b"nan" {
        return Value(f64::NAN);
    }
    let Some(n) = scan_number(s, true) else { return Invalid };
    let mut exponent: i64 = 0;
    if let Some(at) = n.exponent_at {
        let mut j = at + 1;
        let e_negative = s.get(j) == Some(&b'-');
        if matches!(s.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let mut digits = vec![];
        if !digit_run(s, &mut j, true, &mut digits) || digits.is_empty() || j != s.len() {
            return Invalid;
        }
        for d in digits {
            exponent = (exponent * 10 + d as i64).min(100_000);
        }
        if e_negative {
            exponent = -exponent;
        }
    }
    // w * 10^e from the significant digits: leading zeros skipped, trailing zeros into e.
    let all: Vec<u8> = n.int_digits.iter().chain(&n.frac_digits).copied().collect();
    let mut e = exponent - n.frac_digits.len() as i64;
    let first = all.iter().position(|d| *d != 0);
    let Some(first) = first else { return Value(if n.negative { -0.0 } else { 0.0 }) };
    let last = all.iter().rposition(|d| *d != 0).unwrap_or(first);
    e += (all.len() - 1 - last) as i64;
    let significant = &all[first..=last];
    if significant.len() > DOUBLE_DIGITS {
        return Unsupported;
    }
    let w = significant.iter().fold(0u64, |w, d| w * 10 + *d as u64);
    match exact_double(w, e) {
        Some(v) => Value(if n.negative { -v } else { v }),
        None => Unsupported,
    }
}

/// w * 10^e rounded to the nearest DOUBLE (ties to even), where integer arithmetic in 128
/// bits makes that exact; None elsewhere. The twin of text_cast.cu's `exact_double`.
fn exact_double(w: u64, e: i64) -> Option<f64> {
    if e >= 0 {
        let p = 10u128.checked_pow(e as u32)?;
        let v = (w as u128).checked_mul(p)?;
        return Some(u128_to_f64(v));
    }
    let k = (-e) as u32;
    if k <= 21 {
        // Shifted so the quotient keeps at least 55 significant bits; the remainder is
        // folded into its lowest bit (a "sticky" bit), so rounding it once is exact.
        let shift = w.leading_zeros() + 64;
        let num = (w as u128) << shift;
        let den = 10u128.pow(k);
        let (q, r) = (num / den, num % den);
        return Some(u128_to_f64(q | (r != 0) as u128) * pow2(-(shift as i32)));
    }
    if k == 22 && w <= 1 << 53 {
        // Both exact as DOUBLEs: one correctly rounded division (Clinger's fast path).
        return Some(w as f64 / 1e22);
    }
    None
}

/// A u128 to the nearest DOUBLE, ties to even: its top 64 bits with the rest folded into
/// the lowest (a sticky bit below the rounding bit), converted once and scaled back.
fn u128_to_f64(v: u128) -> f64 {
    let high = (v >> 64) as u64;
    if high == 0 {
        return v as u64 as f64;
    }
    let shift = 64 - high.leading_zeros();
    let top = (v >> shift) as u64 | ((v & ((1u128 << shift) - 1)) != 0) as u64;
    top as f64 * pow2(shift as i32)
}

/// 2^k, exactly (|k| < 1023).
fn pow2(k: i32) -> f64 {
    f64::from_bits(((1023 + k) as u64) << 52)
}

/// CAST(text AS BOOLEAN): true / t / yes / y / 1 and false / f / no / n / 0 in any case,
/// with no white space (DuckDB's reader).
pub fn text_to_bool(text: &[u8]) -> TextCast<bool> {
    match text.to_ascii_lowercase().as_slice() {
        b"true" | b"t" | b"yes" | b"y" | b"1" => Value(true),
        b"false" | b"f" | b"no" | b"n" | b"0" => Value(false),
        _ => Invalid,
    }
}

/// CAST(text AS DATE): `Y-M-D` or `Y/M/D` (1 to 6 digits of year, 1 or 2 of month and day),
/// white space around, a valid day of the month, then optionally a time of day (which a
/// DATE drops). A time zone, 24:00, `(BC)`, a negative year, a year of more than 6 digits
/// and the named days (`infinity`, `-infinity`, `epoch`) are unsupported.
pub fn text_to_date(text: &[u8]) -> TextCast<i32> {
    date_time(text).map(|(days, _)| days as i32)
}

/// CAST(text AS TIMESTAMP): a date as DATE reads it, then optionally
/// `[ T]H:M[:S[.ffffff]]` (1 or 2 digits each, up to 6 of the fraction); midnight without.
pub fn text_to_timestamp(text: &[u8]) -> TextCast<i64> {
    date_time(text).and_then(|(days, micros)| crate::date::make_timestamp(days, micros as i128).map_or(Invalid, Value))
}

/// The time of day after a date (`r` starts at the space or 'T' that parts them), in
/// microseconds; None where it is not of the form read (those are unsupported).
fn time_of_day(r: &[u8]) -> Option<i64> {
    let mut i = if r.first() == Some(&b'T') { 1 } else { r.iter().position(|b| *b != b' ')? };
    let num = |i: &mut usize, max: usize| -> Option<i64> {
        let start = *i;
        let mut v = 0i64;
        while *i < r.len() && r[*i].is_ascii_digit() && *i - start < max {
            v = v * 10 + (r[*i] - b'0') as i64;
            *i += 1;
        }
        (*i > start).then_some(v)
    };
    let hour = num(&mut i, 2)?;
    if r.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    let minute = num(&mut i, 2)?;
    let (mut second, mut micros) = (0, 0);
    if r.get(i) == Some(&b':') {
        i += 1;
        second = num(&mut i, 2)?;
        if r.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            micros = num(&mut i, 6).unwrap_or(0);
            micros *= 10i64.pow(6 - (i - start) as u32);
        }
    }
    (i == r.len() && hour <= 23 && minute <= 59 && second <= 59)
        .then_some(((hour * 60 + minute) * 60 + second) * 1_000_000 + micros)
}

/// The day and the time of day of a date with an optional time (`text_to_date`).
fn date_time(text: &[u8]) -> TextCast<(i64, i64)> {
    let s = trim(text);
    let digits = |i: &mut usize, max: usize| -> Option<u32> {
        let start = *i;
        let mut v = 0u32;
        while *i < s.len() && s[*i].is_ascii_digit() && *i - start < max {
            v = v * 10 + (s[*i] - b'0') as u32;
            *i += 1;
        }
        (*i > start).then_some(v)
    };
    let lower = s.to_ascii_lowercase();
    if matches!(lower.as_slice(), b"infinity" | b"-infinity" | b"epoch")
        || (s.first() == Some(&b'-') && s.get(1).is_some_and(|b| b.is_ascii_digit()))
    {
        return Unsupported;
    }
    let mut i = 0;
    let Some(year) = digits(&mut i, 6) else { return Invalid };
    if s.get(i).is_some_and(|b| b.is_ascii_digit()) {
        // A longer year: DuckDB reads `1234567-01-01`, not `20240105`.
        while s.get(i).is_some_and(|b| b.is_ascii_digit()) {
            i += 1;
        }
        return if matches!(s.get(i), Some(b'-' | b'/')) { Unsupported } else { Invalid };
    }
    let separator = match s.get(i) {
        Some(b @ (b'-' | b'/')) => *b,
        _ => return Invalid,
    };
    i += 1;
    let Some(month) = digits(&mut i, 2) else { return Invalid };
    if s.get(i) != Some(&separator) {
        return Invalid;
    }
    i += 1;
    let Some(day) = digits(&mut i, 2) else { return Invalid };
    let micros = match s.get(i) {
        None => 0,
        Some(b' ' | b'T') => match time_of_day(&s[i..]) {
            Some(t) => t,
            None => return Unsupported,
        },
        Some(b'(') => return Unsupported,
        Some(_) => return Invalid,
    };
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year as i64, month) {
        return Invalid;
    }
    Value((days_from_civil(year as i64, month, day), micros))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(s: &str) -> TextCast<i64> {
        text_to_int(s.as_bytes(), i32::MIN as i64, i32::MAX as i64)
    }

    /// DuckDB 2.0.1's answers (SELECT CAST('…' AS INTEGER)).
    #[test]
    fn integers_as_duckdb_reads_them() {
        for (s, v) in [
            (" 12 ", 12),
            ("+7", 7),
            ("-0", 0),
            ("1.5", 2),
            ("-2.5", -3),
            ("1.4", 1),
            ("1_000", 1000),
            ("\t5\n", 5),
            ("1.", 1),
            (".5", 1),
            ("-.5", -1),
            ("00012", 12),
            ("1.5_0", 2),
            ("2147483647", 2147483647),
            ("-2147483648", -2147483648),
        ] {
            assert_eq!(int(s), Value(v), "{s:?}");
        }
        for s in [
            "",
            " ",
            "12a",
            "1 2",
            "+",
            "-",
            "1__0",
            "_1",
            "1_",
            "2147483648",
            "2147483647.5",
            ".",
            "-.",
            "1,5",
            "1.5.2",
            "  +  1",
            "-0x1F",
            "١٢",
        ] {
            assert_eq!(int(s), Invalid, "{s:?}");
        }
        for s in ["0x1F", "0b101", "1e2", "1.5e1"] {
            assert_eq!(int(s), Unsupported, "{s:?}");
        }
        assert_eq!(text_to_int(b"-9223372036854775808", i64::MIN, i64::MAX), Value(i64::MIN));
        assert_eq!(text_to_int(b"9223372036854775808", i64::MIN, i64::MAX), Invalid);
    }

    #[test]
    fn decimals_round_half_away_from_zero() {
        let d = |s: &str| text_to_decimal(s.as_bytes(), 7, 2);
        assert_eq!(d("1.005"), Value(101));
        assert_eq!(d("-1.005"), Value(-101));
        assert_eq!(d("1.0049999"), Value(100));
        assert_eq!(d("999.995"), Value(100000));
        assert_eq!(d("-0.005"), Value(-1));
        assert_eq!(d(".5"), Value(50));
        assert_eq!(d("99999.994"), Value(9999999));
        assert_eq!(d("99999.995"), Invalid);
        assert_eq!(d("1_000"), Value(100000));
        assert_eq!(d("1.0_05"), Value(101));
        assert_eq!(d("1e1"), Unsupported);
        assert_eq!(text_to_decimal(b"999.995", 5, 2), Invalid);
    }

    #[test]
    fn doubles_are_the_nearest_and_equal_the_standard_reader() {
        for s in [
            "0.30000000000000004",
            "1.7976931348623157e308",
            "1_0.5",
            "1.5_5",
            "1e1_0",
            " 1.5 ",
            "-0",
            "123456789012345678e-21",
            "9007199254740993",
            "0.1",
            "4.35",
            "1e22",
            "5e-22",
        ] {
            let clean: String = s.trim().replace('_', "");
            match text_to_double(s.as_bytes()) {
                Value(v) => assert_eq!(v.to_bits(), clean.parse::<f64>().unwrap().to_bits(), "{s}"),
                other => assert!(s == "1.7976931348623157e308", "{s}: {other:?}"),
            }
        }
        assert!(matches!(text_to_double(b"-Infinity"), Value(v) if v == f64::NEG_INFINITY));
        assert!(matches!(text_to_double(b"NaN"), Value(v) if v.is_nan()));
        for s in
            ["0x10", "1d", ".e1", "e1", "1e", "1e+", "1e-", "1e1.5", "1e5.", "1E_1", "1._5", "1_.5", "- 1", "", "."]
        {
            assert_eq!(text_to_double(s.as_bytes()), Invalid, "{s:?}");
        }
        assert_eq!(text_to_double(b"1e-400"), Unsupported);
        assert_eq!(text_to_double(b"1.2345678901234567890123"), Unsupported);
    }

    /// Random decimal texts in the exact range read as Rust's (correctly rounded) reader.
    #[test]
    fn doubles_match_the_standard_reader_at_random() {
        let mut seed = 0x2545f4914f6cdd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut checked = 0;
        for _ in 0..50_000 {
            let digits = 1 + next() % 19;
            let w = next() % 10u64.pow(digits as u32);
            let e = (next() % 60) as i64 - 30;
            let text = format!("{w}e{e}");
            if let Value(v) = text_to_double(text.as_bytes()) {
                assert_eq!(v.to_bits(), text.parse::<f64>().unwrap().to_bits(), "{text}");
                checked += 1;
            }
        }
        assert!(checked > 30_000, "{checked}");
    }

    #[test]
    fn dates_and_booleans() {
        let date = |s: &str| text_to_date(s.as_bytes());
        assert_eq!(date(" 2024-1-5 "), Value(days_from_civil(2024, 1, 5) as i32));
        assert_eq!(date("2024/01/05"), date("2024-01-05"));
        assert_eq!(date("0024-01-05"), date("24-01-05"));
        for s in ["2024.01.05", "20240105", "2024-02-30", "2024-01-5x", "2024-01/05", "", "Zoe", "e", "-", "-x", "A B"]
        {
            assert_eq!(date(s), Invalid, "{s:?}");
        }
        for s in [
            "-2024-01-05",
            "1234567-01-01",
            "2024-01-05 24:00:00",
            "2024-01-05 10:00:00+02",
            "2024-01-05 10",
            "2024-01-05 (BC)",
            "infinity",
            "2024-01-05 10:00:00.1234567",
        ] {
            assert_eq!(date(s), Unsupported, "{s:?}");
        }
        // DuckDB 2.0.1's answers.
        let ts = |s: &str| text_to_timestamp(s.as_bytes());
        let day = days_from_civil(2024, 1, 5) * 86_400_000_000;
        assert_eq!(date("2024-01-05 10:00"), date("2024-01-05"));
        assert_eq!(ts("2024-01-05T10:00:00.123456"), Value(day + 36_000_123_456));
        assert_eq!(ts("2024-01-05  1:2:3"), Value(day + 3_723_000_000));
        assert_eq!(ts(" 2024-01-05 10:00:00. "), Value(day + 36_000_000_000));
        assert_eq!(ts("2024-01-05 10:00:00.5"), Value(day + 36_000_500_000));
        assert_eq!(ts("2024-01-05"), Value(day));
        assert_eq!(ts("2024-02-30 10:00"), Invalid);
        assert_eq!(text_to_bool(b"Yes"), Value(true));
        assert_eq!(text_to_bool(b"n"), Value(false));
        assert_eq!(text_to_bool(b" t "), Invalid);
        assert_eq!(text_to_bool(b"on"), Invalid);
    }
}
