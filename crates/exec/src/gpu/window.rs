//! The window stage on the GPU (`Stage::Window`, kernels from `gpusql_codegen::window`):
//! where partitions and peer groups start (`window_heads`), their numbering and first rows
//! (prefix sums, `segment_starts`), the segmented scans of the aggregates whose frames run
//! from a partition's start or to its end, then `window_calls`. The input's columns pass
//! through unchanged (the rows keep their order); each call adds one.

use super::buffers::{value_width, Arg, Intermediate, OwnedColumn};
use super::device_store::cuda_error;
use super::replay::ReadBacks;
use super::{ptr, GpuExecutor, LaunchQueue, PlanMemo};
use crate::stats::KernelStat;
use gpusql_codegen::window::{WindowScan, WindowSpec, SCAN_CHUNK};
use gpusql_codegen::{Param, Part};
use gpusql_common::{Error, Result, Schema};
use gpusql_cuda::CudaSlice;
use gpusql_plan::physical::WindowCall;
use std::sync::Arc;

#[allow(clippy::too_many_arguments)]
pub fn window(
    ex: &GpuExecutor,
    mut input: Intermediate,
    spec: &Arc<WindowSpec>,
    calls: &[WindowCall],
    columns: &[usize],
    schema: &Schema,
    output: usize,
    memo: &PlanMemo,
    reads: &mut ReadBacks,
) -> Result<(Intermediate, KernelStat, gpusql_cuda::EndedTimer)> {
    let n = input.rows;
    let mut stat = KernelStat { name: format!("window -> #{output}"), rows_in: n, rows_out: n, ..Default::default() };
    if input.perm.is_some() {
        return Err(Error::plan("a window over an unsliced intermediate (the planner slices its sort first)"));
    }
    if n > u32::MAX as usize {
        return Err(Error::not_supported(format!("window functions over more than 2^32 rows ({n})")));
    }
    // The input columns the kernels read, in the spec's parameter order.
    let mut column_args = vec![];
    for p in &spec.params {
        let Param::Input { column, part } = p else { continue };
        let c = &input.columns[*column];
        column_args.push(Arg::U64(match part {
            Part::Validity => c.validity.as_ref().map_or(0, |v| ptr(v, &ex.dev)),
            _ => {
                stat.bytes_read += n * value_width(&c.ty);
                ptr(&c.values, &ex.dev)
            }
        }));
    }
    let with_columns = |mut args: Vec<Arg>| {
        args.extend(column_args.iter().copied());
        args
    };
    let mut q = LaunchQueue::default();
    // Partition and peer heads, and partition ends; entry n of the heads stays 0, so the
    // prefix sums' entry n counts the groups.
    let part_heads = ex.dev.alloc_zeros::<u32>(n + 1, "window partition heads").map_err(cuda_error)?;
    let peer_heads = ex.dev.alloc_zeros::<u32>(n + 1, "window peer heads").map_err(cuda_error)?;
    let part_ends = ex.dev.alloc_zeros::<u32>(n.max(1), "window partition ends").map_err(cuda_error)?;
    if n > 0 {
        let f = ex.load_window(memo, spec, &spec.heads_entry, &mut stat)?;
        let mut args = vec![
            Arg::U64(n as u64),
            Arg::U64(ptr(&part_heads, &ex.dev)),
            Arg::U64(ptr(&peer_heads, &ex.dev)),
            Arg::U64(ptr(&part_ends, &ex.dev)),
        ];
        args.extend(column_args[..spec.key_params].iter().copied());
        q.push(f, &args, n, None);
    }
    let mut starts_of = |heads: &CudaSlice<u32>, what: &str| -> Result<(CudaSlice<u64>, CudaSlice<u64>)> {
        let first = super::scan::exclusive_scan::<u32, u64>(ex, heads, n + 1, &mut q, &mut stat)?;
        let starts = ex.dev.alloc_zeros::<u64>(n.max(1), what).map_err(cuda_error)?;
        if n > 0 {
            let f = ex.util("segment_starts", &mut stat)?;
            let args = [
                Arg::U64(ptr(heads, &ex.dev)),
                Arg::U64(ptr(&first, &ex.dev)),
                Arg::U64(ptr(&starts, &ex.dev)),
                Arg::U64(n as u64),
            ];
            q.push(f, &args, n, None);
        }
        Ok((first, starts))
    };
    let (part_first, part_starts) = starts_of(&part_heads, "window partition starts")?;
    let (peer_first, peer_starts) = starts_of(&peer_heads, "window peer starts")?;
    // The scans.
    let mut scanned = vec![];
    for s in &spec.scans {
        let heads = if s.forward { ptr(&part_heads, &ex.dev) } else { ptr(&part_ends, &ex.dev) };
        let x = &input.columns[s.column];
        let x = [Arg::U64(ptr(&x.values, &ex.dev)), Arg::U64(x.validity.as_ref().map_or(0, |v| ptr(v, &ex.dev)))];
        scanned.push(segmented_scan(ex, memo, spec, s, n, heads, None, &x, &mut q, &mut stat)?);
    }
    // The calls' columns.
    let err = ex.dev.alloc_zeros::<i32>(1, "window error flag").map_err(cuda_error)?;
    let mut outputs = vec![];
    for c in calls {
        let values = ex.dev.alloc_zeros::<u8>((n * value_width(&c.ty)).max(16), "window column").map_err(cuda_error)?;
        let validity = ex.dev.alloc_zeros::<u8>(n.max(16), "window validity").map_err(cuda_error)?;
        outputs.push(OwnedColumn { ty: c.ty, values, validity: Some(validity) });
    }
    if n > 0 {
        let f = ex.load_window(memo, spec, &spec.calls_entry, &mut stat)?;
        let mut args = vec![
            Arg::U64(n as u64),
            Arg::U64(ptr(&part_heads, &ex.dev)),
            Arg::U64(ptr(&part_first, &ex.dev)),
            Arg::U64(ptr(&part_starts, &ex.dev)),
            Arg::U64(ptr(&peer_heads, &ex.dev)),
            Arg::U64(ptr(&peer_first, &ex.dev)),
            Arg::U64(ptr(&peer_starts, &ex.dev)),
            Arg::U64(ptr(&err, &ex.dev)),
        ];
        args.extend(scanned.iter().map(|s| Arg::U64(ptr(s, &ex.dev))));
        for o in &outputs {
            args.push(Arg::U64(ptr(&o.values, &ex.dev)));
            args.push(Arg::U64(o.validity.as_ref().map_or(0, |v| ptr(v, &ex.dev))));
        }
        q.push(f, &with_columns(args), n, None);
    }
    for b in [part_heads, peer_heads, part_ends] {
        q.keep(b);
    }
    for b in [part_first, part_starts, peer_first, peer_starts] {
        q.keep(b);
    }
    for s in scanned {
        q.keep(s);
    }
    let span = ex.submit_queue(q)?;
    let site = super::replay::site(("window error", output, n));
    let code = reads.read(&ex.dev, site, &err)?[0];
    if code != 0 {
        return Err(super::capacity::error_of(code));
    }
    // The input's columns, moved, then the calls'.
    let mut kept: Vec<Option<OwnedColumn>> = input.columns.drain(..).map(Some).collect();
    let mut out = vec![];
    for c in columns {
        out.push(kept[*c].take().ok_or_else(|| Error::plan("a window passes a column through twice"))?);
    }
    out.extend(outputs);
    Ok((Intermediate { schema: schema.clone(), rows: n, columns: out, perm: None, positions: None }, stat, span))
}

/// The segmented inclusive scan `s` of `n` entries (their restarts in `heads`): over the
/// rows (`states` None) or over an earlier level's chunk states; `x`: the scanned input
/// column's values and validity. Chunks of SCAN_CHUNK
/// entries are walked one per thread; where there is more than one chunk, their last
/// states are scanned likewise and carried into the chunks after them.
#[allow(clippy::too_many_arguments)]
fn segmented_scan(
    ex: &GpuExecutor,
    memo: &PlanMemo,
    spec: &Arc<WindowSpec>,
    s: &WindowScan,
    n: usize,
    heads: u64,
    states: Option<u64>,
    x: &[Arg; 2],
    q: &mut LaunchQueue,
    stat: &mut KernelStat,
) -> Result<CudaSlice<u8>> {
    let chunks = n.div_ceil(SCAN_CHUNK).max(1);
    let out = ex.dev.alloc_zeros::<u8>((n * s.state_bytes).max(16), "window scan").map_err(cuda_error)?;
    let last = ex.dev.alloc_zeros::<u8>(chunks * s.state_bytes, "window scan chunks").map_err(cuda_error)?;
    let restarted = ex.dev.alloc_zeros::<u32>(chunks, "window scan restarts").map_err(cuda_error)?;
    if n == 0 {
        return Ok(out);
    }
    let mut args = vec![Arg::U64(n as u64), Arg::U64(SCAN_CHUNK as u64), Arg::U64(heads)];
    let entry = match states {
        None => format!("{}_rows", s.name),
        Some(input) => {
            args.push(Arg::U64(input));
            format!("{}_states", s.name)
        }
    };
    args.extend([Arg::U64(ptr(&out, &ex.dev)), Arg::U64(ptr(&last, &ex.dev)), Arg::U64(ptr(&restarted, &ex.dev))]);
    args.extend(x.iter().copied());
    let f = ex.load_window(memo, spec, &entry, stat)?;
    q.push(f, &args, chunks, None);
    if chunks > 1 {
        let restarts = ptr(&restarted, &ex.dev);
        let scanned_last = segmented_scan(ex, memo, spec, s, chunks, restarts, Some(ptr(&last, &ex.dev)), x, q, stat)?;
        let f = ex.load_window(memo, spec, &format!("{}_carry", s.name), stat)?;
        let mut args = vec![
            Arg::U64(n as u64),
            Arg::U64(SCAN_CHUNK as u64),
            Arg::U64(heads),
            Arg::U64(ptr(&out, &ex.dev)),
            Arg::U64(ptr(&scanned_last, &ex.dev)),
        ];
        args.extend(x.iter().copied());
        q.push(f, &args, chunks, None);
        q.keep(scanned_last);
    }
    q.keep(last);
    q.keep(restarted);
    Ok(out)
}
