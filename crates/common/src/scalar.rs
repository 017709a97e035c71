//! Scalar values: literals in plans and the values of the CPU reference backend.

use crate::date::{format_date, format_timestamp};
use crate::interval::Interval;
use crate::{semantics, DataType};
use std::cmp::Ordering;
use std::fmt;

/// A single value. DECIMAL holds the unscaled integer; its scale lives in the DataType
/// of the expression that produced it.
#[derive(Debug, Clone, PartialEq)]
pub enum ScalarValue {
    Null,
    Boolean(bool),
    Int32(i32),
    Int64(i64),
    Float64(f64),
    Decimal(i128),
    Date(i32),
    /// Microseconds since 1970-01-01 00:00:00.
    Timestamp(i64),
    Interval(Interval),
    Utf8(String),
}

impl ScalarValue {
    pub fn is_null(&self) -> bool {
        matches!(self, ScalarValue::Null)
    }

    /// Integer view of integer-like values (ints, dates, timestamps, decimals' unscaled value).
    pub fn as_i128(&self) -> Option<i128> {
        match self {
            ScalarValue::Int32(v) => Some(*v as i128),
            ScalarValue::Int64(v) => Some(*v as i128),
            ScalarValue::Decimal(v) => Some(*v),
            ScalarValue::Date(v) => Some(*v as i128),
            ScalarValue::Timestamp(v) => Some(*v as i128),
            ScalarValue::Boolean(b) => Some(*b as i128),
            _ => None,
        }
    }

    /// Numeric value as f64, given the value's type (for decimal scale).
    pub fn as_f64(&self, ty: &DataType) -> Option<f64> {
        match self {
            ScalarValue::Float64(v) => Some(*v),
            ScalarValue::Decimal(v) => Some(semantics::decimal_to_f64(*v, ty.scale())),
            other => other.as_i128().map(|v| v as f64),
        }
    }

    /// SQL's order of values of the same type (comparisons, MIN/MAX, ORDER BY): DOUBLEs by
    /// [`semantics::f64_cmp`] (`-0.0 = 0.0`; NaN equal to itself, above every number),
    /// INTERVALs by their normalized fields (`Interval::compare`);
    /// NULLs are handled by the caller.
    pub fn compare(&self, other: &ScalarValue) -> Ordering {
        use ScalarValue::*;
        match (self, other) {
            (Float64(a), Float64(b)) => semantics::f64_cmp(*a, *b),
            (Utf8(a), Utf8(b)) => a.as_bytes().cmp(b.as_bytes()),
            (Interval(a), Interval(b)) => a.compare(b),
            (Null, Null) => Ordering::Equal,
            (Null, _) => Ordering::Less,
            (_, Null) => Ordering::Greater,
            (a, b) => a.as_i128().cmp(&b.as_i128()),
        }
    }

    /// Renders the value as SQL text for a given type (decimals exactly at their scale).
    pub fn display(&self, ty: &DataType) -> String {
        match self {
            ScalarValue::Null => "NULL".into(),
            ScalarValue::Boolean(b) => b.to_string(),
            ScalarValue::Int32(v) => v.to_string(),
            ScalarValue::Int64(v) => v.to_string(),
            ScalarValue::Float64(v) => v.to_string(),
            ScalarValue::Decimal(v) => format_decimal(*v, ty.scale()),
            ScalarValue::Date(d) => format_date(*d as i64),
            ScalarValue::Timestamp(t) => format_timestamp(*t),
            ScalarValue::Interval(iv) => iv.to_text(),
            ScalarValue::Utf8(s) => s.clone(),
        }
    }
}

/// Exact text of a scaled integer: 12345 at scale 2 is "123.45".
pub fn format_decimal(v: i128, scale: u8) -> String {
    if scale == 0 {
        return v.to_string();
    }
    let neg = v < 0;
    let digits = v.unsigned_abs().to_string();
    let s = scale as usize;
    let padded = if digits.len() <= s { format!("{}{}", "0".repeat(s + 1 - digits.len()), digits) } else { digits };
    let (int, frac) = padded.split_at(padded.len() - s);
    format!("{}{}.{}", if neg { "-" } else { "" }, int, frac)
}

impl fmt::Display for ScalarValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScalarValue::Decimal(v) => write!(f, "{v}"),
            ScalarValue::Utf8(s) => write!(f, "'{}'", s.replace('\'', "''")),
            other => write!(f, "{}", other.display(&DataType::Int64)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn decimals_print_exactly() {
        assert_eq!(format_decimal(12345, 2), "123.45");
        assert_eq!(format_decimal(-5, 2), "-0.05");
        assert_eq!(format_decimal(7, 0), "7");
        assert_eq!(format_decimal(100, 4), "0.0100");
    }
}
