//! The kernel being generated for one pipeline. Operators (`ops/`) write their code into
//! its sections and change its row through methods: the source declares the row's
//! columns, operators load the columns they use (`load_columns`), define new ones
//! (`push_loaded_column`, `push_computed_column`, `replace_row`) and open blocks or
//! expansion loops; `finish` wraps the row loop around their code.

use crate::emit::Emitter;
use crate::expr::gen;
use crate::literals::Literals;
use crate::spec::{BuildHint, InitKernel, KernelSpec, Param, BLOCK_SIZE};
use crate::value::Value;
use gpusql_common::{DataType, Result};
use gpusql_plan::filter_plan::FilterPlan;
use gpusql_plan::{AggState, Expr, Pipeline, PipelineOp, ReplicaUser, ReplicatedTable, Sink};

/// At most this many columns are prefetched (a register each).
const MAX_PREFETCH: usize = 4;

/// Row indices are 32-bit for sources of fewer rows than this (the grid-stride loop's
/// `row + stride` stays far below 2^32).
pub const NARROW_ROWS_BELOW: u64 = 1 << 31;

/// Indentation of the row loop's body (inside the kernel and the loop).
const LOOP_BODY_INDENT: usize = 2;

pub struct KernelBuilder {
    code: Sections,
    /// Kernel parameters in order: what the executor passes, the C declaration, the name.
    params: Vec<(Param, String, String)>,
    row: RowState,
    looping: LoopState,
    tables: Tables,
}

/// The kernel's text, by where it goes.
struct Sections {
    /// Code before the row loop (accumulators, shared memory).
    pre: Emitter,
    /// The row loop's body.
    body: Emitter,
    /// Code after the row loop (block reductions, flushes).
    post: Emitter,
    /// Extra device functions or kernels of this module.
    extra: String,
}

/// The current row: per column its value, its type and how it is loaded.
struct RowState {
    values: Vec<Value>,
    types: Vec<DataType>,
    /// Load statements of columns not yet loaded (None: loaded or computed).
    pending_loads: Vec<Option<String>>,
    /// For columns loaded from memory (source or build payload): the load statement and
    /// the variables it sets, kept after the load so Lane Refill can load them again for a
    /// refilled lane instead of parking them (None: computed values).
    reloads: Vec<Option<(String, Value)>>,
    /// Row columns that are a table's string column as stored (offsets + bytes), so a
    /// LIKE over them may read its Pivot-4 copy: the source column index.
    pivotable: Vec<Option<usize>>,
    /// Source columns whose plain load `var = ptr[row];` may be prefetched: (var, ptr, C type).
    prefetchable: Vec<Option<(String, String, &'static str)>>,
    /// Source string columns read dictionary-encoded: the row's code (a C expression) and
    /// the dictionary's size.
    dictionary_codes: Vec<Option<(String, usize)>>,
    /// How many row columns are still the source's (until a projection replaces the row),
    /// and the source columns loaded so far.
    source_width: usize,
    source_loaded: Vec<usize>,
    /// Projections emitted so far (their variables are numbered by it).
    projections: usize,
}

/// A column of a projection's row (`replace_row`).
pub struct ProjectedColumn {
    pub value: Value,
    pub ty: DataType,
    /// The code of the dictionary-encoded column it copies (`dictionary_code`), if any.
    pub dictionary_code: Option<(String, usize)>,
}

/// The row loop: the width of row indices, what its body has opened, what it prefetches.
struct LoopState {
    /// C type of row indices (`row`, the loop's base and stride): `uint32_t` where the
    /// source has fewer than 2^31 rows (index math and the parked rows of a Lane Refill
    /// take half the instructions and bytes), else `uint64_t`.
    row_ty: &'static str,
    /// The sink synchronizes the block (__syncthreads), so loops around it must be
    /// block-uniform. Never with Lane Refill, whose warps go their own ways.
    block_sync: bool,
    /// Expansion loops of multi-match probes still open (closed after the sink).
    open_loops: usize,
    /// Index variables pending loads read (`row`, probe positions): a push-down loop
    /// broadcasts them from the leader lane.
    index_vars: Vec<(String, &'static str)>,
    /// Some operator has dropped rows (`active` is no longer just "row < n_rows").
    narrowed: bool,
    /// Columns whose values for the next loop iteration are loaded one iteration early
    /// (pointer, C type): the first column every row reads, and the keys of a probe's
    /// key-bitmap tests before any operator has dropped a row (`prefetch_keys`), up to
    /// `MAX_PREFETCH`. A thread then has the next row's loads in flight while it works on
    /// this one.
    prefetch: Vec<(String, &'static str)>,
    /// Loading the keys of key-bitmap tests that every row takes (set by the probe while it
    /// loads them, and only while no row has dropped out): they may be prefetched too.
    /// (Not a filter's later columns: its first term drops rows before they load.)
    prefetch_keys: bool,
    /// Lane Refill points emitted so far (each has a buffer and a parked-row count), and
    /// the shared memory their buffers take.
    refills: usize,
    refill_bytes: usize,
    /// The planner's estimate of the fraction of source rows that reach the sink: the
    /// product of the Lane Refills' lane activity estimates (1 without refills).
    sink_reach: f64,
}

/// The tables the pipeline reads, and the shared memory they take.
struct Tables {
    /// What is known about the finished hash tables this pipeline probes.
    builds: Vec<BuildHint>,
    /// The pipeline's bank-replicated shared-memory tables (the planner's choice).
    replicated: Vec<ReplicatedTable>,
    /// Shared memory taken by probe tables so far.
    smem_tables: usize,
}

impl KernelBuilder {
    /// An empty kernel for pipeline `p` over a source of `rows` rows (which decides the
    /// width of row indices); `builds` describes the hash tables it probes.
    pub fn new(p: &Pipeline, builds: &[BuildHint], rows: u64) -> KernelBuilder {
        let row_ty = if rows < NARROW_ROWS_BELOW { "uint32_t" } else { "uint64_t" };
        let refill = |op: &PipelineOp| matches!(op, PipelineOp::LaneRefill { .. });
        KernelBuilder {
            code: Sections {
                pre: Emitter { indent: 1, ..Default::default() },
                body: Emitter { indent: LOOP_BODY_INDENT, literals: Some(Literals::default()), ..Default::default() },
                post: Emitter { indent: 1, ..Default::default() },
                extra: String::new(),
            },
            params: vec![],
            row: RowState {
                values: vec![],
                types: vec![],
                pending_loads: vec![],
                reloads: vec![],
                pivotable: vec![],
                prefetchable: vec![],
                dictionary_codes: vec![],
                source_width: p.source.schema().len(),
                source_loaded: vec![],
                projections: 0,
            },
            looping: LoopState {
                row_ty,
                block_sync: matches!(p.sink, Sink::Materialize { .. } | Sink::HashBuild { .. })
                    && !p.ops.iter().any(refill),
                open_loops: 0,
                index_vars: vec![("row".into(), row_ty)],
                narrowed: false,
                prefetch: vec![],
                prefetch_keys: false,
                refills: 0,
                refill_bytes: 0,
                sink_reach: p
                    .ops
                    .iter()
                    .map(|op| if let PipelineOp::LaneRefill { activity, .. } = op { *activity } else { 1.0 })
                    .product(),
            },
            tables: Tables { builds: builds.to_vec(), replicated: p.replicated.clone(), smem_tables: 0 },
        }
    }

    // ---- sections ----

    /// Code before the row loop.
    pub fn pre(&mut self) -> &mut Emitter {
        &mut self.code.pre
    }
    /// The row loop's body, where operators consume the row.
    pub fn body(&mut self) -> &mut Emitter {
        &mut self.code.body
    }
    /// Code after the row loop.
    pub fn post(&mut self) -> &mut Emitter {
        &mut self.code.post
    }
    /// Adds device code (a helper or another kernel) in front of the pipeline kernel.
    pub fn add_device_code(&mut self, code: &str) {
        self.code.extra.push_str(code);
    }

    /// Declares (once) a kernel parameter and returns its C name.
    pub fn param(&mut self, p: Param, c_decl: &str) -> String {
        if let Some((_, _, name)) = self.params.iter().find(|(q, _, _)| *q == p) {
            return name.clone();
        }
        let name = p.c_name();
        self.params.push((p, c_decl.to_string(), name.clone()));
        name
    }

    // ---- the row ----

    pub fn row(&self) -> &[Value] {
        &self.row.values
    }
    pub fn width(&self) -> usize {
        self.row.values.len()
    }
    pub fn row_type(&self, c: usize) -> DataType {
        self.row.types[c]
    }
    /// Row columns at or above this are not the scanned table's.
    pub fn source_width(&self) -> usize {
        self.row.source_width
    }
    /// Whether row column `c` is still to be loaded (by its first reader).
    pub fn is_pending(&self, c: usize) -> bool {
        self.row.pending_loads.get(c).is_some_and(|l| l.is_some())
    }
    /// The load of row column `c` and the variables it sets, for a column loaded from
    /// memory (None: a computed value).
    pub fn reload(&self, c: usize) -> Option<(String, Value)> {
        self.row.reloads.get(c).cloned().flatten()
    }
    /// Row column `c` is loaded again by its next reader (into its original variables)
    /// instead of travelling with the row.
    pub fn defer_load(&mut self, c: usize) {
        if let Some((load, original)) = self.reload(c) {
            self.row.values[c] = original;
            self.row.pending_loads[c] = Some(load);
        }
    }
    /// Row column `c` is now in other variables.
    pub fn rename(&mut self, c: usize, value: Value) {
        self.row.values[c] = value;
    }
    /// The source column whose Pivot-4 copy holds row column `c`, if any.
    pub fn pivot_source(&self, c: usize) -> Option<usize> {
        self.row.pivotable.get(c).copied().flatten()
    }
    /// The number of the next projection (its variables are `p<n>_<i>`).
    pub fn next_projection(&mut self) -> usize {
        self.row.projections += 1;
        self.row.projections - 1
    }

    /// Appends a column loaded from memory by `load` (deferred until its first reader),
    /// keeping the per-column vectors in step. `pivot`: the source column whose Pivot-4
    /// copy a LIKE may read; `prefetch`: its plain load (var, pointer, C type).
    pub fn push_loaded_column(
        &mut self,
        value: Value,
        ty: DataType,
        load: String,
        pivot: Option<usize>,
        prefetch: Option<(String, String, &'static str)>,
    ) {
        let r = &mut self.row;
        r.reloads.push(Some((load.clone(), value.clone())));
        r.pending_loads.push(Some(load));
        r.pivotable.push(pivot);
        r.prefetchable.push(prefetch);
        r.dictionary_codes.push(None);
        r.values.push(value);
        r.types.push(ty);
    }

    /// The last column pushed is a dictionary-encoded string column: `code` is its code
    /// for the row (a C expression), `values` the dictionary's size.
    pub fn set_dictionary_code(&mut self, code: String, values: usize) {
        if let Some(last) = self.row.dictionary_codes.last_mut() {
            *last = Some((code, values));
        }
    }

    /// The dictionary code of row column `c` (C expression) and the dictionary's size,
    /// where `c` is a dictionary-encoded source column (or a projection's copy of one) and
    /// `row` still indexes its codes (no Lane Refill has moved rows between lanes).
    pub fn dictionary_code(&self, c: usize) -> Option<(String, usize)> {
        if self.looping.refills > 0 {
            return None;
        }
        self.row.dictionary_codes.get(c).cloned().flatten()
    }

    /// Appends a value computed already (a mark join's column): nothing to load.
    pub fn push_computed_column(&mut self, value: Value, ty: DataType) {
        let r = &mut self.row;
        r.reloads.push(None);
        r.pending_loads.push(None);
        r.pivotable.push(None);
        r.prefetchable.push(None);
        r.dictionary_codes.push(None);
        r.values.push(value);
        r.types.push(ty);
    }

    /// Replaces the row by a projection's columns (computed values): nothing left to load.
    pub fn replace_row(&mut self, columns: Vec<ProjectedColumn>) {
        let n = columns.len();
        let r = &mut self.row;
        r.values = columns.iter().map(|c| c.value.clone()).collect();
        r.types = columns.iter().map(|c| c.ty).collect();
        r.pending_loads = vec![None; n];
        r.reloads = vec![None; n];
        r.pivotable = vec![None; n];
        r.prefetchable = vec![None; n];
        r.dictionary_codes = columns.into_iter().map(|c| c.dictionary_code).collect();
        r.source_width = 0;
    }

    /// The load statement of row column `c` if it is not loaded yet (the caller emits it).
    pub fn take_load(&mut self, c: usize) -> Option<String> {
        let load = self.row.pending_loads.get_mut(c).and_then(|l| l.take())?;
        if c < self.row.source_width {
            self.row.source_loaded.push(c);
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
            let Some(load) = self.take_load(c) else { continue };
            // The first column loaded in an operator's block at the top level of the row
            // loop is read for every row, and so are those loaded before any row dropped
            // out: take them from the prefetch registers.
            // (Not after a Lane Refill: a refilled lane's row is not the prefetched one.)
            let top_level = self.block_depth() == 1 && self.looping.open_loops == 0 && self.looping.refills == 0;
            let l = &self.looping;
            let k = l.prefetch.len();
            match self.row.prefetchable.get(c).cloned().flatten() {
                Some((var, ptr, ct))
                    if top_level && (k == 0 || (l.prefetch_keys && !l.narrowed && k < MAX_PREFETCH)) =>
                {
                    self.code.body.line(format!("{var} = pf{k}_cur_;"));
                    self.looping.prefetch.push((ptr, ct));
                }
                _ => self.code.body.line(load),
            }
        }
    }

    /// Emits `e` over the current row; returns its value.
    pub fn eval(&mut self, e: &Expr) -> Result<Value> {
        gen(e, &self.row.values, &mut self.code.body)
    }

    // ---- operator comments ----
    // The comment heading an operator's code shows its expressions with their constants
    // named by the kernel parameters that carry them (`lit<k>`, `inset<k>`), never with
    // their values: the source must not depend on them (see literals.rs).

    fn constants(&mut self, exprs: &[&Expr]) -> &Literals {
        let literals = self.code.body.literals.get_or_insert_with(Literals::default);
        for e in exprs {
            literals.name_constants(e);
        }
        literals
    }
    /// `e` for a comment.
    pub fn show(&mut self, e: &Expr) -> String {
        e.display_with(self.constants(&[e])).to_string()
    }
    /// A filter plan for a comment.
    pub fn show_filter(&mut self, plan: &FilterPlan) -> String {
        let terms: Vec<&Expr> = plan.terms().collect();
        plan.display_with(self.constants(&terms)).to_string()
    }
    /// An aggregate state for a comment.
    pub fn show_state(&mut self, state: &AggState) -> String {
        let args: Vec<&Expr> = state.arg.iter().collect();
        state.display_with(self.constants(&args))
    }

    // ---- the row loop ----

    /// Whether the sink synchronizes the whole block (loops around it must be uniform).
    pub fn block_sync(&self) -> bool {
        self.looping.block_sync
    }
    /// Blocks the operators have opened inside the row loop's body.
    fn block_depth(&self) -> usize {
        self.code.body.indent - LOOP_BODY_INDENT
    }
    /// Whether code goes to the top level of the row loop: no block and no expansion loop
    /// around it (where a Lane Refill may `continue` and a key bitmap may be tested first).
    pub fn at_loop_top(&self) -> bool {
        self.block_depth() == 0 && self.looping.open_loops == 0
    }
    /// Opens a multi-match probe's expansion loop (closed after the sink).
    pub fn open_expansion_loop(&mut self, head: String) {
        self.code.body.open(head);
        self.looping.open_loops += 1;
    }
    /// The index variables pending loads read, with their C types.
    pub fn index_vars(&self) -> Vec<(String, &'static str)> {
        self.looping.index_vars.clone()
    }
    pub fn push_index_var(&mut self, name: String, c_ty: &'static str) {
        self.looping.index_vars.push((name, c_ty));
    }
    /// Some operator has dropped rows.
    pub fn mark_narrowed(&mut self) {
        self.looping.narrowed = true;
    }
    /// While set, the loads `load_columns` emits are keys every row loads (prefetchable).
    pub fn set_prefetch_keys(&mut self, on: bool) {
        self.looping.prefetch_keys = on;
    }
    /// Shared memory the Lane Refill buffers take so far.
    pub fn refill_bytes(&self) -> usize {
        self.looping.refill_bytes
    }
    /// Registers a Lane Refill point whose buffers take `bytes`; returns its name (`lr<n>`).
    pub fn add_refill(&mut self, bytes: usize) -> String {
        self.looping.refill_bytes += bytes;
        self.looping.refills += 1;
        format!("lr{}", self.looping.refills - 1)
    }
    pub fn sink_reach(&self) -> f64 {
        self.looping.sink_reach
    }

    // ---- tables ----

    /// What is known about finished hash table `b`.
    pub fn build_hint(&self, b: usize) -> Option<BuildHint> {
        self.tables.builds.iter().find(|h| h.id == b).copied()
    }
    /// Table `b`'s key bitmap has been tested (its probe need not test it again).
    pub fn forget_bitmap(&mut self, b: usize) {
        if let Some(h) = self.tables.builds.iter_mut().find(|h| h.id == b) {
            h.bitmap = None;
        }
    }
    /// The pipeline's replicated table for `user`, by index.
    pub fn replica_of(&self, user: ReplicaUser) -> Option<usize> {
        self.tables.replicated.iter().position(|r| r.user == user)
    }
    pub fn replicated(&self, r: usize) -> &ReplicatedTable {
        &self.tables.replicated[r]
    }
    pub fn has_replicated_tables(&self) -> bool {
        !self.tables.replicated.is_empty()
    }
    /// Shared memory probe tables take so far; `claim_smem_table` adds one.
    pub fn smem_tables(&self) -> usize {
        self.tables.smem_tables
    }
    pub fn claim_smem_table(&mut self, bytes: usize) {
        self.tables.smem_tables += bytes;
    }

    // ---- the kernel ----

    /// Closes the expansion loops, declares the parameters of the constants the code reads
    /// (`literals.rs`) and of the literal sets it searches, and wraps the kernel around the
    /// code: `entry`'s parameters, the locals assembling constants passed in parts, the
    /// code before the loop, the grid-stride row loop (with prefetches, the drain
    /// iterations of Lane Refill, the early exit of a grouped aggregation) and the code
    /// after it.
    pub fn finish(mut self, p: &Pipeline, entry: String, init: Option<InitKernel>) -> KernelSpec {
        while self.looping.open_loops > 0 {
            self.code.body.close();
            self.looping.open_loops -= 1;
        }
        // (Expressions are only generated into the row loop's body.)
        let uses_arena = self.code.body.uses_arena;
        if uses_arena {
            self.param(Param::Arena, "uint8_t*");
            self.param(Param::ArenaCapacity, "const uint64_t");
            self.param(Param::ArenaUsed, "unsigned long long*");
        }
        let constants = self.code.body.literals.take().unwrap_or_default();
        for (index, part, decl) in constants.params() {
            self.param(Param::Literal { index, part }, &decl);
        }
        let locals = constants.locals();
        let (literals, in_sets) = constants.into_list();
        for (index, set) in in_sets.iter().enumerate() {
            for &part in crate::in_set::parts(&set.ty) {
                self.param(Param::InSet { index, part }, &crate::in_set::param_decl(&set.ty, part));
            }
        }
        let mut src = format!("\n// ======== Pipeline {} ========\n", p.id);
        src.push_str(&self.code.extra);
        let params: Vec<String> = self.params.iter().map(|(_, decl, name)| format!("{decl} {name}")).collect();
        src.push_str(&format!(
            "extern \"C\" __global__ void __launch_bounds__({BLOCK_SIZE}) {entry}(\n    {})\n{{\n",
            params.join(",\n    ")
        ));
        if !locals.is_empty() {
            src.push_str("    // the query's constants passed in parts (kernel parameters: codegen literals.rs)\n");
            for l in locals {
                src.push_str(&format!("    {l}\n"));
            }
        }
        if uses_arena {
            src.push_str(&format!(
                "    // where this run's new strings go (strings.cu)\n    const Arena {} = {{{}, {}, {}, {}}};\n",
                crate::strings::ARENA,
                Param::Arena.c_name(),
                Param::ArenaUsed.c_name(),
                Param::ArenaCapacity.c_name(),
                Param::ErrorFlag.c_name()
            ));
        }
        src.push_str(&self.code.pre.code);
        let early_exit = matches!(&p.sink, Sink::Aggregate { keys, .. } if !keys.is_empty());
        self.row_loop(&mut src, early_exit);
        src.push_str(&self.code.body.code);
        src.push_str("    }\n");
        src.push_str(&self.code.post.code);
        src.push_str("}\n");
        let mut source_columns_read = self.row.source_loaded;
        source_columns_read.sort_unstable();
        source_columns_read.dedup();
        KernelSpec {
            source: crate::device_constants::with_prelude(&src),
            entry,
            params: self.params.into_iter().map(|(p, _, _)| p).collect(),
            init,
            source_columns_read,
            in_sets,
            literals,
        }
    }

    /// The row loop's head, up to where the operators' code starts.
    fn row_loop(&self, src: &mut String, early_exit: bool) {
        let rt = self.looping.row_ty;
        src.push_str(&format!("    const {rt} stride_ = ({rt})gridDim.x * blockDim.x;\n"));
        if rt != "uint64_t" {
            src.push_str(&format!("    const {rt} nr_ = ({rt})n_rows; // < 2^31 rows: 32-bit row indices\n"));
        } else {
            src.push_str("    const uint64_t nr_ = n_rows;\n");
        }
        let prefetch = &self.looping.prefetch;
        if !prefetch.is_empty() {
            src.push_str("    // prefetch: the columns every row reads are loaded one iteration early\n");
        }
        for (k, (ptr, ct)) in prefetch.iter().enumerate() {
            let zero = crate::types::c_zero(ct);
            src.push_str(&format!("    {ct} pf{k}_next_ = ({rt})blockIdx.x * blockDim.x + threadIdx.x < nr_ ? {ptr}[({rt})blockIdx.x * blockDim.x + threadIdx.x] : {zero};\n"));
        }
        if early_exit {
            src.push_str("    uint32_t iter_ = 0;\n");
        }
        let refills = self.looping.refills;
        if refills == 0 {
            src.push_str(&format!(
                "    for ({rt} base_ = ({rt})blockIdx.x * blockDim.x; base_ < nr_; base_ += stride_) {{\n"
            ));
        } else {
            // Lane Refill: once the rows are exhausted, drain iterations (no fresh rows) run
            // until every parked row has gone through the rest of the pipeline.
            let parked: Vec<String> = (0..refills).map(|r| format!("lr{r}_n")).collect();
            src.push_str(&format!(
                "    for ({rt} base_ = ({rt})blockIdx.x * blockDim.x; base_ < nr_ || ({}) != 0u; base_ += stride_) {{\n        const bool drain_ = base_ >= nr_;\n",
                parked.join(" | ")
            ));
        }
        if early_exit {
            // A full group table (or any error) ends the run within 8 iterations: the host
            // grows the table and runs again, so an undersized first guess costs little. (Not
            // every iteration: the test is an L2 round trip in front of the row's loads.)
            let err = Param::ErrorFlag.c_name();
            src.push_str(&format!(
                "        if ((iter_++ & 7u) == 0u && __any_sync(FULL_MASK, *(volatile int*){err} != 0)) break;\n"
            ));
        }
        // (Lane Refill reassigns `row` to a parked row's.)
        src.push_str(&format!(
            "        {}{rt} row = base_ + threadIdx.x;\n        bool active = row < nr_;\n",
            if refills == 0 { "const " } else { "" }
        ));
        for (k, (ptr, ct)) in prefetch.iter().enumerate() {
            src.push_str(&format!("        const {ct} pf{k}_cur_ = pf{k}_next_;\n        if (row + stride_ < nr_) pf{k}_next_ = {ptr}[row + stride_];\n"));
        }
    }
}
