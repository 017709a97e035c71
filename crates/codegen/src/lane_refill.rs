//! LaneRefill ([Funke & Teubner 2020] §4, DogQC's buffering operator against filter
//! divergence). After a selective filter or a sparse join most lanes of a warp are idle,
//! yet the operators that follow cost the warp as much as with all lanes busy. Each warp
//! keeps a stack of parked rows in shared memory (one slot per lane suffices):
//! - *flush*: when its active lanes plus the parked rows are fewer than the threshold, the
//!   active lanes push their rows (`dest = n_buf + popc(m & lanes_before)`) and the warp
//!   starts over with fresh rows (`continue`);
//! - *refill*: otherwise idle lanes pop parked rows (`src = n_remain + popc(~m &
//!   lanes_before)`), so the operators after it run on at least `threshold` lanes.
//!
//! When the input is exhausted the row loop runs extra *drain* iterations, with no fresh
//! rows, until every buffer is empty.
//!
//! A parked row is what the rest of the pipeline needs of it: the index variables (its
//! source row and probe positions, from which columns not loaded yet are loaded later) and
//! the values already loaded or computed that later operators read.

use crate::expr::Value;
use crate::pipeline::PipelineGen;
use crate::types::{c_size, c_type};
use crate::BLOCK_SIZE;

/// Shared memory for the parked rows of all Lane Refill points of a pipeline (32 bytes per
/// lane): with the probe tables' and aggregation states' budgets it stays under the 48 KiB
/// of static shared memory a block may have.
const REFILL_BUFFER_BYTES: usize = 8 * 1024;
use gpusql_plan::{Expr, JoinKind, Pipeline, PipelineOp, Sink};

/// Which columns of a `width`-column row the operators `rest` and the sink read.
pub fn live_columns(rest: &[PipelineOp], sink: &Sink, width: usize) -> Vec<bool> {
    let mut live = vec![false; width];
    let mut mark = |e: &Expr| {
        let mut cols = vec![];
        e.columns(&mut cols);
        for c in cols.into_iter().filter(|c| *c < width) {
            live[c] = true;
        }
    };
    for op in rest {
        match op {
            PipelineOp::Filter(plan) => plan.terms().for_each(&mut mark),
            PipelineOp::HashProbe { keys, residual, .. } => {
                keys.iter().for_each(&mut mark);
                residual.iter().for_each(&mut mark);
            }
            // The row is replaced: nothing after reads the columns directly.
            PipelineOp::Project { exprs, .. } => {
                exprs.iter().for_each(&mut mark);
                return live;
            }
            PipelineOp::LaneRefill { .. } => {}
        }
    }
    match sink {
        // Every column of the row is written (a build's row is its payload).
        Sink::Materialize { .. } | Sink::HashBuild { .. } => return vec![true; width],
        Sink::Aggregate { keys, states, .. } => {
            keys.iter().for_each(&mut mark);
            states.iter().filter_map(|s| s.arg.as_ref()).for_each(&mut mark);
        }
    }
    live
}

/// Which payload columns of hash table `build` (of `payload_width` columns) the pipelines
/// probing it read: at the probe or after it, before a projection replaces the row (the
/// probe's own residual included). Columns none reads are never loaded by the generated
/// code, so the build need not regroup them (`finish_build`).
pub fn payload_columns_read<'a>(
    pipelines: impl Iterator<Item = &'a Pipeline>,
    build: usize,
    payload_width: usize,
) -> Vec<bool> {
    let mut read = vec![false; payload_width];
    for p in pipelines {
        let mut width = p.source.schema().len();
        for (i, op) in p.ops.iter().enumerate() {
            match op {
                PipelineOp::HashProbe { build: b, kind: JoinKind::Mark, residual, .. } => {
                    // Only its residual reads the build row; the row gains the mark column.
                    if *b == build {
                        let mut cols = vec![];
                        residual.iter().for_each(|r| r.columns(&mut cols));
                        for c in cols.into_iter().filter(|c| *c >= width && *c - width < payload_width) {
                            read[c - width] = true;
                        }
                    }
                    width += 1;
                }
                PipelineOp::HashProbe { build: b, build_schema, kind, .. } => {
                    if *b == build {
                        let live = live_columns(&p.ops[i..], &p.sink, width + build_schema.len());
                        for (c, r) in read.iter_mut().enumerate() {
                            *r |= live.get(width + c).copied().unwrap_or(true);
                        }
                    }
                    if matches!(kind, JoinKind::Inner | JoinKind::Left) {
                        width += build_schema.len();
                    }
                }
                PipelineOp::Project { exprs, .. } => width = exprs.len(),
                PipelineOp::Filter(_) | PipelineOp::LaneRefill { .. } => {}
            }
        }
    }
    read
}

/// Emits a Lane Refill point. Only at the top level of the row loop: inside a multi-match
/// expansion loop `continue` would abandon the other matches (push-down parallelism
/// already keeps those lanes busy), so it is left out there, with a comment saying so.
pub fn consume(g: &mut PipelineGen, threshold: u32, activity: f64, live: &[bool]) {
    let what = format!("LaneRefill threshold={threshold}/32 (est. lane activity {activity:.3})");
    if g.body.indent != 2 || g.open_loops > 0 {
        g.body.line(format!("// ---- {what}: left out, the rows here are inside a multi-match expansion loop ----"));
        return;
    }
    // What travels with a parked row: (C type, current value, lvalue after the refill).
    // Index variables are reassigned in place (pending loads name them). Values computed
    // before this point are parked under new names, so later operators read the refilled
    // ones; values loaded from memory are parked while the shared memory budget lasts and
    // otherwise loaded again after the refill.
    let mut items: Vec<(&'static str, String, String)> = vec![];
    for (name, ty) in &g.index_vars {
        items.push((ty, name.clone(), name.clone()));
    }
    let mut computed = vec![];
    let mut loaded = vec![];
    for i in 0..g.row.len() {
        let pending = g.pending_loads.get(i).is_some_and(|l| l.is_some());
        if pending || !live.get(i).copied().unwrap_or(true) {
            continue;
        }
        match g.reloads.get(i).cloned().flatten() {
            Some(reload) => loaded.push((i, reload)),
            None => computed.push(i),
        }
    }
    let value_bytes =
        |g: &PipelineGen, i: usize| c_size(c_type(&g.row_types[i])) + if g.row[i].is_never_null() { 0 } else { 1 };
    let mut bytes: usize = items.iter().map(|(ct, _, _)| c_size(ct)).sum::<usize>()
        + computed.iter().map(|i| value_bytes(g, *i)).sum::<usize>();
    let left = REFILL_BUFFER_BYTES.saturating_sub(g.refill_bytes) / BLOCK_SIZE as usize;
    if bytes > left {
        g.body.line(format!("// ---- {what}: left out, parking its rows would take more than the {} bytes of shared memory per lane left to Lane Refill ----", left));
        return;
    }
    let mut park = computed;
    for (i, (load, original)) in loaded {
        if bytes + value_bytes(g, i) <= left {
            bytes += value_bytes(g, i);
            park.push(i);
        } else {
            g.row[i] = original;
            g.pending_loads[i] = Some(load);
        }
    }
    park.sort_unstable();
    g.refill_bytes += bytes * BLOCK_SIZE as usize;
    let n = format!("lr{}", g.refills);
    g.refills += 1;
    g.body.line(format!("// ---- {what}: a warp below threshold parks its rows in shared memory and starts over; otherwise idle lanes take parked rows ----"));
    for i in park {
        let v = g.row[i].clone();
        let ct = c_type(&g.row_types[i]);
        let nv = format!("{}_{n}", v.v);
        g.body.line(format!("{ct} {nv} = {};", v.v));
        items.push((ct, v.v.clone(), nv.clone()));
        let mut nullv = v.null.clone();
        if !v.is_never_null() {
            nullv = format!("{}_{n}", v.null);
            g.body.line(format!("bool {nullv} = {};", v.null));
            items.push(("bool", v.null.clone(), nullv.clone()));
        }
        g.row[i] = Value { v: nv, null: nullv };
    }

    g.pre.line(format!("// {what}: one parked row per lane and buffered value"));
    g.pre.line(format!("uint32_t {n}_n = 0; // rows this warp has parked"));
    for (k, (ct, _, _)) in items.iter().enumerate() {
        g.pre.line(format!("__shared__ {ct} {n}_b{k}[{BLOCK_SIZE}];"));
    }
    let b = &mut g.body;
    b.line(format!("const uint32_t {n}_lt = (1u << (threadIdx.x & 31)) - 1u, {n}_w = threadIdx.x & ~31u;"));
    b.line(format!("const uint32_t {n}_m = __ballot_sync(FULL_MASK, active), {n}_na = __popc({n}_m);"));
    b.open(format!("if (!drain_ && {n}_na + {n}_n < {threshold}u)"));
    b.line("// flush: the active lanes push their rows onto the warp's stack");
    b.open("if (active)");
    b.line(format!("const uint32_t d_ = {n}_w + {n}_n + __popc({n}_m & {n}_lt);"));
    for (k, (_, cur, _)) in items.iter().enumerate() {
        b.line(format!("{n}_b{k}[d_] = {cur};"));
    }
    b.close();
    b.line(format!("{n}_n += {n}_na;"));
    b.line("__syncwarp();");
    b.line("continue;");
    b.close();
    b.line("// refill: idle lanes pop the top of the stack");
    b.line(format!("const uint32_t {n}_take = min({n}_n, 32u - {n}_na), {n}_rest = {n}_n - {n}_take;"));
    b.line(format!("const uint32_t {n}_r = __popc(~{n}_m & {n}_lt);"));
    b.line(format!("const bool {n}_fill = !active && {n}_r < {n}_take;"));
    b.open(format!("if ({n}_fill)"));
    b.line(format!("const uint32_t s_ = {n}_w + {n}_rest + {n}_r;"));
    for (k, (_, _, after)) in items.iter().enumerate() {
        b.line(format!("{after} = {n}_b{k}[s_];"));
    }
    b.close();
    b.line(format!("active = active || {n}_fill;"));
    b.line(format!("{n}_n = {n}_rest;"));
    b.line("__syncwarp();");
}
