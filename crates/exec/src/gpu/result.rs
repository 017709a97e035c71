//! Result download: the selected rows (through the sort permutation, offset and limit) of
//! the selected columns are gathered on the GPU, strings' bytes copied into one buffer on
//! the GPU, then downloaded into Arrow arrays.

use super::buffers::{bytes_to, value_width, Arg, Intermediate, OwnedColumn};
use super::replay::ReadBacks;
use super::{ptr, GpuExecutor, HostSteps, LaunchQueue, Permute};
use crate::gpu::device_store::cuda_error;
use crate::stats::KernelStat;
use arrow::array::*;
use arrow::buffer::{Buffer as ArrowBuffer, NullBuffer, OffsetBuffer};
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
/// The position column a Slice appends: none, each sliced row's, or the positions its
/// sort kept (within groups).
pub enum Position {
    None,
    Rows,
    Kept(CudaSlice<u8>),
}

pub fn slice(
    ex: &GpuExecutor,
    r: &Intermediate,
    columns: &[usize],
    (skip, fetch): (usize, Option<usize>),
    position: Position,
    schema: &Schema,
    input: usize,
) -> Result<(Intermediate, KernelStat, gpusql_cuda::EndedTimer)> {
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
    match position {
        Position::None => {}
        // (The planner slices a sort with segments whole: its positions are the rows'.)
        Position::Kept(values) => out.push(OwnedColumn { ty: DataType::Int64, values, validity: None }),
        Position::Rows => {
            let values = ex.dev.alloc_zeros::<u8>(m.max(1) * 8, "row positions").map_err(cuda_error)?;
            if m > 0 {
                let f = ex.util("iota_i64", &mut stat)?;
                q.push(f, &[Arg::U64(ptr(&values, &ex.dev)), Arg::U64(m as u64)], m, None);
            }
            out.push(OwnedColumn { ty: DataType::Int64, values, validity: None });
        }
    }
    if let Some(b) = idx_buffer {
        q.keep(b);
    }
    // Not waited for, like a sort's launches: its span is read after the result.
    let span = ex.submit_queue(q)?;
    stat.rows_out = m;
    Ok((Intermediate { schema: schema.clone(), rows: m, columns: out, perm: None, positions: None }, stat, span))
}

/// Returns the batches and the assembly kernels' statistics (their compile time). One
/// batch, or several where a string column's bytes would pass an Arrow `Utf8` array's
/// 2^31 (every batch then holds less).
///
/// Sorted rows are gathered through the permutation first, all columns in one queue;
/// unsorted ones are copied from where they lie. String columns' bytes are copied on the
/// GPU into one buffer, at offsets summed there from their lengths; the buffer is sized by
/// the strings' total, a value read back (`ReadBacks`: a replay takes it from its log).
/// Then everything comes back in one round trip (`GpuDevice::download_many`): validity,
/// fixed-width values, the strings' offsets and bytes.
///
/// A replay's audit (`ReadBacks::audit_range`) comes back with that round trip and is
/// checked before anything else downloaded is used.
pub fn download(
    ex: &GpuExecutor,
    plan: &PhysicalPlan,
    r: &Intermediate,
    reads: &mut ReadBacks,
) -> Result<(Vec<RecordBatch>, KernelStat)> {
    let mut stat = KernelStat::default();
    let mut steps = HostSteps::new(ex.config.profile_host);
    let (start, m) = row_range(r, plan.skip, plan.fetch)?;
    // Per returned column: its values and validity, and the row they start at.
    let mut sources: Vec<(Buffer, Option<Buffer>, usize)> = vec![];
    let mut q = LaunchQueue::default();
    match &r.perm {
        Some(p) => {
            let idx = ptr(p, &ex.dev) + 4 * start as u64;
            for c in &plan.columns {
                let (f, col) = (&r.schema.fields[*c], &r.columns[*c]);
                let values = ex.permute(Permute::Gather, &col.values, value_width(&f.ty), idx, m, &mut q, &mut stat)?;
                let validity = match &col.validity {
                    Some(v) => Some(Buffer::Own(ex.permute(Permute::Gather, v, 1, idx, m, &mut q, &mut stat)?)),
                    None => None,
                };
                sources.push((Buffer::Own(values), validity, 0));
            }
        }
        None => {
            for c in &plan.columns {
                let col = &r.columns[*c];
                sources.push((Buffer::Ref(&col.values), col.validity.as_ref().map(Buffer::Ref), start));
            }
        }
    }
    let types: Vec<DataType> = plan.columns.iter().map(|c| r.schema.fields[*c].ty).collect();
    // `Str` records of the string columns.
    let records: Vec<u64> = types
        .iter()
        .zip(&sources)
        .filter(|(ty, _)| **ty == DataType::Utf8)
        .map(|(ty, (values, _, first))| ptr(values.get(), &ex.dev) + (first * value_width(ty)) as u64)
        .collect();
    let offsets =
        if records.is_empty() || m == 0 { None } else { Some(string_offsets(ex, &records, m, &mut q, &mut stat)?) };
    let span = if q.is_empty() { None } else { Some(ex.submit_queue(q)?) };
    steps.mark("gathers");
    let strings = offsets.map(|o| copy_strings(ex, &records, m, o, reads, &mut stat)).transpose()?;
    steps.mark("string bytes");
    // The round trip: per column its validity and (not strings) values, then the strings'
    // offsets and bytes, then the audit.
    let mut ranges = vec![];
    for (ty, (values, validity, first)) in types.iter().zip(&sources) {
        if let Some(v) = validity {
            ranges.push((ptr(v.get(), &ex.dev) + *first as u64, m));
        }
        if *ty != DataType::Utf8 {
            let w = value_width(ty);
            ranges.push((ptr(values.get(), &ex.dev) + (first * w) as u64, m * w));
        }
    }
    if let Some(s) = &strings {
        ranges.push((ptr(&s.offsets, &ex.dev), 8 * (records.len() * m + 1)));
        ranges.push((ptr(&s.bytes, &ex.dev), s.total));
    }
    let audit = reads.audit_range(&ex.dev);
    ranges.extend(audit);
    // SAFETY: each range lies in a live buffer: rows [first, first + m) of a column, the
    // strings' offsets and bytes, and the audit's bytes.
    let mut host = unsafe { ex.dev.download_many(&ranges) }.map_err(cuda_error)?.into_iter();
    if audit.is_some() {
        reads.check(&host.next_back().unwrap_or_default())?;
    }
    steps.mark("round trip");
    if let Some(span) = span {
        stat.ms += span.ms().map_err(cuda_error)?;
    }
    let mut columns: Vec<Downloaded> = vec![];
    for (ty, (_, validity, _)) in types.iter().zip(&sources) {
        let nulls = match validity {
            Some(_) => Some(NullBuffer::from(next(&mut host)?.iter().map(|x| *x != 0).collect::<Vec<bool>>())),
            None => None,
        };
        columns.push(match ty {
            DataType::Utf8 => {
                Downloaded::Strings { offsets: vec![0], bytes: ArrowBuffer::from_vec(Vec::<u8>::new()), nulls }
            }
            _ => Downloaded::Array(fixed_width_array(ty, &next(&mut host)?, m, nulls)?),
        });
    }
    if let Some(s) = &strings {
        let n = records.len() * m;
        let offsets: Vec<u64> = bytes_to(&next(&mut host)?, n + 1);
        let bytes = ArrowBuffer::from_vec(next(&mut host)?);
        if offsets.len() != n + 1 || offsets[n] as usize != s.total || bytes.len() != s.total {
            return Err(gpusql_common::Error::exec("result download: string offsets disagree with their bytes"));
        }
        let string_columns = columns.iter_mut().filter_map(|c| match c {
            Downloaded::Strings { offsets, bytes, .. } => Some((offsets, bytes)),
            Downloaded::Array(_) => None,
        });
        // Column j's rows are offsets [j m, (j + 1) m] into the one buffer of bytes.
        for (j, (offs, b)) in string_columns.enumerate() {
            *offs = offsets[j * m..=(j + 1) * m].iter().map(|o| *o as i64).collect();
            *b = bytes.clone();
        }
    }
    steps.mark("arrays");
    let fields: Vec<ArrowField> = plan
        .columns
        .iter()
        .zip(&plan.names)
        .map(|(c, name)| {
            let f = &r.schema.fields[*c];
            ArrowField::new(name, f.ty.to_arrow(), f.nullable)
        })
        .collect();
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
    steps.mark("batches");
    steps.print(&format!("result download ({m} rows, {} columns)", types.len()));
    Ok((batches, stat))
}

/// The next downloaded range (`download` reads them in the order it asked for them).
fn next(host: &mut std::vec::IntoIter<Vec<u8>>) -> Result<Vec<u8>> {
    host.next().ok_or_else(|| gpusql_common::Error::exec("result download: fewer ranges than columns"))
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
    /// Strings: 64-bit offsets (m + 1) into bytes (shared by all string columns).
    Strings { offsets: Vec<i64>, bytes: ArrowBuffer, nulls: Option<NullBuffer> },
}

impl Downloaded {
    /// Rows [start, end) as an Arrow array.
    fn rows(&self, start: usize, end: usize) -> Result<ArrayRef> {
        Ok(match self {
            Downloaded::Array(a) => a.slice(start, end - start),
            Downloaded::Strings { offsets, bytes, nulls } => {
                let base = offsets[start];
                let offs: Vec<i32> = offsets[start..=end].iter().map(|o| (o - base) as i32).collect();
                let data = bytes.slice_with_length(base as usize, (offsets[end] - base) as usize);
                Arc::new(StringArray::try_new(
                    OffsetBuffer::new(offs.into()),
                    data,
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

/// A fixed-width column's `m` values (`b`, the GPU layout) as an Arrow array.
fn fixed_width_array(ty: &DataType, b: &[u8], m: usize, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
    Ok(match ty {
        DataType::Boolean => Arc::new(BooleanArray::new(b.iter().take(m).map(|x| *x != 0).collect(), nulls)),
        DataType::Int32 => Arc::new(Int32Array::new(bytes_to::<i32>(b, m).into(), nulls)),
        DataType::Date => Arc::new(Date32Array::new(bytes_to::<i32>(b, m).into(), nulls)),
        DataType::Int64 => Arc::new(Int64Array::new(bytes_to::<i64>(b, m).into(), nulls)),
        DataType::Timestamp => Arc::new(TimestampMicrosecondArray::new(bytes_to::<i64>(b, m).into(), nulls)),
        DataType::Float64 => Arc::new(Float64Array::new(bytes_to::<f64>(b, m).into(), nulls)),
        DataType::Decimal { precision, scale } => {
            let v: Vec<i128> = if *precision <= 18 {
                bytes_to::<i64>(b, m).into_iter().map(|x| x as i128).collect()
            } else {
                bytes_to::<i128>(b, m)
            };
            Arc::new(Decimal128Array::new(v.into(), nulls).with_precision_and_scale(*precision, *scale as i8)?)
        }
        DataType::Interval => {
            let values = b[..16 * m]
                .chunks_exact(16)
                .map(|v| {
                    let i32_at = |k: usize| i32::from_le_bytes([v[k], v[k + 1], v[k + 2], v[k + 3]]);
                    let micros = i64::from_le_bytes(v[8..16].try_into().expect("16-byte values"));
                    let iv = gpusql_common::Interval::new(i32_at(0), i32_at(4), micros);
                    gpusql_storage::convert::arrow_interval(&iv)
                })
                .collect::<Result<Vec<_>>>()?;
            Arc::new(IntervalMonthDayNanoArray::new(values.into(), nulls))
        }
        DataType::Utf8 => return Err(gpusql_common::Error::exec("a string column is not fixed-width")),
    })
}

/// Queues the strings' lengths and their exclusive prefix sum (as u64), column after
/// column (`records`: a device pointer to m `Str` records each), with one more entry: the
/// total. NULL rows hold empty records (codegen initializes every string variable), so
/// they add nothing.
fn string_offsets(
    ex: &GpuExecutor,
    records: &[u64],
    m: usize,
    q: &mut LaunchQueue,
    stat: &mut KernelStat,
) -> Result<CudaSlice<u64>> {
    let n = records.len() * m;
    // (Entry n stays 0, so the sum's entry n is the total.)
    let lens = ex.dev.alloc_zeros::<u32>(n + 1, "string lengths").map_err(cuda_error)?;
    let f = ex.util("string_lengths", stat)?;
    for (j, recs) in records.iter().enumerate() {
        let out = ptr(&lens, &ex.dev) + (4 * j * m) as u64;
        q.push(f.clone(), &[Arg::U64(*recs), Arg::U64(out), Arg::U64(m as u64)], m, Some(1024));
    }
    let offsets = super::scan::exclusive_scan::<u32, u64>(ex, &lens, n + 1, q, stat)?;
    q.keep(lens);
    Ok(offsets)
}

/// The string columns' bytes in one buffer on the GPU, each column's rows back to back
/// after the previous column's, at `offsets`.
struct StringBytes {
    offsets: CudaSlice<u64>,
    bytes: CudaSlice<u8>,
    total: usize,
}

/// Reads the strings' total back (a replay takes it from its log: no wait), and queues
/// the copies of their bytes into a buffer of that size.
fn copy_strings(
    ex: &GpuExecutor,
    records: &[u64],
    m: usize,
    offsets: CudaSlice<u64>,
    reads: &mut ReadBacks,
    stat: &mut KernelStat,
) -> Result<StringBytes> {
    let n = records.len() * m;
    let site = super::replay::site(("result string bytes", records.len(), m));
    // SAFETY: entry n of `offsets`, alive until after the read's copy.
    let total = unsafe { reads.read_at::<u64>(&ex.dev, site, ptr(&offsets, &ex.dev) + 8 * n as u64, 1) }?;
    let total = usize::try_from(total[0]).map_err(|_| gpusql_common::Error::exec("result strings' size"))?;
    let bytes = ex.dev.alloc_unset::<u8>(total.max(16), "string bytes").map_err(cuda_error)?;
    let f = ex.util("copy_strings", stat)?;
    for (j, recs) in records.iter().enumerate() {
        let offs = ptr(&offsets, &ex.dev) + (8 * j * m) as u64;
        // (Clipped at the total: a replay's is the log's, checked after the copy.)
        let args = [
            Arg::U64(*recs),
            Arg::U64(offs),
            Arg::U64(ptr(&bytes, &ex.dev)),
            Arg::U64(m as u64),
            Arg::U64(total as u64),
        ];
        ex.launch_untimed(&f, &args, m, Some(1024))?;
    }
    Ok(StringBytes { offsets, bytes, total })
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
