//! The functions that make strings and test them (`Expr::StringFn`): SQL names, argument
//! types, result types and values, one definition for both backends. The GPU twin of
//! each is strings.cu's `str_<name>` (`StringFunc::cuda_name`), which writes its result
//! into the launch's string arena. Semantics are DuckDB's: lengths and positions count
//! code points, case mapping is DuckDB's own table (`gpusql_common::case_map`), trim
//! removes Unicode's space separators.

use gpusql_common::case_map::{LOWER, TRIM_SPACES, UPPER};
use gpusql_common::{date, scalar::format_decimal, DataType, Error, Result, ScalarValue};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StringFunc {
    /// `a || b`: NULL where any argument is.
    Concat,
    /// concat_ws(sep, a, …): NULL where the separator is; NULL values are skipped (with
    /// their separators). `concat(a, …)` is this with an empty separator.
    ConcatWs,
    Upper,
    Lower,
    /// trim / ltrim / rtrim (s [, characters]): without characters, Unicode's space
    /// separators (not tabs or newlines, as DuckDB).
    Trim,
    LTrim,
    RTrim,
    /// left / right (s, n): the first / last n characters; n < 0: all but the last /
    /// first |n|.
    Left,
    Right,
    /// replace(s, from, to): every occurrence, left to right; an empty `from` changes nothing.
    Replace,
    /// repeat(s, n): n < 1 gives ''.
    Repeat,
    /// lpad / rpad (s, n, fill): s cut or padded to n characters.
    Lpad,
    Rpad,
    /// split_part(s, separator, index): 1-based, negative from the end, '' out of range;
    /// an empty separator splits into characters.
    SplitPart,
    /// CAST(x AS VARCHAR) of BOOLEAN, INTEGER, BIGINT, DECIMAL, DATE and TIMESTAMP.
    ToText,
    /// starts_with / ends_with / contains (s, t): BOOLEAN.
    StartsWith,
    EndsWith,
    Contains,
    /// strpos / instr / position(t IN s) (s, t): the character position of t's first
    /// occurrence (1-based; 0: none; 1 for an empty t), BIGINT.
    Position,
    /// strlen(s): bytes, BIGINT.
    Strlen,
    /// strftime(timestamp, format): the format a constant the binder checked
    /// (`gpusql_common::strftime`); a DATE is cast to TIMESTAMP first.
    Strftime,
    /// strptime(text, format, …): the text read as a TIMESTAMP by the first format that
    /// reads it (`gpusql_common::strptime`), else an error; the formats are constants the
    /// binder checked (a DuckDB list of formats is one argument each). A string function
    /// though its result is no string: it reads text as the others do, and shares their
    /// binding, NULL rules, constant arguments and display; only its failures differ (the
    /// GPU's call returns a status: codegen's `gen_strptime`).
    Strptime,
    /// try_strptime: as strptime, but NULL where no format reads the text as a day that
    /// exists.
    TryStrptime,
    /// ascii(s): the first character's code point (0 for ''), INTEGER.
    Ascii,
}

impl StringFunc {
    /// The function a SQL name calls (lower case), if it is one of these. (`||`, concat
    /// and CAST are bound apart.)
    pub fn from_name(name: &str) -> Option<StringFunc> {
        use StringFunc::*;
        Some(match name {
            "concat_ws" => ConcatWs,
            "upper" | "ucase" => Upper,
            "lower" | "lcase" => Lower,
            "trim" => Trim,
            "ltrim" => LTrim,
            "rtrim" => RTrim,
            "left" => Left,
            "right" => Right,
            "replace" => Replace,
            "repeat" => Repeat,
            "lpad" => Lpad,
            "rpad" => Rpad,
            "split_part" => SplitPart,
            "starts_with" | "prefix" => StartsWith,
            "ends_with" | "suffix" => EndsWith,
            "contains" => Contains,
            "strpos" | "instr" | "position" => Position,
            "strlen" => Strlen,
            "ascii" => Ascii,
            _ => return None,
        })
    }

    pub fn name(&self) -> &'static str {
        use StringFunc::*;
        match self {
            Concat => "concat",
            ConcatWs => "concat_ws",
            Upper => "upper",
            Lower => "lower",
            Trim => "trim",
            LTrim => "ltrim",
            RTrim => "rtrim",
            Left => "left",
            Right => "right",
            Replace => "replace",
            Repeat => "repeat",
            Lpad => "lpad",
            Rpad => "rpad",
            SplitPart => "split_part",
            ToText => "to_text",
            StartsWith => "starts_with",
            EndsWith => "ends_with",
            Contains => "contains",
            Position => "position",
            Strlen => "strlen",
            Ascii => "ascii",
            Strftime => "strftime",
            Strptime => "strptime",
            TryStrptime => "try_strptime",
        }
    }

    /// strings.cu's device function.
    pub fn cuda_name(&self) -> String {
        format!("str_{}", self.name())
    }

    /// The argument types the binder casts to, for `n` arguments (None: that count is
    /// not accepted). ToText's one argument keeps its type.
    pub fn argument_types(&self, n: usize) -> Option<Vec<DataType>> {
        use StringFunc::*;
        let s = DataType::Utf8;
        let i = DataType::Int64;
        Some(match (self, n) {
            (Concat | ConcatWs, n) if n >= 1 => vec![s; n],
            (Upper | Lower | Strlen | Ascii, 1) | (Trim | LTrim | RTrim, 1) => vec![s],
            (Trim | LTrim | RTrim, 2) | (StartsWith | EndsWith | Contains | Position, 2) => vec![s, s],
            (Left | Right | Repeat, 2) => vec![s, i],
            (Replace, 3) => vec![s, s, s],
            (Lpad | Rpad, 3) => vec![s, i, s],
            (SplitPart, 3) => vec![s, s, i],
            (Strftime, 2) => vec![DataType::Timestamp, s],
            (Strptime | TryStrptime, n) if n >= 2 => vec![s; n],
            _ => return None,
        })
    }

    pub fn result_type(&self) -> DataType {
        match self {
            StringFunc::StartsWith | StringFunc::EndsWith | StringFunc::Contains => DataType::Boolean,
            StringFunc::Position | StringFunc::Strlen => DataType::Int64,
            StringFunc::Ascii => DataType::Int32,
            StringFunc::Strptime | StringFunc::TryStrptime => DataType::Timestamp,
            _ => DataType::Utf8,
        }
    }

    /// Whether the result is NULL only where an argument is (all but concat_ws, whose
    /// NULL values are skipped).
    pub fn null_in_null_out(&self) -> bool {
        *self != StringFunc::ConcatWs
    }

    /// Whether the GPU twin writes new strings (it takes the kernel's string arena); the
    /// others return views of their input or a BOOLEAN.
    pub fn writes_strings(&self) -> bool {
        use StringFunc::*;
        matches!(self, Concat | ConcatWs | Upper | Lower | Replace | Repeat | Lpad | Rpad | ToText | Strftime)
    }

    /// The call over evaluated arguments; `arg_ty` is the first argument's type (ToText's
    /// input).
    pub fn eval(&self, args: &[ScalarValue], arg_ty: DataType) -> Result<ScalarValue> {
        use ScalarValue as S;
        use StringFunc::*;
        if *self == ConcatWs {
            let Some(S::Utf8(sep)) = args.first() else { return Ok(S::Null) };
            let parts: Vec<&str> =
                args[1..].iter().filter_map(|a| if let S::Utf8(s) = a { Some(s.as_str()) } else { None }).collect();
            return Ok(S::Utf8(parts.join(sep)));
        }
        if args.iter().any(|a| a.is_null()) {
            return Ok(S::Null);
        }
        let text = |k: usize| match &args[k] {
            S::Utf8(s) => s.as_str(),
            _ => "",
        };
        let int = |k: usize| args[k].as_i128().unwrap_or(0).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        Ok(match self {
            Concat => S::Utf8(args.iter().map(|a| if let S::Utf8(s) = a { s.as_str() } else { "" }).collect()),
            ConcatWs => unreachable!("handled above"),
            Upper => S::Utf8(text(0).chars().map(upper_char).collect()),
            Lower => S::Utf8(lower_text(text(0))),
            Trim | LTrim | RTrim => {
                let set: Vec<char> = if args.len() > 1 { text(1).chars().collect() } else { trim_spaces() };
                let s = text(0);
                let s = if *self == RTrim { s } else { s.trim_start_matches(set.as_slice()) };
                let s = if *self == LTrim { s } else { s.trim_end_matches(set.as_slice()) };
                S::Utf8(s.to_string())
            }
            Left | Right => {
                let chars: Vec<char> = text(0).chars().collect();
                let len = chars.len() as i64;
                let keep = if int(1) >= 0 { int(1).min(len) } else { (len + int(1)).max(0) } as usize;
                let range = if *self == Left { 0..keep } else { chars.len() - keep..chars.len() };
                S::Utf8(chars[range].iter().collect())
            }
            Replace if text(1).is_empty() => S::Utf8(text(0).to_string()),
            Replace => S::Utf8(text(0).replace(text(1), text(2))),
            Repeat => S::Utf8(text(0).repeat(int(1).max(0) as usize)),
            Lpad | Rpad => S::Utf8(pad(text(0), int(1), text(2), *self == Lpad)?),
            SplitPart => S::Utf8(split_part(text(0), text(1), int(2)).to_string()),
            ToText => S::Utf8(to_text(&args[0], arg_ty)),
            StartsWith => S::Boolean(text(0).starts_with(text(1))),
            EndsWith => S::Boolean(text(0).ends_with(text(1))),
            Contains => S::Boolean(text(0).contains(text(1))),
            Position => S::Int64(text(0).find(text(1)).map_or(0, |at| text(0)[..at].chars().count() as i64 + 1)),
            Strlen => S::Int64(text(0).len() as i64),
            Ascii => S::Int32(text(0).chars().next().map_or(0, |c| c as i32)),
            Strftime => S::Utf8(gpusql_common::strftime::strftime(int(0), text(1))),
            Strptime | TryStrptime => {
                let formats: Vec<&str> = (1..args.len()).map(text).collect();
                let read = if *self == Strptime {
                    gpusql_common::strptime::strptime(text(0), &formats).map(Some)
                } else {
                    gpusql_common::strptime::try_strptime(text(0), &formats)
                };
                read?.map_or(S::Null, S::Timestamp)
            }
        })
    }
}

/// DuckDB's errors of lpad / rpad with an empty fill where the string is short.
pub fn insufficient_padding(left: bool) -> Error {
    Error::exec(format!("Insufficient padding in {}.", if left { "LPAD" } else { "RPAD" }))
}

fn pad(s: &str, n: i64, fill: &str, left: bool) -> Result<String> {
    let n = n.max(0) as usize;
    let chars: Vec<char> = s.chars().collect();
    if chars.len() >= n {
        return Ok(chars[..n].iter().collect());
    }
    let fill: Vec<char> = fill.chars().collect();
    if fill.is_empty() {
        return Err(insufficient_padding(left));
    }
    let padding: String = fill.iter().cycle().take(n - chars.len()).collect();
    Ok(if left { padding + s } else { s.to_string() + &padding })
}

fn split_part<'a>(s: &'a str, sep: &str, index: i64) -> &'a str {
    let parts: Vec<&str> = if sep.is_empty() {
        s.char_indices().map(|(i, c)| &s[i..i + c.len_utf8()]).collect()
    } else {
        s.split(sep).collect()
    };
    let k = if index > 0 { index - 1 } else { parts.len() as i64 + index };
    if index == 0 || k < 0 {
        return "";
    }
    parts.get(k as usize).copied().unwrap_or("")
}

/// DuckDB's text of a value (CAST(x AS VARCHAR)) of the types `ToText` takes.
pub fn to_text(v: &ScalarValue, ty: DataType) -> String {
    match v {
        ScalarValue::Decimal(x) => format_decimal(*x, ty.scale()),
        ScalarValue::Float64(x) => gpusql_common::double_text::double_text(*x),
        ScalarValue::Date(d) => date::format_date(*d as i64),
        other => other.display(&ty),
    }
}

fn map_char(c: char, table: &[(u32, u32, u32, i32)]) -> char {
    let cp = c as u32;
    // (Sorted by `first`: the last entry starting at or below cp.)
    let i = table.partition_point(|e| e.0 <= cp);
    match i.checked_sub(1).map(|i| table[i]) {
        Some((first, last, stride, delta)) if cp <= last && (cp - first).is_multiple_of(stride) => {
            char::from_u32((cp as i64 + delta as i64) as u32).unwrap_or(c)
        }
        _ => c,
    }
}

/// DuckDB's lower() of a text (ILIKE's pattern).
pub fn lower_text(s: &str) -> String {
    s.chars().map(lower_char).collect()
}

pub fn upper_char(c: char) -> char {
    map_char(c, &UPPER)
}

pub fn lower_char(c: char) -> char {
    map_char(c, &LOWER)
}

fn trim_spaces() -> Vec<char> {
    TRIM_SPACES.iter().filter_map(|c| char::from_u32(*c)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarValue as S;

    fn call(f: StringFunc, args: &[S]) -> S {
        f.eval(args, DataType::Utf8).unwrap()
    }
    fn t(s: &str) -> S {
        S::Utf8(s.into())
    }

    #[test]
    fn duckdb_answers() {
        // (Each answer is DuckDB 2.0.1's.)
        assert_eq!(call(StringFunc::Upper, &[t("straße ǆ ı ﬁ ᾀ")]), t("STRAẞE Ǆ I ﬁ ᾈ"));
        assert_eq!(call(StringFunc::Lower, &[t("İSTANBUL ẞ Σ")]), t("istanbul ß σ"));
        assert_eq!(call(StringFunc::Trim, &[t(" \u{3000}a\t ")]), t("a\t"));
        assert_eq!(call(StringFunc::Trim, &[t("abcxa"), t("ax")]), t("bc"));
        assert_eq!(call(StringFunc::Left, &[t("héllo"), S::Int64(2)]), t("hé"));
        assert_eq!(call(StringFunc::Left, &[t("abc"), S::Int64(-1)]), t("ab"));
        assert_eq!(call(StringFunc::Right, &[t("abc"), S::Int64(-1)]), t("bc"));
        assert_eq!(call(StringFunc::Replace, &[t("aaaa"), t("aa"), t("a")]), t("aa"));
        assert_eq!(call(StringFunc::Replace, &[t("abc"), t(""), t("x")]), t("abc"));
        assert_eq!(call(StringFunc::Lpad, &[t("a"), S::Int64(4), t("xy")]), t("xyxa"));
        assert_eq!(call(StringFunc::Rpad, &[t("abc"), S::Int64(2), t("x")]), t("ab"));
        assert!(StringFunc::Lpad.eval(&[t("a"), S::Int64(4), t("")], DataType::Utf8).is_err());
        assert_eq!(call(StringFunc::SplitPart, &[t("a,b,c"), t(","), S::Int64(-3)]), t("a"));
        assert_eq!(call(StringFunc::SplitPart, &[t("abc"), t(""), S::Int64(2)]), t("b"));
        assert_eq!(call(StringFunc::SplitPart, &[t("a,b"), t(","), S::Int64(0)]), t(""));
        assert_eq!(call(StringFunc::ConcatWs, &[t(","), t("a"), S::Null, t("b")]), t("a,b"));
        assert_eq!(call(StringFunc::Concat, &[t("a"), S::Null]), S::Null);
        assert_eq!(StringFunc::ToText.eval(&[S::Decimal(-5)], DataType::decimal(5, 2)).unwrap(), t("-0.05"));
    }
}
