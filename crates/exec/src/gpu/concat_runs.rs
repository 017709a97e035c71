//! string_agg's stage on the GPU (`Stage::ConcatRuns`): the runs of a sorted, numbered
//! intermediate concatenated, one string per run. Each row's piece (separator and value)
//! is sized, the sizes' exclusive prefix sum places the pieces one after another in one
//! buffer, and a run's string is the bytes from its first row's place to the next run's:
//! two passes over the rows and one over the runs (concat_runs.cu), the pieces' bytes
//! copied once.

use super::buffers::{value_width, Arg, Intermediate, OwnedColumn};
use super::device_store::{cuda_error, UploadStats};
use super::replay::ReadBacks;
use super::{ptr, GpuExecutor, LaunchQueue, Permute};
use crate::stats::KernelStat;
use gpusql_common::{Error, Result, Schema};
use gpusql_cuda::CudaSlice;

/// What `concat_runs` made: the runs' rows, the buffer their strings point into (kept
/// until the result is downloaded), the stage's statistics and GPU spans.
pub struct Concatenated {
    pub rows: Intermediate,
    pub bytes: CudaSlice<u8>,
    pub stat: KernelStat,
    pub spans: [gpusql_cuda::EndedTimer; 2],
}

/// The runs of `input` (rows in order; a run starts where BIGINT column `position` is 0):
/// per run, its first row's `keys` columns and its `value` strings joined by `separator`.
#[allow(clippy::too_many_arguments)]
pub fn concat_runs(
    ex: &GpuExecutor,
    input: &Intermediate,
    keys: &[usize],
    value: usize,
    position: usize,
    separator: &str,
    schema: &Schema,
    output: usize,
    reads: &mut ReadBacks,
) -> Result<Concatenated> {
    let n = input.rows;
    let mut stat = KernelStat { name: format!("concat runs -> #{output}"), rows_in: n, ..Default::default() };
    if input.perm.is_some() {
        return Err(Error::plan("string_agg over an unsliced intermediate (the planner slices its sort first)"));
    }
    if n > u32::MAX as usize {
        return Err(Error::not_supported(format!("string_agg over more than 2^32 rows ({n})")));
    }
    let v = &input.columns[value];
    let valid = v.validity.as_ref().map_or(0, |b| ptr(b, &ex.dev));
    let pos = ptr(&input.columns[position].values, &ex.dev);
    let sep = separator.as_bytes();
    let sep_buffer = if sep.is_empty() {
        None
    } else {
        Some(ex.constant_buffer(sep.to_vec(), "string_agg separator", &mut UploadStats::default())?)
    };
    let sep_at = sep_buffer.as_ref().map_or(0, |b| ptr(&**b, &ex.dev));

    // Each row's bytes and whether it starts a run; their prefix sums. (Entry n of each
    // stays 0, so the sums' entry n is the total: bytes, runs.)
    let bytes = ex.dev.alloc_zeros::<u64>(n + 1, "string_agg piece lengths").map_err(cuda_error)?;
    let heads = ex.dev.alloc_zeros::<u32>(n + 1, "string_agg run heads").map_err(cuda_error)?;
    let mut q = LaunchQueue::default();
    if n > 0 {
        let f = ex.util("run_bytes", &mut stat)?;
        let args = [
            Arg::U64(ptr(&v.values, &ex.dev)),
            Arg::U64(valid),
            Arg::U64(pos),
            Arg::U64(sep.len() as u64),
            Arg::U64(ptr(&bytes, &ex.dev)),
            Arg::U64(ptr(&heads, &ex.dev)),
            Arg::U64(n as u64),
        ];
        q.push(f, &args, n, Some(1024));
    }
    let offsets = super::scan::exclusive_scan::<u64, u64>(ex, &bytes, n + 1, &mut q, &mut stat)?;
    let run_of = super::scan::exclusive_scan::<u32, u32>(ex, &heads, n + 1, &mut q, &mut stat)?;
    q.keep(bytes);
    let sized = ex.submit_queue(q)?;
    let site = super::replay::site(("string_agg bytes", output, n));
    // SAFETY: entry n of `offsets` and of `run_of`, alive until after the reads' copies.
    let total = unsafe { reads.read_at::<u64>(&ex.dev, site, ptr(&offsets, &ex.dev) + 8 * n as u64, 1) }?[0];
    let site = super::replay::site(("string_agg runs", output, n));
    let runs = unsafe { reads.read_at::<u32>(&ex.dev, site, ptr(&run_of, &ex.dev) + 4 * n as u64, 1) }?[0] as usize;
    let total = usize::try_from(total).map_err(|_| Error::exec(format!("string_agg of {total} bytes")))?;

    let out = ex.dev.alloc_unset::<u8>(total.max(16), "string_agg strings").map_err(cuda_error)?;
    let firsts = ex.dev.alloc_zeros::<u32>(runs.max(1), "string_agg run starts").map_err(cuda_error)?;
    let strs = ex.dev.alloc_zeros::<u8>((runs * 16).max(16), "string_agg column").map_err(cuda_error)?;
    let strs_valid = ex.dev.alloc_zeros::<u8>(runs.max(16), "string_agg validity").map_err(cuda_error)?;
    let too_long = ex.dev.alloc_zeros::<u64>(1, "string_agg lengths past 2^32").map_err(cuda_error)?;
    let mut q = LaunchQueue::default();
    if n > 0 {
        let f = ex.util("run_write", &mut stat)?;
        let args = [
            Arg::U64(ptr(&v.values, &ex.dev)),
            Arg::U64(valid),
            Arg::U64(pos),
            Arg::U64(sep_at),
            Arg::U64(sep.len() as u64),
            Arg::U64(ptr(&offsets, &ex.dev)),
            Arg::U64(ptr(&out, &ex.dev)),
            Arg::U64(n as u64),
            Arg::U64(total as u64),
        ];
        q.push(f, &args, n, Some(1024));
        let f = ex.util("run_firsts", &mut stat)?;
        let args = [
            Arg::U64(ptr(&heads, &ex.dev)),
            Arg::U64(ptr(&run_of, &ex.dev)),
            Arg::U64(ptr(&firsts, &ex.dev)),
            Arg::U64(n as u64),
            Arg::U64(runs as u64),
        ];
        q.push(f, &args, n, Some(1024));
    }
    if runs > 0 {
        let f = ex.util("run_strings", &mut stat)?;
        let args = [
            Arg::U64(ptr(&firsts, &ex.dev)),
            Arg::U64(ptr(&offsets, &ex.dev)),
            Arg::U64(valid),
            Arg::U64(ptr(&out, &ex.dev)),
            Arg::U64(ptr(&strs, &ex.dev)),
            Arg::U64(ptr(&strs_valid, &ex.dev)),
            Arg::U64(runs as u64),
            Arg::U64(n as u64),
            Arg::U64(ptr(&too_long, &ex.dev)),
        ];
        q.push(f, &args, runs, Some(1024));
    }
    // The key columns of each run's first row.
    let mut columns = vec![];
    for k in keys {
        let col = &input.columns[*k];
        let at = ptr(&firsts, &ex.dev);
        let values = ex.permute(Permute::Gather, &col.values, value_width(&col.ty), at, runs, &mut q, &mut stat)?;
        let validity = col
            .validity
            .as_ref()
            .map(|b| ex.permute(Permute::Gather, b, 1, at, runs, &mut q, &mut stat))
            .transpose()?;
        columns.push(OwnedColumn { ty: col.ty, values, validity });
    }
    columns.push(OwnedColumn { ty: v.ty, values: strs, validity: Some(strs_valid) });
    q.keep(heads);
    q.keep(run_of);
    q.keep(offsets);
    q.keep(firsts);
    if let Some(b) = sep_buffer {
        q.keep(b);
    }
    let written = ex.submit_queue(q)?;
    // Only where the strings total past 2^32 bytes can one of them be that long.
    if total > u32::MAX as usize {
        let site = super::replay::site(("string_agg too long", output, n));
        if reads.read(&ex.dev, site, &too_long)?[0] > 0 {
            return Err(Error::exec("string_agg: a group's string would be longer than 4 GiB (2^32 - 1 bytes)"));
        }
    }
    stat.rows_out = runs;
    let rows = Intermediate { schema: schema.clone(), rows: runs, columns, perm: None, positions: None };
    Ok(Concatenated { rows, bytes: out, stat, spans: [sized, written] })
}
