//! The stages of set operations on the GPU: UNION ALL's concatenation of the arms'
//! intermediates, and the repetition of rows by a count (INTERSECT ALL, EXCEPT ALL).
//! Both are copies through the result-assembly kernels of util.cu.

use super::buffers::{value_width, Arg, Intermediate, OwnedColumn};
use super::device_store::cuda_error;
use super::replay::ReadBacks;
use super::{ptr, GpuExecutor, LaunchQueue, Permute};
use crate::stats::KernelStat;
use gpusql_common::{Error, Result, Schema};

/// The rows of `inputs` one after another (each dense, of `schema`'s types): per column,
/// one buffer and a copy of each input's values into it; where an input's column has no
/// validity and the output's has, its rows are marked valid. The output has validity
/// where the schema says NULLs may come (kernels reading it expect one), even if no arm
/// made any: an arm's `TRY_CAST(88 AS BIGINT)` folds to a constant without NULLs.
pub fn concat(
    ex: &GpuExecutor,
    inputs: &[Intermediate],
    schema: &Schema,
    output: usize,
) -> Result<(Intermediate, KernelStat, gpusql_cuda::EndedTimer)> {
    let rows: usize = inputs.iter().map(|i| i.rows).sum();
    let mut stat = KernelStat { name: format!("concat -> #{output}"), rows_in: rows, ..Default::default() };
    if inputs.iter().any(|i| i.perm.is_some()) {
        return Err(Error::plan("UNION ALL of an ordered intermediate (the planner slices those first)"));
    }
    let mut q = LaunchQueue::default();
    let mut columns = vec![];
    for (c, f) in schema.fields.iter().enumerate() {
        let width = value_width(&f.ty);
        let values = ex.dev.alloc_unset::<u8>((rows * width).max(16), "UNION ALL column").map_err(cuda_error)?;
        let nullable = f.nullable || inputs.iter().any(|i| i.columns[c].validity.is_some());
        let validity = if nullable {
            Some(ex.dev.alloc_unset::<u8>(rows.max(16), "UNION ALL validity").map_err(cuda_error)?)
        } else {
            None
        };
        let mut at = 0usize;
        for input in inputs.iter().filter(|i| i.rows > 0) {
            let col = &input.columns[c];
            let n = input.rows;
            let copy = ex.util(&format!("copy_{width}"), &mut stat)?;
            let dst = ptr(&values, &ex.dev) + (at * width) as u64;
            q.push(copy, &[Arg::U64(ptr(&col.values, &ex.dev)), Arg::U64(dst), Arg::U64(n as u64)], n, Some(1024));
            if let Some(v) = &validity {
                let dst = ptr(v, &ex.dev) + at as u64;
                match &col.validity {
                    Some(src) => {
                        let copy = ex.util("copy_1", &mut stat)?;
                        q.push(copy, &[Arg::U64(ptr(src, &ex.dev)), Arg::U64(dst), Arg::U64(n as u64)], n, Some(1024));
                    }
                    None => {
                        let fill = ex.util("fill_valid", &mut stat)?;
                        q.push(fill, &[Arg::U64(dst), Arg::U64(n as u64)], n, Some(1024));
                    }
                }
            }
            at += n;
        }
        columns.push(OwnedColumn { ty: f.ty, values, validity });
    }
    let span = ex.submit_queue(q)?;
    stat.rows_out = rows;
    Ok((Intermediate { schema: schema.clone(), rows, columns, perm: None, positions: None }, stat, span))
}

/// Each row of `input` as many times as its BIGINT column `times` says (none where NULL or
/// below 1), columns `columns` of it: the counts' prefix sum gives each row its output
/// range (the total is read back: a replay takes it from its log), a row index is written
/// there, and the columns are gathered through it.
pub fn repeat(
    ex: &GpuExecutor,
    input: &Intermediate,
    times: usize,
    columns: &[usize],
    schema: &Schema,
    output: usize,
    reads: &mut ReadBacks,
) -> Result<(Intermediate, KernelStat, [gpusql_cuda::EndedTimer; 2])> {
    let n = input.rows;
    let mut stat = KernelStat { name: format!("repeat -> #{output}"), rows_in: n, ..Default::default() };
    let t = &input.columns[times];
    // (Entry n stays 0, so the sum's entry n is the total.)
    let counts = ex.dev.alloc_zeros::<u64>(n + 1, "repeat counts").map_err(cuda_error)?;
    let mut q = LaunchQueue::default();
    if n > 0 {
        let f = ex.util("repeat_counts", &mut stat)?;
        let valid = t.validity.as_ref().map_or(0, |v| ptr(v, &ex.dev));
        q.push(
            f,
            &[Arg::U64(ptr(&t.values, &ex.dev)), Arg::U64(valid), Arg::U64(ptr(&counts, &ex.dev)), Arg::U64(n as u64)],
            n,
            Some(1024),
        );
    }
    let offsets = super::scan::exclusive_scan::<u64, u64>(ex, &counts, n + 1, &mut q, &mut stat)?;
    q.keep(counts);
    let counted = ex.submit_queue(q)?;
    let site = super::replay::site(("repeat rows", output, n));
    // SAFETY: entry n of `offsets`, alive until after the read's copy.
    let total = unsafe { reads.read_at::<u64>(&ex.dev, site, ptr(&offsets, &ex.dev) + 8 * n as u64, 1) }?[0];
    let m = usize::try_from(total).ok().filter(|m| *m <= u32::MAX as usize).ok_or_else(|| {
        Error::not_supported(format!("INTERSECT ALL / EXCEPT ALL results of more than 2^32 rows ({total})"))
    })?;
    let idx = ex.dev.alloc_unset::<u32>(m.max(4), "repeated rows").map_err(cuda_error)?;
    let mut q = LaunchQueue::default();
    if n > 0 && m > 0 {
        let f = ex.util("repeat_rows", &mut stat)?;
        let args =
            [Arg::U64(ptr(&offsets, &ex.dev)), Arg::U64(ptr(&idx, &ex.dev)), Arg::U64(n as u64), Arg::U64(m as u64)];
        q.push(f, &args, n, Some(1024));
    }
    let mut out = vec![];
    for c in columns {
        let col = &input.columns[*c];
        let at = ptr(&idx, &ex.dev);
        let values = ex.permute(Permute::Gather, &col.values, value_width(&col.ty), at, m, &mut q, &mut stat)?;
        let validity =
            col.validity.as_ref().map(|v| ex.permute(Permute::Gather, v, 1, at, m, &mut q, &mut stat)).transpose()?;
        out.push(OwnedColumn { ty: col.ty, values, validity });
    }
    q.keep(idx);
    q.keep(offsets);
    let gathered = ex.submit_queue(q)?;
    stat.rows_out = m;
    Ok((
        Intermediate { schema: schema.clone(), rows: m, columns: out, perm: None, positions: None },
        stat,
        [counted, gathered],
    ))
}
