//! The arithmetic of quantile_cont / quantile_disc (and median, percentile_cont /
//! percentile_disc) over a group's `n` sorted non-NULL values, as DuckDB 2.0.1 does it
//! (`QuantileInterpolator` and `InterpolateOperator`): which positions hold the answer,
//! and how the two values around a continuous quantile are blended. The binder sorts each
//! group's values and picks those positions (`sql/src/bind_quantile.rs`); `Expr::Quantile`
//! calls these functions on the CPU, and prelude.cu's `quantile_*` twins on the GPU.

use gpusql_common::{DataType, Error, Interval, Result, ScalarValue};
use std::fmt;

/// The most decimal places a DECIMAL fraction may have (the binder refuses more).
pub const MAX_EXACT_SCALE: u8 = 18;

/// A quantile's fraction in [0, 1] (its sign, descending order, is taken off by the
/// binder): the DOUBLE value, and where it was written as a DECIMAL its unscaled value
/// and 10^scale, which quantile_disc's position is computed from exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuantileFraction {
    pub value: f64,
    pub decimal: Option<(i128, i128)>,
}

impl fmt::Display for QuantileFraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.value)
    }
}

/// What an `Expr::Quantile` computes from a group's count `n` of non-NULL values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QuantileOp {
    /// quantile_cont's lower position (0-based): floor((n - 1) * q), BIGINT.
    ContLower,
    /// quantile_cont's upper position: ceil((n - 1) * q), BIGINT.
    ContUpper,
    /// quantile_disc's position: max(1, n - floor(n - n * q)) - 1, BIGINT (with a DECIMAL
    /// fraction in exact integers).
    Disc,
    /// Arguments (lo, hi, n): the value between lo (at the lower position) and hi (at the
    /// upper), by the fraction (n - 1) * q - floor((n - 1) * q); lo where it is 0. Of lo's
    /// type: DOUBLE, DECIMAL, TIMESTAMP or INTERVAL (median's; the binder casts integers to
    /// DOUBLE and DATEs to TIMESTAMP, as DuckDB's results are).
    Interpolate,
}

impl QuantileOp {
    pub fn name(&self) -> &'static str {
        match self {
            QuantileOp::ContLower => "quantile_lower",
            QuantileOp::ContUpper => "quantile_upper",
            QuantileOp::Disc => "quantile_disc_position",
            QuantileOp::Interpolate => "quantile_interpolate",
        }
    }
}

/// quantile_cont's real position (n - 1) * q.
fn real_position(n: i64, q: &QuantileFraction) -> f64 {
    (n - 1) as f64 * q.value
}

pub fn cont_lower(n: i64, q: &QuantileFraction) -> i64 {
    real_position(n, q).floor() as i64
}

pub fn cont_upper(n: i64, q: &QuantileFraction) -> i64 {
    real_position(n, q).ceil() as i64
}

/// The blend fraction between the lower and the upper position.
pub fn cont_fraction(n: i64, q: &QuantileFraction) -> f64 {
    let rn = real_position(n, q);
    rn - rn.floor()
}

pub fn disc_position(n: i64, q: &QuantileFraction) -> i64 {
    let floored = match q.decimal {
        // (n * scaling - n * integral) / scaling, in integers: n < 2^63 and scaling <= 10^18
        // (`MAX_EXACT_SCALE`), so the products fit an i128.
        Some((integral, scaling)) => {
            let n = n as i128;
            (n * scaling - n * integral) / scaling
        }
        None => (n as f64 - n as f64 * q.value).floor() as i128,
    };
    (n as i128 - floored).max(1) as i64 - 1
}

/// DuckDB's interpolations, by the result's type. DuckDB's build contracts
/// `lo * (1.0 - d) + hi * d` into one fused multiply-add, `fma(lo, 1 - d, hi * d)` (one
/// rounding less): 190 of 1,500 random DOUBLE quantiles differed in the last bit from the
/// two-rounding form, none from this one.
pub fn interpolate_f64(lo: f64, hi: f64, d: f64) -> f64 {
    if d == 0.0 {
        return lo;
    }
    lo.mul_add(1.0 - d, hi * d)
}

/// TIMESTAMP microseconds: lo plus the microseconds between them times d, rounded to the
/// nearest, halves away from zero (C's llround); blending the two as DOUBLEs lost
/// microseconds on today's timestamps (~1.7e15).
pub fn interpolate_timestamp(lo: i64, hi: i64, d: f64) -> i64 {
    if d == 0.0 {
        return lo;
    }
    lo.wrapping_add(((hi as i128 - lo as i128) as f64 * d).round() as i64)
}

/// INTERVALs (median): lo plus the rounded share of the microseconds between them (a month
/// as 30 days), as whole days and the rest (DuckDB's `MultiplyByDouble`).
pub fn interpolate_interval(lo: &Interval, hi: &Interval, d: f64) -> Result<Interval> {
    if d == 0.0 {
        return Ok(*lo);
    }
    let (a, b) = (lo.total_micros()?, hi.total_micros()?);
    let step = (b.wrapping_sub(a) as f64 * d).round() as i64;
    Ok(Interval::from_micros(a.wrapping_add(step)))
}

/// Unscaled DECIMAL values: of at most 18 digits through DOUBLEs, truncated (DuckDB's
/// `LossyNumericCast` of `lo + (hi - lo) * d`, its integer difference, evaluated as one
/// fused multiply-add: 1,500 random DECIMAL(12,3) quantiles agree); wider ones as lo plus
/// the truncated product of the exact difference, unless that difference overflows.
pub fn interpolate_decimal(lo: i128, hi: i128, d: f64, ty: &DataType) -> i128 {
    if d == 0.0 {
        return lo;
    }
    let narrow = matches!(ty, DataType::Decimal { precision, .. } if *precision <= 18);
    match hi.checked_sub(lo) {
        Some(delta) if !narrow => lo + (delta as f64 * d) as i128,
        Some(delta) => (delta as f64).mul_add(d, lo as f64) as i64 as i128,
        _ => interpolate_f64(lo as f64, hi as f64, d) as i128,
    }
}

/// `Expr::Quantile` over one row's argument values (`ty`: the first argument's type).
pub fn eval(op: QuantileOp, q: &QuantileFraction, args: &[ScalarValue], ty: &DataType) -> Result<ScalarValue> {
    let count = |v: &ScalarValue| match v {
        ScalarValue::Int64(n) => Ok(Some(*n)),
        ScalarValue::Null => Ok(None),
        other => Err(Error::exec(format!("{}: a count of {other:?}", op.name()))),
    };
    if op != QuantileOp::Interpolate {
        let Some(n) = count(&args[0])? else { return Ok(ScalarValue::Null) };
        return Ok(ScalarValue::Int64(match op {
            QuantileOp::ContLower => cont_lower(n, q),
            QuantileOp::ContUpper => cont_upper(n, q),
            _ => disc_position(n, q),
        }));
    }
    let Some(n) = count(&args[2])? else { return Ok(ScalarValue::Null) };
    let d = cont_fraction(n, q);
    Ok(match (&args[0], &args[1]) {
        (ScalarValue::Float64(lo), ScalarValue::Float64(hi)) => ScalarValue::Float64(interpolate_f64(*lo, *hi, d)),
        (ScalarValue::Timestamp(lo), ScalarValue::Timestamp(hi)) => {
            ScalarValue::Timestamp(interpolate_timestamp(*lo, *hi, d))
        }
        (ScalarValue::Decimal(lo), ScalarValue::Decimal(hi)) => {
            ScalarValue::Decimal(interpolate_decimal(*lo, *hi, d, ty))
        }
        (ScalarValue::Interval(lo), ScalarValue::Interval(hi)) => {
            ScalarValue::Interval(interpolate_interval(lo, hi, d)?)
        }
        (ScalarValue::Null, _) | (_, ScalarValue::Null) => ScalarValue::Null,
        (lo, hi) => return Err(Error::exec(format!("quantile interpolation of {lo:?} and {hi:?}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(value: f64) -> QuantileFraction {
        QuantileFraction { value, decimal: None }
    }

    #[test]
    fn positions_follow_duckdb() {
        // (n = 4, q = 0.3): quantile_cont blends positions 0 and 1 by 0.9; quantile_disc
        // takes position 1 (DuckDB: 1.9 and 2 over 1, 2, 10, 20).
        let dec = QuantileFraction { value: 0.3, decimal: Some((3, 10)) };
        assert_eq!((cont_lower(4, &q(0.3)), cont_upper(4, &q(0.3))), (0, 1));
        assert!((cont_fraction(4, &q(0.3)) - 0.9).abs() < 1e-12);
        assert_eq!(disc_position(4, &q(0.3)), 1);
        assert_eq!(disc_position(4, &dec), 1);
        // range(10): quantile_disc 0.3 -> 2, 0.7 -> 6; range(100), 0.29 -> 28.
        assert_eq!(disc_position(10, &q(0.3)), 2);
        assert_eq!(disc_position(10, &q(0.7)), 6);
        assert_eq!(disc_position(100, &QuantileFraction { value: 0.29, decimal: Some((29, 100)) }), 28);
        assert_eq!(disc_position(100, &q(0.29)), 28);
        // The ends, and one value.
        assert_eq!(disc_position(10, &q(0.0)), 0);
        assert_eq!(disc_position(10, &q(1.0)), 9);
        assert_eq!((cont_lower(1, &q(0.5)), cont_upper(1, &q(0.5))), (0, 0));
    }

    #[test]
    fn interpolation_follows_duckdb() {
        // percentile_cont(0.3) WITHIN GROUP (ORDER BY x DESC) over 1, 2, 10, 20.
        assert_eq!(interpolate_f64(20.0, 10.0, cont_fraction(4, &q(0.3))), 11.000000000000002);
        assert!(interpolate_f64(f64::NEG_INFINITY, f64::INFINITY, 0.5).is_nan());
        assert_eq!(interpolate_f64(f64::INFINITY, f64::INFINITY, 0.0), f64::INFINITY);
        // 1.50 and 2.25 -> 1.87 (truncated); -0.03 and -0.02 -> -0.02 in DECIMAL(10,2)
        // (through DOUBLEs), -0.03 in DECIMAL(38,2) (exact difference).
        let narrow = DataType::decimal(10, 2);
        let wide = DataType::decimal(38, 2);
        assert_eq!(interpolate_decimal(150, 225, 0.5, &narrow), 187);
        assert_eq!(interpolate_decimal(-3, -2, 0.5, &narrow), -2);
        assert_eq!(interpolate_decimal(-3, -2, 0.5, &wide), -3);
        // 1 and 2 microseconds at 0.5 -> 2; at 0.25 -> 1.
        assert_eq!(interpolate_timestamp(1, 2, 0.5), 2);
        assert_eq!(interpolate_timestamp(1, 2, 0.25), 1);
    }
}
