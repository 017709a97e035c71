//! Binding pattern matches: `[NOT] LIKE` / `ILIKE` (`Expr::Like`), and regular-expression
//! matches to `Expr::Regex` (a DFA: `plan/src/regex.rs`), with DuckDB's spellings: `regexp_matches(s, p [, options])` and `s ~ p` (a match anywhere),
//! `regexp_full_match(s, p [, options])` and `s SIMILAR TO p` (the whole string), `~*`
//! (case-insensitive), `!~` and `!~*` (negated). The pattern and options must be
//! constants (the DFA is built here, once); a NULL pattern gives NULL.

use crate::bind_expr::{AtSpan, Context};
use gpusql_common::{DataType, Error, Result, ScalarValue};
use gpusql_plan::regex::{RegexDfa, RegexError, RegexOptions};
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

    /// A `regexp_matches` / `regexp_full_match` call, or None where `f` is neither.
    pub(crate) fn bind_regex_function(&self, f: &ast::Function, whole: &ast::Expr) -> Option<Result<Expr>> {
        let name = f.name.to_string().to_ascii_lowercase();
        let full = match name.as_str() {
            "regexp_matches" => false,
            "regexp_full_match" => true,
            _ => return None,
        };
        Some((|| {
            let args = match crate::functions::plain_arguments(f) {
                Some(args) if (2..=3).contains(&args.len()) => args,
                _ => {
                    return Err(Error::bind(format!("{name} takes (string, pattern [, options])")).at_span(whole.span()))
                }
            };
            let options = match args.get(2) {
                None => String::new(),
                Some(o) => match self.bind(o)? {
                    Expr::Literal { value: ScalarValue::Utf8(s), .. } => s,
                    Expr::Literal { value: ScalarValue::Null, .. } => {
                        return Err(Error::bind("Regex options field must not be NULL").at_span(o.span()))
                    }
                    _ => {
                        return Err(Error::not_supported(format!("{name} with options that are not a string constant"))
                            .at_span(o.span()))
                    }
                },
            };
            let options = RegexOptions::parse(&options).map_err(|e| regex_error(e).at_span(whole.span()))?;
            self.bind_regex(args[0], args[1], options, full, false, &name)
        })())
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
