//! Chooses bank-replicated shared-memory tables ([Sitaridi 2016] ch. 3) for probes and grouped
//! aggregations keyed by a column of the scanned table with few distinct values.
//!
//! The table's load-time placement (`gpusql_storage::replica`) gives every row of the
//! column a slot, such that the 32 rows of a warp use slots in distinct banks (and, for
//! writes, distinct copies). A probe then reads `table[slot[row]]`, the group id its key
//! finds in the hash table, filled per block before the row loop; an aggregation
//! accumulates into its slot and each block merges its slots into the global groups at
//! the end. Neither hashes per row, and the 2-byte slot replaces the key's load.
//!
//! The placement assumes row `r` is handled by lane `r % 32` of the warp that takes its
//! chunk, as in a plain scan: after a Lane Refill (which moves rows between lanes) or a
//! projection (which renames the columns) no table is replicated. (A multi-match probe
//! before an aggregation hands rows to other lanes as well; the result stays right, only
//! the conflict-freedom is lost.)

use crate::expr::Expr;
use crate::physical::*;
use gpusql_common::{DataType, ReplicaCatalog, ReplicaMode, ReplicaRequest};

/// Whether probes and aggregations use replicated tables (`SET replicated_tables`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicatedTables {
    /// Global hash tables only.
    Off,
    /// Shared-memory tables with one copy per value (no replication: the baseline that
    /// shows what the copies buy).
    Single,
    /// The default: group tables (writes) bank-replicated, probe tables (reads) with one
    /// copy per value. Copies measured 1.9-4.7x faster for skewed group-bys and no faster
    /// for probes (0.95-1.02x; equal keys broadcast), whose extra shared memory then only
    /// costs occupancy (SSB Q3.4 0.92x; docs/BENCHMARKS.md).
    On,
    /// Both bank-replicated (to measure replicated reads).
    All,
}

impl ReplicatedTables {
    /// Whether tables accessed in `mode` get extra copies.
    fn replicates(self, mode: ReplicaMode) -> bool {
        match self {
            ReplicatedTables::Off | ReplicatedTables::Single => false,
            ReplicatedTables::On => mode == ReplicaMode::Write,
            ReplicatedTables::All => true,
        }
    }
}

/// Static shared memory a block may have (48 KiB) less what the kernel's other buffers may
/// take (counters, block reductions).
const SMEM_BYTES: usize = 46 * 1024;
/// Shared memory of a grouped aggregation's per-block cache of the groups it found (the
/// code generator sizes the cache to fit).
pub const GROUP_CACHE_BYTES: usize = 10 * 1024;
/// Shared memory of a Lane Refill's buffers (8 KiB) and counters, and of a grouped
/// aggregation's block-local states (12 KiB), its warp-combine scratch and its group
/// cache, reserved for them when the pipeline has them (without the cache's share, a
/// fuzzed query with three replicated probe tables and a cached aggregation asked ptxas
/// for 50 KiB).
const LANE_REFILL_RESERVE: usize = 9 * 1024;
const AGGREGATE_RESERVE: usize = 13 * 1024 + GROUP_CACHE_BYTES;
/// Shared memory of one replicated group table: at most 26 KiB, so 8 blocks of 256
/// threads still fit an SM (228 KiB; with 32 KiB tables 6 fit, and the uniform group-by
/// measured 0.74x of the single-copy table's speed).
pub const REPLICA_AGGREGATE_BYTES: usize = 26 * 1024;
/// Shared memory of one replicated probe table: int group ids, 6144 slots (the SSB date
/// dimension's ~2,400 values with 2.5 copies each; 9 blocks of 24 KiB fit an SM).
pub const REPLICA_PROBE_BYTES: usize = 24 * 1024;

/// Bytes of a state's block partial in the replicated group table (None: states it does not
/// take): a COUNT in 32 bits, a SUM of 32-bit integers in 64, others as the state.
fn state_bytes(s: &AggState) -> Option<usize> {
    let arg = s.arg.as_ref().map(|a| a.ty());
    Some(match (s.func, s.ty) {
        (StateFunc::Count, _) => 4,
        (StateFunc::Sum, _) if matches!(arg, Some(DataType::Int32)) => 8,
        (_, DataType::Int32 | DataType::Date) => 4,
        (_, DataType::Int64 | DataType::Float64 | DataType::Timestamp) => 8,
        (_, DataType::Decimal { precision, .. }) => {
            if precision <= 18 {
                8
            } else {
                16
            }
        }
        (_, DataType::Boolean | DataType::Utf8 | DataType::Interval) => return None,
    })
}

/// The key column, if `keys` is a single NULL-free integer or date column of the source.
fn key_column(keys: &[Expr], source_width: usize) -> Option<usize> {
    match keys {
        [Expr::Column { index, ty: DataType::Int32 | DataType::Int64 | DataType::Date, nullable: false, .. }]
            if *index < source_width =>
        {
            Some(*index)
        }
        _ => None,
    }
}

/// Marks the probes and aggregations of `plan` that get a shared-memory table (those whose
/// key column has a placement within the shared-memory budget), replicated as `setting`
/// says.
pub fn place_replicated_tables(plan: &mut PhysicalPlan, catalog: &dyn ReplicaCatalog, setting: ReplicatedTables) {
    if setting == ReplicatedTables::Off {
        return;
    }
    for stage in &mut plan.stages {
        let Stage::Pipeline(p) = stage else { continue };
        // (Not for a scan of some row groups only: placements cover every row.)
        let Source::Table { table, columns, schema, kept: None } = &p.source else { continue };
        let width = schema.len();
        let refills = p.ops.iter().any(|op| matches!(op, PipelineOp::LaneRefill { .. }));
        let mut budget = SMEM_BYTES - if refills { LANE_REFILL_RESERVE } else { 0 };
        let mut chosen = vec![];
        let mut ask = |user: ReplicaUser,
                       column: usize,
                       mode: ReplicaMode,
                       slot_bytes: usize,
                       limit: usize,
                       budget: &mut usize| {
            let max_slots = limit.min(*budget) / slot_bytes / 32 * 32;
            if max_slots < 32 {
                return false;
            }
            let request =
                ReplicaRequest { column: columns[column], mode, max_slots, replicate: setting.replicates(mode) };
            let Some(summary) = catalog.replica(table, request) else { return false };
            *budget -= summary.slots * slot_bytes;
            chosen.push(ReplicatedTable { user, source_column: column, request, summary, slot_bytes });
            true
        };
        // The aggregation first (writes gain most), when every row stays in its lane.
        let in_order = |ops: &[PipelineOp]| {
            !ops.iter().any(|op| matches!(op, PipelineOp::LaneRefill { .. } | PipelineOp::Project { .. }))
        };
        if let Sink::Aggregate { keys, states, .. } = &p.sink {
            let bytes: Option<usize> = states.iter().map(state_bytes).sum();
            let replicated = match (in_order(&p.ops), key_column(keys, width), bytes) {
                // + 1 byte per slot: whether the block's rows touched it.
                (true, Some(c), Some(bytes)) => {
                    ask(ReplicaUser::Aggregate, c, ReplicaMode::Write, bytes + 1, REPLICA_AGGREGATE_BYTES, &mut budget)
                }
                _ => false,
            };
            if !keys.is_empty() && !replicated {
                budget = budget.saturating_sub(AGGREGATE_RESERVE);
            }
        }
        for (i, op) in p.ops.iter().enumerate() {
            if let PipelineOp::HashProbe { build, keys, .. } = op {
                if let (true, Some(c)) = (in_order(&p.ops[..i]), key_column(keys, width)) {
                    ask(ReplicaUser::Probe(*build), c, ReplicaMode::Read, 4, REPLICA_PROBE_BYTES, &mut budget);
                }
            }
        }
        p.replicated = chosen;
    }
}
