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
    Ok(arrow::compute::cast(a, &target)?)
}

/// Value of row `i` of an array stored for type `ty`.
pub fn value_at(a: &dyn Array, ty: &DataType, i: usize) -> ScalarValue {
    if a.is_null(i) {
        return ScalarValue::Null;
    }
    match ty {
        DataType::Boolean => ScalarValue::Boolean(a.as_any().downcast_ref::<BooleanArray>().map_or(false, |x| x.value(i))),
        DataType::Int32 => ScalarValue::Int32(a.as_any().downcast_ref::<Int32Array>().map_or(0, |x| x.value(i))),
        DataType::Int64 => ScalarValue::Int64(a.as_any().downcast_ref::<Int64Array>().map_or(0, |x| x.value(i))),
        DataType::Float64 => ScalarValue::Float64(a.as_any().downcast_ref::<Float64Array>().map_or(0.0, |x| x.value(i))),
        DataType::Decimal { .. } => ScalarValue::Decimal(a.as_any().downcast_ref::<Decimal128Array>().map_or(0, |x| x.value(i))),
        DataType::Date => ScalarValue::Date(a.as_any().downcast_ref::<Date32Array>().map_or(0, |x| x.value(i))),
        DataType::Utf8 => ScalarValue::Utf8(a.as_any().downcast_ref::<StringArray>().map_or(String::new(), |x| x.value(i).to_string())),
    }
}

/// Builds an Arrow array of type `ty` from values (NULL where Null).
pub fn build_array(ty: &DataType, values: &[ScalarValue]) -> Result<ArrayRef> {
    let mismatch = |v: &ScalarValue| Error::exec(format!("value {v} is not of type {ty}"));
    Ok(match ty {
        DataType::Boolean => Arc::new(
            values.iter().map(|v| match v { ScalarValue::Boolean(b) => Ok(Some(*b)), ScalarValue::Null => Ok(None), o => Err(mismatch(o)) }).collect::<Result<BooleanArray>>()?,
        ),
        DataType::Int32 => Arc::new(
            values.iter().map(|v| match v { ScalarValue::Int32(x) => Ok(Some(*x)), ScalarValue::Null => Ok(None), o => Err(mismatch(o)) }).collect::<Result<Int32Array>>()?,
        ),
        DataType::Int64 => Arc::new(
            values.iter().map(|v| match v { ScalarValue::Int64(x) => Ok(Some(*x)), ScalarValue::Null => Ok(None), o => Err(mismatch(o)) }).collect::<Result<Int64Array>>()?,
        ),
        DataType::Float64 => Arc::new(
            values.iter().map(|v| match v { ScalarValue::Float64(x) => Ok(Some(*x)), ScalarValue::Null => Ok(None), o => Err(mismatch(o)) }).collect::<Result<Float64Array>>()?,
        ),
        DataType::Date => Arc::new(
            values.iter().map(|v| match v { ScalarValue::Date(x) => Ok(Some(*x)), ScalarValue::Null => Ok(None), o => Err(mismatch(o)) }).collect::<Result<Date32Array>>()?,
        ),
        DataType::Decimal { precision, scale } => Arc::new(
            values
                .iter()
                .map(|v| match v { ScalarValue::Decimal(x) => Ok(Some(*x)), ScalarValue::Null => Ok(None), o => Err(mismatch(o)) })
                .collect::<Result<Decimal128Array>>()?
                .with_precision_and_scale(*precision, *scale as i8)?,
        ),
        DataType::Utf8 => Arc::new(
            values.iter().map(|v| match v { ScalarValue::Utf8(s) => Ok(Some(s.as_str())), ScalarValue::Null => Ok(None), o => Err(mismatch(o)) }).collect::<Result<StringArray>>()?,
        ),
    })
}

/// A column in GPU layout, still on the host: fixed-width little-endian values (DECIMAL
/// with precision <= 18 as i64, else i128; BOOLEAN as one byte), or offsets + bytes for
/// strings; validity as one byte per row when the column is nullable.
pub struct GpuLayout {
    pub values: Vec<u8>,
    pub offsets: Option<Vec<i32>>,
    pub validity: Option<Vec<u8>>,
}

/// One byte per row of `a`, 1 where the row holds a value.
pub fn validity_bytes(a: &dyn Array) -> Vec<u8> {
    (0..a.len()).map(|i| a.is_valid(i) as u8).collect()
}

pub fn to_gpu_layout(a: &dyn Array, ty: &DataType, nullable: bool) -> Result<GpuLayout> {
    let n = a.len();
    let validity = nullable.then(|| validity_bytes(a));
    fn bytes_of<T: Copy>(v: &[T]) -> Vec<u8> {
        let len = std::mem::size_of_val(v);
        // SAFETY: plain-old-data numbers viewed as their bytes.
        unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, len) }.to_vec()
    }
    let bad = || Error::exec(format!("column data does not match its type {ty}"));
    let (values, offsets) = match ty {
        DataType::Boolean => {
            let b = a.as_any().downcast_ref::<BooleanArray>().ok_or_else(bad)?;
            ((0..n).map(|i| b.value(i) as u8).collect(), None)
        }
        DataType::Int32 => (bytes_of(a.as_any().downcast_ref::<Int32Array>().ok_or_else(bad)?.values()), None),
        DataType::Date => (bytes_of(a.as_any().downcast_ref::<Date32Array>().ok_or_else(bad)?.values()), None),
        DataType::Int64 => (bytes_of(a.as_any().downcast_ref::<Int64Array>().ok_or_else(bad)?.values()), None),
        DataType::Float64 => (bytes_of(a.as_any().downcast_ref::<Float64Array>().ok_or_else(bad)?.values()), None),
        DataType::Decimal { precision, .. } => {
            let d = a.as_any().downcast_ref::<Decimal128Array>().ok_or_else(bad)?;
            if *precision <= 18 {
                let v: Vec<i64> = d.values().iter().map(|x| *x as i64).collect();
                (bytes_of(&v), None)
            } else {
                (bytes_of(d.values()), None)
            }
        }
        DataType::Utf8 => {
            let s = a.as_any().downcast_ref::<StringArray>().ok_or_else(bad)?;
            let offs = s.value_offsets();
            let base = offs[0];
            let rebased: Vec<i32> = offs.iter().map(|o| o - base).collect();
            let bytes = s.value_data()[base as usize..offs[n] as usize].to_vec();
            (bytes, Some(rebased))
        }
    };
    Ok(GpuLayout { values, offsets, validity })
}

/// A string column in the Pivot-4 layout of seed 000 §5.3.2: each string cut into 4-byte
/// pieces (zero-padded), piece k of row r at `words[k * rows + r]`, so the lanes of a warp
/// reading piece k of consecutive rows read consecutive words.
pub struct PivotedStrings {
    pub words: Vec<u32>,
    pub pieces: u32,
}

/// Strings longer than this stay contiguous only (a pivoted copy pads every row to it).
pub const PIVOT_MAX_LEN: usize = 256;

/// The Pivot-4 copy of a string column, or None where it does not pay: strings longer than
/// PIVOT_MAX_LEN, or padding that would more than double the bytes (pieces x 4 > 2 x the
/// mean length + 8).
pub fn pivot_strings(a: &dyn Array) -> Option<PivotedStrings> {
    let s = a.as_any().downcast_ref::<StringArray>()?;
    let rows = s.len();
    let offs = s.value_offsets();
    let max_len = (0..rows).map(|r| (offs[r + 1] - offs[r]) as usize).max().unwrap_or(0);
    let total = (offs[rows] - offs[0]) as usize;
    let pieces = max_len.div_ceil(4);
    if rows == 0 || max_len > PIVOT_MAX_LEN || pieces * 4 > 2 * total / rows + 8 {
        return None;
    }
    let bytes = s.value_data();
    let mut words = vec![0u32; pieces * rows];
    // One thread per group of piece columns: each writes only its own columns.
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get()).min(pieces.max(1));
    let per = pieces.div_ceil(threads);
    std::thread::scope(|scope| {
        for (t, cols) in words.chunks_mut(per * rows).enumerate() {
            scope.spawn(move || {
                for (c, col) in cols.chunks_mut(rows).enumerate() {
                    let k = t * per + c;
                    for (r, w) in col.iter_mut().enumerate() {
                        let (b, e) = (offs[r] as usize + 4 * k, offs[r + 1] as usize);
                        let mut x = [0u8; 4];
                        if b < e {
                            let n = (e - b).min(4);
                            x[..n].copy_from_slice(&bytes[b..b + n]);
                        }
                        *w = u32::from_le_bytes(x);
                    }
                }
            });
        }
    });
    Some(PivotedStrings { words, pieces: pieces as u32 })
}
