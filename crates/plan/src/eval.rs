//! Row-at-a-time evaluation of bound expressions: the semantics reference. The CPU backend
//! runs it for every row and the optimizer uses it to fold constants; the CUDA code
//! generator emits the same rules.

use crate::expr::{BinaryOp, DateField, Expr};
use gpusql_common::Interval;
use gpusql_common::{date, semantics, DataType, Error, Result, ScalarValue};
use std::cmp::Ordering;

pub fn pow10(s: u8) -> i128 {
    10i128.pow(s as u32)
}

/// The message of `%` by zero of integers or decimals; [`division_by_zero`] names the
/// expression after it.
const DIVISION_BY_ZERO: &str = "division by zero";

/// DuckDB's error for `%` of integers or decimals by zero, naming the expression.
pub fn division_by_zero(e: &Expr) -> Error {
    Error::exec(format!("{DIVISION_BY_ZERO} in expression {}", e.user_text()))
}

fn overflow(what: &str) -> Error {
    Error::exec(format!("{what} out of range"))
}

/// Rescales an unscaled decimal from scale `from` to `to`, rounding half away from zero.
pub fn rescale(v: i128, from: u8, to: u8) -> Result<i128> {
    if to >= from {
        v.checked_mul(pow10(to - from)).ok_or_else(|| overflow("decimal"))
    } else {
        let d = pow10(from - to);
        let q = v / d;
        let r = v % d;
        Ok(if r.abs() * 2 >= d { q + v.signum() } else { q })
    }
}

pub fn cast(v: ScalarValue, from: &DataType, to: &DataType) -> Result<ScalarValue> {
    use ScalarValue as S;
    if v.is_null() || from == to {
        return Ok(v);
    }
    let int_out = |x: i128, to: &DataType| -> Result<ScalarValue> {
        match to {
            DataType::Int32 => i32::try_from(x).map(S::Int32).map_err(|_| overflow("INTEGER")),
            DataType::Int64 => i64::try_from(x).map(S::Int64).map_err(|_| overflow("BIGINT")),
            DataType::Date => i32::try_from(x).map(S::Date).map_err(|_| overflow("DATE")),
            _ => unreachable!(),
        }
    };
    Ok(match (from, to) {
        (DataType::Utf8, to) if gpusql_common::text_cast::reads_as(to) => {
            let S::Utf8(text) = &v else { return Err(bad_cast(from, to)) };
            cast_text(text.as_bytes(), to)?
        }
        (_, DataType::Float64) => S::Float64(v.as_f64(from).ok_or_else(|| bad_cast(from, to))?),
        (DataType::Int32 | DataType::Int64 | DataType::Date, DataType::Int32 | DataType::Int64 | DataType::Date) => {
            int_out(v.as_i128().unwrap_or(0), to)?
        }
        (DataType::Int32 | DataType::Int64 | DataType::Decimal { .. }, DataType::Decimal { precision, scale }) => {
            S::Decimal(within_precision(rescale(v.as_i128().unwrap_or(0), from.scale(), *scale)?, *precision, to)?)
        }
        (DataType::Decimal { scale, .. }, DataType::Int32 | DataType::Int64) => {
            int_out(rescale(v.as_i128().unwrap_or(0), *scale, 0)?, to)?
        }
        (DataType::Float64, DataType::Int32 | DataType::Int64 | DataType::Decimal { .. }) => {
            let S::Float64(f) = v else { return Err(bad_cast(from, to)) };
            let out_of_range = || overflow(&to.to_string());
            match to {
                DataType::Decimal { precision, .. } => S::Decimal(within_precision(
                    semantics::f64_to_scaled(f, to.scale()).ok_or_else(out_of_range)?,
                    *precision,
                    to,
                )?),
                _ => int_out(semantics::f64_to_int(f).ok_or_else(out_of_range)?, to)?,
            }
        }
        (DataType::Boolean, DataType::Int32 | DataType::Int64) => int_out(v.as_i128().unwrap_or(0), to)?,
        // Midnight of the date; the day of a timestamp (floored: before 1970 too).
        (DataType::Date, DataType::Timestamp) => S::Timestamp(
            date::timestamp_from_date(v.as_i128().unwrap_or(0) as i64).ok_or_else(|| overflow("TIMESTAMP"))?,
        ),
        (DataType::Timestamp, DataType::Date) => {
            let (day, _) = date::split_timestamp(v.as_i128().unwrap_or(0) as i64);
            S::Date(i32::try_from(day).map_err(|_| overflow("DATE"))?)
        }
        // (Columns go through ToText.)
        (DataType::Date | DataType::Timestamp | DataType::Interval, DataType::Utf8) => S::Utf8(v.display(from)),
        _ => return Err(bad_cast(from, to)),
    })
}

/// CAST of text to a number, BOOLEAN or DATE (`gpusql_common::text_cast`, the rules the
/// GPU's twins follow).
fn cast_text(text: &[u8], to: &DataType) -> Result<ScalarValue> {
    use gpusql_common::text_cast::{self as tc, TextCast};
    use ScalarValue as S;
    let read = match to {
        DataType::Int32 => tc::text_to_int(text, i32::MIN as i64, i32::MAX as i64).map(|v| S::Int32(v as i32)),
        DataType::Int64 => tc::text_to_int(text, i64::MIN, i64::MAX).map(S::Int64),
        DataType::Float64 => tc::text_to_double(text).map(S::Float64),
        DataType::Decimal { precision, scale } => tc::text_to_decimal(text, *precision, *scale).map(S::Decimal),
        DataType::Boolean => tc::text_to_bool(text).map(S::Boolean),
        DataType::Date => tc::text_to_date(text).map(S::Date),
        DataType::Timestamp => tc::text_to_timestamp(text).map(S::Timestamp),
        _ => return Err(bad_cast(&DataType::Utf8, to)),
    };
    match read {
        TextCast::Value(v) => Ok(v),
        TextCast::Invalid => Err(tc::conversion_error(to, Some(text))),
        TextCast::Unsupported => Err(tc::unsupported_error(to, Some(text))),
    }
}

/// An unscaled decimal that fits `precision` digits (of type `ty`), or an overflow error.
fn within_precision(v: i128, precision: u8, ty: &DataType) -> Result<i128> {
    if v.unsigned_abs() < pow10(precision) as u128 {
        Ok(v)
    } else {
        Err(overflow(&ty.to_string()))
    }
}

/// A DATE or TIMESTAMP value from its text; the error says what was expected.
pub fn parse_datetime(text: &str, ty: &DataType) -> std::result::Result<ScalarValue, String> {
    match ty {
        DataType::Date => date::parse_date(text)
            .and_then(|d| i32::try_from(d).ok())
            .map(ScalarValue::Date)
            .ok_or_else(|| format!("invalid DATE '{text}' (expected YYYY-MM-DD)")),
        _ => date::parse_timestamp(text).map(ScalarValue::Timestamp).ok_or_else(|| {
            format!("invalid TIMESTAMP '{text}' (expected YYYY-MM-DD[ HH:MM[:SS[.ffffff]]], no time zone)")
        }),
    }
}

fn bad_cast(from: &DataType, to: &DataType) -> Error {
    Error::not_supported(format!("cast from {from} to {to}"))
}

fn truth(v: &ScalarValue) -> Option<bool> {
    match v {
        ScalarValue::Boolean(b) => Some(*b),
        _ => None,
    }
}

fn bool_or_null(v: Option<bool>) -> ScalarValue {
    v.map_or(ScalarValue::Null, ScalarValue::Boolean)
}

/// Evaluates `e` against one input row.
pub fn eval(e: &Expr, row: &[ScalarValue]) -> Result<ScalarValue> {
    use ScalarValue as S;
    Ok(match e {
        Expr::Column { index, .. } => row[*index].clone(),
        Expr::Literal { value, .. } | Expr::Parameter { value, .. } => value.clone(),
        Expr::Binary { op: BinaryOp::And, left, right, .. } => and(left, right, row)?,
        Expr::Binary { op: BinaryOp::Or, left, right, .. } => or(left, right, row)?,
        Expr::Binary { op, left, right, ty } => {
            binary(*op, eval(left, row)?, eval(right, row)?, ty).map_err(|err| {
                if matches!(&err, Error::Execution(m) if m == DIVISION_BY_ZERO) {
                    division_by_zero(e)
                } else {
                    err
                }
            })?
        }
        Expr::Not(inner) => bool_or_null(truth(&eval(inner, row)?).map(|b| !b)),
        Expr::Negate(inner) => negate(eval(inner, row)?)?,
        Expr::Abs(inner) => abs(eval(inner, row)?)?,
        Expr::IsNull { expr, negated } => S::Boolean(eval(expr, row)?.is_null() != *negated),
        Expr::Cast { expr, ty } => cast(eval(expr, row)?, &expr.ty(), ty)?,
        // Values that do not convert are NULL; unsupported text is still an error.
        Expr::TryCast { expr, ty } => match cast(eval(expr, row)?, &expr.ty(), ty) {
            Err(Error::Execution(_)) => S::Null,
            other => other?,
        },
        Expr::Case { branches, else_expr, .. } => case(branches, else_expr.as_deref(), row)?,
        Expr::InList { expr, list, negated } => in_list(expr, list, *negated, row)?,
        Expr::InSet { expr, set, negated } => {
            let v = eval(expr, row)?;
            if v.is_null() {
                S::Null
            } else if set.contains(&v) {
                S::Boolean(!negated)
            } else if set.has_null {
                S::Null
            } else {
                S::Boolean(*negated)
            }
        }
        Expr::Extract { field, expr } => extract(*field, eval(expr, row)?)?,
        Expr::TimestampAdd { expr, months, days, micros } => match eval(expr, row)? {
            S::Timestamp(t) => {
                S::Timestamp(date::add_interval(t, *months, *days, *micros).ok_or_else(|| overflow("TIMESTAMP"))?)
            }
            _ => S::Null,
        },
        Expr::DateTrunc { unit, expr } => match eval(expr, row)? {
            S::Timestamp(t) => S::Timestamp(date::trunc_timestamp(*unit, t).ok_or_else(|| overflow("TIMESTAMP"))?),
            _ => S::Null,
        },
        Expr::DateAdd { date: d, months, days } => match eval(d, row)? {
            S::Date(v) => {
                let moved = date::add_months(v as i64, *months as i64) + *days as i64;
                S::Date(i32::try_from(moved).map_err(|_| overflow("DATE"))?)
            }
            _ => S::Null,
        },
        Expr::Substring { expr, start, len } => match eval(expr, row)? {
            S::Utf8(s) => {
                let chars: Vec<char> = s.chars().collect();
                let (from, to) = crate::expr::substring_range(chars.len() as i64, *start, *len);
                S::Utf8(chars[from as usize..to as usize].iter().collect())
            }
            _ => S::Null,
        },
        Expr::RoundTens { expr, tens, ty } => match eval(expr, row)? {
            S::Null => S::Null,
            v => {
                let scale = expr.ty().as_decimal().map_or(0, |(_, s)| s);
                let r = crate::math::round_tens(v.as_i128().unwrap_or(0), scale, *tens);
                let out_of_range = || overflow(&ty.to_string());
                match ty {
                    DataType::Int32 => S::Int32(r.and_then(|r| i32::try_from(r).ok()).ok_or_else(out_of_range)?),
                    DataType::Int64 => S::Int64(r.and_then(|r| i64::try_from(r).ok()).ok_or_else(out_of_range)?),
                    _ => S::Decimal(r.ok_or_else(out_of_range)?),
                }
            }
        },
        Expr::RoundDouble { expr, digits } => match eval(expr, row)? {
            S::Float64(x) => S::Float64(semantics::round_f64(x, *digits)),
            _ => S::Null,
        },
        Expr::ScalarSubqueryRows { .. } => return Err(Error::exec(crate::expr::SUBQUERY_ROWS_ERROR)),
        Expr::Math { func, args } => {
            let values: Vec<ScalarValue> = args.iter().map(|a| eval(a, row)).collect::<Result<_>>()?;
            func.eval(&values, args[0].ty())
        }
        Expr::StringFn { func, args } => {
            let values: Vec<ScalarValue> = args.iter().map(|a| eval(a, row)).collect::<Result<_>>()?;
            func.eval(&values, args[0].ty())?
        }
        Expr::Sketch { op, args } => {
            let values: Vec<ScalarValue> = args.iter().map(|a| eval(a, row)).collect::<Result<_>>()?;
            let types: Vec<DataType> = args.iter().map(|a| a.ty()).collect();
            crate::hyperloglog::eval(*op, &values, &types)?
        }
        Expr::Quantile { op, q, args } => {
            let values: Vec<ScalarValue> = args.iter().map(|a| eval(a, row)).collect::<Result<_>>()?;
            crate::quantile::eval(*op, q, &values, &args[0].ty())?
        }
        Expr::Length(expr) => match eval(expr, row)? {
            S::Utf8(s) => S::Int64(s.chars().count() as i64),
            _ => S::Null,
        },
        Expr::Like { expr, pattern, negated } => match eval(expr, row)? {
            S::Utf8(s) => S::Boolean(pattern.matches(s.as_bytes()) != *negated),
            _ => S::Null,
        },
        Expr::Regex { expr, dfa, negated } => match eval(expr, row)? {
            S::Utf8(s) => S::Boolean(dfa.matches(s.as_bytes()) != *negated),
            _ => S::Null,
        },
        Expr::RegexFind { expr, dfa, rewrite, global } => {
            let rewrite = rewrite.as_deref().map(|r| eval(r, row)).transpose()?;
            match (eval(expr, row)?, rewrite) {
                (S::Utf8(s), None) => S::Utf8(text(dfa.extract(s.as_bytes()))?),
                (S::Utf8(s), Some(S::Utf8(r))) => S::Utf8(text(&dfa.replace(s.as_bytes(), r.as_bytes(), *global))?),
                _ => S::Null,
            }
        }
    })
}

/// The text of a match or replacement (whole characters of valid UTF-8 text).
fn text(bytes: &[u8]) -> Result<String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| Error::exec("regular expression result is not valid UTF-8"))
}

/// Three-valued AND; the right side is not evaluated once the left is FALSE.
fn and(left: &Expr, right: &Expr, row: &[ScalarValue]) -> Result<ScalarValue> {
    let l = truth(&eval(left, row)?);
    if l == Some(false) {
        return Ok(ScalarValue::Boolean(false));
    }
    let r = truth(&eval(right, row)?);
    Ok(bool_or_null(match (l, r) {
        (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }))
}

/// Three-valued OR; the right side is not evaluated once the left is TRUE.
fn or(left: &Expr, right: &Expr, row: &[ScalarValue]) -> Result<ScalarValue> {
    let l = truth(&eval(left, row)?);
    if l == Some(true) {
        return Ok(ScalarValue::Boolean(true));
    }
    let r = truth(&eval(right, row)?);
    Ok(bool_or_null(match (l, r) {
        (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }))
}

/// A comparison or arithmetic on evaluated operands (NULL if either is).
fn binary(op: BinaryOp, l: ScalarValue, r: ScalarValue, ty: &DataType) -> Result<ScalarValue> {
    if l.is_null() || r.is_null() {
        return Ok(ScalarValue::Null);
    }
    if !op.is_comparison() {
        return arith(op, &l, &r, ty);
    }
    let ord = l.compare(&r);
    Ok(ScalarValue::Boolean(match op {
        BinaryOp::Eq => ord == Ordering::Equal,
        BinaryOp::NotEq => ord != Ordering::Equal,
        BinaryOp::Lt => ord == Ordering::Less,
        BinaryOp::LtEq => ord != Ordering::Greater,
        BinaryOp::Gt => ord == Ordering::Greater,
        _ => ord != Ordering::Less,
    }))
}

fn negate(v: ScalarValue) -> Result<ScalarValue> {
    use ScalarValue as S;
    Ok(match v {
        S::Null => S::Null,
        S::Float64(f) => S::Float64(-f),
        S::Int32(v) => S::Int32(v.checked_neg().ok_or_else(|| overflow("INTEGER"))?),
        S::Int64(v) => S::Int64(v.checked_neg().ok_or_else(|| overflow("BIGINT"))?),
        S::Decimal(v) => S::Decimal(-v),
        S::Interval(iv) => S::Interval(iv.checked_neg()?),
        other => return Err(Error::exec(format!("cannot negate {other}"))),
    })
}

fn abs(v: ScalarValue) -> Result<ScalarValue> {
    use ScalarValue as S;
    Ok(match v {
        S::Null => S::Null,
        S::Float64(f) => S::Float64(f.abs()),
        S::Int32(v) => S::Int32(v.checked_abs().ok_or_else(|| overflow("INTEGER"))?),
        S::Int64(v) => S::Int64(v.checked_abs().ok_or_else(|| overflow("BIGINT"))?),
        S::Decimal(v) => S::Decimal(v.abs()),
        other => return Err(Error::exec(format!("abs is not defined for {other}"))),
    })
}

/// Searched CASE: only the first branch whose condition is TRUE is evaluated.
fn case(branches: &[(Expr, Expr)], else_expr: Option<&Expr>, row: &[ScalarValue]) -> Result<ScalarValue> {
    for (when, then) in branches {
        if truth(&eval(when, row)?) == Some(true) {
            return eval(then, row);
        }
    }
    match else_expr {
        Some(e) => eval(e, row),
        None => Ok(ScalarValue::Null),
    }
}

/// `expr [NOT] IN (list)`: items are evaluated up to the first match; with no match, a
/// NULL item makes the answer NULL.
fn in_list(expr: &Expr, list: &[Expr], negated: bool, row: &[ScalarValue]) -> Result<ScalarValue> {
    let v = eval(expr, row)?;
    if v.is_null() {
        return Ok(ScalarValue::Null);
    }
    let mut saw_null = false;
    for item in list {
        let x = eval(item, row)?;
        if x.is_null() {
            saw_null = true;
        } else if v.compare(&x) == Ordering::Equal {
            return Ok(ScalarValue::Boolean(!negated));
        }
    }
    Ok(if saw_null { ScalarValue::Null } else { ScalarValue::Boolean(negated) })
}

fn extract(field: DateField, v: ScalarValue) -> Result<ScalarValue> {
    use ScalarValue as S;
    Ok(match v {
        S::Date(d) if field.is_day_field() => {
            let (y, m, day) = date::civil_from_days(d as i64);
            S::Int64(match field {
                DateField::Year => y,
                DateField::Month => m as i64,
                _ => day as i64,
            })
        }
        S::Date(d) => {
            extract_timestamp(field, date::timestamp_from_date(d as i64).ok_or_else(|| overflow("TIMESTAMP"))?)
        }
        S::Timestamp(t) => extract_timestamp(field, t),
        S::Interval(iv) => match field {
            DateField::Epoch => S::Float64(iv.epoch_seconds()),
            // (The binder refuses the fields an interval has not.)
            f => S::Int64(gpusql_common::interval::part(&iv, f).unwrap_or(0)),
        },
        _ => S::Null,
    })
}

fn extract_timestamp(field: DateField, t: i64) -> ScalarValue {
    match field {
        DateField::Epoch => ScalarValue::Float64(date::epoch_seconds(t)),
        f => ScalarValue::Int64(date::timestamp_part(f, t)),
    }
}

fn arith(op: BinaryOp, l: &ScalarValue, r: &ScalarValue, ty: &DataType) -> Result<ScalarValue> {
    use ScalarValue as S;
    // INTERVAL arithmetic (the binder's forms, `coerce::interval_arithmetic`).
    match (op, l, r) {
        (BinaryOp::Sub, S::Timestamp(a), S::Timestamp(b)) => {
            return Ok(S::Interval(Interval::timestamp_difference(*a, *b)?))
        }
        (BinaryOp::Add | BinaryOp::Sub, S::Timestamp(t), S::Interval(iv)) => {
            let iv = if op == BinaryOp::Sub { iv.checked_neg()? } else { *iv };
            let moved = date::add_interval(*t, iv.months, iv.days, iv.micros);
            return Ok(S::Timestamp(moved.ok_or_else(|| overflow("TIMESTAMP"))?));
        }
        (BinaryOp::Add, S::Interval(a), S::Interval(b)) => return Ok(S::Interval(a.checked_add(b)?)),
        (BinaryOp::Sub, S::Interval(a), S::Interval(b)) => return Ok(S::Interval(a.checked_sub(b)?)),
        (BinaryOp::Mul, S::Interval(a), S::Int64(k)) => return Ok(S::Interval(a.mul_int(*k)?)),
        (BinaryOp::Mul, S::Interval(a), S::Float64(k)) => return Ok(S::Interval(a.mul_f64(*k)?)),
        (BinaryOp::Div, S::Interval(a), S::Float64(k)) => return Ok(S::Interval(a.div_f64(*k)?)),
        _ => {}
    }
    if let (S::Float64(a), S::Float64(b)) = (l, r) {
        // IEEE: `1 / 0` is inf, `0 / 0` and `x % 0` NaN (DuckDB's DOUBLE division).
        return Ok(S::Float64(match op {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
            _ => a % b,
        }));
    }
    let (a, b) = (l.as_i128().unwrap_or(0), r.as_i128().unwrap_or(0));
    let v = match op {
        BinaryOp::Add => a.checked_add(b),
        BinaryOp::Sub => a.checked_sub(b),
        BinaryOp::Mul => a.checked_mul(b),
        BinaryOp::Div | BinaryOp::Mod if b == 0 => return Err(Error::exec(DIVISION_BY_ZERO)),
        BinaryOp::Div => a.checked_div(b),
        _ => a.checked_rem(b),
    }
    .ok_or_else(|| overflow(&ty.to_string()))?;
    Ok(match ty {
        DataType::Int32 => S::Int32(i32::try_from(v).map_err(|_| overflow("INTEGER"))?),
        DataType::Int64 => S::Int64(i64::try_from(v).map_err(|_| overflow("BIGINT"))?),
        DataType::Date => S::Date(i32::try_from(v).map_err(|_| overflow("DATE"))?),
        DataType::Decimal { precision, .. } => {
            if v.unsigned_abs() >= pow10(*precision) as u128 {
                return Err(overflow(&ty.to_string()));
            }
            S::Decimal(v)
        }
        _ => return Err(Error::exec(format!("arithmetic on {ty}"))),
    })
}
