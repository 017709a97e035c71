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

use super::Operator;
use crate::kernel_builder::KernelBuilder;
use crate::spec::BLOCK_SIZE;
use crate::types::{c_size, c_type};
use crate::value::Value;
use gpusql_common::Result;
use gpusql_plan::{Expr, JoinKind, Pipeline, PipelineOp, Sink};

/// Shared memory for the parked rows of all Lane Refill points of a pipeline (32 bytes per
/// lane): with the probe tables' and aggregation states' budgets it stays under the 48 KiB
/// of static shared memory a block may have.
const REFILL_BUFFER_BYTES: usize = 8 * 1024;

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
            PipelineOp::HashProbe { keys, residual, band, .. } => {
                keys.iter().for_each(&mut mark);
                residual.iter().for_each(&mut mark);
                band.iter().flat_map(|b| b.conditions()).for_each(&mut mark);
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

/// A Lane Refill point: below `threshold` active lanes a warp parks its rows; `live`: the
/// row columns read after it. (The planner's estimate of the lanes active here, which
/// placed it, is not part of the code: it changes with the query's constants.)
pub struct LaneRefill {
    pub threshold: u32,
    pub live: Vec<bool>,
}

impl Operator for LaneRefill {
    /// Only at the top level of the row loop: inside a multi-match expansion loop
    /// `continue` would abandon the other matches (push-down parallelism already keeps
    /// those lanes busy), so it is left out there, with a comment saying so.
    fn consume(&self, k: &mut KernelBuilder) -> Result<()> {
        // (Not the planner's activity estimate, which EXPLAIN shows: it changes with the
        // query's constants, which the source must not.)
        let what = format!("LaneRefill threshold={}/32", self.threshold);
        if !k.at_loop_top() {
            k.body()
                .line(format!("// ---- {what}: left out, the rows here are inside a multi-match expansion loop ----"));
            return Ok(());
        }
        let Some((n, items)) = self.park(k, &what) else { return Ok(()) };
        emit_refill(k, &what, &n, &items, self.threshold);
        Ok(())
    }
}

impl LaneRefill {
    /// Chooses what travels with a parked row, renames the values parked under new names
    /// and registers the refill point: its name and the items (C type, current value,
    /// lvalue after the refill). None (with a comment) where they would not fit the
    /// shared memory left.
    ///
    /// Index variables are reassigned in place (pending loads name them). Values computed
    /// before this point are parked under new names, so later operators read the refilled
    /// ones; values loaded from memory are parked while the shared memory budget lasts and
    /// otherwise loaded again after the refill.
    fn park(&self, k: &mut KernelBuilder, what: &str) -> Option<(String, Vec<(&'static str, String, String)>)> {
        let mut items: Vec<(&'static str, String, String)> = vec![];
        for (name, ty) in k.index_vars() {
            items.push((ty, name.clone(), name));
        }
        let mut computed = vec![];
        let mut loaded = vec![];
        for i in 0..k.width() {
            if k.is_pending(i) || !self.live.get(i).copied().unwrap_or(true) {
                continue;
            }
            match k.reload(i) {
                Some(_) => loaded.push(i),
                None => computed.push(i),
            }
        }
        let value_bytes = |k: &KernelBuilder, i: usize| {
            c_size(c_type(&k.row_type(i))) + if k.row()[i].is_never_null() { 0 } else { 1 }
        };
        let mut bytes: usize = items.iter().map(|(ct, _, _)| c_size(ct)).sum::<usize>()
            + computed.iter().map(|i| value_bytes(k, *i)).sum::<usize>();
        let left = REFILL_BUFFER_BYTES.saturating_sub(k.refill_bytes()) / BLOCK_SIZE as usize;
        if bytes > left {
            k.body().line(format!("// ---- {what}: left out, parking its rows would take more than the {} bytes of shared memory per lane left to Lane Refill ----", left));
            return None;
        }
        let mut park = computed;
        for i in loaded {
            if bytes + value_bytes(k, i) <= left {
                bytes += value_bytes(k, i);
                park.push(i);
            } else {
                k.defer_load(i);
            }
        }
        park.sort_unstable();
        let n = k.add_refill(bytes * BLOCK_SIZE as usize);
        k.body().line(format!("// ---- {what}: a warp below threshold parks its rows in shared memory and starts over; otherwise idle lanes take parked rows ----"));
        for i in park {
            let v = k.row()[i].clone();
            let ct = c_type(&k.row_type(i));
            let nv = format!("{}_{n}", v.v);
            k.body().line(format!("{ct} {nv} = {};", v.v));
            items.push((ct, v.v.clone(), nv.clone()));
            let mut nullv = v.null.clone();
            if !v.is_never_null() {
                nullv = format!("{}_{n}", v.null);
                k.body().line(format!("bool {nullv} = {};", v.null));
                items.push(("bool", v.null.clone(), nullv.clone()));
            }
            k.rename(i, Value { v: nv, null: nullv });
        }
        Some((n, items))
    }
}

/// The buffers of refill point `n` and its flush / refill code.
fn emit_refill(k: &mut KernelBuilder, what: &str, n: &str, items: &[(&'static str, String, String)], threshold: u32) {
    k.pre().line(format!("// {what}: one parked row per lane and buffered value"));
    k.pre().line(format!("uint32_t {n}_n = 0; // rows this warp has parked"));
    for (i, (ct, _, _)) in items.iter().enumerate() {
        k.pre().line(format!("__shared__ {ct} {n}_b{i}[{BLOCK_SIZE}];"));
    }
    let b = k.body();
    b.line(format!("const uint32_t {n}_lt = (1u << (threadIdx.x & 31)) - 1u, {n}_w = threadIdx.x & ~31u;"));
    b.line(format!("const uint32_t {n}_m = __ballot_sync(FULL_MASK, active), {n}_na = __popc({n}_m);"));
    b.open(format!("if (!drain_ && {n}_na + {n}_n < {threshold}u)"));
    b.line("// flush: the active lanes push their rows onto the warp's stack");
    b.open("if (active)");
    b.line(format!("const uint32_t d_ = {n}_w + {n}_n + __popc({n}_m & {n}_lt);"));
    for (i, (_, cur, _)) in items.iter().enumerate() {
        b.line(format!("{n}_b{i}[d_] = {cur};"));
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
    for (i, (_, _, after)) in items.iter().enumerate() {
        b.line(format!("{after} = {n}_b{i}[s_];"));
    }
    b.close();
    b.line(format!("active = active || {n}_fill;"));
    b.line(format!("{n}_n = {n}_rest;"));
    b.line("__syncwarp();");
}
