//! The generator's function calls: text casts, string functions, strptime and intervals.

use super::{Generator, Scope, Ty};

impl Generator<'_> {
    /// CAST / TRY_CAST of text (text_cast.rs) to an integer or a DATE: the text of other
    /// values read back, numbers with a fraction to round, the data's own strings; and
    /// TRY_CAST of DOUBLEs that may leave the integer range.
    pub(super) fn text_cast(&mut self, scope: &Scope, ty: Ty, b: usize) -> String {
        let has = |t: Ty| !scope.of_type(t).is_empty();
        if ty == Ty::Date && self.rng.chance(0.25) {
            return format!("CAST({} AS DATE)", self.strptime_call(scope, b));
        }
        if ty == Ty::Date {
            return match has(Ty::Str) && self.rng.chance(0.3) {
                true => format!("TRY_CAST({} AS DATE)", self.expr(scope, Ty::Str, b)),
                false => format!("CAST(CAST({} AS VARCHAR) AS DATE)", self.expr(scope, Ty::Date, b)),
            };
        }
        let target = *self.rng.pick(&["INTEGER", "BIGINT"]).unwrap_or(&"BIGINT");
        match self.rng.below(4) {
            0 if has(Ty::Str) => format!("TRY_CAST({} AS {target})", self.expr(scope, Ty::Str, b)),
            1 if has(Ty::Float) => format!("TRY_CAST({} AS {target})", self.expr(scope, Ty::Float, b)),
            2 => format!(
                "TRY_CAST(concat(' ', {}, '.', {}) AS {target})",
                self.expr(scope, Ty::Int, b),
                self.rng.below(10)
            ),
            _ => format!("TRY_CAST(CAST({} AS VARCHAR) AS {target})", self.expr(scope, Ty::Int, b)),
        }
    }

    /// A function that makes a string (strings.rs): case, concatenation (of other types'
    /// text too), trimming, cutting, padding, replacing (regexp_replace and regexp_extract
    /// too).
    pub(super) fn string_function(&mut self, scope: &Scope, b: usize) -> String {
        let text = |g: &mut Generator| g.expr(scope, Ty::Str, b);
        let small = |g: &mut Generator| g.rng.below(9) as i64 - 3;
        match self.rng.below(14) {
            0 => format!("upper({})", text(self)),
            1 => format!("lower({})", text(self)),
            2 => format!("({} || {})", text(self), text(self)),
            3 => {
                let ty = self.any_type(scope);
                format!("concat_ws('-', {}, {})", text(self), self.expr(scope, ty, b))
            }
            4 => {
                let f = *self.rng.pick(&["trim", "ltrim", "rtrim"]).unwrap_or(&"trim");
                match self.rng.chance(0.5) {
                    true => format!("{f}({})", text(self)),
                    false => format!("{f}({}, {})", text(self), self.literal(scope, Ty::Str)),
                }
            }
            5 => {
                let f = *self.rng.pick(&["left", "right"]).unwrap_or(&"left");
                format!("{f}({}, {})", text(self), small(self))
            }
            6 => format!("replace({}, {}, {})", text(self), self.literal(scope, Ty::Str), self.literal(scope, Ty::Str)),
            7 => {
                let f = *self.rng.pick(&["lpad", "rpad"]).unwrap_or(&"lpad");
                let fill = *self.rng.pick(&["'*'", "'é'", "'ab'", "'🦆x'"]).unwrap_or(&"'*'");
                format!("{f}({}, {}, {fill})", text(self), self.rng.below(9))
            }
            8 => format!("repeat({}, {})", text(self), self.rng.below(4)),
            9 => format!("split_part({}, {}, {})", text(self), self.literal(scope, Ty::Str), small(self)),
            10 => format!("concat({}, {})", text(self), text(self)),
            11 => {
                let patterns =
                    ["[aeiou]+", "\\d+", "^.", ".$", "\\w+", "x*", "", "(?i)[a-c]", "\\b", "é|ß", "[^a-z]", "a|"];
                let pattern = *self.rng.pick(&patterns).unwrap_or(&"");
                match self.rng.chance(0.3) {
                    true => format!("regexp_extract({}, '{pattern}')", text(self)),
                    false => {
                        let rewrite = *self.rng.pick(&["X", "<\\0>", "", "\\\\", "é"]).unwrap_or(&"X");
                        let options = *self.rng.pick(&["", ", 'g'", ", 'gi'", ", 'i'"]).unwrap_or(&"");
                        format!("regexp_replace({}, '{pattern}', '{rewrite}'{options})", text(self))
                    }
                }
            }
            12 => format!("CAST({} AS VARCHAR)", self.strptime_call(scope, b)),
            _ => {
                let ty = *self.rng.pick(&[Ty::Int, Ty::Dec, Ty::Date, Ty::Float]).unwrap_or(&Ty::Int);
                match scope.of_type(ty).is_empty() {
                    true => format!("upper({})", text(self)),
                    false if ty == Ty::Date && self.rng.chance(0.5) => {
                        let formats =
                            ["%Y-%m", "%d/%m/%y %a", "%j %U %W %V %G", "%B %-d, %Y", "%A %u %w %b", "%c %p %I"];
                        let f = *self.rng.pick(&formats).unwrap_or(&"%Y");
                        format!("strftime({}, '{f}')", self.expr(scope, ty, b))
                    }
                    false => format!("CAST({} AS VARCHAR)", self.expr(scope, ty, b)),
                }
            }
        }
    }

    /// strptime / try_strptime (strptime.rs), a TIMESTAMP, of text that mostly reads: a
    /// date written by strftime in a format that reads back (in upper case, with white
    /// space around, or after a format that does not read it), a date's CAST to VARCHAR;
    /// or (try_strptime only) the data's own strings.
    fn strptime_call(&mut self, scope: &Scope, b: usize) -> String {
        // (Written by the first, read by the second.)
        const FORMATS: &[(&str, &str)] = &[
            ("%Y-%m-%d", "%Y-%m-%d"),
            ("%d/%m/%y %a", "%d/%m/%y %a"),
            ("%j %Y", "%-j %Y"),
            ("%B %-d, %Y", "%B %d, %Y"),
            ("%A %d %b %Y %I %p", "%A %d %h %Y %-I %p"),
            ("%G %V %u", "%G %V %u"),
            ("%Y %U %w", "%Y %U %w"),
            ("%W %w %Y", "%W %w %Y"),
            ("%c", "%x %X"),
            ("%x %H:%M:%S.%f", "%Y-%m-%d %T.%f"),
        ];
        let (write, read) = *self.rng.pick(FORMATS).unwrap_or(&("%Y-%m-%d", "%Y-%m-%d"));
        if !scope.of_type(Ty::Str).is_empty() && self.rng.chance(0.2) {
            return format!("try_strptime({}, '{read}')", self.expr(scope, Ty::Str, b));
        }
        let date = self.expr(scope, Ty::Date, b);
        let text = match self.rng.below(4) {
            0 => format!("upper(strftime({date}, '{write}'))"),
            1 => format!("concat(' ', strftime({date}, '{write}'), '  ')"),
            2 if read == "%Y-%m-%d" => format!("CAST({date} AS VARCHAR)"),
            _ => format!("strftime({date}, '{write}')"),
        };
        let f = if self.rng.chance(0.7) { "strptime" } else { "try_strptime" };
        match self.rng.chance(0.2) {
            true => format!("{f}({text}, ['%d/%m/%Y', '{read}'])"),
            false => format!("{f}({text}, '{read}')"),
        }
    }

    /// An INTERVAL: a difference of two dates' midnights, a literal, a `to_*` of a number, or
    /// arithmetic on them.
    /// (Only used through comparisons, EXTRACT, CAST to VARCHAR and addition to a date:
    /// equal intervals of different spellings, `1 day` and `24:00:00`, are one group whose
    /// spelling either engine may pick.)
    pub(super) fn interval(&mut self, scope: &Scope, budget: usize) -> String {
        let b = budget.saturating_sub(1);
        let literal = |g: &mut Generator| {
            let units = ["day", "hours", "minutes", "month", "seconds", "days 01:30:00", "year"];
            let unit = *g.rng.pick(&units).unwrap_or(&"day");
            let n = g.rng.below(60) as i64 - 20;
            let frac = if g.rng.chance(0.2) { ".5" } else { "" };
            format!("INTERVAL '{n}{frac} {unit}'")
        };
        match self.rng.below(7) {
            0 | 1 if !scope.of_type(Ty::Date).is_empty() => format!(
                "(CAST({} AS TIMESTAMP) - CAST({} AS TIMESTAMP))",
                self.expr(scope, Ty::Date, b),
                self.expr(scope, Ty::Date, b)
            ),
            2 if budget > 0 => {
                let k = *self.rng.pick(&["2", "-1", "1.5", "0.25", "3"]).unwrap_or(&"2");
                let op = if self.rng.chance(0.7) { "*" } else { "/" };
                format!("({} {op} {k})", self.interval(scope, b))
            }
            3 if budget > 0 => {
                let op = if self.rng.chance(0.5) { "+" } else { "-" };
                format!("({} {op} {})", self.interval(scope, b), self.interval(scope, b))
            }
            4 if budget > 0 => {
                let f = *self
                    .rng
                    .pick(&["to_days", "to_months", "to_hours", "to_minutes", "to_microseconds"])
                    .unwrap_or(&"to_days");
                format!("{f}({})", self.expr(scope, Ty::Int, b))
            }
            5 if budget > 0 => {
                let f = if self.rng.chance(0.5) { "to_seconds" } else { "to_milliseconds" };
                format!("{f}({})", self.expr(scope, Ty::Float, b))
            }
            _ => literal(self),
        }
    }
}
