//! The physical plan: a list of stages. A pipeline stage is one fused GPU kernel (source ->
//! filters/projections -> sink); a sort stage orders a materialized intermediate. Pipeline
//! breakers (aggregation, materialization for sorting or output) end a pipeline explicitly.
//! Both backends execute exactly this structure.

use crate::band::BandSearch;
use crate::expr::{ConstantNames, Expr};
use crate::filter_plan::FilterPlan;
use crate::logical::JoinKind;
use gpusql_common::{DataType, ReplicaMode, ReplicaRequest, ReplicaSummary, Schema};
use std::fmt;

/// Identifies an intermediate result (materialized rows or an aggregate's groups).
pub type IntermediateId = usize;

#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Columns `columns` (indices into the stored table) of a table; `schema` lists them;
    /// `kept`: the chunks to read where row-group pruning ruled some out (None: all).
    Table { table: String, columns: Vec<usize>, schema: Schema, kept: Option<KeptChunks> },
    /// The rows an earlier stage produced.
    Intermediate { id: IntermediateId, schema: Schema },
}

/// The chunks (row groups) of a table a scan reads, where statistics ruled others out.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptChunks {
    pub chunks: std::sync::Arc<Vec<usize>>,
    /// Chunks of the table.
    pub total: usize,
}

impl Source {
    pub fn schema(&self) -> &Schema {
        match self {
            Source::Table { schema, .. } | Source::Intermediate { schema, .. } => schema,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum PipelineOp {
    /// Rows for which the conjunction is not TRUE leave the pipeline; the plan orders its
    /// terms and places the branches between them (multi-predicate selection).
    Filter(FilterPlan),
    /// Replaces the row by the expressions' values.
    Project { exprs: Vec<Expr>, schema: Schema },
    /// Looks the row's `keys` up in hash table `build` (built by an earlier pipeline's
    /// HashBuild sink) and appends the matching build row's columns; a row with several
    /// matches continues once per match, one without (or with a NULL key) leaves.
    /// Semi / anti probes only keep or drop the row (no columns appended, one output per
    /// row whatever the number of matches); with a `residual` (over the probe row, then
    /// the build row) only matches that satisfy it count.
    HashProbe {
        build: IntermediateId,
        keys: Vec<Expr>,
        build_schema: Schema,
        schema: Schema,
        multi_match: MultiMatch,
        kind: JoinKind,
        residual: Option<Expr>,
        /// A band join (`build` is a Stage::BandTable): the candidate rows are found by
        /// binary search instead of by `keys` (constants).
        band: Option<Box<BandSearch>>,
    },
    /// Lane Refill ([Funke & Teubner 2020] §4): a buffering operator that changes no rows, only
    /// which lane carries them. A warp whose active lanes (plus those it buffered) fall below
    /// `threshold` of 32 parks them in shared memory and starts over with fresh rows; otherwise
    /// its idle lanes take buffered rows, so the operators after it run on (nearly) full warps.
    /// `activity` is the planner's estimate of the fraction of lanes still active here (shown
    /// in EXPLAIN).
    LaneRefill { threshold: u32, activity: f64 },
}

/// How a probe with several matches per row spreads the work over a warp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MultiMatch {
    /// Push-down parallelism ([Funke & Teubner 2020] §3): the warp walks one lane's matches at
    /// a time, 32 matches per step.
    PushDown,
    /// Each lane walks its own matches.
    PerLane,
}

impl PipelineOp {
    /// The row schema after this operator, where it changes it.
    pub fn schema(&self) -> Option<&Schema> {
        match self {
            PipelineOp::Project { schema, .. } | PipelineOp::HashProbe { schema, .. } => Some(schema),
            PipelineOp::Filter(_) | PipelineOp::LaneRefill { .. } => None,
        }
    }
}

/// The per-group accumulators an aggregation keeps. SQL aggregates are lowered onto these
/// (AVG = SUM / COUNT, NULL results from COUNT = 0) by the physical planner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StateFunc {
    Sum,
    Count,
    Min,
    Max,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AggState {
    pub func: StateFunc,
    /// None counts rows (COUNT(*)).
    pub arg: Option<Expr>,
    /// Accumulator type: SUM of integers/decimals is DECIMAL(38, s) (128-bit), COUNT is
    /// BIGINT, MIN/MAX the argument's type, SUM of DOUBLE is DOUBLE.
    pub ty: DataType,
}

impl AggState {
    /// The state as `Display` prints it, the constants of its argument as `names` says.
    pub fn display_with(&self, names: &dyn ConstantNames) -> String {
        match &self.arg {
            Some(a) => format!("{}({})", self.func_name(), a.display_with(names)),
            None => "count(*)".into(),
        }
    }

    fn func_name(&self) -> &'static str {
        match self.func {
            StateFunc::Sum => "sum",
            StateFunc::Count => "count",
            StateFunc::Min => "min",
            StateFunc::Max => "max",
        }
    }
}

impl fmt::Display for AggState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.arg {
            Some(a) => write!(f, "{}({a})", self.func_name()),
            None => write!(f, "count(*)"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Sink {
    /// Writes the surviving rows densely (prefix-sum positions) into intermediate `id`.
    Materialize { id: IntermediateId, schema: Schema },
    /// Inserts the rows into a hash table on `keys` (rows with a NULL key are left out,
    /// they never match); the rows' columns are the payload a probe appends.
    HashBuild { id: IntermediateId, keys: Vec<Expr>, schema: Schema },
    /// Groups rows by `keys` (none: one global group) and folds them into `states`.
    /// Output rows: the key values, then the states. On the GPU the groups of the first
    /// `register_groups` ids accumulate in each thread's registers (`SET register_groups`;
    /// None: as many as the code generator chooses by the states' types).
    Aggregate {
        id: IntermediateId,
        keys: Vec<Expr>,
        states: Vec<AggState>,
        schema: Schema,
        register_groups: Option<u32>,
        /// Without register groups, each GPU lane keeps the first group it meets in its
        /// registers (`SET lane_group`).
        lane_group: bool,
    },
}

impl Sink {
    pub fn id(&self) -> IntermediateId {
        match self {
            Sink::Materialize { id, .. } | Sink::Aggregate { id, .. } | Sink::HashBuild { id, .. } => *id,
        }
    }
    pub fn schema(&self) -> &Schema {
        match self {
            Sink::Materialize { schema, .. } | Sink::Aggregate { schema, .. } | Sink::HashBuild { schema, .. } => {
                schema
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Pipeline {
    pub id: usize,
    pub source: Source,
    pub ops: Vec<PipelineOp>,
    pub sink: Sink,
    /// Probes and aggregations of this pipeline that use a bank-replicated shared-memory
    /// table instead of the global hash table (see `replicated.rs`).
    pub replicated: Vec<ReplicatedTable>,
    /// Source string columns read dictionary-encoded (see `dictionary.rs`).
    pub dictionary_columns: Vec<DictionaryColumn>,
}

/// A string column of the scanned table read as 2-byte codes into a dictionary of its
/// distinct values.
#[derive(Debug, Clone, PartialEq)]
pub struct DictionaryColumn {
    /// The column: an index into the source row.
    pub source_column: usize,
    /// Its distinct values.
    pub values: usize,
}

impl Pipeline {
    /// Every expression the pipeline evaluates, operators first, then the sink's.
    pub fn expressions(&self) -> Vec<&Expr> {
        let mut out = vec![];
        for op in &self.ops {
            match op {
                PipelineOp::Filter(f) => out.extend(f.terms()),
                PipelineOp::Project { exprs, .. } => out.extend(exprs),
                PipelineOp::HashProbe { keys, residual, band, .. } => {
                    out.extend(keys.iter().chain(residual).chain(band.iter().flat_map(|b| b.conditions())))
                }
                PipelineOp::LaneRefill { .. } => {}
            }
        }
        match &self.sink {
            Sink::Materialize { .. } => {}
            Sink::HashBuild { keys, .. } => out.extend(keys),
            Sink::Aggregate { keys, states, .. } => out.extend(keys.iter().chain(states.iter().flat_map(|s| &s.arg))),
        }
        out
    }

    /// The error of a kernel that found `%` or `//` of integers or decimals by zero: it names the
    /// first such `%` of the pipeline (the CPU backend names the one that failed).
    pub fn division_by_zero(&self) -> gpusql_common::Error {
        fn find(e: &Expr) -> Option<&Expr> {
            match e {
                Expr::Binary { op: crate::BinaryOp::Mod | crate::BinaryOp::Div, ty, .. }
                    if *ty != DataType::Float64 =>
                {
                    Some(e)
                }
                _ => e.children().into_iter().find_map(find),
            }
        }
        match self.expressions().into_iter().find_map(find) {
            Some(e) => crate::eval::division_by_zero(e),
            None => gpusql_common::Error::exec("division by zero"),
        }
    }

    /// Whether source column `i` is read dictionary-encoded.
    pub fn dictionary_encoded(&self, i: usize) -> bool {
        self.dictionary_columns.iter().any(|d| d.source_column == i)
    }

    /// The replicated table of probe `build`, if it has one.
    pub fn replicated_probe(&self, build: IntermediateId) -> Option<&ReplicatedTable> {
        self.replicated.iter().find(|r| r.user == ReplicaUser::Probe(build))
    }

    /// The replicated group table of the aggregation sink, if it has one.
    pub fn replicated_aggregate(&self) -> Option<&ReplicatedTable> {
        self.replicated.iter().find(|r| r.user == ReplicaUser::Aggregate)
    }
}

/// What uses a replicated table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaUser {
    /// The probe of hash table `build`: each block's table holds, per slot, the group id
    /// the slot's key finds in the hash table (-1: none), filled before the row loop.
    Probe(IntermediateId),
    /// The grouped aggregation: each block accumulates per slot and merges its slots into
    /// the global groups after the row loop.
    Aggregate,
}

/// A shared-memory table with bank-replicated copies ([Sitaridi 2016] §3.4), indexed by the
/// slot each row of the scanned table was given at load time for `source_column`'s value
/// (the rows' slots are a 16-bit column read instead of the key).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicatedTable {
    pub user: ReplicaUser,
    /// The key: a column of the pipeline's source row.
    pub source_column: usize,
    /// The placement (of the key's stored column) the table uses.
    pub request: ReplicaRequest,
    pub summary: ReplicaSummary,
    /// Bytes of shared memory per slot.
    pub slot_bytes: usize,
}

impl fmt::Display for ReplicatedTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.summary;
        let what = match self.request.mode {
            ReplicaMode::Read => "reads: equal keys share a copy",
            ReplicaMode::Write => "writes: a copy per lane, merged into the global groups per block",
        };
        let kib = (s.slots * self.slot_bytes).div_ceil(1024);
        if self.request.replicate {
            write!(f, "shared memory: bank-replicated table of {} values, {} copies in {} slots ({kib} KiB; rows carry their slot; {what})", s.values, s.copies, s.slots)
        } else {
            write!(f, "shared memory: table of {} values, one copy each, in {} slots ({kib} KiB; rows carry their slot; {what})", s.values, s.slots)
        }
    }
}

impl Pipeline {
    /// Schema of the rows reaching the sink.
    pub fn row_schema(&self) -> &Schema {
        self.ops.iter().rev().find_map(|op| op.schema()).unwrap_or_else(|| self.source.schema())
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SortColumn {
    pub column: usize,
    pub asc: bool,
    pub nulls_first: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stage {
    Pipeline(Pipeline),
    /// Orders intermediate `input` by `keys` into intermediate `output`. With `limit` (a
    /// LIMIT above it: offset + count) only that many first rows are needed: a top-N. With
    /// `segments` k, each row's position among the rows whose first k keys equal its own
    /// is kept beside the order, for a Slice with `position` (`LogicalPlan::Enumerate`).
    Sort {
        input: IntermediateId,
        output: IntermediateId,
        keys: Vec<SortColumn>,
        schema: Schema,
        limit: Option<usize>,
        segments: Option<usize>,
    },
    /// Rows [skip, skip + fetch) of intermediate `input` (in its sort order, if sorted),
    /// columns `columns`, gathered densely into `output` (`schema`): an ORDER BY / LIMIT
    /// subquery that later operators read. With `position`, each row is followed by its
    /// 0-based position among the sliced rows, or the position its Sort's `segments` kept
    /// (BIGINT: `LogicalPlan::Enumerate`).
    Slice {
        input: IntermediateId,
        output: IntermediateId,
        columns: Vec<usize>,
        skip: usize,
        fetch: Option<usize>,
        position: bool,
        schema: Schema,
    },
    /// A band join's table (`crate::band`): the rows of dense intermediate `input`, sorted by
    /// column `key` with no NULL in it, as table `output` that band probes search; with
    /// `max`, the running maximum of that column beside them.
    BandTable {
        input: IntermediateId,
        output: IntermediateId,
        key: usize,
        max: Option<usize>,
        schema: Schema,
    },
    /// UNION ALL: the rows of dense intermediates `inputs` (each of `schema`'s types; a
    /// column may be nullable in some and not in others) one after another into `output`.
    Concat {
        inputs: Vec<IntermediateId>,
        output: IntermediateId,
        schema: Schema,
    },
    /// string_agg: the runs of dense intermediate `input` (in order; a run starts at each
    /// row whose BIGINT column `position` is 0), one row each into `output`: its first
    /// row's `keys` columns, then its `value` strings concatenated with `separator` before
    /// each non-NULL value at a position other than 0 (`LogicalPlan::ConcatRuns`).
    ConcatRuns {
        input: IntermediateId,
        output: IntermediateId,
        keys: Vec<usize>,
        value: usize,
        position: usize,
        separator: String,
        schema: Schema,
    },
    /// Window functions (`crate::window`) over dense intermediate `input`, whose rows are
    /// in the order of `keys`: the PARTITION BY columns, then the ORDER BY columns. A
    /// partition starts where the first `partition` keys change, a peer group where any
    /// key does; a RANGE frame's offsets measure the key after the partition's. Output
    /// `output`, the rows in the same order: the input's `columns`, then one per call.
    Window {
        input: IntermediateId,
        output: IntermediateId,
        keys: Vec<SortColumn>,
        partition: usize,
        calls: Vec<WindowCall>,
        columns: Vec<usize>,
        input_schema: Schema,
        schema: Schema,
    },
    /// Each row of dense intermediate `input` as many times as its column `times` (BIGINT;
    /// NULL or below 1: none) says, columns `columns` of it, into `output` (INTERSECT ALL,
    /// EXCEPT ALL).
    Repeat {
        input: IntermediateId,
        output: IntermediateId,
        times: usize,
        columns: Vec<usize>,
        schema: Schema,
    },
}

impl Stage {
    /// The intermediates this stage reads (a pipeline's scanned one; not the built tables
    /// its probes read).
    pub fn intermediate_inputs(&self) -> Vec<IntermediateId> {
        match self {
            Stage::Pipeline(p) => match &p.source {
                Source::Intermediate { id, .. } => vec![*id],
                _ => vec![],
            },
            Stage::Concat { inputs, .. } => inputs.clone(),
            Stage::Sort { input, .. }
            | Stage::Slice { input, .. }
            | Stage::BandTable { input, .. }
            | Stage::ConcatRuns { input, .. }
            | Stage::Window { input, .. }
            | Stage::Repeat { input, .. } => vec![*input],
        }
    }
}

/// One window function of a `Stage::Window`: its arguments are columns of the stage's input.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowCall {
    pub func: crate::window::WindowFunc,
    pub args: Vec<usize>,
    pub frame: crate::window::Frame,
    pub ty: DataType,
    /// IGNORE NULLS (`WindowExpr::ignore_nulls`).
    pub ignore_nulls: bool,
}

impl fmt::Display for WindowCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let args: Vec<String> = self.args.iter().map(|a| format!("#{a}")).collect();
        let ignore = if self.ignore_nulls { " IGNORE NULLS" } else { "" };
        write!(f, "{}({}{ignore})", self.func.name(), args.join(", "))?;
        if self.func.uses_frame() {
            write!(f, " {}", self.frame)?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PhysicalPlan {
    pub stages: Vec<Stage>,
    /// The intermediate holding the result rows, in order.
    pub result: IntermediateId,
    pub result_schema: Schema,
    /// Columns of `result` returned to the user, and their names.
    pub columns: Vec<usize>,
    pub names: Vec<String>,
    pub skip: usize,
    pub fetch: Option<usize>,
    /// The values of this run of a plan template's parameters (`parameters::instantiate`;
    /// empty where the plan was made for its values).
    pub parameters: crate::parameters::ParamValues,
}

impl PhysicalPlan {
    pub fn pipelines(&self) -> impl Iterator<Item = &Pipeline> {
        self.stages.iter().filter_map(|s| match s {
            Stage::Pipeline(p) => Some(p),
            _ => None,
        })
    }

    /// The executors' contract: a stage other than a pipeline consumes the intermediates
    /// it reads (the GPU frees them), so nothing reads one after that, the result
    /// included. A plan that breaks it is the planner's bug, refused here on both backends
    /// rather than run (where the CPU backend would read rows the GPU had freed).
    pub fn check_consumption(&self) -> gpusql_common::Result<()> {
        let mut consumed = std::collections::HashSet::new();
        for stage in &self.stages {
            for id in stage.intermediate_inputs() {
                if consumed.contains(&id) {
                    return Err(gpusql_common::Error::plan(format!(
                        "intermediate #{id} read after a stage consumed it"
                    )));
                }
                if !matches!(stage, Stage::Pipeline(_)) {
                    consumed.insert(id);
                }
            }
        }
        match consumed.contains(&self.result) {
            true => Err(gpusql_common::Error::plan(format!("result #{} consumed by a stage", self.result))),
            false => Ok(()),
        }
    }
}

fn schema_names(s: &Schema) -> String {
    s.fields.iter().map(|f| format!("{}:{}", f.name, f.ty)).collect::<Vec<_>>().join(", ")
}

impl fmt::Display for Pipeline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Pipeline {} (one kernel)", self.id)?;
        match &self.source {
            Source::Table { table, schema, kept, .. } => {
                writeln!(f, "  Scan {table} [{}]", schema_names(schema))?;
                if let Some(k) = kept {
                    writeln!(
                        f,
                        "    row groups: {} of {} read ({} skipped by min/max statistics)",
                        k.chunks.len(),
                        k.total,
                        k.total - k.chunks.len()
                    )?;
                }
                if !self.dictionary_columns.is_empty() {
                    let cols: Vec<String> = self
                        .dictionary_columns
                        .iter()
                        .map(|d| format!("{} ({} values)", schema.fields[d.source_column].name, d.values))
                        .collect();
                    writeln!(f, "    dictionary-encoded: {}", cols.join(", "))?;
                }
            }
            Source::Intermediate { id, schema } => writeln!(f, "  Scan intermediate #{id} [{}]", schema_names(schema))?,
        }
        for op in &self.ops {
            match op {
                PipelineOp::Filter(p) => writeln!(f, "  Filter {p}")?,
                PipelineOp::HashProbe { build, band: Some(band), kind, residual, build_schema, multi_match, .. } => {
                    let bounds: Vec<String> = band.conditions().map(|c| c.to_string()).collect();
                    let what = match kind {
                        JoinKind::Semi => "keeps rows with a match".to_string(),
                        JoinKind::Anti => "keeps rows without a match".to_string(),
                        JoinKind::Mark => "mark: appends whether the row has a match".to_string(),
                        _ => {
                            let how = if *multi_match == MultiMatch::PerLane { "per lane" } else { "push-down parallelism" };
                            format!("appends [{}], candidates walked {how}", schema_names(build_schema))
                        }
                    };
                    let residual = residual.as_ref().map(|r| format!(" where {r}")).unwrap_or_default();
                    writeln!(f, "  BandProbe #{build} searches [{}]{residual} ({what})", bounds.join(", "))?
                }
                PipelineOp::LaneRefill { threshold, activity } => {
                    writeln!(f, "  LaneRefill threshold={threshold}/32 (est. lane activity {activity:.3}: sparse warps park rows in shared memory, idle lanes refill)")?
                }
                PipelineOp::Project { exprs, .. } => {
                    let e: Vec<String> = exprs.iter().map(|e| e.to_string()).collect();
                    writeln!(f, "  Project {}", e.join(", "))?
                }
                PipelineOp::HashProbe { build, keys, kind: kind @ (JoinKind::Semi | JoinKind::Anti), residual, .. } => {
                    let k: Vec<String> = keys.iter().map(|e| e.to_string()).collect();
                    let what = if *kind == JoinKind::Semi { "keeps rows with a match" } else { "keeps rows without a match" };
                    let residual = residual.as_ref().map(|r| format!(" where {r} (each lane walks its matches)")).unwrap_or_default();
                    writeln!(f, "  HashProbe #{build} keys=[{}]{residual} ({what})", k.join(", "))?
                }
                PipelineOp::HashProbe { build, keys, kind: JoinKind::Mark, residual, .. } => {
                    let k: Vec<String> = keys.iter().map(|e| e.to_string()).collect();
                    let residual = residual.as_ref().map(|r| format!(" where {r} (each lane walks its matches)")).unwrap_or_default();
                    writeln!(f, "  HashProbe #{build} keys=[{}]{residual} (mark: keeps every row, appends whether it has a match)", k.join(", "))?
                }
                PipelineOp::HashProbe { build, keys, build_schema, multi_match, kind, .. } => {
                    let k: Vec<String> = keys.iter().map(|e| e.to_string()).collect();
                    if *kind == JoinKind::Left {
                        writeln!(f, "  (left outer: rows without a match keep NULL build columns)")?;
                    }
                    let how = match multi_match {
                        MultiMatch::PushDown => "push-down parallelism",
                        MultiMatch::PerLane => "per-lane",
                    };
                    writeln!(f, "  HashProbe #{build} keys=[{}] appends [{}] (multi-match: {how})", k.join(", "), schema_names(build_schema))?
                }
            }
            if let PipelineOp::HashProbe { build, .. } = op {
                if let Some(r) = self.replicated_probe(*build) {
                    writeln!(f, "    {r}")?;
                }
            }
        }
        match &self.sink {
            Sink::Materialize { id, .. } => writeln!(f, "  Materialize -> #{id} (prefix-sum write)"),
            Sink::HashBuild { id, keys, .. } => {
                let k: Vec<String> = keys.iter().map(|e| e.to_string()).collect();
                writeln!(f, "  HashBuild -> #{id} keys=[{}] (global hash table)", k.join(", "))
            }
            Sink::Aggregate { id, keys, states, .. } => {
                let k: Vec<String> = keys.iter().map(|e| e.to_string()).collect();
                let s: Vec<String> = states.iter().map(|e| e.to_string()).collect();
                if keys.is_empty() {
                    writeln!(f, "  GlobalAggregate -> #{id} [{}] (block reduction)", s.join(", "))
                } else if let Some(r) = self.replicated_aggregate() {
                    writeln!(
                        f,
                        "  HashAggregate -> #{id} keys=[{}] states=[{}] (global hash table)\n    {r}",
                        k.join(", "),
                        s.join(", ")
                    )
                } else {
                    writeln!(
                        f,
                        "  HashAggregate -> #{id} keys=[{}] states=[{}] (global hash table)",
                        k.join(", "),
                        s.join(", ")
                    )
                }
            }
        }
    }
}

impl fmt::Display for PhysicalPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for s in &self.stages {
            match s {
                Stage::Pipeline(p) => write!(f, "{p}")?,
                Stage::Sort { input, output, keys, limit, segments, .. } => {
                    let k: Vec<String> = keys
                        .iter()
                        .map(|k| {
                            format!(
                                "#{} {}{}",
                                k.column,
                                if k.asc { "ASC" } else { "DESC" },
                                if k.nulls_first { " NULLS FIRST" } else { "" }
                            )
                        })
                        .collect();
                    match limit {
                        Some(n) => writeln!(f, "Sort #{input} -> #{output} by [{}] top {n} (rank sort up to 4096 rows; else bitonic chunks, halved by merging until {n} are left)", k.join(", "))?,
                        None => writeln!(f, "Sort #{input} -> #{output} by [{}] (rank sort up to 4096 rows; else bitonic sort kernels)", k.join(", "))?,
                    }
                    if let Some(k) = segments {
                        writeln!(f, "  (and each row's position among the rows of its first {k} keys)")?;
                    }
                }
                Stage::Slice { input, output, columns, skip, fetch, position, .. } => {
                    let end = fetch.map_or("end".to_string(), |n| (skip + n).to_string());
                    let position = if *position { " and each row's position" } else { "" };
                    writeln!(
                        f,
                        "Slice #{input} -> #{output} rows [{skip}, {end}) columns {columns:?}{position} (gather)"
                    )?
                }
                Stage::BandTable { input, output, key, max, .. } => {
                    let max = max.map(|m| format!(", with the running maximum of #{m}")).unwrap_or_default();
                    writeln!(f, "BandTable #{input} -> #{output} sorted by #{key}{max} (band probes binary-search it)")?
                }
                Stage::Concat { inputs, output, .. } => {
                    let i: Vec<String> = inputs.iter().map(|i| format!("#{i}")).collect();
                    writeln!(f, "Concat {} -> #{output} (UNION ALL: copies)", i.join(", "))?
                }
                Stage::Repeat { input, output, times, columns, .. } => writeln!(
                    f,
                    "Repeat #{input} -> #{output} each row #{times} times, columns {columns:?} (prefix sum, gather)"
                )?,
                Stage::Window { input, output, keys, partition, calls, .. } => {
                    let k: Vec<String> = keys.iter().map(|k| format!("#{}", k.column)).collect();
                    let c: Vec<String> = calls.iter().map(|c| c.to_string()).collect();
                    writeln!(
                        f,
                        "Window #{input} -> #{output} partitions [{}] ordered by [{}]: {} (partition and peer bounds, per-row frames)",
                        k[..*partition].join(", "),
                        k[*partition..].join(", "),
                        c.join(", ")
                    )?
                }
                Stage::ConcatRuns { input, output, keys, value, position, separator, .. } => writeln!(
                    f,
                    "ConcatRuns #{input} -> #{output} keys {keys:?}, #{value} joined by '{}' in runs restarting where #{position} is 0 (prefix sums of lengths, byte copies)",
                    separator.replace('\'', "''")
                )?,
            }
        }
        let names: Vec<String> = self.columns.iter().zip(&self.names).map(|(c, n)| format!("#{c} AS {n}")).collect();
        write!(f, "Result #{} [{}]", self.result, names.join(", "))?;
        if self.skip > 0 || self.fetch.is_some() {
            write!(f, " offset={} limit={}", self.skip, self.fetch.map_or("all".to_string(), |n| n.to_string()))?;
        }
        writeln!(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(stages: Vec<Stage>, result: IntermediateId) -> PhysicalPlan {
        PhysicalPlan {
            stages,
            result,
            result_schema: Schema::new(vec![]),
            columns: vec![],
            names: vec![],
            skip: 0,
            fetch: None,
            parameters: Default::default(),
        }
    }

    fn concat(inputs: Vec<IntermediateId>, output: IntermediateId) -> Stage {
        Stage::Concat { inputs, output, schema: Schema::new(vec![]) }
    }

    #[test]
    fn a_consumed_intermediate_is_read_by_nothing_after() {
        assert!(plan(vec![concat(vec![0, 1], 2)], 2).check_consumption().is_ok());
        // The same arm twice, an arm read again later, the result consumed.
        assert!(plan(vec![concat(vec![0, 0], 2)], 2).check_consumption().is_err());
        assert!(plan(vec![concat(vec![0, 1], 2), concat(vec![0, 3], 4)], 4).check_consumption().is_err());
        assert!(plan(vec![concat(vec![0, 1], 2)], 0).check_consumption().is_err());
    }
}
