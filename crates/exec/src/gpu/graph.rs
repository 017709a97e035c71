//! Replayed runs as CUDA graphs. A replay (`replay`) launches its stages back to back,
//! but the host still does each stage's work between launches: sizing and allocating
//! its buffers, finding its kernels, binding and launching them, finishing a hash
//! build (40-170 us a stage). With small dimension builds before a large probe (SSB
//! q3.4 at SF 20: three builds of 0.04 ms of GPU time each took 0.13-0.17 ms of host
//! time), the probe started ~0.45 ms into a 0.9 ms query.
//!
//! So the first replay of a plan with given parameter values is captured as a CUDA graph
//! (`GpuDevice::capture`): its allocations, launches, the copies of the values read back
//! into the audit buffer and its timing events, then the frees of every buffer but the
//! result's. A later run with the same values launches the graph whole: one call on the
//! host, the stages back to back on the GPU, then the result's download and the audit's
//! check as in a replay. The graph's buffers lie at the same addresses each launch, so
//! the result is downloaded from the captured run's description of it, and its buffers,
//! which the graph does not free, are freed after the download.
//!
//! What the graph reads beyond its own buffers must not move: the kernels and constant
//! buffers it uses are held with it (`Held`), and resident table columns are those of the
//! device store's epoch it was captured in (a graph of another epoch is dropped). A
//! capture that would record an upload or a wait (a column not resident yet, a key range
//! read with `direct_tables`) fails, and the run replays without a graph; so does a run
//! that would load a kernel (one not kept by the plan yet: not its fully optimized form),
//! to be captured another time.

use super::buffers::Intermediate;
use super::device_store::cuda_error;
use super::replay::{ReadBacks, RunLog};
use super::{ptr, GpuExecutor, HostSteps, PlanMemo};
use crate::stats::ExecStats;
use arrow::record_batch::RecordBatch;
use gpusql_common::{Error, Result};
use gpusql_cuda::{CudaFunction, CudaSlice, EndedTimer, Graph};
use gpusql_plan::parameters::ParamValues;
use gpusql_plan::PhysicalPlan;
use gpusql_storage::TableStore;
use std::sync::Arc;

/// What a graph uses that is not its own: the kernels it launches (their modules stay
/// loaded) and the constant buffers it reads. And whether a kernel had to be loaded
/// (modules are not loaded during a capture: it is captured another time).
#[derive(Default)]
pub(crate) struct Held {
    pub functions: Vec<CudaFunction>,
    pub buffers: Vec<Arc<CudaSlice<u8>>>,
    pub loading: bool,
}

/// A captured replay, launched again by runs with its parameter values.
pub(crate) struct RunGraph {
    graph: Graph,
    /// The replay's log and audit buffer (the graph copies the values read back into it).
    /// Each launch's download goes on from where the captured stages left it
    /// (`ReadBacks::resume`): it reads back the result strings' size after them.
    reads: ReadBacks,
    /// The result intermediate: buffers the graph allocates at each launch and does not
    /// free.
    result: GraphResult,
    /// The captured run's statistics (stages, rows, bytes read), less kernel times.
    stats: ExecStats,
    /// Each stage's GPU span (events the graph records).
    spans: Vec<(usize, EndedTimer)>,
    _held: Held,
    /// The device store's epoch the graph read resident columns in.
    epoch: u64,
}

impl RunGraph {
    /// Whether a run with `params`, the device store at `epoch`, may launch this graph.
    pub fn fits(&self, params: &ParamValues, epoch: u64) -> bool {
        self.reads.fits(params) && self.epoch == epoch
    }

    /// `PlanMemo::skew_last_run`.
    pub(crate) fn skew(&mut self) {
        self.reads.skew();
    }
}

/// The result intermediate of a captured run. Its buffers are the graph's: never freed
/// through it (its description outlives each launch's buffers), but by `free` after each
/// launch's download.
struct GraphResult(std::mem::ManuallyDrop<Intermediate>);

impl GraphResult {
    /// Frees the buffers of the last launch, after the work queued so far.
    fn free(&self, ex: &GpuExecutor) -> Result<()> {
        let r = &*self.0;
        let columns = r.columns.iter().flat_map(|c| std::iter::once(&c.values).chain(c.validity.as_ref()));
        let pointers = columns.map(|s| ptr(s, &ex.dev)).chain(r.perm.as_ref().map(|p| ptr(p, &ex.dev)));
        for p in pointers.filter(|p| *p != 0) {
            // SAFETY: a buffer the graph allocated and left to the run; the download that
            // read it is queued before.
            unsafe { ex.dev.free_graph_buffer(p) }.map_err(cuda_error)?;
        }
        Ok(())
    }
}

impl Drop for GraphResult {
    fn drop(&mut self) {
        // SAFETY: taken once, here.
        let r = unsafe { std::mem::ManuallyDrop::take(&mut self.0) };
        for c in r.columns {
            c.values.leak();
            if let Some(v) = c.validity {
                v.leak();
            }
        }
        if let Some(p) = r.perm {
            p.leak();
        }
    }
}

impl GpuExecutor {
    /// Replays a run of `plan` with the values in `log`, capturing it as a graph, and
    /// launches the graph: Ok(None) where it cannot be captured (nothing ran; replay it
    /// without a graph), Err where the launch failed or diverged from the log. The graph
    /// is kept in `memo` where its kernels are all fully optimized. A run that cannot be
    /// captured is not tried again with these values, unless it only had to load a
    /// kernel first (modules are not loaded during a capture).
    pub(crate) fn capture_run(
        &self,
        plan: &PhysicalPlan,
        tables: &TableStore,
        memo: &PlanMemo,
        log: Arc<RunLog>,
    ) -> Result<Option<(Vec<RecordBatch>, ExecStats)>> {
        // The compile threads load and drop modules, which must not happen while a graph
        // is captured: it is captured another time.
        if !self.dev.compiles_idle() {
            return Ok(None);
        }
        let (start, mut stats) = self.start_run(plan, tables, memo)?;
        let mut reads = ReadBacks::replay(&self.dev, log)?;
        let epoch = self.store.epoch();
        *self.held.lock().unwrap_or_else(|e| e.into_inner()) = Some(Held::default());
        let captured = self.dev.capture(|| {
            let mut ran = self.run_stages(plan, tables, memo, &mut reads, &mut stats)?;
            let result = ran.inter.remove(&plan.result).ok_or_else(|| Error::exec("result intermediate missing"))?;
            // (Every other buffer is freed by the graph.)
            let result = GraphResult(std::mem::ManuallyDrop::new(result));
            Ok::<_, Error>((result, std::mem::take(&mut ran.pending_spans)))
        });
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or_default();
        let Ok(captured) = captured else { return Ok(None) }; // (another thread captures)
        let failed = match captured {
            (Ok((result, spans)), Ok(graph)) => {
                if self.config.profile_host {
                    eprintln!("graph nodes: {:?}", graph.node_kinds().map_err(cuda_error)?);
                }
                // (Kept kernels are fully optimized; the helper module's may not be yet.)
                let keep = self.util_is_full();
                let run = RunGraph { graph, reads, result, stats, spans, _held: held, epoch };
                let mut out = self.launch_run(&run, plan)?;
                // (Capturing is part of this run.)
                out.1.total_ms = start.elapsed().as_secs_f64() * 1e3;
                if keep {
                    memo.keep_graph(run);
                }
                return Ok(Some(out));
            }
            (Err(Error::Cancelled), _) => return Err(Error::Cancelled),
            (Err(e), _) => e.to_string(),
            (Ok(_), Err(e)) => e.to_string(),
        };
        tracing::debug!("a replay could not be captured as a graph ({failed})");
        if !held.loading {
            memo.set_no_graph(&plan.parameters);
        }
        Ok(None)
    }

    /// Launches a kept graph and downloads its result (checking the values read back
    /// against its log).
    pub(crate) fn launch_run(&self, run: &RunGraph, plan: &PhysicalPlan) -> Result<(Vec<RecordBatch>, ExecStats)> {
        let start = std::time::Instant::now();
        self.cancel.check()?;
        let mut steps = HostSteps::new(self.config.profile_host);
        steps.last = start;
        let mut stats = run.stats.clone();
        for k in &mut stats.kernels {
            k.wall_ms = 0.0;
        }
        steps.mark("stats");
        // (Profiling: the graph's GPU span, beside its kernels' spans.)
        let timer = self.config.profile_host.then(|| self.dev.timer_start()).transpose().map_err(cuda_error)?;
        self.dev.launch_graph(&run.graph).map_err(cuda_error)?;
        let timer = timer.map(|t| t.end_here()).transpose().map_err(cuda_error)?;
        steps.mark("launch");
        steps.print("graph");
        let batches = self.finish_run(plan, &run.result.0, &mut run.reads.resume(), &run.spans, &mut stats, start);
        if let Some(t) = timer {
            eprintln!(
                "graph on the GPU: {:.3} ms (its kernels' spans: {:.3} ms)",
                t.ms().map_err(cuda_error)?,
                stats.kernel_ms
            );
        }
        // (Whatever the download found: the next launch allocates them again.)
        let mut steps = HostSteps::new(self.config.profile_host);
        let freed = run.result.free(self);
        steps.mark("free");
        let batches = batches?;
        freed?;
        stats.replayed = true;
        stats.graph = true;
        self.end_query(&mut steps);
        Ok((batches, stats))
    }
}
