//! Binding the math functions (`plan/src/math.rs`): `sqrt(x)`, `floor(x)`, `power(x, y)`, …
//! with DuckDB's argument types: numbers are cast to DOUBLE, except the DECIMAL argument of
//! FLOOR / CEIL / TRUNC (exact, a DECIMAL of scale 0) and SIGN's integer or DECIMAL; TRUNC
//! of an integer is the integer. `pi()` is a constant.

use crate::bind_expr::{AtSpan, Context};
use crate::coerce::cast;
use gpusql_common::{DataType, Error, Result, ScalarValue};
use gpusql_plan::{Expr, MathFunc};
use sqlparser::ast::{self, Spanned};

impl Context<'_> {
    /// A math function call `f`, or None where `f` names no math function.
    pub(crate) fn bind_math_function(&self, f: &ast::Function, whole: &ast::Expr) -> Option<Result<Expr>> {
        let name = f.name.to_string().to_ascii_lowercase();
        if name == "pi" {
            return Some(match crate::functions::plain_arguments(f) {
                Some(a) if a.is_empty() => {
                    Ok(Expr::literal(ScalarValue::Float64(std::f64::consts::PI), DataType::Float64))
                }
                _ => Err(Error::bind("pi takes no arguments").at_span(whole.span())),
            });
        }
        let func = MathFunc::from_name(&name)?;
        Some(match crate::functions::plain_arguments(f) {
            Some(a) if a.len() == func.arity() => {
                a.iter().map(|x| self.bind(x)).collect::<Result<Vec<_>>>().and_then(|args| bind_math(func, args, whole))
            }
            // DuckDB's log(b, x): the logarithm of x to the base b.
            Some(a) if name == "log" && a.len() == 2 => {
                Err(Error::not_supported("log of two arguments (a base)").at_span(whole.span()))
            }
            _ => {
                let n = if func.arity() == 1 { "one argument" } else { "two arguments" };
                Err(Error::bind(format!("{name} takes {n}")).at_span(whole.span()))
            }
        })
    }

    /// `FLOOR(x)` / `CEIL(x)`, which sqlparser parses as expressions of their own.
    pub(crate) fn bind_floor_ceil(
        &self,
        func: MathFunc,
        x: &ast::Expr,
        field: &ast::CeilFloorKind,
        whole: &ast::Expr,
    ) -> Result<Expr> {
        match field {
            ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime) => {
                bind_math(func, vec![self.bind(x)?], whole)
            }
            _ => Err(Error::not_supported(format!("{} with a second argument", func.name())).at_span(whole.span())),
        }
    }
}

/// `x ^ y`: DuckDB's power operator (the parser reads `^` as XOR, PostgreSQL's `#`).
pub(crate) fn power_operator(x: Expr, y: Expr, whole: &ast::Expr) -> Result<Expr> {
    bind_math(MathFunc::Power, vec![x, y], whole)
}

/// The typed call over bound arguments.
fn bind_math(func: MathFunc, args: Vec<Expr>, whole: &ast::Expr) -> Result<Expr> {
    let is_null = |e: &Expr| matches!(e, Expr::Literal { value: ScalarValue::Null, .. });
    if let Some(bad) = args.iter().find(|a| !a.ty().is_numeric() && !is_null(a)) {
        return Err(Error::bind(format!("{} needs a number, got {}", func.name(), bad.ty())).at_span(whole.span()));
    }
    let integer = matches!(args[0].ty(), DataType::Int32 | DataType::Int64);
    if integer && func == MathFunc::Trunc {
        return Ok(args.into_iter().next().unwrap_or(Expr::literal(ScalarValue::Null, DataType::Int32)));
    }
    let exact = match args[0].ty() {
        DataType::Decimal { .. } => func.keeps_decimal() || func == MathFunc::Sign,
        _ => integer && func == MathFunc::Sign,
    };
    let args = if exact { args } else { args.into_iter().map(|a| cast(a, DataType::Float64)).collect() };
    Ok(Expr::Math { func, args })
}
