//! strptime(text, format) and try_strptime as DuckDB 2.0.1 reads text by a format, for
//! both backends. The GPU's twin is text_cast.cu's `strptime_parse` (the same rules, walking
//! the format byte by byte where this splits it first, as DuckDB does, for its messages);
//! the binder checks each format with [`check_formats`] first, so neither meets a specifier
//! it does not read.
//!
//! DuckDB's rules: white space around the text is skipped; a run of white space in the
//! format matches a run of at least one in the text; numbers take 1 up to a specifier's
//! width of digits (%Y four, %j three, %f six, …), no sign; month and day names match in
//! any case (a day name is read and ignored); a field not given is 1900-01-01 00:00:00's.
//! %U / %W (with %w), %j and %G / %V / %u place the day instead of %m / %d where no %m or
//! %d came first. The words `epoch`, `infinity` and `-infinity` read as those TIMESTAMPs
//! whatever the format; this engine has no infinite TIMESTAMPs, so those two are an error.

use crate::date::{civil_from_days, days_from_civil, days_in_month, is_leap, iso_day_of_week, MONTH_NAMES};
use crate::date::{MICROS_PER_DAY, MICROS_PER_HOUR, MICROS_PER_MINUTE, MICROS_PER_SECOND};
use crate::strftime::DAY_NAMES;
use crate::Error;

/// How a row fails, as both backends tell it (the GPU in the upper bytes of its error
/// code; codegen's device_constants.rs `#define`s these for text_cast.cu).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// No format reads the text (DuckDB's "Could not parse string"; try_strptime: NULL).
    NoMatch = 1,
    /// The format that read it names a day its month does not have (DuckDB's "Date out
    /// of range"; try_strptime: NULL).
    DateRange = 2,
    /// `infinity` / `-infinity`: an error under strptime and try_strptime alike.
    Infinite = 3,
}

impl Failure {
    pub const ALL: [Failure; 3] = [Failure::NoMatch, Failure::DateRange, Failure::Infinite];

    /// Its status in CUDA.
    pub fn c_name(self) -> &'static str {
        match self {
            Failure::NoMatch => "STRPTIME_NO_MATCH",
            Failure::DateRange => "STRPTIME_DATE_RANGE",
            Failure::Infinite => "STRPTIME_INFINITE",
        }
    }

    pub fn from_code(code: i32) -> Option<Failure> {
        Self::ALL.into_iter().find(|f| *f as i32 == code)
    }

    /// The error without the row's text and format (the GPU knows neither).
    pub fn error(self) -> Error {
        match self {
            Failure::NoMatch => Error::exec("Could not parse string according to format specifier"),
            Failure::DateRange => Error::exec("Date out of range"),
            Failure::Infinite => infinite_error(),
        }
    }
}

fn infinite_error() -> Error {
    Error::not_supported("strptime of 'infinity' or '-infinity' (no infinite TIMESTAMP values)")
}

/// Checks the formats of a strptime call as DuckDB's binder does (its message, as a bind
/// error, for the first it does not read), then refuses the specifiers whose results this
/// engine has no type for.
pub fn check_formats(formats: &[&str]) -> Result<(), Error> {
    for f in formats {
        crate::strftime::check_format(f).map_err(Error::bind)?;
    }
    for f in formats {
        for spec in Format::split(f).specs {
            match spec {
                b'z' | b'Z' => return Err(Error::not_supported("strptime with %z / %Z (TIMESTAMP WITH TIME ZONE)")),
                b'n' => return Err(Error::not_supported("strptime with %n (TIMESTAMP_NS)")),
                _ => {}
            }
        }
    }
    Ok(())
}

/// strptime(text, formats): the first format that reads the text decides (its date must
/// exist); none: DuckDB's message naming the first format and the last one's complaint.
pub fn strptime(text: &str, formats: &[&str]) -> Result<i64, Error> {
    let mut complaint = Complaint::default();
    match read_special(text.as_bytes(), &mut complaint) {
        Some(Special::Value(us)) => return Ok(us),
        Some(Special::Infinite) => return Err(infinite_error()),
        Some(Special::Trailing) => {}
        None => {
            for f in formats {
                if let Some(fields) = Format::split(f).read(text.as_bytes(), &mut complaint) {
                    return fields
                        .timestamp()
                        .map_err(|(y, m, d)| Error::exec(format!("Date out of range: {y}-{m}-{d}")));
                }
            }
        }
    }
    let caret = match complaint.position {
        Some(p) => format!("{text}\n{}^", " ".repeat(p)),
        None => String::new(),
    };
    Err(Error::exec(format!(
        "Could not parse string \"{text}\" according to format specifier \"{}\"\n{caret}\nError: {}",
        formats[0], complaint.message
    )))
}

/// try_strptime(text, formats): the first format that reads the text as a day that
/// exists; None where none does.
pub fn try_strptime(text: &str, formats: &[&str]) -> Result<Option<i64>, Error> {
    let mut complaint = Complaint::default();
    match read_special(text.as_bytes(), &mut complaint) {
        Some(Special::Value(us)) => Ok(Some(us)),
        Some(Special::Infinite) => Err(infinite_error()),
        Some(Special::Trailing) => Ok(None),
        None => {
            Ok(formats.iter().find_map(|f| Format::split(f).read(text.as_bytes(), &mut complaint)?.timestamp().ok()))
        }
    }
}

/// DuckDB's white space (`StringUtil::CharacterIsSpace`).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// Why the last format did not read the text, and where (bytes after the leading white
/// space); a place stays from an earlier format where the last gives none, as DuckDB's.
#[derive(Default)]
struct Complaint {
    message: String,
    position: Option<usize>,
}

impl Complaint {
    fn at(&mut self, message: impl Into<String>, position: usize) {
        self.message = message.into();
        self.position = Some(position);
    }
}

enum Special {
    Value(i64),
    Infinite,
    /// A special word followed by more than white space: no format reads it.
    Trailing,
}

/// The special words DuckDB reads before any format: `infinity`, `-infinity`, `epoch` in
/// any case, alone but for white space.
fn read_special(text: &[u8], complaint: &mut Complaint) -> Option<Special> {
    let start = text.iter().position(|b| !is_space(*b)).unwrap_or(text.len());
    let s = &text[start..];
    // (DuckDB looks only at texts of more than 4 bytes.)
    if s.len() <= 4 {
        return None;
    }
    let starts = |word: &[u8]| s.len() >= word.len() && s[..word.len()].eq_ignore_ascii_case(word);
    let (special, len) = if s[0].is_ascii_alphabetic() && starts(b"infinity") {
        (Special::Infinite, 8)
    } else if s[0].is_ascii_alphabetic() && starts(b"epoch") {
        (Special::Value(0), 5)
    } else if starts(b"-infinity") {
        (Special::Infinite, 9)
    } else {
        return None;
    };
    let end = len + s[len..].iter().take_while(|b| is_space(**b)).count();
    if end != s.len() {
        complaint.at("Special timestamp did not match: trailing characters", end);
        return Some(Special::Trailing);
    }
    Some(special)
}

/// A format as DuckDB splits it: literal bytes around each specifier (`%%` a literal `%`,
/// `%-d` as `d`, %c %x %X %T as their parts), one more literal than specifiers.
struct Format {
    literals: Vec<Vec<u8>>,
    specs: Vec<u8>,
}

/// What the composite specifiers stand for.
fn expansion(spec: u8) -> Option<&'static str> {
    match spec {
        b'c' => Some("%Y-%m-%d %H:%M:%S"),
        b'x' => Some("%Y-%m-%d"),
        b'X' | b'T' => Some("%H:%M:%S"),
        _ => None,
    }
}

/// The digits a numeric specifier reads at most (None: it reads a word or AM / PM).
fn width(spec: u8) -> Option<usize> {
    Some(match spec {
        b'w' | b'u' => 1,
        b'd' | b'm' | b'y' | b'H' | b'I' | b'M' | b'S' | b'U' | b'W' | b'V' => 2,
        b'g' | b'j' => 3,
        b'Y' | b'G' => 4,
        b'f' => 6,
        _ => return None,
    })
}

/// The specifier that placed the day so far (DuckDB's `offset_specifier`): %Y and %y,
/// %m and %d, %U and %W, %G and %V each act alike.
#[derive(Clone, Copy, PartialEq)]
enum Placed {
    Nothing,
    MonthDay,
    Year,
    Iso,
    Week { monday_first: bool },
    YearDay,
}

/// The fields a format read, before the day is placed.
struct Fields {
    year: i64,
    month: u32,
    day: u32,
    hour: i64,
    minute: i64,
    second: i64,
    micros: i64,
}

impl Fields {
    /// The TIMESTAMP, or the date that does not exist.
    fn timestamp(&self) -> Result<i64, (i64, u32, u32)> {
        if self.day > days_in_month(self.year, self.month) {
            return Err((self.year, self.month, self.day));
        }
        let days = days_from_civil(self.year, self.month, self.day);
        let time = self.hour * MICROS_PER_HOUR + self.minute * MICROS_PER_MINUTE + self.second * MICROS_PER_SECOND;
        // (Years 0 to 9999: far inside the range.)
        Ok(days * MICROS_PER_DAY + time + self.micros)
    }
}

impl Format {
    /// `format` split (checked by `strftime::check_format`).
    fn split(format: &str) -> Format {
        let mut split = Format { literals: vec![], specs: vec![] };
        let mut literal = vec![];
        split.add(format.as_bytes(), &mut literal);
        split.literals.push(literal);
        split
    }

    /// The specifiers of `f` and the literal bytes before each (`literal`: those so far).
    fn add(&mut self, f: &[u8], literal: &mut Vec<u8>) {
        let mut i = 0;
        while i < f.len() {
            if f[i] != b'%' {
                literal.push(f[i]);
                i += 1;
                continue;
            }
            let unpadded = f[i + 1] == b'-';
            let spec = f[i + 1 + unpadded as usize];
            i += 2 + unpadded as usize;
            match expansion(spec) {
                _ if spec == b'%' => literal.push(b'%'),
                Some(parts) => self.add(parts.as_bytes(), literal),
                None => {
                    self.literals.push(std::mem::take(literal));
                    self.specs.push(spec);
                }
            }
        }
    }

    /// The fields of `text` read by this format, or None (and why, in `complaint`).
    fn read(&self, text: &[u8], complaint: &mut Complaint) -> Option<Fields> {
        let start = text.iter().position(|b| !is_space(*b)).unwrap_or(text.len());
        let s = &text[start..];
        let mut f = Fields { year: 1900, month: 1, day: 1, hour: 0, minute: 0, second: 0, micros: 0 };
        let mut placed = Placed::Nothing;
        let (mut week, mut weekday, mut year_day) = (0i64, None::<i64>, 0i64);
        let (mut iso_year, mut iso_week, mut iso_weekday) = (None::<i64>, None::<i64>, None::<i64>);
        let mut pm = None::<bool>;
        let mut pos = 0;
        for (k, literal) in self.literals.iter().enumerate() {
            let mut l = 0;
            while l < literal.len() {
                if is_space(literal[l]) {
                    if !s.get(pos).is_some_and(|b| is_space(*b)) {
                        complaint
                            .at(format!("Space does not match, expected {}", String::from_utf8_lossy(literal)), pos);
                        return None;
                    }
                    pos += 1 + s[pos + 1..].iter().take_while(|b| is_space(**b)).count();
                    l += 1 + literal[l + 1..].iter().take_while(|b| is_space(**b)).count();
                    continue;
                }
                if s.get(pos) != Some(&literal[l]) {
                    complaint.at(format!("Literal does not match, expected {}", String::from_utf8_lossy(literal)), pos);
                    return None;
                }
                pos += 1;
                l += 1;
            }
            let Some(&spec) = self.specs.get(k) else { break };
            let start = pos;
            let Some(width) = width(spec) else {
                let (names, message): (Vec<&str>, &str) = match spec {
                    b'p' => {
                        let ampm = s.get(pos..pos + 2).map(|w| w.to_ascii_lowercase());
                        match ampm.as_deref() {
                            Some(b"am") => pm = Some(false),
                            Some(b"pm") => pm = Some(true),
                            _ => {
                                complaint.at("Expected AM/PM", pos);
                                return None;
                            }
                        }
                        pos += 2;
                        continue;
                    }
                    b'a' => (
                        DAY_NAMES.iter().map(|n| &n[..3]).collect(),
                        "Expected an abbreviated day name (Mon, Tue, Wed, Thu, Fri, Sat, Sun)",
                    ),
                    b'A' => (DAY_NAMES.to_vec(), "Expected a full day name (Monday, Tuesday, etc...)"),
                    b'b' | b'h' => (
                        MONTH_NAMES.iter().map(|n| &n[..3]).collect(),
                        "Expected an abbreviated month name (Jan, Feb, Mar, etc..)",
                    ),
                    _ => (MONTH_NAMES.to_vec(), "Expected a full month name (January, February, etc...)"),
                };
                let found = names
                    .iter()
                    .position(|n| s.get(pos..pos + n.len()).is_some_and(|w| w.eq_ignore_ascii_case(n.as_bytes())));
                let Some(which) = found else {
                    complaint.at(message, pos);
                    return None;
                };
                pos += names[which].len();
                if matches!(spec, b'b' | b'h' | b'B') {
                    f.month = which as u32 + 1;
                }
                continue;
            };
            let digits = s[pos..].iter().take(width).take_while(|b| b.is_ascii_digit()).count();
            if digits == 0 {
                complaint.at("Expected a number", start);
                return None;
            }
            let n = s[pos..pos + digits].iter().fold(0i64, |v, b| v * 10 + (b - b'0') as i64);
            pos += digits;
            // DuckDB's checks, in its order: the specifiers that place the day first.
            let refuse = |complaint: &mut Complaint, message: &str| {
                complaint.at(message, start);
                None
            };
            match spec {
                b'd' | b'm' => {
                    let (lo, hi, what) = if spec == b'd' { (1, 31, "Day") } else { (1, 12, "Month") };
                    if !(lo..=hi).contains(&n) {
                        return refuse(
                            complaint,
                            &format!("{what} out of range, expected a value between {lo} and {hi}"),
                        );
                    }
                    if spec == b'd' {
                        f.day = n as u32;
                    } else {
                        f.month = n as u32;
                    }
                    placed = Placed::MonthDay;
                }
                b'y' | b'Y' => {
                    if matches!(placed, Placed::Nothing | Placed::Iso) {
                        placed = Placed::Year;
                    }
                    f.year = match spec {
                        b'Y' => n,
                        _ if n >= 69 => 1900 + n,
                        _ => 2000 + n,
                    };
                }
                b'G' => {
                    match placed {
                        Placed::MonthDay | Placed::Year => {}
                        Placed::Nothing => placed = Placed::Iso,
                        Placed::Iso if iso_year.is_some() => {
                            return refuse(complaint, "Multiple ISO year offsets specified");
                        }
                        Placed::Iso => {}
                        _ => return refuse(complaint, "Incompatible ISO year offset specified"),
                    }
                    iso_year = Some(n);
                }
                b'H' if n >= 24 => return refuse(complaint, "Hour out of range, expected a value between 0 and 23"),
                b'I' if !(1..=12).contains(&n) => {
                    return refuse(complaint, "Hour12 out of range, expected a value between 1 and 12")
                }
                b'H' | b'I' => f.hour = n,
                b'M' if n >= 60 => return refuse(complaint, "Minutes out of range, expected a value between 0 and 59"),
                b'M' => f.minute = n,
                b'S' if n >= 60 => return refuse(complaint, "Seconds out of range, expected a value between 0 and 59"),
                b'S' => f.second = n,
                // Fractions: the digits read, as if padded with zeros to the width.
                b'f' => f.micros = n * 10i64.pow((6 - digits) as u32),
                b'g' => f.micros = n * 10i64.pow((3 - digits) as u32) * 1000,
                b'U' | b'W' => {
                    match placed {
                        Placed::MonthDay => {}
                        Placed::Year | Placed::Nothing => placed = Placed::Week { monday_first: spec == b'W' },
                        _ => return refuse(complaint, "Multiple week offsets specified"),
                    }
                    if n > 53 {
                        return refuse(complaint, "Week out of range, expected a value between 0 and 53");
                    }
                    week = n;
                }
                b'w' if n > 6 => return refuse(complaint, "Weekday out of range, expected a value between 0 and 6"),
                b'w' => weekday = Some(n),
                b'V' => {
                    match placed {
                        Placed::Year => {
                            return refuse(
                                complaint,
                                "ISO week offsets are incompatible with non-ISO year specifiers. Use '%G' instead",
                            )
                        }
                        Placed::MonthDay => {}
                        Placed::Nothing => placed = Placed::Iso,
                        Placed::Iso if iso_week.is_some() => {
                            return refuse(complaint, "Multiple ISO week offsets specified")
                        }
                        Placed::Iso => {}
                        _ => return refuse(complaint, "Incompatible ISO week offset specified"),
                    }
                    if !(1..=53).contains(&n) {
                        return refuse(complaint, "ISO week offset out of range, expected a value between 1 and 53");
                    }
                    iso_week = Some(n);
                }
                b'u' => {
                    if iso_weekday.is_some() {
                        return refuse(complaint, "Multiple ISO weekday offsets specified");
                    }
                    if !(1..=7).contains(&n) {
                        return refuse(complaint, "ISO weekday offset out of range, expected a value between 1 and 7");
                    }
                    iso_weekday = Some(n);
                }
                _ => {
                    // %j
                    match placed {
                        Placed::MonthDay => {}
                        Placed::Year | Placed::Nothing => placed = Placed::YearDay,
                        _ => return refuse(complaint, "Multiple year offsets specified"),
                    }
                    if !(1..=366).contains(&n) {
                        return refuse(complaint, "Year day out of range, expected a value between 1 and 366");
                    }
                    year_day = n;
                }
            }
        }
        pos += s[pos..].iter().take_while(|b| is_space(**b)).count();
        if pos != s.len() {
            complaint.at("Full specifier did not match: trailing characters", pos);
            return None;
        }
        if let Some(pm) = pm {
            if f.hour > 12 {
                // (No place: DuckDB keeps an earlier format's.)
                complaint.message =
                    format!("Invalid hour: {} AM/PM, expected an hour within the range [0..12]", f.hour);
                return None;
            }
            f.hour = match (pm, f.hour) {
                (false, 12) => 0,
                (true, h) if h != 12 => h + 12,
                (_, h) => h,
            };
        }
        let day = match placed {
            Placed::Iso => {
                // ISO week 1 is the one with January 4th; it starts on a Monday.
                let jan4 = days_from_civil(iso_year.unwrap_or(1900), 1, 4);
                let week1 = jan4 - (iso_day_of_week(jan4) - 1);
                week1 + (iso_week.unwrap_or(1) - 1) * 7 + iso_weekday.unwrap_or(1) - 1
            }
            Placed::Week { monday_first } => {
                let weekday = weekday.map_or(0, |w| (w + 7 - monday_first as i64) % 7);
                let jan1 = days_from_civil(f.year, 1, 1);
                let mut start = jan1 - (iso_day_of_week(jan1) - 1) - !monday_first as i64;
                // Week 0 holds the days before the year's first Sunday / Monday.
                if start >= jan1 {
                    start -= 7;
                }
                start + week * 7 + weekday
            }
            Placed::YearDay => {
                if year_day > 365 + is_leap(f.year) as i64 {
                    complaint.at("Year day out of range for the year", 0);
                    return None;
                }
                days_from_civil(f.year, 1, 1) + year_day - 1
            }
            Placed::Nothing | Placed::MonthDay | Placed::Year => return Some(f),
        };
        (f.year, f.month, f.day) = civil_from_days(day);
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::date::parse_timestamp;

    fn ts(s: &str) -> i64 {
        parse_timestamp(s).unwrap()
    }
    fn read(text: &str, format: &str) -> Result<i64, Error> {
        check_formats(&[format]).unwrap();
        strptime(text, &[format])
    }
    fn message(text: &str, formats: &[&str]) -> String {
        match strptime(text, formats) {
            Err(Error::Execution(m)) => m,
            other => panic!("{other:?}"),
        }
    }

    /// DuckDB 2.0.1's answers.
    #[test]
    fn duckdb_answers() {
        let cases = [
            ("2020-01-02 03:04:05", "%Y-%m-%d %H:%M:%S", "2020-01-02 03:04:05"),
            (" \t2020-1-2\n ", "%Y-%m-%d", "2020-01-02"),
            ("2020 \t 01", "%Y %m", "2020-01-01"),
            ("2020 01", "%Y \t %m", "2020-01-01"),
            ("mAr 5 2020", "%b %d %Y", "2020-03-05"),
            ("MARCH 5 2020", "%B %d %Y", "2020-03-05"),
            ("friday 2020-01-02", "%A %Y-%m-%d", "2020-01-02"),
            ("69", "%y", "1969-01-01"),
            ("68", "%y", "2068-01-01"),
            ("7", "%Y", "0007-01-01"),
            ("12:30:45.5", "%H:%M:%S.%f", "1900-01-01 12:30:45.5"),
            ("12:30:45.5", "%H:%M:%S.%g", "1900-01-01 12:30:45.5"),
            ("2020-01-02 3:4:5.000001", "%Y-%m-%d %H:%M:%S.%f", "2020-01-02 03:04:05.000001"),
            ("12 am", "%I %p", "1900-01-01 00:00:00"),
            ("12 pm", "%I %p", "1900-01-01 12:00:00"),
            ("0 PM", "%H %p", "1900-01-01 12:00:00"),
            ("1 PM 2 AM", "%I %p %H %p", "1900-01-01 02:00:00"),
            ("60 2020", "%j %Y", "2020-02-29"),
            ("2020 366", "%Y %j", "2020-12-31"),
            ("2020 60 03-05", "%Y %j %m-%d", "2020-03-05"),
            ("2019 366 5", "%Y %j %m", "2019-05-01"),
            ("2020 10 3", "%Y %U %w", "2020-03-11"),
            ("2020 0 0", "%Y %U %w", "2019-12-29"),
            ("2020 0 0", "%Y %W %w", "2020-01-05"),
            ("2020 53 6", "%Y %U %w", "2021-01-09"),
            ("2020 10", "%Y %W", "2020-03-09"),
            ("10 2020", "%U %Y", "2020-03-08"),
            ("2020 1 1", "%Y %U %u", "2020-01-05"),
            ("2020 10 3", "%G %V %u", "2020-03-04"),
            ("2020 53 7", "%G %V %u", "2021-01-03"),
            ("2020", "%G", "2019-12-30"),
            ("10", "%V", "1900-03-05"),
            ("10 2020", "%V %Y", "2020-01-01"),
            ("2020 10 3 03-04", "%G %V %u %m-%d", "1900-03-04"),
            ("2020 10 3", "%G %V %w", "2020-03-02"),
            ("2020-01-02 03:04:05", "%c", "2020-01-02 03:04:05"),
            ("x2020-01-02", "x%x", "2020-01-02"),
            ("03:04:05", "%T", "1900-01-01 03:04:05"),
            ("2020 % 5", "%Y %% %m", "2020-05-01"),
            (" EPOCH ", "%Y", "1970-01-01"),
            ("x ", "x", "1900-01-01"),
        ];
        // (0002-12-26 (BC), as DuckDB writes it.)
        assert_eq!(read("0000 0", "%Y %U").unwrap(), days_from_civil(-1, 12, 26) * MICROS_PER_DAY);
        for (text, format, want) in cases {
            assert_eq!(read(text, format).unwrap(), ts(want), "{text:?} by {format:?}");
        }
    }

    #[test]
    fn duckdb_messages() {
        assert_eq!(
            message("2020-01-02x", &["%Y-%m-%d"]),
            "Could not parse string \"2020-01-02x\" according to format specifier \"%Y-%m-%d\"\n\
             2020-01-02x\n          ^\nError: Full specifier did not match: trailing characters"
        );
        assert!(message("12345-03-15", &["%Y-%m-%d"])
            .ends_with("12345-03-15\n    ^\nError: Literal does not match, expected -"));
        assert!(message("2020 x", &["%Y %% %m"]).ends_with("     ^\nError: Literal does not match, expected  % "));
        assert!(message("202001", &["%Y %m"]).ends_with("    ^\nError: Space does not match, expected  "));
        assert!(message("13:00 PM", &["%H:%M %p"])
            .ends_with("\"%H:%M %p\"\n\nError: Invalid hour: 13 AM/PM, expected an hour within the range [0..12]"));
        // A list: the first format named, the last one's complaint, an earlier place kept.
        assert!(
            message("13:00 PM", &["%Y", "%H:%M %p"]).contains("specifier \"%Y\"\n13:00 PM\n  ^\nError: Invalid hour")
        );
        assert!(message("2021 366", &["%Y-%m", "%Y %j"])
            .ends_with("2021 366\n^\nError: Year day out of range for the year"));
        assert!(message("epochs", &["%Y"])
            .ends_with("epochs\n     ^\nError: Special timestamp did not match: trailing characters"));
        assert!(message("2020 54 7", &["%G %V %u"])
            .ends_with("ISO week offset out of range, expected a value between 1 and 53"));
        assert!(message("2020 10", &["%Y %V"]).ends_with("non-ISO year specifiers. Use '%G' instead"));
        assert!(message("2020 10 60", &["%Y %U %j"]).ends_with("        ^\nError: Multiple year offsets specified"));
        assert!(message("10 2020", &["%j %G"]).ends_with("Incompatible ISO year offset specified"));
        assert!(message("Sept 5 2020", &["%b %d %Y"]).ends_with("   ^\nError: Space does not match, expected  "));
        assert!(message("Fr 2020", &["%a %Y"])
            .ends_with("^\nError: Expected an abbreviated day name (Mon, Tue, Wed, Thu, Fri, Sat, Sun)"));
        assert_eq!(message("2020-02-30", &["%Y-%m-%d", "%Y-%d-%m"]), "Date out of range: 2020-2-30");
    }

    #[test]
    fn try_strptime_is_null_where_no_format_gives_a_day() {
        assert_eq!(try_strptime("2020-02-30", &["%Y-%m-%d"]).unwrap(), None);
        assert_eq!(try_strptime("2021 366", &["%Y %j"]).unwrap(), None);
        assert_eq!(try_strptime("2020-30-01", &["%Y-%m-%d", "%Y-%d-%m"]).unwrap(), Some(ts("2020-01-30")));
        assert_eq!(try_strptime("epochs", &["%Y"]).unwrap(), None);
        assert!(try_strptime("-Infinity ", &["%Y"]).is_err());
        assert!(strptime("infinity", &["%Y"]).is_err());
    }

    #[test]
    fn formats_are_checked_as_duckdb_checks_them() {
        let err = |f: &[&str]| check_formats(f).unwrap_err().to_string();
        assert_eq!(
            err(&["%Y", "ab%Q"]),
            "Failed to parse format specifier ab%Q: Unrecognized format for strftime/strptime: %Q"
        );
        assert!(err(&["%z", "%Q"]).contains("%Q"));
        assert!(err(&["%Y %Z"]).starts_with("not supported: strptime with %z / %Z"));
        assert!(err(&["%n"]).starts_with("not supported: strptime with %n"));
        assert!(check_formats(&["%c %-d %%"]).is_ok());
    }
}
