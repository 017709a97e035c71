//! Sort stage on the GPU: a rank sort for small inputs, a radix sort of the encoded keys
//! (radix_sort.rs), else a bitonic sort of a row permutation; with segments, then each row's position within its group of the leading
//! keys. Its launches are queued, not waited for: the GPU spans are returned.

use super::buffers::{Arg, Intermediate};
use super::replay::ReadBacks;
use super::{ptr, GpuExecutor, LaunchQueue, PlanMemo};
use crate::gpu::device_store::cuda_error;
use crate::stats::KernelStat;
use gpusql_codegen::sort::{SortSpec, SMALL_SORT};
use gpusql_codegen::{Param, Part};
use gpusql_common::{Error, Result};
use gpusql_cuda::CudaSlice;
use gpusql_cuda::EndedTimer;
use gpusql_plan::config::RadixSort;
use std::sync::Arc;

/// Bitonic chunks at least this long for a top-N (fewer, larger rounds).
const TOP_N_MIN_CHUNK: usize = 64;
/// A top-N of at most this many rows keeps the bitonic chunks (n log^2 N compares) rather
/// than radix-sorting every row.
const TOP_N_BITONIC_MAX: usize = 1024;

pub fn run(
    ex: &GpuExecutor,
    mut data: Intermediate,
    spec: &Arc<SortSpec>,
    limit: Option<usize>,
    input: usize,
    memo: &PlanMemo,
    reads: &mut ReadBacks,
) -> Result<(Intermediate, KernelStat, Vec<EndedTimer>)> {
    let mut stat =
        KernelStat { name: format!("sort #{input}"), rows_in: data.rows, rows_out: data.rows, ..Default::default() };
    let n = data.rows;
    let mut key_args = vec![];
    for q in &spec.params {
        let Param::Input { column, part } = q else { continue };
        let c = &data.columns[*column];
        key_args.push(Arg::U64(match part {
            Part::Validity => {
                ptr(c.validity.as_ref().ok_or_else(|| Error::exec("sort key validity missing"))?, &ex.dev)
            }
            _ => ptr(&c.values, &ex.dev),
        }));
        stat.bytes_read += n * super::value_width(&c.ty);
    }
    let radix = spec.radix.as_ref().filter(|_| match ex.config.radix_sort {
        RadixSort::Off => false,
        RadixSort::On => n > SMALL_SORT && limit.is_none_or(|l| l > TOP_N_BITONIC_MAX),
        RadixSort::Always => true,
    });
    if let Some(layout) = radix {
        let strings: Vec<u64> = layout.string_keys.iter().map(|c| ptr(&data.columns[*c].values, &ex.dev)).collect();
        if let Some((perm, mut spans)) =
            super::radix_sort::sort(ex, spec, layout, &key_args, &strings, n, (memo, reads, input), &mut stat)?
        {
            data.rows = limit.map_or(n, |l| n.min(l));
            stat.rows_out = data.rows;
            data.positions = group_positions(ex, &perm, data.rows, spec, &key_args, memo, &mut stat, &mut spans)?;
            data.perm = Some(perm);
            return Ok((data, stat, spans));
        }
    }
    let npow2 = n.max(1).next_power_of_two();
    if npow2 > u32::MAX as usize / 2 {
        return Err(Error::not_supported(format!("sorting {n} rows")));
    }
    let mut perm = ex.dev.alloc_zeros::<u32>(npow2, "sort permutation").map_err(cuda_error)?;
    // One compare-exchange step over the first `len` entries (k = 0: all ascending).
    let step_args = |p: u64, len: usize, j: usize, k: usize| {
        let mut args =
            vec![Arg::U64(p), Arg::U32(len as u32), Arg::U64(n as u64), Arg::U32(j as u32), Arg::U32(k as u32)];
        args.extend(key_args.iter().copied());
        args
    };
    if n <= SMALL_SORT {
        // Rank sort: every row's rank, then each row to its rank (a top-N gains nothing
        // at this size).
        let rank_fn = ex.load_sort(memo, spec, &spec.rank_entry, &mut stat)?;
        let scatter = ex.load_sort(memo, spec, &spec.scatter_entry, &mut stat)?;
        let rank = ex.dev.alloc_zeros::<u32>(n.max(1), "sort ranks").map_err(cuda_error)?;
        let mut args = vec![Arg::U64(ptr(&rank, &ex.dev)), Arg::U64(n as u64)];
        args.extend(key_args.iter().copied());
        let mut q = LaunchQueue::default();
        q.push(rank_fn, &args, n * n.div_ceil(32) * 32, None);
        q.push(scatter, &[Arg::U64(ptr(&rank, &ex.dev)), Arg::U64(ptr(&perm, &ex.dev)), Arg::U64(n as u64)], n, None);
        q.keep(rank);
        let span = ex.submit_queue(q)?;
        let mut spans = vec![span];
        data.positions = group_positions(ex, &perm, n, spec, &key_args, memo, &mut stat, &mut spans)?;
        data.perm = Some(perm);
        return Ok((data, stat, spans));
    }
    let iota = ex.load_sort(memo, spec, &spec.iota_entry, &mut stat)?;
    let step = ex.load_sort(memo, spec, &spec.step_entry, &mut stat)?;
    let timer = ex.dev.timer_start().map_err(cuda_error)?;
    ex.launch_untimed(&iota, &[Arg::U64(ptr(&perm, &ex.dev)), Arg::U32(npow2 as u32)], npow2, None)?;
    // Top-N: sort chunks of c (the wanted rows, rounded up to a power of two), then halve
    // the rows until one chunk is left: a compare-exchange at distance c between each
    // ascending chunk and its descending neighbour leaves their c first rows in the first
    // half as a bitonic run (the half-cleaner of a bitonic merge), which is kept and
    // merged in c/2 .. 1 steps, alternating directions again. O(n log^2 c), not n log^2 n.
    let chunk = limit.map(|l| l.max(TOP_N_MIN_CHUNK).next_power_of_two()).filter(|c| *c < npow2);
    let sorted_len = chunk.unwrap_or(npow2);
    let mut k = 2;
    while k <= sorted_len {
        let mut j = k / 2;
        while j > 0 {
            ex.launch_untimed(&step, &step_args(ptr(&perm, &ex.dev), npow2, j, k), npow2, None)?;
            j /= 2;
        }
        k *= 2;
    }
    if let Some(c) = chunk {
        let keep = ex.load_sort(memo, spec, &spec.keep_halves_entry, &mut stat)?;
        let mut len = npow2;
        while len > c {
            ex.launch_untimed(&step, &step_args(ptr(&perm, &ex.dev), len, c, 0), len, None)?;
            let half = ex.dev.alloc_zeros::<u32>(len / 2, "sort permutation").map_err(cuda_error)?;
            ex.launch_untimed(
                &keep,
                &[
                    Arg::U64(ptr(&perm, &ex.dev)),
                    Arg::U64(ptr(&half, &ex.dev)),
                    Arg::U32(c as u32),
                    Arg::U32((len / 2) as u32),
                ],
                len / 2,
                None,
            )?;
            perm = half;
            len /= 2;
            let mut j = c / 2;
            while j > 0 {
                ex.launch_untimed(&step, &step_args(ptr(&perm, &ex.dev), len, j, c), len, None)?;
                j /= 2;
            }
        }
        // The first c entries are the c first rows in order (padding sorts last).
        data.rows = n.min(c);
        stat.rows_out = data.rows;
    }
    let mut spans = vec![timer.end_here().map_err(cuda_error)?];
    data.positions = group_positions(ex, &perm, data.rows, spec, &key_args, memo, &mut stat, &mut spans)?;
    data.perm = Some(perm);
    Ok((data, stat, spans))
}

/// With segments (`spec.heads_entry`): each of the first `n` sorted rows' position within
/// its group of the leading keys (i64, sorted order): where each group starts
/// (`sort_heads`), their running count (a prefix sum), each group's first row
/// (`segment_starts`), each row's distance from it (`segment_positions`).
#[allow(clippy::too_many_arguments)]
fn group_positions(
    ex: &GpuExecutor,
    perm: &CudaSlice<u32>,
    n: usize,
    spec: &Arc<SortSpec>,
    key_args: &[Arg],
    memo: &PlanMemo,
    stat: &mut KernelStat,
    spans: &mut Vec<EndedTimer>,
) -> Result<Option<CudaSlice<u8>>> {
    let Some(entry) = &spec.heads_entry else { return Ok(None) };
    let out = ex.dev.alloc_zeros::<u8>(n.max(1) * 8, "group positions").map_err(cuda_error)?;
    if n == 0 {
        return Ok(Some(out));
    }
    let heads_fn = ex.load_sort(memo, spec, entry, stat)?;
    // (Entry n stays 0: the sum's entry n is the number of groups.)
    let heads = ex.dev.alloc_zeros::<u32>(n + 1, "group heads").map_err(cuda_error)?;
    let mut q = LaunchQueue::default();
    let mut args = vec![Arg::U64(ptr(perm, &ex.dev)), Arg::U64(n as u64), Arg::U64(ptr(&heads, &ex.dev))];
    args.extend(key_args.iter().copied());
    q.push(heads_fn, &args, n, None);
    let first = super::scan::exclusive_scan::<u32, u64>(ex, &heads, n + 1, &mut q, stat)?;
    let starts = ex.dev.alloc_zeros::<u64>(n, "group starts").map_err(cuda_error)?;
    let f = ex.util("segment_starts", stat)?;
    q.push(
        f,
        &[
            Arg::U64(ptr(&heads, &ex.dev)),
            Arg::U64(ptr(&first, &ex.dev)),
            Arg::U64(ptr(&starts, &ex.dev)),
            Arg::U64(n as u64),
        ],
        n,
        None,
    );
    let f = ex.util("segment_positions", stat)?;
    q.push(
        f,
        &[
            Arg::U64(ptr(&first, &ex.dev)),
            Arg::U64(ptr(&starts, &ex.dev)),
            Arg::U64(ptr(&out, &ex.dev)),
            Arg::U64(n as u64),
        ],
        n,
        None,
    );
    q.keep(heads);
    q.keep(first);
    q.keep(starts);
    stat.bytes_read += n * 20;
    spans.push(ex.submit_queue(q)?);
    Ok(Some(out))
}
