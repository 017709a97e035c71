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

pub fn to_gpu_layout(a: &dyn Array, ty: &DataType, nullable: bool) -> Result<GpuLayout> {
    let n = a.len();
    let validity = nullable.then(|| (0..n).map(|i| a.is_valid(i) as u8).collect());
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
