//! GPU backend: generates one kernel per pipeline, compiles it with NVRTC (cached), binds
//! its parameters to GPU-resident columns and sink buffers, launches it and times it with
//! CUDA events. Sort stages rank small inputs and run bitonic sort kernels on larger ones;
//! results are gathered on the GPU and downloaded into Arrow arrays.

mod band;
mod bind;
mod buffers;
mod capacity;
mod compile;
mod concat_runs;
pub mod device_store;
mod graph;
mod join;
mod launch;
mod pipeline;
mod plan_memo;
mod radix_sort;
mod replay;
mod result;
mod scan;
mod set_ops;
mod sort;
mod upload;
mod window;

use crate::gpu::device_store::cuda_error;
use crate::stats::{ExecStats, HostSteps};
use buffers::{BuiltTable, Intermediate};
use capacity::SinkSizes;
use device_store::DeviceStore;
use gpusql_codegen::{generate_pipeline, BuildHint};
use gpusql_common::{Error, Result};
use gpusql_cuda::{cudarc::driver::DevicePtr, CudaFunction, CudaSlice, GpuDevice, Tier};
use gpusql_plan::{PhysicalPlan, SessionConfig, Sink, Source, Stage};
use gpusql_storage::TableStore;
use pipeline::Produced;
use replay::ReadBacks;
use std::collections::HashMap;
use std::sync::Arc;

pub use buffers::value_width;
pub(crate) use launch::{LaunchQueue, Permute};
pub use plan_memo::PlanMemo;

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

    /// Notes in `held` what a graph being captured on this thread uses (nothing when
    /// not capturing).
    fn hold(&self, note: impl FnOnce(&mut graph::Held)) {
        if self.dev.capturing_here() {
            if let Some(h) = self.held.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                note(h);
            }
        }
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
                Stage::Sort { input, output, keys, limit, segments, .. } => {
                    let data = inter.remove(input).ok_or_else(|| Error::exec("sort input missing"))?;
                    let spec =
                        memo.sort_spec(*input, || gpusql_codegen::sort::generate_sort(&data.schema, keys, *segments))?;
                    let (sorted, stat, spans) = sort::run(self, data, &spec, *limit, *input, memo, reads)?;
                    pending_spans.extend(spans.into_iter().map(|s| (stats.kernels.len(), s)));
                    stats.kernels.push(stat);
                    inter.insert(*output, sorted);
                }
                Stage::Slice { input, output, columns, skip, fetch, position, schema } => {
                    let mut data = inter.remove(input).ok_or_else(|| Error::exec("slice input missing"))?;
                    let position = match (*position, data.positions.take()) {
                        (false, _) => result::Position::None,
                        (true, Some(kept)) => result::Position::Kept(kept),
                        (true, None) => result::Position::Rows,
                    };
                    let (sliced, stat, span) =
                        result::slice(self, &data, columns, (*skip, *fetch), position, schema, *input)?;
                    pending_spans.push((stats.kernels.len(), span));
                    stats.kernels.push(stat);
                    inter.insert(*output, sliced);
                }
                Stage::BandTable { input, output, max, .. } => {
                    let data = inter.remove(input).ok_or_else(|| Error::exec("band table input missing"))?;
                    let mut stat =
                        crate::stats::KernelStat { name: format!("band table #{output}"), ..Default::default() };
                    (stat.rows_in, stat.rows_out) = (data.rows, data.rows);
                    let (table, span) = band::band_table(self, data, *max, &mut stat)?;
                    pending_spans.extend(span.map(|s| (stats.kernels.len(), s)));
                    stats.kernels.push(stat);
                    built.insert(*output, table);
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
                Stage::Window { input, output, keys, partition, calls, columns, input_schema, schema } => {
                    let data = inter.remove(input).ok_or_else(|| Error::exec("window input missing"))?;
                    let spec = memo.window_spec(*input, || {
                        gpusql_codegen::window::generate_window(input_schema, keys, *partition, calls)
                    })?;
                    let (rows, stat, span) =
                        window::window(self, data, &spec, calls, columns, schema, *output, memo, reads)?;
                    pending_spans.push((stats.kernels.len(), span));
                    stats.kernels.push(stat);
                    inter.insert(*output, rows);
                }
                Stage::ConcatRuns { input, output, keys, value, position, separator, schema } => {
                    let data = inter.remove(input).ok_or_else(|| Error::exec("string_agg input missing"))?;
                    let done = concat_runs::concat_runs(
                        self, &data, keys, *value, *position, separator, schema, *output, reads,
                    )?;
                    pending_spans.extend(done.spans.into_iter().map(|s| (stats.kernels.len(), s)));
                    stats.kernels.push(done.stat);
                    // (The strings point into the buffer, as into a pipeline's arena.)
                    arenas.push(done.bytes);
                    inter.insert(*output, done.rows);
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
                Stage::Sort { input, keys, schema, segments, .. } => {
                    let sort = gpusql_codegen::sort::generate_sort(schema, keys, *segments)?;
                    out.push((format!("sort #{input}"), sort.source))
                }
                Stage::Window { input, keys, partition, calls, input_schema, .. } => {
                    let window = gpusql_codegen::window::generate_window(input_schema, keys, *partition, calls)?;
                    out.push((format!("window #{input}"), window.source))
                }
                Stage::Slice { .. }
                | Stage::Concat { .. }
                | Stage::Repeat { .. }
                | Stage::ConcatRuns { .. }
                | Stage::BandTable { .. } => {}
            }
        }
        Ok(out)
    }
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
