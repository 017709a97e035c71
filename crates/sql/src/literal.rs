//! Literal values: numbers get the narrowest exact type (DuckDB: 24 is INTEGER, 0.06 is
//! DECIMAL(3,2)); typed strings (DATE '…') and intervals.

use gpusql_common::{date, DataType, Error, Result, ScalarValue};
use gpusql_plan::Expr;
use sqlparser::ast::{self, DateTimeField, Value};

pub fn number(text: &str) -> Result<Expr> {
    if let Ok(v) = text.parse::<i32>() {
        return Ok(Expr::literal(ScalarValue::Int32(v), DataType::Int32));
    }
    if let Ok(v) = text.parse::<i64>() {
        return Ok(Expr::literal(ScalarValue::Int64(v), DataType::Int64));
    }
    if !text.contains(['e', 'E']) {
        let (int, frac) = text.split_once('.').unwrap_or((text, ""));
        let int = int.trim_start_matches('0');
        let digits = format!("{int}{frac}");
        let precision = (int.len().max(1) + frac.len()) as u8;
        if precision <= 38 {
            if let Ok(v) = digits.parse::<i128>() {
                return Ok(Expr::literal(ScalarValue::Decimal(v), DataType::decimal(precision, frac.len() as u8)));
            }
        }
    }
    text.parse::<f64>()
        .map(|f| Expr::literal(ScalarValue::Float64(f), DataType::Float64))
        .map_err(|_| Error::plan(format!("invalid number {text}")))
}

pub fn value(v: &Value) -> Result<Expr> {
    match v {
        Value::Number(n, _) => number(n),
        Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Ok(Expr::literal(ScalarValue::Utf8(s.clone()), DataType::Utf8)),
        Value::Boolean(b) => Ok(Expr::literal(ScalarValue::Boolean(*b), DataType::Boolean)),
        Value::Null => Ok(Expr::literal(ScalarValue::Null, DataType::Int32)),
        other => Err(Error::not_supported(format!("literal {other}"))),
    }
}

pub fn date_literal(text: &str) -> Result<Expr> {
    let d = date::parse_date(text).ok_or_else(|| Error::plan(format!("invalid date '{text}' (expected YYYY-MM-DD)")))?;
    let d = i32::try_from(d).map_err(|_| Error::plan(format!("date '{text}' out of range")))?;
    Ok(Expr::literal(ScalarValue::Date(d), DataType::Date))
}

/// An interval as (months, days).
pub fn interval(iv: &ast::Interval) -> Result<(i32, i32)> {
    let text = match &*iv.value {
        ast::Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) => s.clone(),
            Value::Number(n, _) => n.clone(),
            other => return Err(Error::not_supported(format!("interval value {other}"))),
        },
        ast::Expr::UnaryOp { op: ast::UnaryOperator::Minus, expr } => format!("-{expr}").replace('\'', ""),
        other => return Err(Error::not_supported(format!("interval value {other}"))),
    };
    let mut words = text.split_whitespace();
    let amount: i32 = words.next().and_then(|w| w.parse().ok()).ok_or_else(|| Error::plan(format!("invalid interval '{text}'")))?;
    let unit_word = words.next().map(|w| w.to_ascii_lowercase());
    let unit = match (&iv.leading_field, unit_word.as_deref()) {
        (Some(DateTimeField::Year | DateTimeField::Years), _) | (None, Some("year" | "years")) => "year",
        (Some(DateTimeField::Month | DateTimeField::Months), _) | (None, Some("month" | "months" | "mon" | "mons")) => "month",
        (Some(DateTimeField::Day | DateTimeField::Days), _) | (None, Some("day" | "days")) => "day",
        (Some(DateTimeField::Week(_) | DateTimeField::Weeks), _) | (None, Some("week" | "weeks")) => "week",
        (Some(f), _) => return Err(Error::not_supported(format!("interval unit {f}"))),
        (None, u) => return Err(Error::not_supported(format!("interval unit {}", u.unwrap_or("(none)")))),
    };
    Ok(match unit {
        "year" => (amount * 12, 0),
        "month" => (amount, 0),
        "week" => (0, amount * 7),
        _ => (0, amount),
    })
}
