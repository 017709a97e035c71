//! How much room a pipeline's sink and string arena get: the first capacity
//! (`group_capacity`), the sizes seen on earlier runs (`SinkSizes`, `capacity_from_seen`),
//! and the larger capacity to run again with after a kernel's error (`capacity_after_error`).

use super::buffers::BuiltTable;
use gpusql_codegen::{code_type, strptime_failure, KernelError};
use gpusql_common::{DataType, Error, Result};
use gpusql_plan::{JoinKind, Pipeline, PipelineOp, Sink};
use std::collections::HashMap;

/// Groups a hash aggregation first makes room for; it grows 16x when full.
const INITIAL_GROUPS: usize = 1 << 14;

/// The sink's first capacity (groups, or rows for a materialization or a hash build) for
/// `n` source rows, and the most groups it may need.
pub(super) fn group_capacity(p: &Pipeline, n: usize, built: &HashMap<usize, BuiltTable>) -> (usize, usize) {
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

/// The rows (or groups) pipelines' sinks held when they last ran, by kernel source and
/// source rows. A sink is first sized for every row it could receive (a hash build over
/// lineitem: 60 M rows, 2^27 slots, 3 GB to allocate, zero and trim from the pool again,
/// when Q12's filters let 311 K through: 9 of its 11 ms); once a pipeline has run, its
/// buffers are sized from what it held then. The kernel source has no literal values
/// (they are parameters), so a query differing only in literals starts from its sibling's
/// size; a sink that finds it too small runs again (`run_pipeline`), as on a first run.
#[derive(Default)]
pub(super) struct SinkSizes {
    rows: HashMap<u64, usize>,
}

/// The string arena's first size per source row, when its pipeline has not run before (at
/// most MAX_FIRST_ARENA_BYTES: a big table's guess would take memory few rows may need),
/// and its least size; its sizes are kept in `SinkSizes` under the pipeline's key xor this.
pub(super) const ARENA_BYTES_PER_ROW: usize = 32;
pub(super) const MAX_FIRST_ARENA_BYTES: usize = 1 << 30;
pub(super) const MIN_ARENA_BYTES: usize = 1 << 16;
pub(super) const ARENA_KEY_SALT: u64 = 0x5354_5249_4e47_5321;

/// Sink sizes kept at most (emptied when full).
const SINK_SIZES: usize = 1 << 16;

impl SinkSizes {
    pub(super) fn key(source: &str, rows: usize) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        // (Every pipeline's source starts with the same 30 KB prelude: not hashed each run.)
        (source.strip_prefix(gpusql_codegen::prelude()).unwrap_or(source), rows).hash(&mut h);
        h.finish()
    }

    pub(super) fn get(&self, key: u64) -> Option<usize> {
        self.rows.get(&key).copied()
    }

    pub(super) fn insert(&mut self, key: u64, rows: usize) {
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
pub(super) fn capacity_from_seen(p: &Pipeline, seen: usize, first: usize, bound: usize) -> usize {
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
pub(super) struct Groups {
    /// The capacity it ran with.
    pub(super) max: usize,
    /// The most groups the sink may need.
    pub(super) bound: usize,
    /// Groups (rows) it counted.
    pub(super) count: usize,
    /// The first row that found the group table full, if any (else 0).
    pub(super) full_at: usize,
    /// Rows of the source.
    pub(super) rows: usize,
}

/// After a kernel run that reported error `code`: None where there was no error, the
/// capacity to run again with where the group table filled up, or the error.
pub(super) fn capacity_after_error(p: &Pipeline, code: i32, g: &Groups) -> Result<Option<usize>> {
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
        // (Handled by `run_pipeline`, which grows the arena.)
        (_, Some(KernelError::ArenaFull)) => Err(Error::exec(format!("pipeline_{}: string arena full", p.id))),
        _ => Err(error_of(code)),
    }
}

/// The error a kernel's flag value `code` (not 0) reports, with the CPU backend's message.
pub(super) fn error_of(code: i32) -> Error {
    match KernelError::from_code(code) {
        Some(KernelError::Overflow) => Error::exec(match code_type(code) {
            Some(ty) => format!("{ty} out of range"),
            None => "numeric value out of range".to_string(),
        }),
        Some(KernelError::Conversion) => {
            gpusql_common::text_cast::conversion_error(&code_type(code).unwrap_or(DataType::Utf8), None)
        }
        Some(KernelError::TextUnsupported) => {
            gpusql_common::text_cast::unsupported_error(&code_type(code).unwrap_or(DataType::Utf8), None)
        }
        // The CPU backend's messages (eval.rs and the others named).
        Some(KernelError::TimestampRange) => Error::exec("TIMESTAMP out of range"),
        Some(KernelError::IntervalRange) => Error::exec(gpusql_common::interval::OUT_OF_RANGE),
        Some(KernelError::SubqueryRows) => Error::exec(gpusql_plan::expr::SUBQUERY_ROWS_ERROR),
        Some(KernelError::PaddingLeft) => gpusql_plan::strings::insufficient_padding(true),
        Some(KernelError::PaddingRight) => gpusql_plan::strings::insufficient_padding(false),
        Some(KernelError::NtileArgument) => Error::exec(gpusql_plan::window::NTILE_ARGUMENT_ERROR),
        Some(KernelError::Strptime) => match strptime_failure(code) {
            Some(failure) => failure.error(),
            None => Error::exec(format!("kernel reported error code {code}")),
        },
        Some(KernelError::DivisionByZero) => Error::exec("division by zero"),
        Some(KernelError::GroupsFull | KernelError::ArenaFull) | None => {
            Error::exec(format!("kernel reported error code {code}"))
        }
    }
}
