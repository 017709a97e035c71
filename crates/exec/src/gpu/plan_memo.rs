//! What running a plan teaches the GPU executor, kept with the plan by the engine's plan
//! cache so that a repeated query does not work it out again: generating a pipeline's
//! kernel source costs 0.1–0.4 ms (Q21: 3.6 ms over its pipelines), and telling a new
//! plan from a seen one meant generating its first pipeline's source every run.

use super::graph::RunGraph;
use super::replay::RunLog;
use gpusql_codegen::sort::SortSpec;
use gpusql_codegen::window::WindowSpec;
use gpusql_codegen::{BuildHint, KernelSpec};
use gpusql_common::Result;
use gpusql_cuda::CudaFunction;
use gpusql_plan::parameters::ParamValues;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Kernel specs by pipeline, the build hints they were generated for, and source rows.
type SpecKey = (usize, Vec<BuildHint>, u64);

/// A plan's memo. It belongs to one plan, which must not change while it is used with it
/// (the plan cache's plans are immutable).
#[derive(Default)]
pub struct PlanMemo {
    compiled_ahead: AtomicBool,
    specs: Mutex<HashMap<SpecKey, Arc<KernelSpec>>>,
    /// Sort kernels by the sort's input intermediate.
    sorts: Mutex<HashMap<usize, Arc<SortSpec>>>,
    /// Window kernels by the window stage's input intermediate.
    windows: Mutex<HashMap<usize, Arc<WindowSpec>>>,
    /// Fully optimized kernels loaded for this memo's specs (pipelines' and sorts'), by the
    /// spec's address (it lives as long as the memo) and entry: a repeated stage takes
    /// them without hashing its 10-40 KB source to find its module (10-30 us a stage).
    functions: Mutex<HashMap<(usize, String), CudaFunction>>,
    /// What the last settled run read back from the GPU, for a replay (`replay`).
    last_run: Mutex<Option<Arc<RunLog>>>,
    /// The last replay, captured as a graph (`graph`).
    graph: Mutex<Option<RunGraph>>,
    /// Parameter values whose replay could not be captured (not tried again).
    no_graph: Mutex<Option<ParamValues>>,
}

impl PlanMemo {
    /// Whether the plan's kernels were handed to the compile threads (or found built).
    pub(crate) fn compiled_ahead(&self) -> bool {
        self.compiled_ahead.load(Ordering::Relaxed)
    }

    pub(crate) fn set_compiled_ahead(&self) {
        self.compiled_ahead.store(true, Ordering::Relaxed);
    }

    /// Pipeline `pipeline`'s kernel for `hints` over `rows` source rows: the one generated
    /// before, or `generate`'s.
    pub(crate) fn spec(
        &self,
        pipeline: usize,
        hints: &[BuildHint],
        rows: u64,
        generate: impl FnOnce() -> Result<KernelSpec>,
    ) -> Result<Arc<KernelSpec>> {
        let key = (pipeline, hints.to_vec(), rows);
        if let Some(s) = self.specs.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(s.clone());
        }
        let spec = Arc::new(generate()?);
        self.specs.lock().unwrap_or_else(|e| e.into_inner()).insert(key, spec.clone());
        Ok(spec)
    }

    /// The fully optimized kernel `entry` loaded for `spec`, one of this memo's specs.
    pub(crate) fn function<S>(&self, spec: &Arc<S>, entry: &str) -> Option<CudaFunction> {
        let key = (Arc::as_ptr(spec) as usize, entry.to_string());
        self.functions.lock().unwrap_or_else(|e| e.into_inner()).get(&key).cloned()
    }

    /// Keeps the fully optimized kernel `entry` loaded for `spec`, one of this memo's specs.
    pub(crate) fn keep_function<S>(&self, spec: &Arc<S>, entry: &str, f: CudaFunction) {
        let key = (Arc::as_ptr(spec) as usize, entry.to_string());
        self.functions.lock().unwrap_or_else(|e| e.into_inner()).insert(key, f);
    }

    /// The kernels of the sort of intermediate `input`: the ones generated before, or
    /// `generate`'s.
    pub(crate) fn sort_spec(&self, input: usize, generate: impl FnOnce() -> Result<SortSpec>) -> Result<Arc<SortSpec>> {
        if let Some(s) = self.sorts.lock().unwrap_or_else(|e| e.into_inner()).get(&input) {
            return Ok(s.clone());
        }
        let spec = Arc::new(generate()?);
        self.sorts.lock().unwrap_or_else(|e| e.into_inner()).insert(input, spec.clone());
        Ok(spec)
    }

    /// The kernels of the window stage over intermediate `input`.
    pub(crate) fn window_spec(
        &self,
        input: usize,
        generate: impl FnOnce() -> Result<WindowSpec>,
    ) -> Result<Arc<WindowSpec>> {
        if let Some(s) = self.windows.lock().unwrap_or_else(|e| e.into_inner()).get(&input) {
            return Ok(s.clone());
        }
        let spec = Arc::new(generate()?);
        self.windows.lock().unwrap_or_else(|e| e.into_inner()).insert(input, spec.clone());
        Ok(spec)
    }

    /// The last settled run's log, where it ran with `params`.
    pub(crate) fn last_run(&self, params: &ParamValues) -> Option<Arc<RunLog>> {
        self.last_run.lock().unwrap_or_else(|e| e.into_inner()).as_ref().filter(|l| l.fits(params)).cloned()
    }

    /// Keeps `log` as the last run's (None: forgets it).
    pub(crate) fn set_last_run(&self, log: Option<RunLog>) {
        *self.last_run.lock().unwrap_or_else(|e| e.into_inner()) = log.map(Arc::new);
    }

    /// The kept graph, where a run with `params` over the device store at `epoch` may
    /// launch it (one run at a time: `keep_graph` gives it back). Another is dropped.
    pub(crate) fn take_graph(&self, params: &ParamValues, epoch: u64) -> Option<RunGraph> {
        let g = self.graph.lock().unwrap_or_else(|e| e.into_inner()).take()?;
        g.fits(params, epoch).then_some(g)
    }

    pub(crate) fn keep_graph(&self, g: RunGraph) {
        *self.graph.lock().unwrap_or_else(|e| e.into_inner()) = Some(g);
    }

    /// Whether a replay with `params` may be captured (none failed to be).
    pub(crate) fn may_capture(&self, params: &ParamValues) -> bool {
        self.no_graph.lock().unwrap_or_else(|e| e.into_inner()).as_ref() != Some(params)
    }

    /// A replay with `params` could not be captured.
    pub(crate) fn set_no_graph(&self, params: &ParamValues) {
        *self.no_graph.lock().unwrap_or_else(|e| e.into_inner()) = Some(params.clone());
    }

    /// Test hook: lowers the first row count the last run's log (and the kept graph's)
    /// holds by one, as if the GPU had found more rows than the log says (a replay must
    /// then notice and run the query again). False where there is no such count.
    #[doc(hidden)]
    pub fn skew_last_run(&self) -> bool {
        if let Some(g) = self.graph.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            g.skew();
        }
        let mut held = self.last_run.lock().unwrap_or_else(|e| e.into_inner());
        let Some(skewed) = held.as_ref().and_then(|l| l.with_first_count_lowered()) else { return false };
        *held = Some(Arc::new(skewed));
        true
    }
}
