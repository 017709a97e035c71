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
        .map_err(|_| Error::bind(format!("invalid number {text}")))
}

pub fn value(v: &Value) -> Result<Expr> {
    match v {
        Value::Number(n, _) => number(n),
        Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => {
            Ok(Expr::literal(ScalarValue::Utf8(s.clone()), DataType::Utf8))
        }
        Value::Boolean(b) => Ok(Expr::literal(ScalarValue::Boolean(*b), DataType::Boolean)),
        Value::Null => Ok(Expr::literal(ScalarValue::Null, DataType::Int32)),
        Value::Placeholder(p) => PARAMETERS.with(|params| {
            let params = params.borrow();
            let index = p.strip_prefix('$').and_then(|i| i.parse::<usize>().ok()).and_then(|i| i.checked_sub(1));
            match (params.as_ref(), index) {
                (Some(params), Some(i)) if i < params.len() => Ok(params[i].clone()),
                _ => Err(Error::not_supported(format!("parameter {p}"))),
            }
        }),
        other => Err(Error::not_supported(format!("literal {other}"))),
    }
}

thread_local! {
    /// The parameters `$1`, `$2`, … of the statement being bound (`bind_with_parameters`).
    static PARAMETERS: std::cell::RefCell<Option<Vec<Expr>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `bind` with `$k` standing for `params[k - 1]` (each an `Expr::Parameter`: every
/// use of one shares its source). The binder passes no context through its calls, so
/// the statement's parameters are the thread's while it binds.
pub fn with_parameters<T>(params: Vec<Expr>, bind: impl FnOnce() -> T) -> T {
    struct Reset(Option<Vec<Expr>>);
    impl Drop for Reset {
        fn drop(&mut self) {
            let old = self.0.take();
            PARAMETERS.with(|p| *p.borrow_mut() = old);
        }
    }
    let _reset = Reset(PARAMETERS.with(|p| p.borrow_mut().replace(params)));
    bind()
}

pub fn date_literal(text: &str) -> Result<Expr> {
    let d =
        date::parse_date(text).ok_or_else(|| Error::bind(format!("invalid date '{text}' (expected YYYY-MM-DD)")))?;
    let d = i32::try_from(d).map_err(|_| Error::bind(format!("date '{text}' out of range")))?;
    Ok(Expr::literal(ScalarValue::Date(d), DataType::Date))
}

/// `TIMESTAMP '…'` (and text cast to TIMESTAMP): `YYYY-MM-DD[( |T)HH:MM[:SS[.ffffff]]]`.
pub fn timestamp_literal(text: &str) -> Result<Expr> {
    let v = gpusql_plan::eval::parse_datetime(text, &DataType::Timestamp).map_err(Error::Bind)?;
    Ok(Expr::literal(v, DataType::Timestamp))
}

/// A DATE or TIMESTAMP literal of type `ty` from its text.
pub fn datetime_literal(text: &str, ty: DataType) -> Result<Expr> {
    match ty {
        DataType::Date => date_literal(text),
        _ => timestamp_literal(text),
    }
}

/// An INTERVAL literal's value (months, days and microseconds kept apart, as in DuckDB).
pub use gpusql_common::Interval;

/// Adds `amount` of `unit` (a DuckDB unit name, singular or plural or abbreviated) to `iv`.
fn add_unit(iv: &mut Interval, amount: i64, unit: &str, text: &str) -> Result<()> {
    let range = || Error::bind(format!("interval '{text}' out of range"));
    let to_i32 = |v: i64| i32::try_from(v).map_err(|_| range());
    let (months, days, micros): (i64, i64, i64) = match unit.to_ascii_lowercase().as_str() {
        "year" | "years" | "y" | "yr" | "yrs" => (12, 0, 0),
        "quarter" | "quarters" => (3, 0, 0),
        "month" | "months" | "mon" | "mons" => (1, 0, 0),
        "week" | "weeks" | "w" => (0, 7, 0),
        "day" | "days" | "d" => (0, 1, 0),
        "hour" | "hours" | "h" | "hr" | "hrs" => (0, 0, date::MICROS_PER_HOUR),
        "minute" | "minutes" | "m" | "min" | "mins" => (0, 0, date::MICROS_PER_MINUTE),
        "second" | "seconds" | "s" | "sec" | "secs" => (0, 0, date::MICROS_PER_SECOND),
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" => (0, 0, 1000),
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" => (0, 0, 1),
        other => return Err(Error::not_supported(format!("interval unit {other}"))),
    };
    let scaled = |per: i64| amount.checked_mul(per).ok_or_else(range);
    iv.months = iv.months.checked_add(to_i32(scaled(months)?)?).ok_or_else(range)?;
    iv.days = iv.days.checked_add(to_i32(scaled(days)?)?).ok_or_else(range)?;
    iv.micros = iv.micros.checked_add(scaled(micros)?).ok_or_else(range)?;
    Ok(())
}

/// An interval: `INTERVAL '2' HOUR`, `INTERVAL 3 DAY`, `INTERVAL '1 day 2 hours'`,
/// `INTERVAL '1 month 01:30:00'`. Amounts are integers.
pub fn interval(iv: &ast::Interval) -> Result<Interval> {
    let text = match &*iv.value {
        ast::Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) => s.clone(),
            Value::Number(n, _) => n.clone(),
            other => return Err(Error::not_supported(format!("interval value {other}"))),
        },
        ast::Expr::UnaryOp { op: ast::UnaryOperator::Minus, expr } => format!("-{expr}").replace('\'', ""),
        other => return Err(Error::not_supported(format!("interval value {other}"))),
    };
    if iv.last_field.is_some() || iv.leading_precision.is_some() || iv.fractional_seconds_precision.is_some() {
        return Err(Error::not_supported(format!("interval {iv}")));
    }
    let invalid = || Error::bind(format!("invalid interval '{text}'"));
    let mut out = Interval::default();
    if let Some(field) = &iv.leading_field {
        // INTERVAL '2' HOUR: one integer amount of the named unit.
        let amount: i64 = text.trim().parse().map_err(|_| invalid())?;
        let unit = match field {
            DateTimeField::Week(None) => "week".to_string(),
            f => f.to_string(),
        };
        add_unit(&mut out, amount, &unit, &text)?;
        return Ok(out);
    }
    interval_text(&text)
}

/// An interval's text without a unit after it: `'1 day 2 hours'`, `'1 month 01:30:00'`,
/// `'1.5 days'` (also CAST('…' AS INTERVAL)), as DuckDB reads it (`Interval::parse`).
pub fn interval_text(text: &str) -> Result<Interval> {
    Interval::parse(text).ok_or_else(|| Error::bind(format!("invalid interval '{text}'")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(sql: &str) -> Result<Interval> {
        let e = sqlparser::parser::Parser::new(&sqlparser::dialect::GenericDialect {})
            .try_with_sql(sql)
            .unwrap()
            .parse_expr()
            .unwrap();
        match e {
            ast::Expr::Interval(i) => interval(&i),
            other => panic!("not an interval: {other}"),
        }
    }

    fn parts(months: i32, days: i32, micros: i64) -> Result<Interval> {
        Ok(Interval { months, days, micros })
    }

    #[test]
    fn intervals() {
        const H: i64 = date::MICROS_PER_HOUR;
        assert_eq!(iv("INTERVAL '2' HOUR"), parts(0, 0, 2 * H));
        assert_eq!(iv("INTERVAL 90 MINUTE"), parts(0, 0, 90 * 60_000_000));
        assert_eq!(iv("INTERVAL '1' YEAR"), parts(12, 0, 0));
        assert_eq!(iv("INTERVAL '1' QUARTER"), parts(3, 0, 0));
        assert_eq!(iv("INTERVAL '3' WEEK"), parts(0, 21, 0));
        assert_eq!(iv("INTERVAL '250' MILLISECOND"), parts(0, 0, 250_000));
        assert_eq!(iv("INTERVAL '1 day 2 hours'"), parts(0, 1, 2 * H));
        assert_eq!(iv("INTERVAL '1 month 1 day 01:30:00.5'"), parts(1, 1, 3 * H / 2 + 500_000));
        assert_eq!(iv("INTERVAL '-01:30'"), parts(0, 0, -3 * H / 2));
        assert_eq!(iv("INTERVAL '1h 30m'"), parts(0, 0, 3 * H / 2));
        // (DuckDB reads no `+` sign.)
        assert!(iv("INTERVAL '-2 days +3 hours'").is_err());
        assert_eq!(iv("INTERVAL '-2 days 3 hours'"), parts(0, -2, 3 * H));
        assert_eq!(iv("INTERVAL '90' DAY"), parts(0, 90, 0));
        assert_eq!(iv("INTERVAL '1.5 hours'"), parts(0, 0, 3 * H / 2));
        assert!(iv("INTERVAL '1:61'").is_err());
        assert!(iv("INTERVAL ''").is_err());
        assert!(iv("INTERVAL '2 fortnights'").is_err());
        assert!(iv("INTERVAL '3000000000' MONTH").is_err());
        assert!(iv("INTERVAL '9223372036854775807' HOUR").is_err());
        assert_eq!(parts(1, -2, 3).unwrap().checked_neg().unwrap(), parts(-1, 2, -3).unwrap());
        assert!(Interval { months: i32::MIN, days: 0, micros: 0 }.checked_neg().is_err());
    }

    #[test]
    fn timestamp_literals() {
        let ts = |t: &str| timestamp_literal(t).map(|e| e.to_string());
        assert_eq!(ts("2024-01-05 10:30").unwrap(), "TIMESTAMP '2024-01-05 10:30:00'");
        let err = ts("2024-01-05 10:30:00 UTC").unwrap_err().to_string();
        assert!(err.contains("invalid TIMESTAMP '2024-01-05 10:30:00 UTC'"), "{err}");
    }
}
