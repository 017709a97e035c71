//! Result download: the selected rows (through the sort permutation, offset and limit) of
//! the selected columns are gathered on the GPU, strings' bytes copied into one buffer on
//! the GPU, then downloaded into Arrow arrays.

use super::buffers::{value_width, Arg, Intermediate, OwnedColumn};
use super::{ptr, GpuExecutor, LaunchQueue, Permute};
use crate::stats::KernelStat;
use arrow::array::*;
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::datatypes::{Field as ArrowField, Schema as ArrowSchema};
use arrow::record_batch::{RecordBatch, RecordBatchOptions};
use gpusql_common::{DataType, Error, Result, Schema};
use gpusql_cuda::CudaSlice;
use gpusql_plan::PhysicalPlan;
use gpusql_storage::device::cuda_error;
use std::sync::Arc;

/// The indices of rows [skip, skip + fetch) of `r` (through its sort permutation), on the
/// GPU, and how many there are.
fn row_indices(ex: &GpuExecutor, r: &Intermediate, skip: usize, fetch: Option<usize>) -> Result<(CudaSlice<u32>, usize)> {
    let end = fetch.map_or(r.rows, |f| (skip + f).min(r.rows));
    let start = skip.min(end);
    let m = end - start;
    let idx = match &r.perm {
        Some(p) => {
            let host: Vec<u32> = if m == 0 { vec![] } else { ex.dev.download(p).map_err(cuda_error)?[start..end].to_vec() };
            upload_u32(ex, &host)?
        }
        None => upload_u32(ex, &(start as u32..end as u32).collect::<Vec<_>>())?,
    };
    Ok((idx, m))
}

/// Rows [skip, skip + fetch) of `r`, columns `columns`, gathered into a dense intermediate
/// (a sorted / limited subquery that a later pipeline scans).
pub fn slice(ex: &GpuExecutor, r: &Intermediate, columns: &[usize], skip: usize, fetch: Option<usize>, schema: &Schema, input: usize) -> Result<(Intermediate, KernelStat)> {
    let mut stat = KernelStat { name: format!("slice #{input}"), rows_in: r.rows, ..Default::default() };
    let (idx, m) = row_indices(ex, r, skip, fetch)?;
    let mut out = vec![];
    let mut q = LaunchQueue::default();
    for c in columns {
        let col = &r.columns[*c];
        let values = ex.permute(Permute::Gather, &col.values, value_width(&col.ty), &idx, m, &mut q, &mut stat)?;
        let validity = col.validity.as_ref().map(|v| ex.permute(Permute::Gather, v, 1, &idx, m, &mut q, &mut stat)).transpose()?;
        out.push(OwnedColumn { ty: col.ty, values, validity });
    }
    stat.ms += ex.run_queue(q)?;
    stat.rows_out = m;
    Ok((Intermediate { schema: schema.clone(), rows: m, columns: out, perm: None }, stat))
}

/// Returns the batch and the assembly kernels' statistics (their compile time).
pub fn download(ex: &GpuExecutor, plan: &PhysicalPlan, r: &Intermediate) -> Result<(RecordBatch, KernelStat)> {
    let mut stat = KernelStat::default();
    // Row indices to take, on the GPU (permutation slice or a plain range).
    let (idx, m) = row_indices(ex, r, plan.skip, plan.fetch)?;
    let mut fields = vec![];
    let mut arrays: Vec<ArrayRef> = vec![];
    for (c, name) in plan.columns.iter().zip(&plan.names) {
        let f = &r.schema.fields[*c];
        let col = &r.columns[*c];
        let mut q = LaunchQueue::default();
        let values = ex.permute(Permute::Gather, &col.values, value_width(&f.ty), &idx, m, &mut q, &mut stat)?;
        let validity = match &col.validity {
            Some(v) => Some(ex.permute(Permute::Gather, v, 1, &idx, m, &mut q, &mut stat)?),
            None => None,
        };
        ex.run_queue(q)?;
        let nulls = match validity {
            Some(v) => {
                let b = ex.dev.download(&v).map_err(cuda_error)?;
                Some(NullBuffer::from(b[..m].iter().map(|x| *x != 0).collect::<Vec<bool>>()))
            }
            None => None,
        };
        arrays.push(to_array(ex, col, &f.ty, values, m, nulls, &mut stat)?);
        fields.push(ArrowField::new(name, f.ty.to_arrow(), f.nullable));
    }
    let batch = RecordBatch::try_new_with_options(Arc::new(ArrowSchema::new(fields)), arrays, &RecordBatchOptions::new().with_row_count(Some(m)))?;
    Ok((batch, stat))
}

fn upload_u32(ex: &GpuExecutor, v: &[u32]) -> Result<CudaSlice<u32>> {
    ex.dev.upload(if v.is_empty() { &[0u32][..] } else { v }, "result row indices").map_err(cuda_error)
}

fn bytes_to<T: Copy + Default>(b: &[u8], m: usize) -> Vec<T> {
    let w = std::mem::size_of::<T>();
    (0..m)
        .map(|i| {
            let mut v = T::default();
            // SAFETY: T is a plain number type and the slice holds w bytes at i*w.
            unsafe { std::ptr::copy_nonoverlapping(b[i * w..].as_ptr(), &mut v as *mut T as *mut u8, w) };
            v
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn to_array(
    ex: &GpuExecutor,
    _col: &OwnedColumn,
    ty: &DataType,
    values: CudaSlice<u8>,
    m: usize,
    nulls: Option<NullBuffer>,
    stat: &mut KernelStat,
) -> Result<ArrayRef> {
    if *ty == DataType::Utf8 {
        return strings(ex, &values, m, nulls, stat);
    }
    let b = ex.dev.download(&values).map_err(cuda_error)?;
    Ok(match ty {
        DataType::Boolean => Arc::new(BooleanArray::new(b[..m].iter().map(|x| *x != 0).collect(), nulls)),
        DataType::Int32 => Arc::new(Int32Array::new(bytes_to::<i32>(&b, m).into(), nulls)),
        DataType::Date => Arc::new(Date32Array::new(bytes_to::<i32>(&b, m).into(), nulls)),
        DataType::Int64 => Arc::new(Int64Array::new(bytes_to::<i64>(&b, m).into(), nulls)),
        DataType::Timestamp => Arc::new(TimestampMicrosecondArray::new(bytes_to::<i64>(&b, m).into(), nulls)),
        DataType::Float64 => Arc::new(Float64Array::new(bytes_to::<f64>(&b, m).into(), nulls)),
        DataType::Decimal { precision, scale } => {
            let v: Vec<i128> =
                if *precision <= 18 { bytes_to::<i64>(&b, m).into_iter().map(|x| x as i128).collect() } else { bytes_to::<i128>(&b, m) };
            Arc::new(Decimal128Array::new(v.into(), nulls).with_precision_and_scale(*precision, *scale as i8)?)
        }
        DataType::Utf8 => unreachable!(),
    })
}

/// `Str` records -> one byte buffer (copied on the GPU) + offsets. NULL rows hold empty
/// records (codegen initializes every string variable), so they copy nothing.
fn strings(ex: &GpuExecutor, recs: &CudaSlice<u8>, m: usize, nulls: Option<NullBuffer>, stat: &mut KernelStat) -> Result<ArrayRef> {
    if m == 0 {
        return Ok(Arc::new(StringArray::new_null(0)));
    }
    let lens_d = ex.dev.alloc_zeros::<u32>(m, "string lengths").map_err(cuda_error)?;
    let f = ex.util("string_lengths", stat)?;
    ex.launch_untimed(&f, &[Arg::U64(ptr(recs, &ex.dev)), Arg::U64(ptr(&lens_d, &ex.dev)), Arg::U64(m as u64)], m, Some(1024))?;
    let lens = ex.dev.download(&lens_d).map_err(cuda_error)?;
    let mut offsets = Vec::with_capacity(m + 1);
    let mut total: i64 = 0;
    offsets.push(0i64);
    for l in &lens[..m] {
        total += *l as i64;
        offsets.push(total);
    }
    if total > i32::MAX as i64 {
        return Err(Error::not_supported("string results over 2 GiB"));
    }
    let offs_d = ex.dev.upload(&offsets[..m], "string offsets").map_err(cuda_error)?;
    let bytes_d = ex.dev.alloc_zeros::<u8>((total as usize).max(16), "string bytes").map_err(cuda_error)?;
    let f = ex.util("copy_strings", stat)?;
    let args = [Arg::U64(ptr(recs, &ex.dev)), Arg::U64(ptr(&offs_d, &ex.dev)), Arg::U64(ptr(&bytes_d, &ex.dev)), Arg::U64(m as u64)];
    ex.launch_untimed(&f, &args, m, Some(1024))?;
    let bytes = ex.dev.download(&bytes_d).map_err(cuda_error)?;
    let offsets32: Vec<i32> = offsets.iter().map(|o| *o as i32).collect();
    Ok(Arc::new(StringArray::try_new(OffsetBuffer::new(offsets32.into()), bytes[..total as usize].to_vec().into(), nulls)?))
}
