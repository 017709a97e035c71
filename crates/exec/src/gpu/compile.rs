//! Loading kernels: NVRTC builds at the quick or full tier (`tier_for`, `choose_kernels`),
//! the helper module's kernels by name (`util`), and a plan's modules handed to the
//! compile threads ahead of its first run (`compile_plan_ahead`, `balanced_groups`).

use super::device_store::cuda_error;
use super::{GpuExecutor, PlanMemo, UtilFunctions};
use crate::stats::KernelStat;
use gpusql_codegen::{generate_pipeline, BuildHint, KernelSpec};
use gpusql_common::Result;
use gpusql_cuda::{CacheHit, CudaFunction, Priority, Tier};
use gpusql_plan::{PhysicalPlan, Sink, Source, Stage};
use gpusql_storage::TableStore;
use std::collections::HashMap;
use std::sync::Arc;

pub(super) fn cache_name(h: CacheHit) -> String {
    match h {
        CacheHit::Memory => "memory",
        CacheHit::Disk => "disk",
        CacheHit::Miss => "miss",
    }
    .into()
}

impl GpuExecutor {
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
    pub(super) fn refresh_util(&self) {
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
        self.load_kept(memo, spec, &spec.source, entry, stat)
    }

    /// Window kernel `entry` of `spec` (one of `memo`'s), as `load_sort` loads a sort's.
    pub(crate) fn load_window(
        &self,
        memo: &PlanMemo,
        spec: &Arc<gpusql_codegen::window::WindowSpec>,
        entry: &str,
        stat: &mut KernelStat,
    ) -> Result<CudaFunction> {
        self.load_kept(memo, spec, &spec.source, entry, stat)
    }

    /// Kernel `entry` of `source`, the module of `memo`'s `spec`: the fully optimized one
    /// the memo keeps, else loaded at the tier `tier_for` gives (and kept when full).
    fn load_kept<S>(
        &self,
        memo: &PlanMemo,
        spec: &Arc<S>,
        source: &str,
        entry: &str,
        stat: &mut KernelStat,
    ) -> Result<CudaFunction> {
        if let Some(f) = memo.function(spec, entry) {
            return Ok(f);
        }
        let tier = self.tier_for(source);
        let f = self.load(source, entry, tier, stat)?;
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
    pub(super) fn choose_kernels(
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
    pub(super) fn compile_plan_ahead(&self, plan: &PhysicalPlan, tables: &TableStore, memo: &PlanMemo) -> Result<()> {
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
                Stage::Sort { input, keys, schema, segments, .. } => {
                    let spec =
                        memo.sort_spec(*input, || gpusql_codegen::sort::generate_sort(schema, keys, *segments))?;
                    sorts.push(spec.source.clone());
                }
                Stage::Window { input, keys, partition, calls, input_schema, .. } => {
                    let spec = memo.window_spec(*input, || {
                        gpusql_codegen::window::generate_window(input_schema, keys, *partition, calls)
                    })?;
                    sorts.push(spec.source.clone());
                }
                Stage::Slice { .. }
                | Stage::Concat { .. }
                | Stage::Repeat { .. }
                | Stage::ConcatRuns { .. }
                | Stage::BandTable { .. } => {}
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
