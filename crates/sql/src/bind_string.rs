//! Binding the functions that make and test strings (`plan/src/strings.rs`): `a || b`,
//! concat, concat_ws, upper, lower, trim (also `TRIM([BOTH|LEADING|TRAILING] [c FROM] s)`),
//! left, right, replace, repeat, lpad, rpad, split_part, starts_with, ends_with, contains,
//! strftime, strptime / try_strptime, and CAST(x AS VARCHAR). As DuckDB: `||`, concat and concat_ws take values of any type
//! as their text; the other functions take VARCHAR (and BIGINT counts) only.

use crate::bind_expr::{AtSpan, Context};
use crate::coerce::cast;
use gpusql_common::{DataType, Error, Result, ScalarValue};
use gpusql_plan::{Expr, StringFunc};
use sqlparser::ast::{self, Spanned};

fn is_null_literal(e: &Expr) -> bool {
    matches!(e, Expr::Literal { value: ScalarValue::Null, .. })
}

/// `e` as text: VARCHAR as it is, a value of any other type through `ToText`.
pub fn as_text(e: Expr) -> Result<Expr> {
    Ok(match e.ty() {
        DataType::Utf8 => e,
        _ if is_null_literal(&e) => Expr::literal(ScalarValue::Null, DataType::Utf8),
        _ => Expr::StringFn { func: StringFunc::ToText, args: vec![e] },
    })
}

/// `l || r`.
pub fn concat(l: Expr, r: Expr) -> Result<Expr> {
    let mut args = vec![];
    for e in [l, r] {
        match e {
            // (a || b || c: one call of three.)
            Expr::StringFn { func: StringFunc::Concat, args: inner } => args.extend(inner),
            e => args.push(as_text(e)?),
        }
    }
    Ok(Expr::StringFn { func: StringFunc::Concat, args })
}

impl Context<'_> {
    /// A string function call `f`, or None where `f` names none.
    pub(crate) fn bind_string_function(&self, f: &ast::Function, whole: &ast::Expr) -> Option<Result<Expr>> {
        let name = f.name.to_string().to_ascii_lowercase();
        match name.as_str() {
            "strftime" => return Some(self.bind_strftime(f, whole)),
            "strptime" => return Some(self.bind_strptime(f, StringFunc::Strptime, whole)),
            "try_strptime" => return Some(self.bind_strptime(f, StringFunc::TryStrptime, whole)),
            _ => {}
        }
        let func = match name.as_str() {
            "concat" => StringFunc::ConcatWs,
            other => StringFunc::from_name(other)?,
        };
        Some((|| {
            let Some(args) = crate::functions::plain_arguments(f) else {
                return Err(Error::not_supported(format!("{name} with these arguments")).at_span(whole.span()));
            };
            let mut args = args.iter().map(|a| self.bind(a)).collect::<Result<Vec<_>>>()?;
            if name == "concat" {
                if args.is_empty() {
                    return Err(Error::bind("concat needs at least one argument").at_span(whole.span()));
                }
                args.insert(0, Expr::literal(ScalarValue::Utf8(String::new()), DataType::Utf8));
            }
            typed_call(func, &name, args).map_err(|e| e.at_span(whole.span()))
        })())
    }

    /// strftime(date or timestamp, format), or (format, date or timestamp) as DuckDB also
    /// takes it. The format is a constant, checked here (`gpusql_common::strftime`).
    fn bind_strftime(&self, f: &ast::Function, whole: &ast::Expr) -> Result<Expr> {
        let at = |e: Error| e.at_span(whole.span());
        let args = match crate::functions::plain_arguments(f).as_deref() {
            Some([a, b]) => [self.bind(a)?, self.bind(b)?],
            _ => return Err(at(Error::bind("strftime takes a DATE or TIMESTAMP and a format"))),
        };
        let is_time = |e: &Expr| matches!(e.ty(), DataType::Date | DataType::Timestamp);
        let [value, format] = match args {
            [a, b] if a.ty() == DataType::Utf8 && is_time(&b) => [b, a],
            other => other,
        };
        if is_null_literal(&value) || is_null_literal(&format) {
            return Ok(Expr::literal(ScalarValue::Null, DataType::Utf8));
        }
        if !is_time(&value) {
            return Err(at(Error::bind(format!("strftime needs a DATE or TIMESTAMP, got {}", value.ty()))));
        }
        let Expr::Literal { value: ScalarValue::Utf8(text), .. } = &format else {
            return Err(at(Error::not_supported("strftime with a format that is not a constant string")));
        };
        let most = gpusql_common::strftime::check_format(text).map_err(|m| at(Error::bind(m)))?;
        if most > gpusql_common::strftime::MAX_BYTES {
            return Err(at(Error::not_supported(format!(
                "strftime formats writing over {} bytes",
                gpusql_common::strftime::MAX_BYTES
            ))));
        }
        typed_call(StringFunc::Strftime, "strftime", vec![cast(value, DataType::Timestamp), format]).map_err(at)
    }

    /// strptime / try_strptime(text, format): the format a constant string or a list of
    /// them (`['%d/%m/%Y', '%Y-%m-%d']`, tried in turn), checked here
    /// (`gpusql_common::strptime`). As DuckDB: a NULL format makes NULL, and a NULL in a
    /// list is the format 'NULL'.
    fn bind_strptime(&self, f: &ast::Function, func: StringFunc, whole: &ast::Expr) -> Result<Expr> {
        let at = |e: Error| e.at_span(whole.span());
        let name = func.name();
        let args = crate::functions::plain_arguments(f);
        let Some(&[text, format]) = args.as_deref() else {
            return Err(at(Error::bind(format!("{name} takes a text and a format"))));
        };
        let text = self.bind(text)?;
        let formats = match format {
            // (ARRAY[…] and […] alike, as DuckDB's lists.)
            ast::Expr::Array(ast::Array { elem, named: _ }) => {
                if elem.is_empty() {
                    return Err(at(Error::bind(format!("{name} format list must not be empty"))));
                }
                let formats = elem.iter().map(|e| self.bind(e)).collect::<Result<Vec<_>>>()?;
                let named_null = |e: Expr| match is_null_literal(&e) {
                    true => Expr::literal(ScalarValue::Utf8("NULL".into()), DataType::Utf8),
                    false => e,
                };
                formats.into_iter().map(named_null).collect()
            }
            format => match self.bind(format)? {
                e if is_null_literal(&e) => return Ok(Expr::literal(ScalarValue::Null, DataType::Timestamp)),
                e => vec![e],
            },
        };
        let mut texts = vec![];
        for format in &formats {
            let Expr::Literal { value: ScalarValue::Utf8(t), .. } = format else {
                return Err(at(Error::not_supported(format!("{name} with a format that is not a constant string"))));
            };
            texts.push(t.as_str());
        }
        gpusql_common::strptime::check_formats(&texts).map_err(at)?;
        typed_call(func, name, std::iter::once(text).chain(formats).collect()).map_err(at)
    }

    /// `TRIM([BOTH | LEADING | TRAILING] [characters FROM] s)` and `TRIM(s, characters)`.
    pub(crate) fn bind_trim(
        &self,
        expr: &ast::Expr,
        trim_where: Option<&ast::TrimWhereField>,
        trim_what: Option<&ast::Expr>,
        trim_characters: Option<&[ast::Expr]>,
        whole: &ast::Expr,
    ) -> Result<Expr> {
        let func = match trim_where {
            None | Some(ast::TrimWhereField::Both) => StringFunc::Trim,
            Some(ast::TrimWhereField::Leading) => StringFunc::LTrim,
            Some(ast::TrimWhereField::Trailing) => StringFunc::RTrim,
        };
        let mut args = vec![self.bind(expr)?];
        match (trim_what, trim_characters) {
            (Some(what), None) => args.push(self.bind(what)?),
            (None, Some([chars])) => args.push(self.bind(chars)?),
            (None, None) => {}
            _ => return Err(Error::not_supported("TRIM with these arguments").at_span(whole.span())),
        }
        typed_call(func, "trim", args).map_err(|e| e.at_span(whole.span()))
    }
}

/// The call with its arguments cast to the function's types.
pub fn typed_call(func: StringFunc, name: &str, args: Vec<Expr>) -> Result<Expr> {
    let Some(types) = func.argument_types(args.len()) else {
        return Err(Error::bind(format!("{name} does not take {} arguments", args.len())));
    };
    let any_type = matches!(func, StringFunc::Concat | StringFunc::ConcatWs);
    let args = args
        .into_iter()
        .zip(types)
        .map(|(a, ty)| match ty {
            _ if is_null_literal(&a) => Ok(cast(a, ty)),
            DataType::Utf8 if any_type => as_text(a),
            DataType::Utf8 if a.ty() == DataType::Utf8 => Ok(a),
            DataType::Int64 if matches!(a.ty(), DataType::Int32 | DataType::Int64) => Ok(cast(a, ty)),
            _ if a.ty() == ty => Ok(a),
            _ => Err(Error::bind(format!("{name} needs {ty} here, got {}", a.ty()))),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Expr::StringFn { func, args })
}
