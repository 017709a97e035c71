//! Result download: the selected rows (through the sort permutation, offset and limit) of
//! the selected columns are gathered on the GPU, strings' bytes copied into one buffer on
//! the GPU, then downloaded into Arrow arrays.

use super::buffers::{value_width, Arg, Intermediate, OwnedColumn};
use super::{ptr, GpuExecutor, LaunchQueue, Permute};
use crate::gpu::device_store::cuda_error;
use crate::stats::KernelStat;
use arrow::array::*;
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::datatypes::{Field as ArrowField, Schema as ArrowSchema};
use arrow::record_batch::{RecordBatch, RecordBatchOptions};
use gpusql_common::{DataType, Result, Schema};
use gpusql_cuda::CudaSlice;
use gpusql_plan::PhysicalPlan;
use std::sync::Arc;

/// Rows [skip, skip + fetch) of `r`: where they start and how many there are.
fn row_range(r: &Intermediate, skip: usize, fetch: Option<usize>) -> Result<(usize, usize)> {
    let end = fetch.map_or(r.rows, |f| (skip + f).min(r.rows));
    let start = skip.min(end);
    check_rows_32(end, "returning")?;
    Ok((start, end - start))
}

/// The indices of rows [skip, skip + fetch) of `r` on the GPU (a pointer into its sort
/// permutation, or uploaded), the buffer that holds them where it is new, and how many
/// there are.
fn row_indices(
    ex: &GpuExecutor,
    r: &Intermediate,
    skip: usize,
    fetch: Option<usize>,
) -> Result<(u64, Option<CudaSlice<u32>>, usize)> {
    let (start, m) = row_range(r, skip, fetch)?;
    Ok(match &r.perm {
        Some(p) => (ptr(p, &ex.dev) + 4 * start as u64, None, m),
        None => {
            let idx = upload_u32(ex, &(start as u32..(start + m) as u32).collect::<Vec<_>>())?;
            (ptr(&idx, &ex.dev), Some(idx), m)
        }
    })
}

/// Rows [skip, skip + fetch) of `r`, columns `columns`, gathered into a dense intermediate
/// (a sorted / limited subquery that a later pipeline scans).
pub fn slice(
    ex: &GpuExecutor,
    r: &Intermediate,
    columns: &[usize],
    skip: usize,
    fetch: Option<usize>,
    schema: &Schema,
    input: usize,
) -> Result<(Intermediate, KernelStat)> {
    let mut stat = KernelStat { name: format!("slice #{input}"), rows_in: r.rows, ..Default::default() };
    let (idx, idx_buffer, m) = row_indices(ex, r, skip, fetch)?;
    let mut out = vec![];
    let mut q = LaunchQueue::default();
    for c in columns {
        let col = &r.columns[*c];
        let values = ex.permute(Permute::Gather, &col.values, value_width(&col.ty), idx, m, &mut q, &mut stat)?;
        let validity =
            col.validity.as_ref().map(|v| ex.permute(Permute::Gather, v, 1, idx, m, &mut q, &mut stat)).transpose()?;
        out.push(OwnedColumn { ty: col.ty, values, validity });
    }
    if let Some(b) = idx_buffer {
        q.keep(b);
    }
    stat.ms += ex.run_queue(q)?;
    stat.rows_out = m;
    Ok((Intermediate { schema: schema.clone(), rows: m, columns: out, perm: None }, stat))
}

/// Returns the batches and the assembly kernels' statistics (their compile time). One
/// batch, or several where a string column's bytes would pass an Arrow `Utf8` array's
/// 2^31 (every batch then holds less).
///
/// Sorted rows are gathered through the permutation first, all columns in one queue;
/// unsorted ones are downloaded where they lie. (Each column's download waits for the
/// GPU: a handful of microseconds each, where timing a queue per column cost ~50.)
pub fn download(ex: &GpuExecutor, plan: &PhysicalPlan, r: &Intermediate) -> Result<(Vec<RecordBatch>, KernelStat)> {
    let mut stat = KernelStat::default();
    let (start, m) = row_range(r, plan.skip, plan.fetch)?;
    // Per returned column: its values and validity, and the row they start at.
    let mut sources: Vec<(Buffer, Option<Buffer>, usize)> = vec![];
    match &r.perm {
        Some(p) => {
            let idx = ptr(p, &ex.dev) + 4 * start as u64;
            let mut q = LaunchQueue::default();
            for c in &plan.columns {
                let (f, col) = (&r.schema.fields[*c], &r.columns[*c]);
                let values = ex.permute(Permute::Gather, &col.values, value_width(&f.ty), idx, m, &mut q, &mut stat)?;
                let validity = match &col.validity {
                    Some(v) => Some(Buffer::Own(ex.permute(Permute::Gather, v, 1, idx, m, &mut q, &mut stat)?)),
                    None => None,
                };
                sources.push((Buffer::Own(values), validity, 0));
            }
            ex.run_queue(q)?;
        }
        None => {
            for c in &plan.columns {
                let col = &r.columns[*c];
                sources.push((Buffer::Ref(&col.values), col.validity.as_ref().map(Buffer::Ref), start));
            }
        }
    }
    let mut fields = vec![];
    let mut columns: Vec<Downloaded> = vec![];
    for ((c, name), (values, validity, first)) in plan.columns.iter().zip(&plan.names).zip(&sources) {
        let f = &r.schema.fields[*c];
        let nulls = match validity {
            Some(v) => {
                let b = ex.dev.download_range(v.get(), *first..first + m).map_err(cuda_error)?;
                Some(NullBuffer::from(b.iter().map(|x| *x != 0).collect::<Vec<bool>>()))
            }
            None => None,
        };
        columns.push(to_host(ex, &f.ty, values.get(), *first, m, nulls, &mut stat)?);
        fields.push(ArrowField::new(name, f.ty.to_arrow(), f.nullable));
    }
    let schema = Arc::new(ArrowSchema::new(fields));
    let mut batches = vec![];
    let strings: Vec<&[i64]> = columns
        .iter()
        .filter_map(|c| if let Downloaded::Strings { offsets, .. } = c { Some(offsets.as_slice()) } else { None })
        .collect();
    for (start, end) in batch_ranges(&strings, m, i32::MAX as i64) {
        let arrays = columns.iter().map(|c| c.rows(start, end)).collect::<Result<Vec<_>>>()?;
        batches.push(RecordBatch::try_new_with_options(
            schema.clone(),
            arrays,
            &RecordBatchOptions::new().with_row_count(Some(end - start)),
        )?);
    }
    Ok((batches, stat))
}

/// A device buffer made here or one of the result's.
enum Buffer<'a> {
    Own(CudaSlice<u8>),
    Ref(&'a CudaSlice<u8>),
}

impl Buffer<'_> {
    fn get(&self) -> &CudaSlice<u8> {
        match self {
            Buffer::Own(b) => b,
            Buffer::Ref(b) => b,
        }
    }
}

/// A result column on the host, before it is cut into batches.
enum Downloaded {
    /// Fixed-width values: sliced per batch without copying.
    Array(ArrayRef),
    /// Strings: 64-bit offsets (m + 1) into all rows' bytes.
    Strings { offsets: Vec<i64>, bytes: Vec<u8>, nulls: Option<NullBuffer> },
}

impl Downloaded {
    /// Rows [start, end) as an Arrow array.
    fn rows(&self, start: usize, end: usize) -> Result<ArrayRef> {
        Ok(match self {
            Downloaded::Array(a) => a.slice(start, end - start),
            Downloaded::Strings { offsets, bytes, nulls } => {
                let base = offsets[start];
                let offs: Vec<i32> = offsets[start..=end].iter().map(|o| (o - base) as i32).collect();
                let data = bytes[base as usize..offsets[end] as usize].to_vec();
                Arc::new(StringArray::try_new(
                    OffsetBuffer::new(offs.into()),
                    data.into(),
                    nulls.as_ref().map(|n| n.slice(start, end - start)),
                )?)
            }
        })
    }
}

/// Row ranges of at most `limit` string bytes in every string column (given by its
/// offsets; one range of all rows where that holds, as it nearly always does).
fn batch_ranges(strings: &[&[i64]], m: usize, limit: i64) -> Vec<(usize, usize)> {
    let fits = |a: usize, b: usize| strings.iter().all(|o| o[b] - o[a] <= limit);
    if fits(0, m) {
        return vec![(0, m)];
    }
    let mut out = vec![];
    let mut start = 0;
    while start < m {
        let mut end = start + 1;
        while end < m && fits(start, end + 1) {
            end += 1;
        }
        out.push((start, end));
        start = end;
    }
    out
}

/// Result rows, sort permutations and gathers index rows with 32 bits on the GPU.
pub fn check_rows_32(rows: usize, what: &str) -> Result<()> {
    if rows > u32::MAX as usize {
        return Err(gpusql_common::Error::not_supported(format!(
            "{what} more than 4,294,967,295 rows of one result on the GPU ({rows})"
        )));
    }
    Ok(())
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

/// Rows [first, first + m) of a column's values on the host.
fn to_host(
    ex: &GpuExecutor,
    ty: &DataType,
    values: &CudaSlice<u8>,
    first: usize,
    m: usize,
    nulls: Option<NullBuffer>,
    stat: &mut KernelStat,
) -> Result<Downloaded> {
    if *ty == DataType::Utf8 {
        return strings(ex, ptr(values, &ex.dev) + (first * value_width(ty)) as u64, m, nulls, stat);
    }
    let w = value_width(ty);
    let b = ex.dev.download_range(values, first * w..(first + m) * w).map_err(cuda_error)?;
    Ok(Downloaded::Array(match ty {
        DataType::Boolean => Arc::new(BooleanArray::new(b[..m].iter().map(|x| *x != 0).collect(), nulls)),
        DataType::Int32 => Arc::new(Int32Array::new(bytes_to::<i32>(&b, m).into(), nulls)),
        DataType::Date => Arc::new(Date32Array::new(bytes_to::<i32>(&b, m).into(), nulls)),
        DataType::Int64 => Arc::new(Int64Array::new(bytes_to::<i64>(&b, m).into(), nulls)),
        DataType::Timestamp => Arc::new(TimestampMicrosecondArray::new(bytes_to::<i64>(&b, m).into(), nulls)),
        DataType::Float64 => Arc::new(Float64Array::new(bytes_to::<f64>(&b, m).into(), nulls)),
        DataType::Decimal { precision, scale } => {
            let v: Vec<i128> = if *precision <= 18 {
                bytes_to::<i64>(&b, m).into_iter().map(|x| x as i128).collect()
            } else {
                bytes_to::<i128>(&b, m)
            };
            Arc::new(Decimal128Array::new(v.into(), nulls).with_precision_and_scale(*precision, *scale as i8)?)
        }
        DataType::Utf8 => unreachable!(),
    }))
}

/// `Str` records (`recs`: a device pointer to m of them) -> one byte buffer (copied on the
/// GPU) + offsets. NULL rows hold empty records (codegen initializes every string
/// variable), so they copy nothing.
fn strings(
    ex: &GpuExecutor,
    recs: u64,
    m: usize,
    nulls: Option<NullBuffer>,
    stat: &mut KernelStat,
) -> Result<Downloaded> {
    if m == 0 {
        return Ok(Downloaded::Strings { offsets: vec![0], bytes: vec![], nulls });
    }
    let lens_d = ex.dev.alloc_zeros::<u32>(m, "string lengths").map_err(cuda_error)?;
    let f = ex.util("string_lengths", stat)?;
    ex.launch_untimed(&f, &[Arg::U64(recs), Arg::U64(ptr(&lens_d, &ex.dev)), Arg::U64(m as u64)], m, Some(1024))?;
    let lens = ex.dev.download(&lens_d).map_err(cuda_error)?;
    let mut offsets = Vec::with_capacity(m + 1);
    let mut total: i64 = 0;
    offsets.push(0i64);
    for l in &lens[..m] {
        total += *l as i64;
        offsets.push(total);
    }
    let offs_d = ex.dev.upload(&offsets[..m], "string offsets").map_err(cuda_error)?;
    let bytes_d = ex.dev.alloc_zeros::<u8>((total as usize).max(16), "string bytes").map_err(cuda_error)?;
    let f = ex.util("copy_strings", stat)?;
    let args = [Arg::U64(recs), Arg::U64(ptr(&offs_d, &ex.dev)), Arg::U64(ptr(&bytes_d, &ex.dev)), Arg::U64(m as u64)];
    ex.launch_untimed(&f, &args, m, Some(1024))?;
    let mut bytes = ex.dev.download(&bytes_d).map_err(cuda_error)?;
    bytes.truncate(total as usize);
    Ok(Downloaded::Strings { offsets, bytes, nulls })
}

#[cfg(test)]
mod tests {
    use super::batch_ranges;

    #[test]
    fn string_bytes_cut_batches() {
        // Rows of 3, 4, 2, 5 and 1 bytes.
        let offsets = [0i64, 3, 7, 9, 14, 15];
        assert_eq!(batch_ranges(&[&offsets], 5, 100), [(0, 5)]);
        assert_eq!(batch_ranges(&[&offsets], 5, 7), [(0, 2), (2, 4), (4, 5)]);
        // A row longer than the limit still makes its own batch.
        assert_eq!(batch_ranges(&[&offsets], 5, 4), [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]);
        assert_eq!(batch_ranges(&[], 0, 4), [(0, 0)]);
    }
}
