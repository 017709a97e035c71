//! The plans the engine keeps by statement text and by shape (`PlanCache`).

use super::*;

/// A repeated SELECT skips binding, optimizing and planning (0.5-5 ms a TPC-H query:
/// selectivity samples, placements): its physical plan is kept by the statement's text,
/// and, where it was planned with its literals as parameters, by its shape
/// (`gpusql_sql::parameterize`): a query differing only in those literals runs that plan
/// with its values.
/// Valid while the catalog's generation and the settings are unchanged (a `SET` clears
/// it). Plans scanning files named in the query are not kept (the files may change).
#[derive(Default)]
pub(crate) struct PlanCache {
    pub(crate) generation: u64,
    pub(crate) plans: std::collections::HashMap<String, Arc<CachedPlan>>,
}

/// A kept plan, and what the GPU executor learnt running it (its kernels' sources, ...),
/// shared by the plans made from one template (`parameters.rs` in the plan crate).
pub(crate) struct CachedPlan {
    pub(crate) plan: PhysicalPlan,
    pub(crate) memo: Arc<PlanMemo>,
    /// Its statement nests expressions at most `IN_PLACE_EXPRESSION_DEPTH` deep: run
    /// again by its text, it runs on the caller's thread (`Engine::execute`).
    pub(crate) shallow: bool,
}

/// How deeply a kept plan's statement may nest expressions to run on the caller's thread
/// (a thread of the 2 MiB Rust gives spawned threads, say) rather than on the statement
/// thread's big stack: the passes that recurse over expressions then need little stack
/// (crates/engine/tests/depth.rs runs this depth on a thread of 256 KiB).
pub(crate) const IN_PLACE_EXPRESSION_DEPTH: usize = 32;

/// Plans kept at most (least recently added go first).
pub(crate) const PLAN_CACHE_ENTRIES: usize = 256;

impl PlanCache {
    pub(crate) fn get(&mut self, generation: u64, sql: &str) -> Option<Arc<CachedPlan>> {
        if generation != self.generation {
            self.plans.clear();
            self.generation = generation;
        }
        self.plans.get(sql).cloned()
    }

    /// The kept plan of the text `sql`, where it is shallow (and nothing is dropped:
    /// a plan of deep expressions is only dropped on the statement thread).
    pub(crate) fn get_shallow(&self, generation: u64, sql: &str) -> Option<Arc<CachedPlan>> {
        let p = self.plans.get(sql).filter(|p| p.shallow && generation == self.generation)?;
        Some(p.clone())
    }

    pub(crate) fn insert(&mut self, generation: u64, sql: String, plan: Arc<CachedPlan>) {
        if generation != self.generation {
            self.plans.clear();
            self.generation = generation;
        }
        if self.plans.len() >= PLAN_CACHE_ENTRIES {
            self.plans.clear();
        }
        self.plans.insert(sql, plan);
    }
}
