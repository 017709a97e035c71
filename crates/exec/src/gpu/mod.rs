//! GPU backend: generates one kernel per pipeline, compiles it with NVRTC (cached), binds
//! its parameters to GPU-resident columns and sink buffers, launches it and times it with
//! CUDA events. Sort stages rank small inputs and run bitonic sort kernels on larger ones;
//! results are gathered on the GPU and downloaded into Arrow arrays.

mod buffers;
pub mod device_store;
mod graph;
mod join;
mod plan_memo;
mod replay;
mod result;
mod scan;
mod set_ops;
mod sort;
mod upload;

use crate::gpu::device_store::{cuda_error, UploadStats};
use crate::stats::{ExecStats, HostSteps, KernelStat};
use buffers::{Arg, BuiltTable, Column, Counted, Counter, Intermediate};
use device_store::{DeviceReplica, DeviceStore};
use gpusql_codegen::in_set::{self, InSetPart};
use gpusql_codegen::literals::{KernelLiteral, LiteralArg, LiteralData};
use gpusql_codegen::{
    code_type, generate_pipeline, BuildHint, BuildPart, KernelError, KernelSpec, Param, Part, ReplicaPart, BLOCK_SIZE,
};
use gpusql_common::{DataType, Error, Result};
use gpusql_cuda::{
    cudarc::driver::DevicePtr, CacheHit, CudaFunction, CudaSlice, GpuDevice, LaunchConfig, Priority, PushKernelArg,
    Tier,
};
use gpusql_plan::parameters::ParamValues;
use gpusql_plan::{JoinKind, PhysicalPlan, Pipeline, PipelineOp, SessionConfig, Sink, Source, Stage};
use gpusql_storage::host::HostTable;
use gpusql_storage::TableStore;
use replay::ReadBacks;
use std::collections::HashMap;
use std::sync::Arc;

pub use buffers::value_width;
pub use plan_memo::PlanMemo;

/// Groups a hash aggregation first makes room for; it grows 16x when full.
const INITIAL_GROUPS: usize = 1 << 14;
/// Blocks per SM for grid-stride kernels at most (8 x 256 threads = full occupancy).
const BLOCKS_PER_SM: u32 = 8;

pub struct GpuExecutor {
    pub dev: Arc<GpuDevice>,
    pub store: DeviceStore,
    /// The session's settings this executor reads (key bitmaps, string layouts, the
    /// memory pool, profiling, ...): the engine keeps it equal to its own.
    pub config: SessionConfig,
    /// The engine's cancel flag, checked before each stage (a running kernel finishes).
    pub cancel: gpusql_common::CancelToken,
    /// Kernels of the helper module by name (see `util`).
    util_functions: std::sync::Mutex<UtilFunctions>,
    /// The uploaded constant buffers of kernels run (literals, IN lists), by content (see
    /// `constant_buffer`; emptied at the start of a query once it holds
    /// `CONSTANT_BUFFERS` of them).
    constant_buffers: std::sync::Mutex<HashMap<Vec<u8>, Arc<CudaSlice<u8>>>>,
    /// While this executor captures a run as a CUDA graph: what the graph uses that must
    /// outlive the run (`graph::Held`).
    held: std::sync::Mutex<Option<graph::Held>>,
    /// Rows (or groups) each pipeline's sink held when it last ran, by kernel and source
    /// rows (see `SinkSizes`).
    sink_sizes: std::sync::Mutex<SinkSizes>,
}

/// Constant buffers kept at most between queries.
const CONSTANT_BUFFERS: usize = 4096;

/// The helper module's kernels looked up so far, and the tier they are of.
struct UtilFunctions {
    tier: Tier,
    functions: HashMap<String, CudaFunction>,
}

pub(crate) fn ptr<T>(s: &CudaSlice<T>, dev: &GpuDevice) -> u64 {
    let (p, _sync) = s.device_ptr(dev.stream());
    p
}

fn cache_name(h: CacheHit) -> String {
    match h {
        CacheHit::Memory => "memory",
        CacheHit::Disk => "disk",
        CacheHit::Miss => "miss",
    }
    .into()
}

impl GpuExecutor {
    pub fn new(dev: Arc<GpuDevice>, config: SessionConfig) -> Self {
        let util_functions = UtilFunctions { tier: Tier::Quick, functions: HashMap::new() };
        GpuExecutor {
            dev,
            store: DeviceStore::default(),
            config,
            cancel: Default::default(),
            util_functions: std::sync::Mutex::new(util_functions),
            constant_buffers: Default::default(),
            held: Default::default(),
            sink_sizes: Default::default(),
        }
    }

    pub(crate) fn load(&self, source: &str, entry: &str, tier: Tier, stat: &mut KernelStat) -> Result<CudaFunction> {
        if let Some(dir) = &self.config.dump_kernels.path() {
            // The source as run (`\cuda` shows plan-time variants: the executed one also
            // depends on what the builds found, e.g. unique keys and key bitmaps).
            let path = dir.join(format!("{entry}.cu"));
            if let Err(e) = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&path, source)) {
                tracing::warn!(path = %path.display(), error = %e, "dump_kernels: cannot write the kernel");
            }
        }
        self.hold(|h| h.loading = true);
        let (f, cs) = self.dev.load_kernel_tier(source, entry, tier).map_err(cuda_error)?;
        stat.compile_ms += cs.compile_ms + cs.load_ms;
        if stat.cache.is_empty() || cs.cache_hit == CacheHit::Miss {
            stat.cache = cache_name(cs.cache_hit);
        }
        Ok(f)
    }

    /// A kernel of the helper module (`util_module`: scans, gathers, hash-table
    /// finishing). Looked up by name once: a hash build launches about ten of them, and
    /// finding the module by its 30 KB source each time cost microseconds per launch.
    /// (Its quick build serves until the full one is ready: `refresh_util`.)
    pub(crate) fn util(&self, entry: &str, stat: &mut KernelStat) -> Result<CudaFunction> {
        if let Some(f) = self.util_functions.lock().unwrap_or_else(|e| e.into_inner()).functions.get(entry) {
            return Ok(f.clone());
        }
        let tier = self.util_functions.lock().unwrap_or_else(|e| e.into_inner()).tier;
        let f = self.load(gpusql_codegen::sort::util_module(), entry, tier, stat)?;
        self.util_functions.lock().unwrap_or_else(|e| e.into_inner()).functions.insert(entry.to_string(), f.clone());
        Ok(f)
    }

    /// Starts compiling the helper module, which every query uses, while the session
    /// loads its data: quickly optimized first, then fully in the background.
    pub fn compile_util_ahead(&self) {
        if self.config.compile_ahead {
            let util = gpusql_codegen::sort::util_module();
            self.dev.compile_ahead(util.to_string(), Tier::Quick, Priority::Now);
            self.dev.compile_ahead(util.to_string(), Tier::Full, Priority::Later);
        }
    }

    /// Whether the helper module's kernels are its full build.
    pub(crate) fn util_is_full(&self) -> bool {
        self.util_functions.lock().unwrap_or_else(|e| e.into_inner()).tier == Tier::Full
    }

    /// Switches to the helper module's full build once it is ready (checked once a query).
    fn refresh_util(&self) {
        let mut u = self.util_functions.lock().unwrap_or_else(|e| e.into_inner());
        let full_ready = || self.dev.is_ready(gpusql_codegen::sort::util_module(), Tier::Full);
        if u.tier == Tier::Full {
            return;
        }
        if !self.config.compile_ahead || full_ready() {
            *u = UtilFunctions { tier: Tier::Full, functions: HashMap::new() };
        }
    }

    /// Sort kernel `entry` of `spec` (one of `memo`'s): the fully optimized one kept by
    /// the memo, else loaded at the tier `tier_for` gives.
    pub(crate) fn load_sort(
        &self,
        memo: &PlanMemo,
        spec: &Arc<gpusql_codegen::sort::SortSpec>,
        entry: &str,
        stat: &mut KernelStat,
    ) -> Result<CudaFunction> {
        if let Some(f) = memo.function(spec, entry) {
            return Ok(f);
        }
        let tier = self.tier_for(&spec.source);
        let f = self.load(&spec.source, entry, tier, stat)?;
        if tier == Tier::Full {
            memo.keep_function(spec, entry, f.clone());
        }
        Ok(f)
    }

    /// The tier `source` runs at: `Full` when that build is ready (or compiling ahead is
    /// off), else `Quick`, with the full build queued to replace it.
    pub(crate) fn tier_for(&self, source: &str) -> Tier {
        if !self.config.compile_ahead || self.dev.is_ready(source, Tier::Full) {
            return Tier::Full;
        }
        self.dev.compile_ahead(source.to_string(), Tier::Full, Priority::Later);
        Tier::Quick
    }

    /// The kernels a stage runs: the best form for what the builds found (`optimal`) when
    /// its full build is ready; else the quick build of the form that fits any table
    /// (`generic`, compiled ahead with the query's other kernels), while the full build
    /// of `optimal` is queued for the next run.
    fn choose_kernels(
        &self,
        optimal: Arc<KernelSpec>,
        generic: impl FnOnce() -> Result<Arc<KernelSpec>>,
    ) -> Result<(Arc<KernelSpec>, Tier)> {
        if !self.config.compile_ahead || self.dev.is_ready(&optimal.source, Tier::Full) {
            return Ok((optimal, Tier::Full));
        }
        self.dev.compile_ahead(optimal.source.clone(), Tier::Full, Priority::Later);
        Ok((generic()?, Tier::Quick))
    }

    /// On a plan's first run (its first kernel has no full build yet), every module of
    /// the plan is handed to the compile threads at once, quickly optimized, with probes
    /// in the generic form (`BuildHint::generic`), so that NVRTC runs on all cores while
    /// the first stages run.
    fn compile_plan_ahead(&self, plan: &PhysicalPlan, tables: &TableStore, memo: &PlanMemo) -> Result<()> {
        if !self.config.compile_ahead || memo.compiled_ahead() {
            return Ok(());
        }
        memo.set_compiled_ahead();
        let (mut sources, mut sorts) = (vec![], vec![]);
        for stage in &plan.stages {
            match stage {
                Stage::Pipeline(p) => {
                    let rows = match &p.source {
                        Source::Table { table, .. } => tables.get(table).map_or(0, |t| t.rows as u64),
                        Source::Intermediate { .. } => 0,
                    };
                    let builds: Vec<BuildHint> = plan
                        .pipelines()
                        .filter(|b| matches!(b.sink, Sink::HashBuild { .. }))
                        .map(|b| BuildHint::generic(b.sink.id()))
                        .collect();
                    let spec = memo.spec(p.id, &builds, rows, || generate_pipeline(p, &builds, rows))?;
                    if sources.is_empty() && self.dev.is_ready(&spec.source, Tier::Full) {
                        return Ok(()); // a plan run before
                    }
                    sources.push(spec.source.clone());
                }
                Stage::Sort { input, keys, schema, .. } => {
                    sorts.push(
                        memo.sort_spec(*input, || gpusql_codegen::sort::generate_sort(schema, keys))?.source.clone(),
                    );
                }
                Stage::Slice { .. } | Stage::Concat { .. } | Stage::Repeat { .. } => {}
            }
        }
        for group in balanced_groups(sources, self.config.compile_programs as usize) {
            self.dev.compile_ahead_merged(group, Tier::Quick, Priority::Now, gpusql_codegen::merge_modules);
        }
        // (A sort module holds fixed helpers of its own: two would clash in one program.)
        for s in sorts {
            self.dev.compile_ahead(s, Tier::Quick, Priority::Now);
        }
        Ok(())
    }

    /// Blocks until the kernels compiling in the background are ready (benchmarks call it
    /// before timing warm runs).
    pub fn wait_for_compiles(&self) {
        self.dev.wait_for_compiles();
        self.refresh_util();
    }

    /// Submits every launch of `q` in order, back to back, between CUDA events, without
    /// waiting: the span is read once the host has waited for the stream anyway
    /// (downloading what the launches counted).
    pub(crate) fn submit_queue(&self, q: LaunchQueue) -> Result<gpusql_cuda::EndedTimer> {
        let t0 = std::time::Instant::now();
        let timer = self.dev.timer_start().map_err(cuda_error)?;
        let t1 = std::time::Instant::now();
        for l in &q.launches {
            self.launch_untimed(&l.function, &l.args, l.work_items, l.max_blocks)?;
        }
        let t2 = std::time::Instant::now();
        let ended = timer.end_here().map_err(cuda_error)?;
        if self.config.profile_host {
            eprintln!(
                "queue: {} launches, timer start {:.1} us, submitting them {:.1} us (host), host total {:.1} us",
                q.launches.len(),
                (t1 - t0).as_secs_f64() * 1e6,
                (t2 - t1).as_secs_f64() * 1e6,
                t0.elapsed().as_secs_f64() * 1e6
            );
        }
        Ok(ended)
    }

    /// Queues a launch of `f` (no timing, no synchronization).
    pub(crate) fn launch_untimed(
        &self,
        f: &CudaFunction,
        args: &[Arg],
        work_items: usize,
        max_blocks: Option<u32>,
    ) -> Result<()> {
        if self.config.profile_launches {
            let timer = self.dev.timer_start().map_err(cuda_error)?;
            self.queue_launch(f, args, work_items, max_blocks)?;
            let ms = timer.stop().map_err(cuda_error)?;
            eprintln!("launch: {} args, {work_items} work items: {ms:.3} ms", args.len());
            return Ok(());
        }
        self.queue_launch(f, args, work_items, max_blocks)
    }

    fn queue_launch(&self, f: &CudaFunction, args: &[Arg], work_items: usize, max_blocks: Option<u32>) -> Result<()> {
        let blocks = work_items.div_ceil(BLOCK_SIZE as usize).max(1);
        let blocks = max_blocks.map_or(blocks, |m| blocks.min(m as usize)) as u32;
        let cfg = LaunchConfig { grid_dim: (blocks.max(1), 1, 1), block_dim: (BLOCK_SIZE, 1, 1), shared_mem_bytes: 0 };
        let u64s: Vec<u64> = args.iter().map(|a| if let Arg::U64(v) = a { *v } else { 0 }).collect();
        let u32s: Vec<u32> = args.iter().map(|a| if let Arg::U32(v) = a { *v } else { 0 }).collect();
        let stream = self.dev.stream();
        let mut b = stream.launch_builder(f);
        for (i, a) in args.iter().enumerate() {
            match a {
                Arg::U64(_) => b.arg(&u64s[i]),
                Arg::U32(_) => b.arg(&u32s[i]),
            };
        }
        // SAFETY: the generated kernel's parameter list is exactly `args` (codegen's
        // `params`), and every pointer refers to a live allocation of the needed size.
        unsafe { b.launch(cfg) }.map_err(|e| Error::Gpu(format!("kernel launch failed: {e:?}")))?;
        self.hold(|h| h.functions.push(f.clone()));
        Ok(())
    }

    /// Notes in `held` what a graph being captured on this thread uses (nothing when
    /// not capturing).
    fn hold(&self, note: impl FnOnce(&mut graph::Held)) {
        if self.dev.capturing_here() {
            if let Some(h) = self.held.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                note(h);
            }
        }
    }

    /// Moves `n` values of `width` bytes through an index array (`idx`: a device pointer
    /// to n u32) with the result-assembly kernels: gather (`out[i] = in[idx[i]]`, result
    /// rows) or scatter (`out[idx[i]] = in[i]`, hash-table payload grouped by key). The
    /// launch is added to `queue`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn permute(
        &self,
        how: Permute,
        input: &CudaSlice<u8>,
        width: usize,
        idx: u64,
        n: usize,
        queue: &mut LaunchQueue,
        stat: &mut KernelStat,
    ) -> Result<CudaSlice<u8>> {
        let (kernel, what) = match how {
            Permute::Gather => ("gather", "result column"),
            Permute::Scatter => ("scatter", "hash table payload"),
        };
        let out = self.dev.alloc_zeros::<u8>((n * width).max(16), what).map_err(cuda_error)?;
        if n > 0 {
            let f = self.util(&format!("{kernel}_{width}"), stat)?;
            let args =
                [Arg::U64(ptr(input, &self.dev)), Arg::U64(idx), Arg::U64(ptr(&out, &self.dev)), Arg::U64(n as u64)];
            queue.push(f, &args, n, Some(1024));
        }
        Ok(out)
    }

    fn grid_limit(&self) -> u32 {
        self.dev.sm_count() * BLOCKS_PER_SM
    }

    /// The grid of a grid-stride kernel: as many blocks as can be resident at once. A kernel
    /// whose registers or shared memory fit fewer than 8 blocks per SM would otherwise run
    /// its last blocks as a second, mostly empty wave (SSB Q3.1's probe kernel: 40
    /// registers, 6 blocks per SM, 8 launched: 1.33 waves).
    fn resident_grid(&self, f: &CudaFunction) -> u32 {
        let per_sm = f.occupancy_max_active_blocks_per_multiprocessor(BLOCK_SIZE, 0, None).unwrap_or(BLOCKS_PER_SM);
        self.dev.sm_count() * per_sm.clamp(1, BLOCKS_PER_SM)
    }

    /// Runs a plan. Where it runs out of GPU memory with columns of other queries
    /// resident, those are given up (the columns this plan reads stay) and it runs again.
    pub fn execute(
        &self,
        plan: &PhysicalPlan,
        tables: &TableStore,
    ) -> Result<(Vec<arrow::record_batch::RecordBatch>, ExecStats)> {
        self.execute_with(plan, tables, &PlanMemo::default())
    }

    /// `execute`, with what earlier runs of `plan` (the same plan, unchanged) left in
    /// `memo`.
    pub fn execute_with(
        &self,
        plan: &PhysicalPlan,
        tables: &TableStore,
        memo: &PlanMemo,
    ) -> Result<(Vec<arrow::record_batch::RecordBatch>, ExecStats)> {
        if self.config.replay_repeats && self.config.graph_repeats {
            // Diverged, or failed (out of memory, ...): the graph goes, and these values
            // replay stage by stage from now on; the run below reports what is wrong, if
            // anything.
            let gave_up = |e: Error| {
                tracing::debug!("a graph of a repeated run gave up ({e}); running it waiting for each stage");
                memo.set_last_run(None);
                memo.set_no_graph(&plan.parameters);
            };
            if let Some(g) = memo.take_graph(&plan.parameters, self.store.epoch()) {
                match self.launch_run(&g, plan) {
                    Ok(out) => {
                        memo.keep_graph(g);
                        return Ok(out);
                    }
                    Err(Error::Cancelled) => {
                        memo.keep_graph(g);
                        return Err(Error::Cancelled);
                    }
                    Err(e) => gave_up(e),
                }
            }
            if let Some(log) = memo.last_run(&plan.parameters).filter(|_| memo.may_capture(&plan.parameters)) {
                match self.capture_run(plan, tables, memo, log) {
                    Ok(Some(out)) => return Ok(out),
                    Ok(None) => {}
                    Err(Error::Cancelled) => return Err(Error::Cancelled),
                    Err(e) => gave_up(e),
                }
            }
        }
        if let Some(log) = memo.last_run(&plan.parameters).filter(|_| self.config.replay_repeats) {
            let replayed = ReadBacks::replay(&self.dev, log)
                .and_then(|mut reads| self.execute_once(plan, tables, memo, &mut reads));
            match replayed {
                Ok((batches, mut stats)) => {
                    stats.replayed = true;
                    return Ok((batches, stats));
                }
                Err(Error::Cancelled) => return Err(Error::Cancelled),
                // Diverged, or failed (out of memory, ...): the usual run below reports
                // what is wrong, if anything.
                Err(e) => {
                    tracing::debug!("replay of a repeated run gave up ({e}); running it waiting for each stage");
                    memo.set_last_run(None);
                }
            }
        }
        let mut reads = ReadBacks::waiting(self.config.replay_repeats);
        let result = match self.execute_once(plan, tables, memo, &mut reads) {
            Err(Error::OutOfMemory { .. }) => {
                let keep: std::collections::HashSet<(String, usize)> = plan
                    .pipelines()
                    .filter_map(|p| match &p.source {
                        Source::Table { table, columns, .. } => {
                            Some(columns.iter().map(move |c| (table.to_ascii_lowercase(), *c)))
                        }
                        _ => None,
                    })
                    .flatten()
                    .collect();
                let freed = self.store.evict_except(&keep);
                self.dev.release_pool_memory(0);
                tracing::info!(
                    "out of GPU memory: gave up {:.2} GB of other queries' resident columns, running again",
                    freed as f64 / 1e9
                );
                reads = ReadBacks::waiting(self.config.replay_repeats);
                self.execute_once(plan, tables, memo, &mut reads)
            }
            other => other,
        };
        if result.is_ok() {
            memo.set_last_run(reads.into_log(&plan.parameters));
        }
        result
    }

    fn execute_once(
        &self,
        plan: &PhysicalPlan,
        tables: &TableStore,
        memo: &PlanMemo,
        reads: &mut ReadBacks,
    ) -> Result<(Vec<arrow::record_batch::RecordBatch>, ExecStats)> {
        let (start, mut stats) = self.start_run(plan, tables, memo)?;
        let mut ran = self.run_stages(plan, tables, memo, reads, &mut stats)?;
        self.cancel.check()?;
        let result = ran.inter.remove(&plan.result).ok_or_else(|| Error::exec("result intermediate missing"))?;
        let batches = self.finish_run(plan, &result, reads, &ran.pending_spans, &mut stats, start)?;
        let mut steps = HostSteps::new(self.config.profile_host);
        drop((ran, result));
        steps.mark("free");
        self.end_query(&mut steps);
        Ok((batches, stats))
    }

    /// What every run does first: the helper module's tier, the constant buffers' bound,
    /// the plan's kernels handed to the compile threads. Returns the run's start and its
    /// statistics so far.
    fn start_run(
        &self,
        plan: &PhysicalPlan,
        tables: &TableStore,
        memo: &PlanMemo,
    ) -> Result<(std::time::Instant, ExecStats)> {
        let start = std::time::Instant::now();
        let stats = ExecStats { backend: format!("gpu ({})", self.dev.name()), ..Default::default() };
        self.refresh_util();
        {
            let mut buffers = self.constant_buffers.lock().unwrap_or_else(|e| e.into_inner());
            if buffers.len() >= CONSTANT_BUFFERS {
                buffers.clear();
            }
        }
        let mut steps = HostSteps::new(self.config.profile_host);
        steps.last = start;
        self.compile_plan_ahead(plan, tables, memo)?;
        steps.mark("compile ahead");
        steps.print("query start");
        Ok((start, stats))
    }

    /// Runs the plan's stages: their intermediates (the result among them), hash tables,
    /// and the GPU spans not read yet.
    fn run_stages(
        &self,
        plan: &PhysicalPlan,
        tables: &TableStore,
        memo: &PlanMemo,
        reads: &mut ReadBacks,
        stats: &mut ExecStats,
    ) -> Result<Ran> {
        let mut inter: HashMap<usize, Intermediate> = HashMap::new();
        let mut built: HashMap<usize, BuiltTable> = HashMap::new();
        // The string arenas of the pipelines that made strings: any later intermediate
        // may point into them, so they live as long as the run.
        let mut arenas = vec![];
        // GPU spans not waited for when their stage ended (a build's finishing launches,
        // a sort): by stage, read once the result is downloaded.
        let mut pending_spans = vec![];
        for stage in &plan.stages {
            let stage_start = std::time::Instant::now();
            self.cancel.check()?;
            match stage {
                Stage::Pipeline(p) => {
                    let (out, mut stat, span) = self.run_pipeline(
                        p,
                        &plan.parameters,
                        tables,
                        &inter,
                        &built,
                        stats,
                        memo,
                        reads,
                        &mut arenas,
                    )?;
                    if let Some(span) = span {
                        pending_spans.push((stats.kernels.len(), span));
                    }
                    match out {
                        Produced::Rows(rows) => {
                            inter.insert(p.sink.id(), rows);
                        }
                        Produced::Table(sink, counted, key_range) => {
                            let mut steps = HostSteps::new(self.config.profile_host);
                            let read = gpusql_codegen::payload_columns_read(
                                plan.pipelines(),
                                p.sink.id(),
                                p.sink.schema().len(),
                            );
                            let (t, span) =
                                join::finish_build(self, *sink, counted, key_range, &read, &mut stat, reads)?;
                            pending_spans.push((stats.kernels.len(), span));
                            steps.mark("finish build");
                            steps.print(&format!("pipeline_{}", p.id));
                            built.insert(p.sink.id(), t);
                        }
                    }
                    stats.kernels.push(stat);
                }
                Stage::Sort { input, output, keys, limit, .. } => {
                    let data = inter.remove(input).ok_or_else(|| Error::exec("sort input missing"))?;
                    let spec = memo.sort_spec(*input, || gpusql_codegen::sort::generate_sort(&data.schema, keys))?;
                    let (sorted, stat, span) = sort::run(self, data, &spec, *limit, *input, memo)?;
                    pending_spans.push((stats.kernels.len(), span));
                    stats.kernels.push(stat);
                    inter.insert(*output, sorted);
                }
                Stage::Slice { input, output, columns, skip, fetch, schema } => {
                    let data = inter.remove(input).ok_or_else(|| Error::exec("slice input missing"))?;
                    let (sliced, stat, span) = result::slice(self, &data, columns, *skip, *fetch, schema, *input)?;
                    pending_spans.push((stats.kernels.len(), span));
                    stats.kernels.push(stat);
                    inter.insert(*output, sliced);
                }
                Stage::Concat { inputs, output, schema } => {
                    let arms = inputs
                        .iter()
                        .map(|i| inter.remove(i).ok_or_else(|| Error::exec("UNION ALL input missing")))
                        .collect::<Result<Vec<_>>>()?;
                    let (rows, stat, span) = set_ops::concat(self, &arms, schema, *output)?;
                    pending_spans.push((stats.kernels.len(), span));
                    stats.kernels.push(stat);
                    inter.insert(*output, rows);
                }
                Stage::Repeat { input, output, times, columns, schema } => {
                    let data = inter.remove(input).ok_or_else(|| Error::exec("repeat input missing"))?;
                    let (rows, stat, spans) = set_ops::repeat(self, &data, *times, columns, schema, *output, reads)?;
                    for span in spans {
                        pending_spans.push((stats.kernels.len(), span));
                    }
                    stats.kernels.push(stat);
                    inter.insert(*output, rows);
                }
            }
            if let Some(k) = stats.kernels.last_mut() {
                k.wall_ms = stage_start.elapsed().as_secs_f64() * 1e3;
                if self.config.profile_host {
                    eprintln!("stage {}: host wall {:.3} ms, kernels {:.3} ms", k.name, k.wall_ms, k.ms);
                }
            }
        }
        Ok(Ran { inter, _built: built, _arenas: arenas, pending_spans })
    }

    /// Downloads the result, reads the stages' spans, and completes `stats`.
    fn finish_run(
        &self,
        plan: &PhysicalPlan,
        result: &Intermediate,
        reads: &mut ReadBacks,
        spans: &[(usize, gpusql_cuda::EndedTimer)],
        stats: &mut ExecStats,
        start: std::time::Instant,
    ) -> Result<Vec<arrow::record_batch::RecordBatch>> {
        let dl = std::time::Instant::now();
        // (A replay's counts are checked there, before the result sized by them is used.)
        let (batches, assembly) = result::download(self, plan, result, reads)?;
        let mut steps = HostSteps::new(self.config.profile_host);
        steps.last = dl;
        steps.mark("download result");
        // Compiling the result-assembly kernels (first query only) is compile time.
        stats.download_ms = dl.elapsed().as_secs_f64() * 1e3 - assembly.compile_ms;
        for (stage, span) in spans {
            let ms = span.ms().map_err(cuda_error)?;
            if let Some(k) = stats.kernels.get_mut(*stage) {
                k.ms += ms;
            }
        }
        steps.mark("spans");
        steps.print("result");
        stats.compile_ms += assembly.compile_ms;
        stats.kernel_ms = stats.kernels.iter().map(|k| k.ms).sum();
        stats.compile_ms += stats.kernels.iter().map(|k| k.compile_ms).sum::<f64>();
        stats.total_ms = start.elapsed().as_secs_f64() * 1e3;
        Ok(batches)
    }

    /// After a query: the pool's memory beyond `pool_keep_mb` goes back to the driver.
    fn end_query(&self, steps: &mut HostSteps) {
        self.dev.release_pool_memory((self.config.pool_keep_mb as usize).saturating_mul(1 << 20));
        steps.mark("trim pool");
        steps.print("end of query");
    }

    /// The CUDA sources a plan compiles to (for EXPLAIN VERBOSE / `\cuda`, and the NVRTC
    /// compile check). How probes look depends on what the builds turn out to hold, known
    /// only at run time; `variant` picks one assumption for all of them. Row indices are
    /// 32-bit, as for every source of fewer than 2^31 rows (`sources_for_rows`).
    pub fn sources(plan: &PhysicalPlan, variant: ProbeVariant) -> Result<Vec<(String, String)>> {
        Self::sources_for_rows(plan, variant, 0)
    }

    /// `sources` for pipelines over `rows` rows (64-bit row indices from 2^31 rows).
    pub fn sources_for_rows(plan: &PhysicalPlan, variant: ProbeVariant, rows: u64) -> Result<Vec<(String, String)>> {
        let builds: Vec<BuildHint> = plan
            .pipelines()
            .filter(|p| matches!(p.sink, Sink::HashBuild { .. }))
            .map(|p| BuildHint {
                id: p.sink.id(),
                multi: variant == ProbeVariant::RepeatedKeys,
                slots: if variant == ProbeVariant::RepeatedKeys { usize::MAX } else { 1024 },
                shared_memory: variant == ProbeVariant::UniqueShared,
                direct_min: (variant == ProbeVariant::UniqueDirect).then_some(1),
                bitmap: (variant == ProbeVariant::UniqueShared).then_some((1, 1024)),
                early: true,
                generic: false,
            })
            .map(|h| if variant == ProbeVariant::Generic { BuildHint::generic(h.id) } else { h })
            .collect();
        let mut out = vec![];
        for s in &plan.stages {
            match s {
                Stage::Pipeline(p) => {
                    out.push((format!("pipeline_{}", p.id), generate_pipeline(p, &builds, rows)?.source))
                }
                Stage::Sort { input, keys, schema, .. } => {
                    out.push((format!("sort #{input}"), gpusql_codegen::sort::generate_sort(schema, keys)?.source))
                }
                Stage::Slice { .. } | Stage::Concat { .. } | Stage::Repeat { .. } => {}
            }
        }
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn run_pipeline(
        &self,
        p: &Pipeline,
        params: &ParamValues,
        tables: &TableStore,
        inter: &HashMap<usize, Intermediate>,
        built: &HashMap<usize, BuiltTable>,
        stats: &mut ExecStats,
        memo: &PlanMemo,
        reads: &mut ReadBacks,
        arenas: &mut Vec<CudaSlice<u8>>,
    ) -> Result<(Produced, KernelStat, Option<gpusql_cuda::EndedTimer>)> {
        let mut steps = HostSteps::new(self.config.profile_host);
        let hints = self.build_hints(built);
        let selection = self.chunk_selection(p, tables)?;
        let rows = source_rows(p, tables, inter, selection.as_deref());
        let rows64 = rows as u64;
        let optimal = memo.spec(p.id, &hints, rows64, || generate_pipeline(p, &hints, rows64))?;
        steps.mark("codegen");
        let mut stat = KernelStat { name: format!("pipeline_{}", p.id), ..Default::default() };
        let kept = memo.function(&optimal, &optimal.entry).and_then(|func| match &optimal.init {
            Some(i) => Some((func, Some(memo.function(&optimal, &i.entry)?))),
            None => Some((func, None)),
        });
        let (spec, func, init) = match kept {
            Some((func, init)) => {
                stat.cache = cache_name(CacheHit::Memory);
                (optimal, func, init)
            }
            None => {
                let generic: Vec<BuildHint> = hints.iter().map(|h| BuildHint::generic(h.id)).collect();
                let (spec, tier) = self.choose_kernels(optimal, || {
                    memo.spec(p.id, &generic, rows64, || generate_pipeline(p, &generic, rows64))
                })?;
                let func = self.load(&spec.source, &spec.entry, tier, &mut stat)?;
                let init =
                    spec.init.as_ref().map(|i| self.load(&spec.source, &i.entry, tier, &mut stat)).transpose()?;
                if tier == Tier::Full {
                    memo.keep_function(&spec, &spec.entry, func.clone());
                    if let (Some(i), Some(f)) = (&spec.init, &init) {
                        memo.keep_function(&spec, &i.entry, f.clone());
                    }
                }
                (spec, func, init)
            }
        };
        steps.mark("load");

        let mut up = UploadStats::default();
        let source = match &p.source {
            Source::Table { table, columns, .. } => {
                let t = tables.get(table).ok_or_else(|| Error::plan(format!("unknown table '{table}'")))?;
                // Decode what is not decoded yet of every column at once (in parallel).
                let decode = std::time::Instant::now();
                t.load(columns, selection.as_deref())?;
                stats.decode_ms += decode.elapsed().as_secs_f64() * 1e3;
                self.table_columns(p, &t, columns, selection.as_deref(), &spec, &mut up)?
            }
            Source::Intermediate { id, .. } => {
                let i = inter.get(id).ok_or_else(|| Error::exec(format!("intermediate #{id} missing")))?;
                SourceColumns { columns: i.columns.iter().map(Column::borrowed).collect(), ..Default::default() }
            }
        };
        // (`rows` is the intermediate's, or the table's of the selected chunks.)
        let n = rows;
        let in_sets = self.upload_in_sets(&spec, &mut up)?;
        let literals = self.upload_literals(&spec, params, &mut up)?;
        for q in &spec.params {
            if let Param::Build { id, part: BuildPart::Offsets } = q {
                built
                    .get(id)
                    .ok_or_else(|| Error::exec(format!("hash table #{id} missing")))?
                    .make_match_offsets(self)?;
            }
        }
        steps.mark("source");
        stats.upload_bytes += up.bytes;
        stats.upload_ms += up.ms;
        stat.bytes_read = bytes_read(&spec, &source.columns, n);
        if matches!(p.source, Source::Table { .. }) {
            stats.bytes_read += stat.bytes_read;
        }
        stat.rows_in = n;

        let (mut max_groups, group_bound) = group_capacity(p, n, built);
        let seen_key = SinkSizes::key(&spec.source, n);
        match self.sink_sizes.lock().unwrap_or_else(|e| e.into_inner()).get(seen_key) {
            Some(seen) => max_groups = capacity_from_seen(p, seen, max_groups, group_bound),
            // The next run is sized by what this one finds: this run's log would not fit it.
            None => reads.unsettled(),
        }
        // The string arena (kernels that make strings): what the last run took, with room
        // to spare, or a guess of ARENA_BYTES_PER_ROW per row; a run that finds it too
        // small runs again with room for what it asked.
        let uses_arena = spec.params.contains(&Param::Arena);
        let arena_key = SinkSizes::key(&spec.source, n) ^ ARENA_KEY_SALT;
        let mut arena_bytes = match self.sink_sizes.lock().unwrap_or_else(|e| e.into_inner()).get(arena_key) {
            Some(seen) => seen.saturating_add(seen / 4).max(MIN_ARENA_BYTES),
            None => n.saturating_mul(ARENA_BYTES_PER_ROW).clamp(MIN_ARENA_BYTES, MAX_FIRST_ARENA_BYTES),
        };
        loop {
            // Group ids and a build's row positions are 32-bit on the GPU.
            if matches!(p.sink, Sink::Aggregate { .. } | Sink::HashBuild { .. }) && max_groups > i32::MAX as usize {
                return Err(Error::not_supported(format!(
                    "hash tables of more than 2,147,483,647 groups or build rows on the GPU ({max_groups})"
                )));
            }
            let sink = buffers::SinkBuffers::allocate(&self.dev, &p.sink, max_groups)?;
            let arena = match uses_arena {
                true => Some(self.dev.alloc_unset::<u8>(arena_bytes, "string arena").map_err(cuda_error)?),
                false => None,
            };
            steps.mark("allocate");
            let binder = Binder {
                dev: &self.dev,
                n,
                sink: &sink,
                max_groups,
                source: &source,
                in_sets: &in_sets,
                literals: &literals,
                built,
                spec: &spec,
                arena: arena.as_ref().map(|a| (a, arena_bytes)),
            };
            let span = self.run_kernels(&func, init.as_ref(), &binder)?;
            steps.mark("kernels");
            let counted = sink.counted(&self.dev, reads, replay::site(("pipeline", p.id, n, max_groups)))?;
            // (A replay reads its stages' spans at the end: reading one waits for it.)
            let span = if reads.is_replay() {
                Some(span)
            } else {
                stat.ms += span.ms().map_err(cuda_error)?;
                None
            };
            let code = counted.error;
            let full_at = n.saturating_sub(counted.full_from_end as usize);
            let count = counted.rows;
            steps.mark("download counts");
            let groups = Groups { max: max_groups, bound: group_bound, count, full_at, rows: n };
            if KernelError::from_code(code) == Some(KernelError::ArenaFull) {
                // (A grouped aggregation stops early on an error: then what it asked for
                // is a lower bound.)
                arena_bytes =
                    counted.arena_used.max(arena_bytes.saturating_mul(4)).saturating_add(counted.arena_used / 4);
                tracing::debug!("pipeline_{}: string arena full, running again with {arena_bytes} bytes", p.id);
                ran_again(span, &mut stat, reads)?;
                continue;
            }
            if let Some(grown) = capacity_after_error(p, code, &groups)? {
                max_groups = grown;
                ran_again(span, &mut stat, reads)?;
                continue;
            }
            if matches!(p.sink, Sink::Materialize { .. } | Sink::HashBuild { .. }) && count > max_groups {
                // A multi-match join emitted more rows than the pipeline read: the rows past
                // the buffers were counted, not written; run again with room for all of them.
                tracing::debug!("pipeline_{}: {count} rows for {max_groups} rows of room, running again", p.id);
                max_groups = count;
                ran_again(span, &mut stat, reads)?;
                continue;
            }
            let rows = match &p.sink {
                Sink::Aggregate { keys, .. } if keys.is_empty() => 1,
                Sink::Aggregate { .. } => count.min(max_groups),
                Sink::Materialize { .. } | Sink::HashBuild { .. } => count,
            };
            stat.rows_out = rows;
            self.sink_sizes.lock().unwrap_or_else(|e| e.into_inner()).insert(seen_key, rows);
            if let Some(arena) = arena {
                self.sink_sizes.lock().unwrap_or_else(|e| e.into_inner()).insert(arena_key, counted.arena_used);
                arenas.push(arena);
            }
            steps.print(&format!("pipeline_{} ({n} rows in, {rows} out, room for {max_groups})", p.id));
            if matches!(p.sink, Sink::HashBuild { .. }) {
                return Ok((Produced::Table(Box::new(sink), counted, build_key_range(p, tables)), stat, span));
            }
            return Ok((Produced::Rows(sink.into_intermediate(p.sink.schema().clone(), rows)), stat, span));
        }
    }

    /// Queues the init kernel (empty hash slots) and the pipeline kernel, back to back;
    /// returns their GPU span.
    fn run_kernels(
        &self,
        func: &CudaFunction,
        init: Option<&CudaFunction>,
        b: &Binder,
    ) -> Result<gpusql_cuda::EndedTimer> {
        let bind = |q: &Param| b.bind(q);
        let mut q = LaunchQueue::default();
        if let (Some(init_fn), Some(init_spec)) = (init, &b.spec.init) {
            let args = init_spec.params.iter().map(bind).collect::<Result<Vec<_>>>()?;
            q.push(init_fn.clone(), &args, b.sink.slot_count.max(b.max_groups), Some(self.grid_limit()));
        }
        let args = b.spec.params.iter().map(bind).collect::<Result<Vec<_>>>()?;
        q.push(func.clone(), &args, b.n, Some(self.resident_grid(func)));
        self.submit_queue(q)
    }

    /// What the code generator needs to know of the hash tables built so far.
    fn build_hints(&self, built: &HashMap<usize, BuiltTable>) -> Vec<BuildHint> {
        let mut hints: Vec<BuildHint> = built
            .iter()
            .map(|(id, t)| BuildHint {
                id: *id,
                multi: t.multi,
                slots: t.probe_slots(),
                shared_memory: self.config.shared_memory_probe_tables,
                direct_min: t.direct.as_ref().map(|d| d.min),
                bitmap: t.bitmap.as_ref().map(|m| (m.min, m.bits as u64)),
                early: self.config.early_bitmaps,
                generic: false,
            })
            .collect();
        // (In build order: the plan memo keys kernels by them.)
        hints.sort_by_key(|h| h.id);
        hints
    }

    /// A table scan narrowed by row-group pruning reads the kept chunks, unless the
    /// whole columns are resident already.
    fn chunk_selection(&self, p: &Pipeline, tables: &TableStore) -> Result<Option<Vec<usize>>> {
        Ok(match &p.source {
            Source::Table { table, columns, kept: Some(k), .. } => {
                let t = tables.get(table).ok_or_else(|| Error::plan(format!("unknown table '{table}'")))?;
                (!columns.iter().all(|&c| self.store.is_resident(&t, c))).then(|| k.chunks.to_vec())
            }
            _ => None,
        })
    }

    /// A table's columns on the GPU, with the Pivot-4 copies LIKE kernels ask for and the
    /// replica placements (rows' slots) of the pipeline's replicated tables, each uploaded
    /// on first use.
    fn table_columns(
        &self,
        p: &Pipeline,
        t: &HostTable,
        columns: &[usize],
        selection: Option<&[usize]>,
        spec: &KernelSpec,
        up: &mut UploadStats,
    ) -> Result<SourceColumns<'static>> {
        let cols = columns
            .iter()
            .enumerate()
            .map(|(i, c)| match (selection, p.dictionary_encoded(i)) {
                (Some(sel), _) => self.store.column_chunks(&self.dev, t, *c, sel, up).map(Column::Table),
                (None, true) => self.store.dictionary(&self.dev, t, *c, up).map(Column::Dictionary),
                (None, false) => self.store.column(&self.dev, t, *c, up).map(Column::Table),
            })
            .collect::<Result<Vec<_>>>()?;
        let mut pivots: HashMap<usize, u64> = HashMap::new();
        // (No copy where every LIKE pattern runs as a DFA: the kernel reads none.)
        let all_dfas = self.config.like_dfa
            && spec.literals.iter().all(|l| !matches!(l, KernelLiteral::Pattern(p) if p.dfa.is_none()));
        let pivot = self.config.pivoted_strings && selection.is_none() && !all_dfas;
        for q in spec.params.iter().filter(|_| pivot) {
            if let Param::Input { column, part: Part::Pivoted } = q {
                if let Some(piv) = self.store.pivoted(&self.dev, t, columns[*column], up, |c, k| self.pivot(c, k))? {
                    pivots.insert(*column, ptr(&piv.words, &self.dev));
                }
            }
        }
        let mut replicas = vec![];
        for r in &p.replicated {
            replicas.push(self.store.replica(&self.dev, t, r.request, up)?);
        }
        Ok(SourceColumns { columns: cols, pivots, replicas })
    }

    /// The Pivot-4 copy of resident string column `c` in `pieces` 4-byte pieces per row
    /// (`convert::pivot_pieces`).
    fn pivot(&self, c: &device_store::DeviceColumn, pieces: u32) -> Result<CudaSlice<u32>> {
        let offsets = c.offsets.as_ref().ok_or_else(|| Error::exec("pivoting a column that holds no strings"))?;
        let words = c.rows * pieces as usize;
        // (4 words of padding, as every uploaded column has.)
        let out = self.dev.alloc_zeros::<u32>(words + 4, "pivoted strings").map_err(cuda_error)?;
        let f = self.util("pivot_strings", &mut KernelStat::default())?;
        let args = [
            Arg::U64(ptr(&c.values, &self.dev)),
            Arg::U64(ptr(offsets, &self.dev)),
            Arg::U64(ptr(&out, &self.dev)),
            Arg::U64(c.rows as u64),
            Arg::U32(pieces),
        ];
        self.launch_untimed(&f, &args, words, Some(self.grid_limit()))?;
        Ok(out)
    }

    /// The query constants the kernel takes as parameters (`KernelSpec::literals`): their
    /// arguments, and the bytes of its string and pattern constants uploaded as one small
    /// buffer (per run of the pipeline; none where the kernel reads none).
    fn upload_literals(&self, spec: &KernelSpec, params: &ParamValues, up: &mut UploadStats) -> Result<Literals> {
        // (A kept spec holds the values of the run it was generated for.)
        let data = match gpusql_codegen::literals::resolve(&spec.literals, params) {
            Some(literals) => LiteralData::new(&literals)?,
            None => LiteralData::new(&spec.literals)?,
        };
        let data = if self.config.like_dfa { data } else { data.without_like_dfas(&spec.literals) };
        if spec.literals.is_empty() {
            return Ok(Literals { data, buffer: None });
        }
        // (An empty string's buffer still has to exist: 16 bytes.)
        let mut bytes = data.bytes.clone();
        bytes.resize(bytes.len().max(16), 0);
        let buffer = self.constant_buffer(bytes, "query literals", up)?;
        Ok(Literals { data, buffer: Some(buffer) })
    }

    /// A buffer of `bytes` on the GPU that kernels only read, uploaded once and kept by
    /// content for the session: a string constant a kernel writes into its rows
    /// (`CASE ... THEN 'low'`) is a pointer into its literal buffer, read when the result
    /// is assembled, after the pipeline; and a repeated query uploads nothing.
    fn constant_buffer(&self, bytes: Vec<u8>, what: &str, up: &mut UploadStats) -> Result<Arc<CudaSlice<u8>>> {
        let mut cache = self.constant_buffers.lock().unwrap_or_else(|e| e.into_inner());
        let buffer = match cache.get(&bytes) {
            Some(b) => b.clone(),
            None => {
                up.bytes += bytes.len();
                let buffer = Arc::new(self.dev.upload(&bytes, what).map_err(cuda_error)?);
                cache.insert(bytes, buffer.clone());
                buffer
            }
        };
        self.hold(|h| h.buffers.push(buffer.clone()));
        Ok(buffer)
    }

    /// The literal sets of long IN lists, searched by the kernel.
    fn upload_in_sets(&self, spec: &KernelSpec, up: &mut UploadStats) -> Result<InSets> {
        let mut in_sets: InSets = HashMap::new();
        for q in &spec.params {
            if let Param::InSet { index, part } = q {
                if *part != InSetPart::Len {
                    let bytes = in_set::buffer(&spec.in_sets[*index], *part);
                    in_sets.insert((*index, *part), self.constant_buffer(bytes, "IN list values", up)?);
                }
            }
        }
        Ok(in_sets)
    }
}

/// A pipeline whose sink overflowed runs again: its first run's span counts, and the run's
/// log would replay the overflow (`ReadBacks::unsettled`).
fn ran_again(span: Option<gpusql_cuda::EndedTimer>, stat: &mut KernelStat, reads: &mut ReadBacks) -> Result<()> {
    if let Some(span) = span {
        stat.ms += span.ms().map_err(cuda_error)?;
    }
    reads.unsettled();
    Ok(())
}

/// Rows a pipeline's source holds (of the kept chunks, for a pruned scan).
fn source_rows(
    p: &Pipeline,
    tables: &TableStore,
    inter: &HashMap<usize, Intermediate>,
    selection: Option<&[usize]>,
) -> usize {
    match &p.source {
        Source::Table { table, .. } => tables.get(table).map_or(0, |t| match selection {
            Some(s) => s.iter().map(|&k| t.chunk_rows(k)).sum(),
            None => t.rows,
        }),
        Source::Intermediate { id, .. } => inter.get(id).map_or(0, |i| i.rows),
    }
}

/// Bytes the kernel reads: the source columns its code loads (+ the 2-byte slot per row
/// of each replicated table the code reads).
fn bytes_read(spec: &KernelSpec, src: &[Column], n: usize) -> usize {
    let read_cols = &spec.source_columns_read;
    let columns: usize = src.iter().enumerate().filter(|(i, _)| read_cols.contains(i)).map(|(_, c)| c.bytes(n)).sum();
    columns
        + spec.params.iter().filter(|q| matches!(q, Param::Replica { part: ReplicaPart::RowSlots, .. })).count() * 2 * n
}

/// The sink's first capacity (groups, or rows for a materialization or a hash build) for
/// `n` source rows, and the most groups it may need.
fn group_capacity(p: &Pipeline, n: usize, built: &HashMap<usize, BuiltTable>) -> (usize, usize) {
    let max_groups = match &p.sink {
        Sink::Aggregate { keys, .. } if keys.is_empty() => 1,
        Sink::Aggregate { .. } => INITIAL_GROUPS.min(n.next_power_of_two().max(1024)),
        // Distinct keys never outnumber rows.
        Sink::Materialize { .. } | Sink::HashBuild { .. } => n,
    };
    // Groups never outnumber the rows reaching the sink: the rows read, unless a probe
    // with repeated build keys emits a row once per match (a LEFT JOIN of 25 nations to
    // 1,500 customers groups 1,500 rows), then up to what 32-bit group ids allow.
    let expands = p.ops.iter().any(|op| matches!(op, PipelineOp::HashProbe { build, kind: JoinKind::Inner | JoinKind::Left, .. } if built.get(build).is_none_or(|t| t.multi)));
    let group_bound = if expands { i32::MAX as usize } else { n.max(1) };
    (max_groups, group_bound)
}

/// `sources` in `groups` groups of about equal bytes (0: a group each).
fn balanced_groups(mut sources: Vec<String>, groups: usize) -> Vec<Vec<String>> {
    if groups == 0 || groups >= sources.len() {
        return sources.into_iter().map(|s| vec![s]).collect();
    }
    sources.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out: Vec<(usize, Vec<String>)> = (0..groups).map(|_| (0, vec![])).collect();
    for s in sources {
        let g = out.iter_mut().min_by_key(|(bytes, _)| *bytes).expect("groups > 0");
        g.0 += s.len();
        g.1.push(s);
    }
    out.into_iter().map(|(_, g)| g).collect()
}

/// The rows (or groups) pipelines' sinks held when they last ran, by kernel source and
/// source rows. A sink is first sized for every row it could receive (a hash build over
/// lineitem: 60 M rows, 2^27 slots, 3 GB to allocate, zero and trim from the pool again,
/// when Q12's filters let 311 K through: 9 of its 11 ms); once a pipeline has run, its
/// buffers are sized from what it held then. The kernel source has no literal values
/// (they are parameters), so a query differing only in literals starts from its sibling's
/// size; a sink that finds it too small runs again (`run_pipeline`), as on a first run.
#[derive(Default)]
struct SinkSizes {
    rows: HashMap<u64, usize>,
}

/// The string arena's first size per source row, when its pipeline has not run before (at
/// most MAX_FIRST_ARENA_BYTES: a big table's guess would take memory few rows may need),
/// and its least size; its sizes are kept in `SinkSizes` under the pipeline's key xor this.
const ARENA_BYTES_PER_ROW: usize = 32;
const MAX_FIRST_ARENA_BYTES: usize = 1 << 30;
const MIN_ARENA_BYTES: usize = 1 << 16;
const ARENA_KEY_SALT: u64 = 0x5354_5249_4e47_5321;

/// Sink sizes kept at most (emptied when full).
const SINK_SIZES: usize = 1 << 16;

impl SinkSizes {
    fn key(source: &str, rows: usize) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        // (Every pipeline's source starts with the same 30 KB prelude: not hashed each run.)
        (source.strip_prefix(gpusql_codegen::prelude()).unwrap_or(source), rows).hash(&mut h);
        h.finish()
    }

    fn get(&self, key: u64) -> Option<usize> {
        self.rows.get(&key).copied()
    }

    fn insert(&mut self, key: u64, rows: usize) {
        if self.rows.len() >= SINK_SIZES {
            self.rows.clear();
        }
        self.rows.insert(key, rows);
    }
}

/// The capacity of a sink that held `seen` rows (groups) when its pipeline last ran:
/// twice that (room for a sibling query's larger result, and a hash build's slots at a
/// load factor of at most 1/4), never above what it could need nor, for a group table,
/// below its usual start.
fn capacity_from_seen(p: &Pipeline, seen: usize, first: usize, bound: usize) -> usize {
    let room = seen.saturating_mul(2).max(MIN_SEEN_CAPACITY);
    match &p.sink {
        Sink::Aggregate { keys, .. } if keys.is_empty() => first,
        Sink::Aggregate { .. } => room.next_power_of_two().max(first).min(bound.next_power_of_two()),
        Sink::Materialize { .. } | Sink::HashBuild { .. } => room.min(bound),
    }
}

/// The least capacity sized from a previous run (small sinks cost nothing to allocate).
const MIN_SEEN_CAPACITY: usize = 1024;

/// How a run of a pipeline's kernel filled its sink.
struct Groups {
    /// The capacity it ran with.
    max: usize,
    /// The most groups the sink may need.
    bound: usize,
    /// Groups (rows) it counted.
    count: usize,
    /// The first row that found the group table full, if any (else 0).
    full_at: usize,
    /// Rows of the source.
    rows: usize,
}

/// After a kernel run that reported error `code`: None where there was no error, the
/// capacity to run again with where the group table filled up, or the error.
fn capacity_after_error(p: &Pipeline, code: i32, g: &Groups) -> Result<Option<usize>> {
    let (max_groups, n, full_at) = (g.max, g.rows, g.full_at);
    match (code, KernelError::from_code(code)) {
        (0, _) => Ok(None),
        (_, Some(KernelError::GroupsFull)) if max_groups < g.bound => {
            // More groups than room: the kernel stopped early; grow 4x and run again
            // (bounded by the row count). Runs that stop early read only about as many
            // rows as their table holds groups, so the wasted work is a fraction of
            // one full run.
            // The table filled at row `full_at`: extrapolate the groups of all n rows,
            // at most 64x per step (exact for sorted keys, Q18's 15M groups in two
            // steps; far too high for keys that keep repeating, Q15's 100k suppliers
            // would have asked for 64M groups).
            let extrapolated =
                if full_at > 0 && full_at < n { max_groups.saturating_mul((n / full_at.max(1)).min(64)) } else { 0 };
            let max_groups = (max_groups * 4)
                .max((g.count * 2).next_power_of_two())
                .max(extrapolated.saturating_mul(5) / 4)
                .min(g.bound.next_power_of_two())
                .next_power_of_two();
            tracing::debug!("pipeline_{}: hash table full, retrying with {max_groups} groups", p.id);
            Ok(Some(max_groups))
        }
        (_, Some(KernelError::GroupsFull)) => {
            Err(Error::exec(format!("pipeline_{}: group table full at {max_groups} groups", p.id)))
        }
        (_, Some(KernelError::DivisionByZero)) => Err(p.division_by_zero()),
        (_, Some(KernelError::Overflow)) => Err(Error::exec(match code_type(code) {
            // (The CPU backend's message.)
            Some(ty) => format!("{ty} out of range"),
            None => "numeric value out of range".to_string(),
        })),
        (_, Some(KernelError::Conversion)) => {
            Err(gpusql_common::text_cast::conversion_error(&code_type(code).unwrap_or(DataType::Utf8), None))
        }
        (_, Some(KernelError::TextUnsupported)) => {
            Err(gpusql_common::text_cast::unsupported_error(&code_type(code).unwrap_or(DataType::Utf8), None))
        }
        // The CPU backend's message (eval.rs).
        (_, Some(KernelError::TimestampRange)) => Err(Error::exec("TIMESTAMP out of range")),
        (_, Some(KernelError::SubqueryRows)) => Err(Error::exec(gpusql_plan::expr::SUBQUERY_ROWS_ERROR)),
        (_, Some(KernelError::PaddingLeft)) => Err(gpusql_plan::strings::insufficient_padding(true)),
        (_, Some(KernelError::PaddingRight)) => Err(gpusql_plan::strings::insufficient_padding(false)),
        // (Handled by `run_pipeline`, which grows the arena.)
        (_, Some(KernelError::ArenaFull)) => Err(Error::exec(format!("pipeline_{}: string arena full", p.id))),
        (other, None) => Err(Error::exec(format!("kernel reported error code {other}"))),
    }
}

/// The literal sets of a pipeline's long IN lists on the GPU, by (set, part).
type InSets = HashMap<(usize, InSetPart), Arc<CudaSlice<u8>>>;

/// A pipeline's query constants: their parameters' arguments, and the literal buffer on the
/// GPU their pointers point into.
struct Literals {
    data: LiteralData,
    buffer: Option<Arc<CudaSlice<u8>>>,
}

/// What a plan's stages left: intermediates (the result among them), hash tables, and
/// the GPU spans not read yet, by stage.
struct Ran {
    inter: HashMap<usize, Intermediate>,
    /// (Held until the run is done with them.)
    _built: HashMap<usize, BuiltTable>,
    _arenas: Vec<CudaSlice<u8>>,
    pending_spans: Vec<(usize, gpusql_cuda::EndedTimer)>,
}

/// A pipeline's source on the GPU.
#[derive(Default)]
struct SourceColumns<'a> {
    columns: Vec<Column<'a>>,
    /// Pivot-4 copies of string columns, by source column.
    pivots: HashMap<usize, u64>,
    /// Replica placements of the pipeline's replicated tables.
    replicas: Vec<Arc<DeviceReplica>>,
}

/// The buffers of one run of a pipeline's kernels, which their parameters bind to.
struct Binder<'a> {
    dev: &'a GpuDevice,
    n: usize,
    sink: &'a buffers::SinkBuffers,
    max_groups: usize,
    source: &'a SourceColumns<'a>,
    in_sets: &'a InSets,
    literals: &'a Literals,
    built: &'a HashMap<usize, BuiltTable>,
    spec: &'a KernelSpec,
    /// The string arena and its size, where the kernel makes strings.
    arena: Option<(&'a CudaSlice<u8>, usize)>,
}

impl Binder<'_> {
    fn bind(&self, q: &Param) -> Result<Arg> {
        let (dev, sink, n, max_groups) = (self.dev, self.sink, self.n, self.max_groups);
        Ok(match q {
            Param::RowCount => Arg::U64(n as u64),
            Param::ErrorFlag => Arg::U64(sink.counter_ptr(Counter::Error, dev)),
            Param::Arena => Arg::U64(self.arena.map_or(0, |(a, _)| ptr(a, dev))),
            Param::ArenaCapacity => Arg::U64(self.arena.map_or(0, |(_, bytes)| bytes as u64)),
            Param::ArenaUsed => Arg::U64(sink.counter_ptr(Counter::ArenaUsed, dev)),
            Param::Input { column, part: Part::Pivoted } => {
                Arg::U64(self.source.pivots.get(column).copied().unwrap_or(0))
            }
            Param::Input { column, part } => Arg::U64(self.source.columns[*column].ptr(*part, dev)?),
            Param::Output { column, part } => Arg::U64(sink.output_ptr(*column, *part, dev)?),
            Param::OutCount => Arg::U64(sink.counter_ptr(Counter::Rows, dev)),
            Param::OutCapacity => Arg::U64(max_groups as u64),
            Param::State { index } => Arg::U64(sink.state_ptr(*index, dev)?),
            Param::HashSlots => Arg::U64(sink.slots.as_ref().map(|s| ptr(s, dev)).unwrap_or(0)),
            Param::HashMask => Arg::U32((sink.slot_count.max(1) - 1) as u32),
            Param::MaxGroups => Arg::U32(max_groups as u32),
            Param::GroupKey { key, .. } => Arg::U64(ptr(&sink.group_keys[*key].values, dev)),
            Param::GroupRows => Arg::U64(sink.group_rows.as_ref().map_or(0, |s| ptr(s, dev))),
            Param::RowGroup => Arg::U64(sink.row_group.as_ref().map_or(0, |s| ptr(s, dev))),
            Param::GroupCount => Arg::U64(sink.counter_ptr(Counter::Groups, dev)),
            Param::MultiFlag => Arg::U64(sink.counter_ptr(Counter::RepeatedKeys, dev)),
            Param::Build { id, part } => {
                let t = self.built.get(id).ok_or_else(|| Error::exec(format!("hash table #{id} missing")))?;
                bind_build(t, *part, dev)?
            }
            Param::InSet { index, part: InSetPart::Len } => Arg::U32(self.spec.in_sets[*index].values.len() as u32),
            Param::InSet { index, part } => Arg::U64(self.in_sets.get(&(*index, *part)).map_or(0, |b| ptr(b, dev))),
            Param::Literal { index, part } => match self.literals.data.arg(*index, *part)? {
                LiteralArg::U32(x) => Arg::U32(x),
                LiteralArg::U64(x) => Arg::U64(x),
                LiteralArg::Buffer(offset) => {
                    let buffer = self.literals.buffer.as_ref().ok_or_else(|| Error::exec("literal buffer missing"))?;
                    Arg::U64(ptr(buffer, dev) + offset as u64)
                }
            },
            Param::Replica { index, part } => {
                let r = self
                    .source
                    .replicas
                    .get(*index)
                    .ok_or_else(|| Error::exec(format!("replicated table {index} missing")))?;
                match part {
                    ReplicaPart::RowSlots => Arg::U64(ptr(&r.row_slots, dev)),
                    ReplicaPart::SlotValues => Arg::U64(ptr(&r.slot_values, dev)),
                    ReplicaPart::SlotCodes => Arg::U64(ptr(&r.slot_codes, dev)),
                }
            }
        })
    }
}

/// Kernel launches gathered while their buffers are allocated and their kernels looked
/// up, then submitted together (`GpuExecutor::submit_queue`): the host's work between them
/// would otherwise leave the GPU idle inside the timed span (a hash build's ten small
/// finishing kernels took 60-140 us of host time for ~25 us of GPU work).
#[derive(Default)]
pub(crate) struct LaunchQueue {
    launches: Vec<QueuedLaunch>,
    /// Scratch buffers the launches use, freed after them (frees are stream-ordered: one
    /// freed before its kernel is submitted could be handed to another buffer first).
    kept: Vec<Box<dyn std::any::Any>>,
}

struct QueuedLaunch {
    function: CudaFunction,
    args: Vec<Arg>,
    work_items: usize,
    max_blocks: Option<u32>,
}

impl LaunchQueue {
    /// Adds a launch of `function`; the buffers `args` point to must live until the
    /// queue has run.
    pub fn push(&mut self, function: CudaFunction, args: &[Arg], work_items: usize, max_blocks: Option<u32>) {
        self.launches.push(QueuedLaunch { function, args: args.to_vec(), work_items, max_blocks });
    }

    /// Keeps `buffer` alive until the queue has run.
    pub fn keep<T: 'static>(&mut self, buffer: T) {
        self.kept.push(Box::new(buffer));
    }

    pub fn is_empty(&self) -> bool {
        self.launches.is_empty()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Permute {
    Gather,
    Scatter,
}

/// Which form of join probes `GpuExecutor::sources` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeVariant {
    /// Keys repeat (expansion loops), large tables: the general form.
    RepeatedKeys,
    /// Unique keys, small tables in shared memory.
    UniqueShared,
    /// Unique dense keys, direct-mapped tables.
    UniqueDirect,
    /// The form that fits any table, compiled before the builds ran (`BuildHint::generic`).
    Generic,
}

/// What a pipeline's sink produced.
enum Produced {
    Rows(Intermediate),
    /// A hash build's raw buffers and what it counted (rows, keys), to be grouped by key,
    /// and what is known of its key before the build (for the key bitmap).
    Table(Box<buffers::SinkBuffers>, Counted, Option<join::KeyRange>),
}

/// For a hash build whose single key is a column of the table it scans: that column's
/// value range and the table's rows (known on the host, so the key bitmap needs no
/// reduction on the GPU and no wait for it).
fn build_key_range(p: &Pipeline, tables: &TableStore) -> Option<join::KeyRange> {
    // (Not for a scan of some row groups: the range would cover every row group.)
    let (Source::Table { table, columns, kept: None, .. }, Sink::HashBuild { keys, .. }) = (&p.source, &p.sink) else {
        return None;
    };
    let [gpusql_plan::Expr::Column { index, .. }] = keys.as_slice() else { return None };
    let t = tables.get(table)?;
    let (min, max) = t.column_range(columns[sink_source_column(p, columns.len(), *index)?])?;
    Some(join::KeyRange { min, max, table_rows: t.rows })
}

/// The source column (index into the scanned columns) that column `index` of the row
/// reaching the sink of `p` holds unchanged, if any: probes append build columns and
/// projections rearrange the row, so the sink's key index is not the source's.
fn sink_source_column(p: &Pipeline, source_columns: usize, index: usize) -> Option<usize> {
    let mut map: Vec<Option<usize>> = (0..source_columns).map(Some).collect();
    for op in &p.ops {
        match op {
            PipelineOp::Project { exprs, .. } => {
                map = exprs
                    .iter()
                    .map(|e| {
                        if let gpusql_plan::Expr::Column { index, .. } = e {
                            map.get(*index).copied().flatten()
                        } else {
                            None
                        }
                    })
                    .collect();
            }
            PipelineOp::HashProbe { kind: JoinKind::Inner | JoinKind::Left, schema, .. } => {
                map.resize(schema.len(), None)
            }
            PipelineOp::HashProbe { .. } | PipelineOp::Filter(_) | PipelineOp::LaneRefill { .. } => {}
        }
    }
    map.get(index).copied().flatten()
}

fn bind_build(t: &BuiltTable, part: BuildPart, dev: &GpuDevice) -> Result<Arg> {
    Ok(match part {
        BuildPart::Slots => Arg::U64(ptr(&t.slots, dev)),
        BuildPart::SlotMask => Arg::U32((t.slot_count.max(1) - 1) as u32),
        BuildPart::Mask => Arg::U32((t.probe_slots().max(1) - 1) as u32),
        BuildPart::Key(k) => Arg::U64(ptr(&t.keys[k].values, dev)),
        BuildPart::Offsets => Arg::U64(ptr(t.match_offsets()?, dev)),
        BuildPart::Counts => Arg::U64(ptr(&t.counts, dev)),
        BuildPart::Direct => {
            Arg::U64(ptr(&t.direct.as_ref().ok_or_else(|| Error::exec("direct table missing"))?.table, dev))
        }
        BuildPart::Bitmap => {
            Arg::U64(ptr(&t.bitmap.as_ref().ok_or_else(|| Error::exec("key bitmap missing"))?.words, dev))
        }
        BuildPart::Entries => {
            Arg::U64(ptr(t.entries.as_ref().ok_or_else(|| Error::exec("hash table entries missing"))?, dev))
        }
        BuildPart::Payload { column, part } => {
            match t.payload.get(column).ok_or_else(|| Error::exec("payload column missing"))? {
                Some(c) => match part {
                    Part::Validity => {
                        Arg::U64(ptr(c.validity.as_ref().ok_or_else(|| Error::exec("payload validity missing"))?, dev))
                    }
                    _ => Arg::U64(ptr(&c.values, dev)),
                },
                // Declared by the probe kernel but never loaded (`payload_columns_read`).
                None => Arg::U64(0),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::balanced_groups;

    #[test]
    fn groups_balance_bytes_and_keep_every_source() {
        let s = |n: usize| "x".repeat(n);
        let groups = balanced_groups(vec![s(5), s(1), s(4), s(2), s(3), s(3)], 2);
        assert_eq!(groups.len(), 2);
        let bytes: Vec<usize> = groups.iter().map(|g| g.iter().map(String::len).sum()).collect();
        assert_eq!(bytes, vec![9, 9]);
        assert_eq!(balanced_groups(vec![s(1), s(2)], 0).len(), 2, "0: a group each");
        assert_eq!(balanced_groups(vec![s(1), s(2)], 5).len(), 2, "no empty groups");
        assert!(balanced_groups(vec![], 2).is_empty());
    }
}
