//! Binding pattern matches: `[NOT] LIKE` / `ILIKE` (`Expr::Like`), and regular-expression
//! matches to `Expr::Regex` (a DFA: `plan/src/regex.rs`), with DuckDB's spellings: `regexp_matches(s, p [, options])` and `s ~ p` (a match anywhere),
//! `regexp_full_match(s, p [, options])` and `s SIMILAR TO p` (the whole string), `~*`
//! (case-insensitive), `!~` and `!~*` (negated); and the functions that use where a match
//! is, to `Expr::RegexFind`: `regexp_extract(s, p [, 0 [, options]])` and
//! `regexp_replace(s, p, replacement [, options])` (option 'g': every match). The
//! pattern, options and replacement must be constants (the DFA is built here, once); a
//! NULL pattern gives NULL.

use crate::bind_expr::{AtSpan, Context};
use gpusql_common::{DataType, Error, Result, ScalarValue};
use gpusql_plan::regex::{check_rewrite, RegexDfa, RegexError, RegexOptions};
use gpusql_plan::Expr;
use sqlparser::ast::{self, Spanned};
use std::sync::Arc;

impl Context<'_> {
    /// `x [NOT] LIKE 'pattern' [ESCAPE 'c']`: the pattern a string constant.
    /// ILIKE (`ignore_case`) is LIKE of the lower-case text and pattern, as in DuckDB.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn bind_like(
        &self,
        x: &ast::Expr,
        pattern: &ast::Expr,
        escape_char: Option<&ast::Expr>,
        negated: bool,
        ignore_case: bool,
        whole: &ast::Expr,
    ) -> Result<Expr> {
        let lower = |s: String| gpusql_plan::strings::lower_text(&s);
        let v = self.bind(x)?;
        if v.ty() != DataType::Utf8 && !matches!(v, Expr::Literal { value: ScalarValue::Null, .. }) {
            return Err(Error::bind(format!("LIKE needs VARCHAR, got {}", v.ty())).at_span(whole.span()));
        }
        let (text, source) = match self.bind(pattern)? {
            Expr::Literal { value: ScalarValue::Utf8(s), .. } if ignore_case => (lower(s), None),
            Expr::Literal { value: ScalarValue::Utf8(s), .. } => (s, None),
            // A template's pattern (no ESCAPE: the shape keeps those written).
            Expr::Parameter { value: ScalarValue::Utf8(s), source, .. } if escape_char.is_none() && !ignore_case => {
                (s, Some(source))
            }
            _ => {
                return Err(
                    Error::not_supported("LIKE with a pattern that is not a string literal").at_span(pattern.span())
                )
            }
        };
        let escape = match escape_char {
            None => None,
            Some(x) => match self.bind(x)? {
                Expr::Literal { value: ScalarValue::Utf8(s), .. } if s.chars().count() == 1 => {
                    if ignore_case { lower(s) } else { s }.chars().next()
                }
                _ => return Err(Error::bind("LIKE … ESCAPE needs a single character").at_span(x.span())),
            },
        };
        let pattern = gpusql_plan::LikePattern::new(&text, escape).map_err(|m| Error::bind(m).at_span(whole.span()))?;
        let pattern = gpusql_plan::LikePattern { source, ..pattern };
        let text = crate::coerce::cast(v, DataType::Utf8);
        let text =
            if ignore_case { Expr::StringFn { func: gpusql_plan::StringFunc::Lower, args: vec![text] } } else { text };
        Ok(Expr::Like { expr: Box::new(text), pattern, negated })
    }

    /// A `regexp_matches` / `regexp_full_match` / `regexp_extract` / `regexp_replace`
    /// call, or None where `f` is none of them.
    pub(crate) fn bind_regex_function(&self, f: &ast::Function, whole: &ast::Expr) -> Option<Result<Expr>> {
        let name = f.name.to_string().to_ascii_lowercase();
        let (full, usage) = match name.as_str() {
            "regexp_matches" => (false, "(string, pattern [, options])"),
            "regexp_full_match" => (true, "(string, pattern [, options])"),
            "regexp_extract" => (false, "(string, pattern [, group [, options]])"),
            "regexp_replace" => (false, "(string, pattern, replacement [, options])"),
            _ => return None,
        };
        Some((|| {
            let count = |range: std::ops::RangeInclusive<usize>| match crate::functions::plain_arguments(f) {
                Some(args) if range.contains(&args.len()) => Ok(args),
                _ => Err(Error::bind(format!("{name} takes {usage}")).at_span(whole.span())),
            };
            match name.as_str() {
                "regexp_extract" => {
                    let args = count(2..=4)?;
                    if let Some(g) = args.get(2) {
                        match self.bind(g)? {
                            Expr::Literal { value, .. } if value.as_i128() == Some(0) => {}
                            Expr::Literal { value, .. } if value.as_i128().is_some_and(|n| (1..=9).contains(&n)) => {
                                return Err(Error::not_supported(
                                    "regexp_extract of a capture group (a group other than 0)",
                                )
                                .at_span(g.span()))
                            }
                            Expr::Literal { value, .. } if value.as_i128().is_some() => {
                                return Err(Error::bind("Group index must be between 0 and 9!").at_span(g.span()))
                            }
                            _ => {
                                return Err(Error::not_supported(
                                    "regexp_extract with a group that is not an integer constant",
                                )
                                .at_span(g.span()))
                            }
                        }
                    }
                    let options = self.regex_options(&name, args.get(3).copied())?;
                    let options = RegexOptions::parse(&options).map_err(|e| regex_error(e).at_span(whole.span()))?;
                    self.bind_regex_find(args[0], args[1], None, options, false)
                }
                "regexp_replace" => {
                    let args = count(3..=4)?;
                    let letters = self.regex_options(&name, args.get(3).copied())?;
                    let global = letters.contains('g');
                    let options = RegexOptions::parse(&letters.replace('g', ""))
                        .map_err(|e| regex_error(e).at_span(whole.span()))?;
                    self.bind_regex_find(args[0], args[1], Some(args[2]), options, global)
                }
                _ => {
                    let args = count(2..=3)?;
                    let options = self.regex_options(&name, args.get(2).copied())?;
                    let options = RegexOptions::parse(&options).map_err(|e| regex_error(e).at_span(whole.span()))?;
                    self.bind_regex(args[0], args[1], options, full, false, &name)
                }
            }
        })())
    }

    /// The option letters of a regular-expression function ('' where not given): a string
    /// constant.
    fn regex_options(&self, name: &str, options: Option<&ast::Expr>) -> Result<String> {
        let Some(o) = options else { return Ok(String::new()) };
        match self.bind(o)? {
            Expr::Literal { value: ScalarValue::Utf8(s), .. } => Ok(s),
            Expr::Literal { value: ScalarValue::Null, .. } => {
                Err(Error::bind("Regex options field must not be NULL").at_span(o.span()))
            }
            _ => {
                Err(Error::not_supported(format!("{name} with options that are not a string constant"))
                    .at_span(o.span()))
            }
        }
    }

    /// regexp_extract (`rewrite` None) and regexp_replace: `Expr::RegexFind`. The pattern
    /// and the replacement are string constants; a NULL one gives NULL.
    fn bind_regex_find(
        &self,
        text: &ast::Expr,
        pattern: &ast::Expr,
        rewrite: Option<&ast::Expr>,
        options: RegexOptions,
        global: bool,
    ) -> Result<Expr> {
        let name = if rewrite.is_some() { "regexp_replace" } else { "regexp_extract" };
        let null = || Expr::literal(ScalarValue::Null, DataType::Utf8);
        let s = self.bind(text)?;
        let s = match s.ty() {
            DataType::Utf8 => s,
            _ if matches!(s, Expr::Literal { value: ScalarValue::Null, .. }) => return Ok(null()),
            other => return Err(Error::bind(format!("{name} needs VARCHAR, got {other}")).at_span(text.span())),
        };
        let constant = |e: &ast::Expr, what: &str| -> Result<Option<String>> {
            match self.bind(e)? {
                Expr::Literal { value: ScalarValue::Utf8(p), .. } => Ok(Some(p)),
                Expr::Literal { value: ScalarValue::Null, .. } => Ok(None),
                _ => Err(Error::not_supported(format!("{name} with a {what} that is not a string constant"))
                    .at_span(e.span())),
            }
        };
        let Some(pattern_text) = constant(pattern, "pattern")? else { return Ok(null()) };
        let rewrite = match rewrite {
            None => None,
            Some(r) => match constant(r, "replacement")? {
                None => return Ok(null()),
                Some(text) => {
                    check_rewrite(&text).map_err(|e| regex_error(e).at_span(r.span()))?;
                    Some(Box::new(Expr::literal(ScalarValue::Utf8(text), DataType::Utf8)))
                }
            },
        };
        let dfa = RegexDfa::new_find(&pattern_text, options).map_err(|e| regex_error(e).at_span(pattern.span()))?;
        Ok(Expr::RegexFind { expr: Box::new(s), dfa: Arc::new(dfa), rewrite, global })
    }

    /// `s ~ p`, `s ~* p`, `s !~ p`, `s !~* p`.
    pub(crate) fn bind_regex_operator(
        &self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
    ) -> Option<Result<Expr>> {
        use ast::BinaryOperator as B;
        let (ignore_case, negated) = match op {
            B::PGRegexMatch => (false, false),
            B::PGRegexIMatch => (true, false),
            B::PGRegexNotMatch => (false, true),
            B::PGRegexNotIMatch => (true, true),
            _ => return None,
        };
        let options = RegexOptions { case_insensitive: ignore_case, ..Default::default() };
        Some(self.bind_regex(left, right, options, false, negated, &op.to_string()))
    }

    /// `s [NOT] SIMILAR TO p`: a full match of the regular expression, as DuckDB.
    pub(crate) fn bind_similar_to(
        &self,
        expr: &ast::Expr,
        pattern: &ast::Expr,
        escape: Option<&ast::Expr>,
        negated: bool,
        whole: &ast::Expr,
    ) -> Result<Expr> {
        if escape.is_some() {
            return Err(Error::not_supported("SIMILAR TO … ESCAPE").at_span(whole.span()));
        }
        self.bind_regex(expr, pattern, RegexOptions::default(), true, negated, "SIMILAR TO")
    }

    fn bind_regex(
        &self,
        text: &ast::Expr,
        pattern: &ast::Expr,
        options: RegexOptions,
        full: bool,
        negated: bool,
        name: &str,
    ) -> Result<Expr> {
        let s = self.bind(text)?;
        let null = || Expr::literal(ScalarValue::Null, DataType::Boolean);
        let s = match s.ty() {
            DataType::Utf8 => s,
            _ if matches!(s, Expr::Literal { value: ScalarValue::Null, .. }) => return Ok(null()),
            other => return Err(Error::bind(format!("{name} needs VARCHAR, got {other}")).at_span(text.span())),
        };
        let pattern_text = match self.bind(pattern)? {
            Expr::Literal { value: ScalarValue::Utf8(p), .. } => p,
            Expr::Literal { value: ScalarValue::Null, .. } => return Ok(null()),
            _ => {
                return Err(Error::not_supported(format!("{name} with a pattern that is not a string constant"))
                    .at_span(pattern.span()))
            }
        };
        let dfa = RegexDfa::new(&pattern_text, options, full).map_err(|e| regex_error(e).at_span(pattern.span()))?;
        Ok(Expr::Regex { expr: Box::new(s), dfa: Arc::new(dfa), negated })
    }
}

fn regex_error(e: RegexError) -> Error {
    match e {
        RegexError::Invalid(m) => Error::bind(m),
        RegexError::NotSupported(what) => Error::not_supported(what),
    }
}
