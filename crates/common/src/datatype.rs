//! SQL data types and their physical representation.

use std::fmt;

/// The SQL types of the engine. DECIMAL is a scaled integer (i64 on the GPU when the
/// precision is at most 18, i128 otherwise); DATE is days since 1970-01-01 as i32;
/// TIMESTAMP is microseconds since 1970-01-01 00:00:00 as i64, without a time zone
/// (DuckDB's TIMESTAMP); INTERVAL is months, days and microseconds (`interval.rs`), 16
/// bytes on the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    Boolean,
    Int32,
    Int64,
    Float64,
    Decimal { precision: u8, scale: u8 },
    Date,
    Timestamp,
    Interval,
    Utf8,
}

pub const MAX_DECIMAL_PRECISION: u8 = 38;
/// The most digits a DECIMAL held in 64 bits has.
pub const INT64_DECIMAL_PRECISION: u8 = 18;

impl DataType {
    pub fn decimal(precision: u8, scale: u8) -> DataType {
        DataType::Decimal { precision: precision.min(MAX_DECIMAL_PRECISION), scale }
    }

    pub fn is_numeric(&self) -> bool {
        matches!(self, DataType::Int32 | DataType::Int64 | DataType::Float64 | DataType::Decimal { .. })
    }

    pub fn is_integer(&self) -> bool {
        matches!(self, DataType::Int32 | DataType::Int64)
    }

    /// Integers seen as decimals with scale 0 (for mixed decimal arithmetic).
    pub fn as_decimal(&self) -> Option<(u8, u8)> {
        match self {
            DataType::Int32 => Some((10, 0)),
            DataType::Int64 => Some((19, 0)),
            DataType::Decimal { precision, scale } => Some((*precision, *scale)),
            _ => None,
        }
    }

    pub fn scale(&self) -> u8 {
        match self {
            DataType::Decimal { scale, .. } => *scale,
            _ => 0,
        }
    }

    /// Bytes per value in a fixed-width column (strings: the 4-byte offset).
    pub fn width(&self) -> usize {
        match self {
            DataType::Boolean => 1,
            DataType::Int32 | DataType::Date | DataType::Utf8 => 4,
            DataType::Int64 | DataType::Float64 | DataType::Timestamp => 8,
            DataType::Interval => 16,
            DataType::Decimal { precision, .. } => {
                if *precision <= 18 {
                    8
                } else {
                    16
                }
            }
        }
    }

    pub fn to_arrow(&self) -> arrow::datatypes::DataType {
        use arrow::datatypes::DataType as A;
        match self {
            DataType::Boolean => A::Boolean,
            DataType::Int32 => A::Int32,
            DataType::Int64 => A::Int64,
            DataType::Float64 => A::Float64,
            DataType::Decimal { precision, scale } => A::Decimal128(*precision, *scale as i8),
            DataType::Date => A::Date32,
            DataType::Timestamp => A::Timestamp(arrow::datatypes::TimeUnit::Microsecond, None),
            DataType::Interval => A::Interval(arrow::datatypes::IntervalUnit::MonthDayNano),
            DataType::Utf8 => A::Utf8,
        }
    }

    pub fn from_arrow(t: &arrow::datatypes::DataType) -> Option<DataType> {
        use arrow::datatypes::DataType as A;
        Some(match t {
            A::Boolean => DataType::Boolean,
            A::Int8 | A::Int16 | A::Int32 | A::UInt8 | A::UInt16 => DataType::Int32,
            A::Int64 | A::UInt32 => DataType::Int64,
            // (Float32 is not read: DuckDB computes and prints it in single precision.)
            A::Float64 => DataType::Float64,
            A::Decimal128(p, s) if *s >= 0 => DataType::decimal(*p, *s as u8),
            A::Date32 => DataType::Date,
            // Any unit (normalize_array casts the values to microseconds); a timestamp with a
            // time zone is another type, not read.
            A::Timestamp(_, None) => DataType::Timestamp,
            A::Utf8 | A::LargeUtf8 | A::Utf8View => DataType::Utf8,
            // (The engine's own tables and Arrow files; nanoseconds are kept to microseconds.)
            A::Interval(arrow::datatypes::IntervalUnit::MonthDayNano) => DataType::Interval,
            _ => return None,
        })
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Boolean => write!(f, "BOOLEAN"),
            DataType::Int32 => write!(f, "INTEGER"),
            DataType::Int64 => write!(f, "BIGINT"),
            DataType::Float64 => write!(f, "DOUBLE"),
            DataType::Decimal { precision, scale } => write!(f, "DECIMAL({precision},{scale})"),
            DataType::Date => write!(f, "DATE"),
            DataType::Timestamp => write!(f, "TIMESTAMP"),
            DataType::Interval => write!(f, "INTERVAL"),
            DataType::Utf8 => write!(f, "VARCHAR"),
        }
    }
}
