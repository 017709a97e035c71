//! Assembles one pipeline's kernel: source (scan), operators (consume in order), sink.

use crate::emit::Emitter;
use crate::expr::Value;
use crate::{
    aggregate, filter, hash_join, lane_refill, materialize, project, scan, KernelSpec, Param, BLOCK_SIZE, PRELUDE,
};
use gpusql_common::Result;
use gpusql_plan::{Expr, Pipeline, PipelineOp, ReplicaUser, Sink};

/// At most this many columns are prefetched (a register each).
const MAX_PREFETCH: usize = 4;

pub struct PipelineGen {
    /// Code before the row loop (accumulators, shared memory).
    pub pre: Emitter,
    /// The row loop's body.
    pub body: Emitter,
    /// Code after the row loop (block reductions, flushes).
    pub post: Emitter,
    /// Extra device functions or kernels of this module.
    pub extra: String,
    pub params: Vec<(Param, String, String)>,
    /// Current row values and their types.
    pub row: Vec<Value>,
    pub row_types: Vec<gpusql_common::DataType>,
    /// Load statements of source columns not yet loaded (None: loaded or computed).
    pub pending_loads: Vec<Option<String>>,
    /// For columns loaded from memory (source or build payload): the load statement and
    /// the variables it sets, kept after the load so Lane Refill can load them again for a
    /// refilled lane instead of parking them (None: computed values).
    pub reloads: Vec<Option<(String, Value)>>,
    /// Row columns that are a table's string column as stored (offsets + bytes), so a
    /// LIKE over them may read its Pivot-4 copy: the source column index.
    pub pivotable: Vec<Option<usize>>,
    pub next_project: usize,
    /// The sink synchronizes the block (__syncthreads), so loops around it must be
    /// block-uniform. Never with Lane Refill, whose warps go their own ways.
    pub block_sync: bool,
    /// Lane Refill points emitted so far (each has a buffer and a parked-row count).
    pub refills: usize,
    /// Shared memory the Lane Refill buffers take so far.
    pub refill_bytes: usize,
    /// Expansion loops of multi-match probes still open (closed after the sink).
    pub open_loops: usize,
    /// Index variables pending loads read (`row`, probe positions): a push-down loop
    /// broadcasts them from the leader lane.
    pub index_vars: Vec<(String, &'static str)>,
    /// What is known about the finished hash tables this pipeline probes.
    pub builds: Vec<crate::BuildHint>,
    /// Shared memory taken by probe tables so far.
    pub smem_tables: usize,
    /// The pipeline's bank-replicated shared-memory tables (the planner's choice).
    pub replicated: Vec<gpusql_plan::ReplicatedTable>,
    /// Source columns whose plain load `var = ptr[row];` may be prefetched: (var, ptr, C type).
    pub prefetchable: Vec<Option<(String, String, &'static str)>>,
    /// Columns whose values for the next loop iteration are loaded one iteration early
    /// (pointer, C type): the first column every row reads, and the keys of a probe's
    /// key-bitmap tests before any operator has dropped a row (`prefetch_keys`), up to
    /// `MAX_PREFETCH`. A thread then has the next row's loads in flight while it works on
    /// this one.
    pub prefetch: Vec<(String, &'static str)>,
    /// Some operator has dropped rows (`active` is no longer just "row < n_rows").
    pub narrowed: bool,
    /// Loading the keys of key-bitmap tests that every row takes (set by the probe while it
    /// loads them, and only while no row has dropped out): they may be prefetched too.
    /// (Not a filter's later columns: its first term drops rows before they load.)
    pub prefetch_keys: bool,
    /// Source columns loaded so far, and how many row columns are still the source's
    /// (until a projection replaces the row).
    pub source_loaded: Vec<usize>,
    pub source_width: usize,
    /// C type of row indices (`row`, the loop's base and stride): `uint32_t` where the
    /// source has fewer than 2^31 rows (index math and the parked rows of a Lane Refill
    /// take half the instructions and bytes), else `uint64_t`.
    pub row_ty: &'static str,
    /// The planner's estimate of the fraction of source rows that reach the sink: the
    /// product of the Lane Refills' lane activity estimates (1 without refills).
    pub sink_reach: f64,
}

/// Row indices are 32-bit for sources of fewer rows than this (the grid-stride loop's
/// `row + stride` stays far below 2^32).
pub const NARROW_ROWS_BELOW: u64 = 1 << 31;

impl PipelineGen {
    /// Declares (once) a kernel parameter and returns its C name.
    pub fn param(&mut self, p: Param, c_decl: &str) -> String {
        if let Some((_, _, name)) = self.params.iter().find(|(q, _, _)| *q == p) {
            return name.clone();
        }
        let name = match &p {
            Param::RowCount => "n_rows".to_string(),
            Param::Input { column, part } => format!("in{column}_{}", format!("{part:?}").to_lowercase()),
            Param::Output { column, part } => format!("out{column}_{}", format!("{part:?}").to_lowercase()),
            Param::OutCount => "out_count".into(),
            Param::OutCapacity => "out_capacity".into(),
            Param::State { index } => format!("state{index}"),
            Param::HashSlots => "ht_slots".into(),
            Param::HashMask => "ht_mask".into(),
            Param::MaxGroups => "max_groups".into(),
            Param::ErrorFlag => "err".into(),
            Param::GroupKey { key, part } => format!("gkey{key}_{}", format!("{part:?}").to_lowercase()),
            Param::GroupRows => "group_rows".into(),
            Param::GroupCount => "group_count".into(),
            Param::RowGroup => "row_group".into(),
            Param::MultiFlag => "multi_flag".into(),
            Param::Replica { index, part } => match part {
                crate::ReplicaPart::RowSlots => format!("rp{index}_slots"),
                crate::ReplicaPart::SlotValues => format!("rp{index}_values"),
                crate::ReplicaPart::SlotCodes => format!("rp{index}_codes"),
            },
            Param::InSet { index, part } => crate::in_set::param_name(*index, *part),
            Param::Build { id, part } => match part {
                crate::BuildPart::Slots => format!("ht{id}_slots"),
                crate::BuildPart::Mask => format!("ht{id}_mask"),
                crate::BuildPart::Key(k) => format!("ht{id}_key{k}"),
                crate::BuildPart::Offsets => format!("ht{id}_offsets"),
                crate::BuildPart::Counts => format!("ht{id}_counts"),
                crate::BuildPart::Payload { column, part } => {
                    format!("ht{id}_col{column}_{}", format!("{part:?}").to_lowercase())
                }
                crate::BuildPart::Entries => format!("ht{id}_entries"),
                crate::BuildPart::Direct => format!("ht{id}_direct"),
                crate::BuildPart::Bitmap => format!("ht{id}_bitmap"),
            },
        };
        self.params.push((p, c_decl.to_string(), name.clone()));
        name
    }

    /// Appends a column loaded from memory by `load` (deferred until its first reader),
    /// keeping the per-column vectors in step. `pivot`: the source column whose Pivot-4
    /// copy a LIKE may read; `prefetch`: its plain load (var, pointer, C type).
    pub fn push_loaded_column(
        &mut self,
        value: Value,
        ty: gpusql_common::DataType,
        load: String,
        pivot: Option<usize>,
        prefetch: Option<(String, String, &'static str)>,
    ) {
        self.reloads.push(Some((load.clone(), value.clone())));
        self.pending_loads.push(Some(load));
        self.pivotable.push(pivot);
        self.prefetchable.push(prefetch);
        self.row.push(value);
        self.row_types.push(ty);
    }

    /// Appends a value computed already (a mark join's column): nothing to load.
    pub fn push_computed_column(&mut self, value: Value, ty: gpusql_common::DataType) {
        self.reloads.push(None);
        self.pending_loads.push(None);
        self.pivotable.push(None);
        self.prefetchable.push(None);
        self.row.push(value);
        self.row_types.push(ty);
    }

    /// Replaces the row by computed values (a projection): nothing left to load.
    pub fn replace_row(&mut self, row: Vec<Value>, types: Vec<gpusql_common::DataType>) {
        let n = row.len();
        self.row = row;
        self.row_types = types;
        self.pending_loads = vec![None; n];
        self.reloads = vec![None; n];
        self.pivotable = vec![None; n];
        self.prefetchable = vec![None; n];
        self.source_width = 0;
    }

    /// The load statement of row column `c` if it is not loaded yet (the caller emits it).
    pub fn take_load(&mut self, c: usize) -> Option<String> {
        let load = self.pending_loads.get_mut(c).and_then(|l| l.take())?;
        if c < self.source_width {
            self.source_loaded.push(c);
        }
        Some(load)
    }

    /// Emits the loads of the source columns `exprs` read that are not loaded yet (at the
    /// operator's top level, so every later use sees them).
    pub fn load_columns(&mut self, exprs: &[&Expr]) {
        let mut cols = vec![];
        for e in exprs {
            e.columns(&mut cols);
        }
        cols.sort_unstable();
        for c in cols {
            if let Some(load) = self.take_load(c) {
                // The first column loaded at the top level of the row loop is read for every
                // row, and so are those loaded before any row dropped out: take them from
                // the prefetch registers.
                // (Not after a Lane Refill: a refilled lane's row is not the prefetched one.)
                let top_level = self.body.indent == 3 && self.open_loops == 0 && self.refills == 0;
                let k = self.prefetch.len();
                match self.prefetchable.get(c).cloned().flatten() {
                    Some((var, ptr, ct))
                        if top_level && (k == 0 || (self.prefetch_keys && !self.narrowed && k < MAX_PREFETCH)) =>
                    {
                        self.body.line(format!("{var} = pf{k}_cur_;"));
                        self.prefetch.push((ptr, ct));
                    }
                    _ => self.body.line(load),
                }
            }
        }
    }
}

/// Generates the kernel of pipeline `p` over a source of `rows` rows (which decides the
/// width of row indices). `builds` describes the hash tables it probes (known once they
/// are built): whether keys repeat and how large they are.
pub fn generate_pipeline(p: &Pipeline, builds: &[crate::BuildHint], rows: u64) -> Result<KernelSpec> {
    let entry = format!("pipeline_{}", p.id);
    let row_ty = if rows < NARROW_ROWS_BELOW { "uint32_t" } else { "uint64_t" };
    let mut g = PipelineGen {
        pre: Emitter::default(),
        body: Emitter { indent: 2, ..Default::default() },
        post: Emitter { indent: 1, ..Default::default() },
        extra: String::new(),
        params: vec![],
        row: vec![],
        row_types: vec![],
        pending_loads: vec![],
        reloads: vec![],
        pivotable: vec![],
        next_project: 0,
        block_sync: matches!(p.sink, Sink::Materialize { .. } | Sink::HashBuild { .. })
            && !p.ops.iter().any(|op| matches!(op, PipelineOp::LaneRefill { .. })),
        refills: 0,
        refill_bytes: 0,
        open_loops: 0,
        index_vars: vec![("row".into(), row_ty)],
        builds: builds.to_vec(),
        smem_tables: 0,
        replicated: p.replicated.clone(),
        prefetchable: vec![],
        prefetch: vec![],
        narrowed: false,
        prefetch_keys: false,
        source_loaded: vec![],
        source_width: p.source.schema().len(),
        row_ty,
        sink_reach: p
            .ops
            .iter()
            .map(|op| if let PipelineOp::LaneRefill { activity, .. } = op { *activity } else { 1.0 })
            .product(),
    };
    g.pre.indent = 1;
    g.param(Param::RowCount, "const uint64_t");
    let err = g.param(Param::ErrorFlag, "int*");
    scan::declare(&mut g, p);
    let mut refill_done = false;
    // Probes whose key bitmap an earlier probe tested (their lookups cannot fail).
    let mut tested_early: Vec<usize> = vec![];
    for (i, op) in p.ops.iter().enumerate() {
        match op {
            // (Already placed inside the probe before it: between its key bitmap and its lookup.)
            PipelineOp::LaneRefill { .. } if std::mem::take(&mut refill_done) => {}
            PipelineOp::LaneRefill { threshold, activity } => match i.checked_sub(1).map(|j| &p.ops[j]) {
                Some(PipelineOp::HashProbe { build, .. }) if tested_early.contains(build) => {
                    let what = format!("LaneRefill threshold={threshold}/32 (est. lane activity {activity:.3})");
                    g.body.line(format!("// ---- {what}: left out, HashProbe #{build}'s key bitmap was tested before an earlier refill, so no row drops out here ----"));
                }
                _ => {
                    let live = lane_refill::live_columns(&p.ops[i + 1..], &p.sink, g.row.len());
                    lane_refill::consume(&mut g, *threshold, *activity, &live);
                }
            },
            PipelineOp::Filter(plan) => filter::consume(&mut g, plan)?,
            PipelineOp::Project { exprs, .. } => project::consume(&mut g, exprs)?,
            PipelineOp::HashProbe { build, keys, build_schema, multi_match, kind, residual, .. } => {
                // A Lane Refill right after the probe may move in front of its lookup, with
                // the key bitmaps of later probes that most rows reach tested there too.
                let refill = match p.ops.get(i + 1) {
                    Some(PipelineOp::LaneRefill { threshold, activity }) => Some(hash_join::RefillPoint {
                        threshold: *threshold,
                        activity: *activity,
                        live: lane_refill::live_columns(&p.ops[i..], &p.sink, g.row.len()),
                        early: hash_join::early_bitmap_probes(&g, &p.ops[i + 1..]),
                    }),
                    _ => None,
                };
                let early: Vec<usize> =
                    refill.as_ref().map(|r| r.early.iter().map(|(b, _, _)| *b).collect()).unwrap_or_default();
                refill_done = hash_join::probe(
                    &mut g,
                    *build,
                    keys,
                    build_schema,
                    *multi_match,
                    *kind,
                    residual.is_some(),
                    refill,
                )?;
                if refill_done {
                    tested_early.extend(early);
                }
                if let Some(r) = residual {
                    hash_join::residual(&mut g, *build, build_schema, *kind, r)?;
                }
            }
        }
        if !matches!(op, PipelineOp::LaneRefill { .. } | PipelineOp::Project { .. }) {
            g.narrowed = true;
        }
    }
    let init = match &p.sink {
        Sink::Materialize { id, schema } => {
            materialize::consume(&mut g, *id, schema)?;
            None
        }
        Sink::Aggregate { id, keys, states, .. } => {
            match p.replicated.iter().position(|r| r.user == ReplicaUser::Aggregate) {
                Some(r) => Some(aggregate::consume_replicated(&mut g, *id, keys, states, r, &entry)?),
                None => Some(aggregate::consume(&mut g, *id, keys, states, &entry)?),
            }
        }
        Sink::HashBuild { id, keys, schema } => Some(hash_join::build(&mut g, *id, keys, schema, &entry)?),
    };
    while g.open_loops > 0 {
        g.body.close();
        g.open_loops -= 1;
    }
    // (Expressions are only generated into the row loop's body.)
    let in_sets = std::mem::take(&mut g.body.in_sets);
    for (index, set) in in_sets.iter().enumerate() {
        for &part in crate::in_set::parts(&set.ty) {
            g.param(Param::InSet { index, part }, &crate::in_set::param_decl(&set.ty, part));
        }
    }

    let params: Vec<String> = g.params.iter().map(|(_, decl, name)| format!("{decl} {name}")).collect();
    let mut src = String::new();
    src.push_str(PRELUDE);
    src.push_str(&format!("\n// ======== Pipeline {} ========\n", p.id));
    src.push_str(&g.extra);
    src.push_str(&format!(
        "extern \"C\" __global__ void __launch_bounds__({BLOCK_SIZE}) {entry}(\n    {})\n{{\n",
        params.join(",\n    ")
    ));
    src.push_str(&g.pre.code);
    let rt = g.row_ty;
    src.push_str(&format!("    const {rt} stride_ = ({rt})gridDim.x * blockDim.x;\n"));
    if rt != "uint64_t" {
        src.push_str(&format!("    const {rt} nr_ = ({rt})n_rows; // < 2^31 rows: 32-bit row indices\n"));
    } else {
        src.push_str("    const uint64_t nr_ = n_rows;\n");
    }
    if !g.prefetch.is_empty() {
        src.push_str("    // prefetch: the columns every row reads are loaded one iteration early\n");
    }
    for (k, (ptr, ct)) in g.prefetch.iter().enumerate() {
        src.push_str(&format!("    {ct} pf{k}_next_ = ({rt})blockIdx.x * blockDim.x + threadIdx.x < nr_ ? {ptr}[({rt})blockIdx.x * blockDim.x + threadIdx.x] : ({ct})0;\n"));
    }
    let early_exit = matches!(&p.sink, Sink::Aggregate { keys, .. } if !keys.is_empty());
    if early_exit {
        src.push_str("    uint32_t iter_ = 0;\n");
    }
    if g.refills == 0 {
        src.push_str(&format!(
            "    for ({rt} base_ = ({rt})blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {{\n"
        ));
    } else {
        // Lane Refill: once the rows are exhausted, drain iterations (no fresh rows) run
        // until every parked row has gone through the rest of the pipeline.
        let parked: Vec<String> = (0..g.refills).map(|r| format!("lr{r}_n")).collect();
        src.push_str(&format!(
            "    for ({rt} base_ = ({rt})blockIdx.x * blockDim.x; base_ < nr_ || ({}) != 0u; base_ += stride_) {{\n        const bool drain_ = base_ >= nr_;\n",
            parked.join(" | ")
        ));
    }
    if early_exit {
        // A full group table (or any error) ends the run within 8 iterations: the host
        // grows the table and runs again, so an undersized first guess costs little. (Not
        // every iteration: the test is an L2 round trip in front of the row's loads.)
        src.push_str(&format!(
            "        if ((iter_++ & 7u) == 0u && __any_sync(FULL_MASK, *(volatile int*){err} != 0)) break;\n"
        ));
    }
    // (Lane Refill reassigns `row` to a parked row's.)
    src.push_str(&format!(
        "        {}{rt} row = base_ + threadIdx.x;\n        bool active = row < nr_;\n",
        if g.refills == 0 { "const " } else { "" }
    ));
    for (k, (ptr, ct)) in g.prefetch.iter().enumerate() {
        src.push_str(&format!("        const {ct} pf{k}_cur_ = pf{k}_next_;\n        if (row + stride_ < nr_) pf{k}_next_ = {ptr}[row + stride_];\n"));
    }
    src.push_str(&g.body.code);
    src.push_str("    }\n");
    src.push_str(&g.post.code);
    src.push_str("}\n");
    let mut source_columns_read = g.source_loaded;
    source_columns_read.sort_unstable();
    source_columns_read.dedup();
    Ok(KernelSpec {
        source: src,
        entry,
        params: g.params.into_iter().map(|(p, _, _)| p).collect(),
        init,
        source_columns_read,
        in_sets,
    })
}
