//! Conversions between Arrow arrays and the engine's values and GPU layouts.

use arrow::array::*;
use gpusql_common::{DataType, Error, Result, ScalarValue};
use std::sync::Arc;

/// Casts an input array to the Arrow type the engine stores for `ty` (Utf8View -> Utf8,
/// small ints -> Int32, …).
pub fn normalize_array(a: &ArrayRef, ty: &DataType) -> Result<ArrayRef> {
    let target = ty.to_arrow();
    if a.data_type() == &target {
        return Ok(a.clone());
    }
    // A value that does not convert is an error, never a silent NULL.
    let opts = arrow::compute::CastOptions { safe: false, ..Default::default() };
    arrow::compute::cast_with_options(a, &target, &opts)
        .map_err(|e| Error::exec(format!("cannot convert {} to {ty}: {e}", a.data_type())))
}

/// Value of row `i` of an array stored for type `ty`.
pub fn value_at(a: &dyn Array, ty: &DataType, i: usize) -> ScalarValue {
    if a.is_null(i) {
        return ScalarValue::Null;
    }
    match ty {
        DataType::Boolean => {
            ScalarValue::Boolean(a.as_any().downcast_ref::<BooleanArray>().is_some_and(|x| x.value(i)))
        }
        DataType::Int32 => ScalarValue::Int32(a.as_any().downcast_ref::<Int32Array>().map_or(0, |x| x.value(i))),
        DataType::Int64 => ScalarValue::Int64(a.as_any().downcast_ref::<Int64Array>().map_or(0, |x| x.value(i))),
        DataType::Float64 => {
            ScalarValue::Float64(a.as_any().downcast_ref::<Float64Array>().map_or(0.0, |x| x.value(i)))
        }
        DataType::Decimal { .. } => {
            ScalarValue::Decimal(a.as_any().downcast_ref::<Decimal128Array>().map_or(0, |x| x.value(i)))
        }
        DataType::Date => ScalarValue::Date(a.as_any().downcast_ref::<Date32Array>().map_or(0, |x| x.value(i))),
        DataType::Timestamp => {
            ScalarValue::Timestamp(a.as_any().downcast_ref::<TimestampMicrosecondArray>().map_or(0, |x| x.value(i)))
        }
        DataType::Interval => ScalarValue::Interval(
            a.as_any()
                .downcast_ref::<IntervalMonthDayNanoArray>()
                .map_or(Default::default(), |x| interval_of(x.value(i))),
        ),
        DataType::Utf8 => ScalarValue::Utf8(
            a.as_any().downcast_ref::<StringArray>().map_or(String::new(), |x| x.value(i).to_string()),
        ),
    }
}

pub use gpusql_common::interval::{arrow_interval, interval_of};

/// Value of row `i` of a chunk in its stored form (see `HostTable::data`): a string
/// dictionary's value, a `Decimal64`'s integer, or `value_at`. Reads one value without
/// converting the whole chunk (table samples).
pub fn stored_value_at(a: &dyn Array, ty: &DataType, i: usize) -> ScalarValue {
    if a.is_null(i) {
        return ScalarValue::Null;
    }
    if let Some(d) = a.as_any().downcast_ref::<DictionaryArray<arrow::datatypes::Int32Type>>() {
        let k = d.keys().value(i);
        return match d.values().as_any().downcast_ref::<StringArray>() {
            Some(v) if (k as usize) < v.len() && v.is_valid(k as usize) => {
                ScalarValue::Utf8(v.value(k as usize).to_string())
            }
            _ => ScalarValue::Null,
        };
    }
    if let Some(d) = a.as_any().downcast_ref::<Decimal64Array>() {
        return ScalarValue::Decimal(d.value(i) as i128);
    }
    value_at(a, ty, i)
}

/// Builds an Arrow array of type `ty` from values (NULL where Null).
pub fn build_array(ty: &DataType, values: &[ScalarValue]) -> Result<ArrayRef> {
    let mismatch = |v: &ScalarValue| Error::exec(format!("value {v} is not of type {ty}"));
    Ok(match ty {
        DataType::Boolean => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    ScalarValue::Boolean(b) => Ok(Some(*b)),
                    ScalarValue::Null => Ok(None),
                    o => Err(mismatch(o)),
                })
                .collect::<Result<BooleanArray>>()?,
        ),
        DataType::Int32 => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    ScalarValue::Int32(x) => Ok(Some(*x)),
                    ScalarValue::Null => Ok(None),
                    o => Err(mismatch(o)),
                })
                .collect::<Result<Int32Array>>()?,
        ),
        DataType::Int64 => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    ScalarValue::Int64(x) => Ok(Some(*x)),
                    ScalarValue::Null => Ok(None),
                    o => Err(mismatch(o)),
                })
                .collect::<Result<Int64Array>>()?,
        ),
        DataType::Float64 => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    ScalarValue::Float64(x) => Ok(Some(*x)),
                    ScalarValue::Null => Ok(None),
                    o => Err(mismatch(o)),
                })
                .collect::<Result<Float64Array>>()?,
        ),
        DataType::Date => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    ScalarValue::Date(x) => Ok(Some(*x)),
                    ScalarValue::Null => Ok(None),
                    o => Err(mismatch(o)),
                })
                .collect::<Result<Date32Array>>()?,
        ),
        DataType::Timestamp => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    ScalarValue::Timestamp(x) => Ok(Some(*x)),
                    ScalarValue::Null => Ok(None),
                    o => Err(mismatch(o)),
                })
                .collect::<Result<TimestampMicrosecondArray>>()?,
        ),
        DataType::Decimal { precision, scale } => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    ScalarValue::Decimal(x) => Ok(Some(*x)),
                    ScalarValue::Null => Ok(None),
                    o => Err(mismatch(o)),
                })
                .collect::<Result<Decimal128Array>>()?
                .with_precision_and_scale(*precision, *scale as i8)?,
        ),
        DataType::Interval => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    ScalarValue::Interval(iv) => Ok(Some(arrow_interval(iv)?)),
                    ScalarValue::Null => Ok(None),
                    o => Err(mismatch(o)),
                })
                .collect::<Result<IntervalMonthDayNanoArray>>()?,
        ),
        DataType::Utf8 => Arc::new(
            values
                .iter()
                .map(|v| match v {
                    ScalarValue::Utf8(s) => Ok(Some(s.as_str())),
                    ScalarValue::Null => Ok(None),
                    o => Err(mismatch(o)),
                })
                .collect::<Result<StringArray>>()?,
        ),
    })
}

/// One byte per row of a column's chunks, 1 where the row holds a value.
pub fn validity_bytes(chunks: &[ArrayRef]) -> Vec<u8> {
    chunks.iter().flat_map(|a| (0..a.len()).map(|i| a.is_valid(i) as u8)).collect()
}

/// Strings longer than this stay contiguous only (a pivoted copy pads every row to it).
pub const PIVOT_MAX_LEN: usize = 256;

/// The pieces per row of a string column's Pivot-4 copy ([Sitaridi 2016] §5.3.2: each
/// string cut into 4-byte pieces, zero-padded, piece k of row r at `words[k * rows + r]`,
/// so the lanes of a warp reading piece k of consecutive rows read consecutive words;
/// made on the GPU from the resident column), or None where it does not pay: strings
/// longer than PIVOT_MAX_LEN, or padding that would more than double the bytes
/// (pieces x 4 > 2 x the mean length + 8).
pub fn pivot_pieces(chunks: &[ArrayRef]) -> Option<u32> {
    use rayon::prelude::*;
    let strings: Vec<&StringArray> =
        chunks.iter().map(|a| a.as_any().downcast_ref::<StringArray>()).collect::<Option<_>>()?;
    let rows: usize = strings.iter().map(|s| s.len()).sum();
    let max_len = strings
        .par_iter()
        .map(|s| s.value_offsets().windows(2).map(|w| (w[1] - w[0]) as usize).max().unwrap_or(0))
        .max()
        .unwrap_or(0);
    let total: usize = strings.iter().map(|s| (s.value_offsets()[s.len()] - s.value_offsets()[0]) as usize).sum();
    let pieces = max_len.div_ceil(4);
    if rows == 0 || max_len > PIVOT_MAX_LEN || pieces * 4 > 2 * total / rows + 8 {
        return None;
    }
    Some(pieces as u32)
}

/// Bytes per row of a fixed-width column on the GPU.
pub fn gpu_width(ty: &DataType) -> usize {
    match ty {
        DataType::Boolean => 1,
        DataType::Int32 | DataType::Date => 4,
        DataType::Int64 | DataType::Float64 | DataType::Timestamp => 8,
        DataType::Decimal { precision, .. } => {
            if *precision <= 18 {
                8
            } else {
                16
            }
        }
        // months (i32), days (i32), microseconds (i64): prelude.cu's `Interval`.
        DataType::Interval => 16,
        DataType::Utf8 => 8,
    }
}
