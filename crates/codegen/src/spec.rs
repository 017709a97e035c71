//! What a generated kernel is and what the executor passes it: the kernel parameters
//! (`Param` and the parts of columns and tables they point at), what is known about the
//! hash tables a probe reads (`BuildHint`), and the generated module (`KernelSpec`).

use crate::in_set::{self, InSetPart};
use crate::literals::{self, KernelLiteral, LiteralPart};

/// Threads per block of pipeline kernels (8 warps).
pub const BLOCK_SIZE: u32 = 256;

/// Part of a column a kernel parameter points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Part {
    /// Fixed-width values (for strings in intermediates: `Str` records).
    Values,
    /// One byte per row, 1 = valid.
    Validity,
    /// String column of a table: int64 offsets (rows + 1) and the bytes.
    Offsets,
    Bytes,
    /// String column of a table: its Pivot-4 copy (`const uint32_t*`, piece k of row r at
    /// k * rows + r; null where the column has none).
    Pivoted,
    /// Dictionary-encoded string column of a table: a 2-byte code per row, and per code
    /// the value's `Str` record (with its hash).
    DictCodes,
    DictValues,
}

/// What the executor passes for each kernel parameter, in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Param {
    /// uint64_t: rows of the source.
    RowCount,
    /// Pointer to a source column's part.
    Input {
        column: usize,
        part: Part,
    },
    /// Pointer to a sink output column's part (materialized rows, or group keys).
    Output {
        column: usize,
        part: Part,
    },
    /// unsigned long long*: rows written by a materialize sink / groups created.
    OutCount,
    /// uint64_t: rows the output columns hold (materialize, hash-build payload). A pipeline
    /// with a multi-match join can emit more rows than it reads: rows past the capacity are
    /// counted but not written, and the executor runs the pipeline again with room for all.
    OutCapacity,
    /// Pointer to aggregate state `index` (one value per group).
    State {
        index: usize,
    },
    /// int*: the hash table's slots (group ids, -1 empty).
    HashSlots,
    /// uint32_t: slots - 1 (a power of two minus one).
    HashMask,
    /// uint32_t: groups the key/state arrays can hold.
    MaxGroups,
    /// int*: first error raised by the kernel (0 = none).
    ErrorFlag,
    /// The string arena of functions that make strings (strings.cu's `Arena`): its bytes
    /// (`uint8_t*`), its size (uint64_t) and the counter of bytes taken
    /// (`unsigned long long*`).
    Arena,
    ArenaCapacity,
    ArenaUsed,
    /// HashBuild: pointer to the key arrays of the table being built (per group).
    GroupKey {
        key: usize,
        part: Part,
    },
    /// HashBuild: unsigned long long* count of distinct keys.
    GroupCount,
    /// HashBuild: uint32_t* rows per group, and per materialized row its group id.
    GroupRows,
    RowGroup,
    /// HashBuild: int*, set to 1 when some key has several rows.
    MultiFlag,
    /// HashProbe: a part of a finished hash table `id`.
    Build {
        id: usize,
        part: BuildPart,
    },
    /// A part of the pipeline's replicated table `index` (into `Pipeline::replicated`).
    Replica {
        index: usize,
        part: ReplicaPart,
    },
    /// A part of literal set `index` (into `KernelSpec::in_sets`; see `in_set.rs`).
    InSet {
        index: usize,
        part: InSetPart,
    },
    /// A part of the query constant `index` (into `KernelSpec::literals`; see
    /// `literals.rs`): a value, or a pointer into the launch's literal buffer.
    Literal {
        index: usize,
        part: LiteralPart,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplicaPart {
    /// `const uint16_t*`: per source row, its slot.
    RowSlots,
    /// Per slot, the key value it holds (the key column's C type).
    SlotValues,
    /// `const uint16_t*`: per slot, the code of its value; value `c`'s first copy is slot
    /// `c`, so a table is filled by looking up slots below the value count and copying
    /// the rest from `table[code]`.
    SlotCodes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BuildPart {
    Slots,
    /// uint32_t: slots - 1.
    Mask,
    Key(usize),
    /// uint32_t* first payload position of each group, and the group's row count.
    Offsets,
    Counts,
    Payload {
        column: usize,
        part: Part,
    },
    /// Single integer keys: per slot {key, group id} (int2 / longlong2), so a probe step
    /// is one load; group id -1 marks an empty slot.
    Entries,
    /// Dense single integer keys: int32 group id per key value (see BuildHint::direct_min).
    Direct,
    /// `const uint32_t*`: the key bitmap (see BuildHint::bitmap).
    Bitmap,
    /// uint32_t: the build's own slots - 1 (`Slots`; `Mask` is that of the table probes
    /// read, which may be the entries or direct table instead).
    SlotMask,
    /// A band table's running maximum of the column its probes search an upper bound of.
    BandMax,
}

/// What the executor knows about a finished hash table when it generates a probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BuildHint {
    pub id: usize,
    /// Some key has several rows (the probe needs an expansion loop).
    pub multi: bool,
    /// Slots of the table probes read.
    pub slots: usize,
    /// Copy the table into each block's shared memory (if it fits the budget).
    pub shared_memory: bool,
    /// Dense integer keys: the table is a direct-mapped array of `slots` group ids indexed
    /// by `key - min` (-1: no row), and this is `min`.
    pub direct_min: Option<i64>,
    /// A bit per key value in [min, min + bits) (BuildPart::Bitmap), tested before the
    /// hash lookup: (min, bits).
    pub bitmap: Option<(i64, u64)>,
    /// The key bitmap may be tested by an earlier probe of the pipeline, before its Lane
    /// Refill (`SET early_bitmaps`; see `hash_join::early_bitmap_probes`).
    pub early: bool,
    /// Generated before the build ran: the probe looks keys up in the build's own slots
    /// and key arrays and walks match ranges, which every finished table has (for unique
    /// keys the executor supplies ranges of one row), whatever form it turned out to take.
    /// Such kernels compile while the query's first stages run (`BuildHint::generic`).
    pub generic: bool,
}

impl BuildHint {
    /// The hint for a table not built yet: valid for any table (see `generic`).
    pub fn generic(id: usize) -> BuildHint {
        BuildHint {
            id,
            multi: true,
            slots: usize::MAX,
            shared_memory: false,
            direct_min: None,
            bitmap: None,
            early: false,
            generic: true,
        }
    }
}

/// Probe tables at most this large are copied into each block's shared memory, up to
/// `SMEM_TABLES_BUDGET` bytes for all tables of a pipeline (under the 48 KiB of static
/// shared memory a block may have; at the budget 8 blocks of 256 threads still fit an SM:
/// 32 KiB tables cost occupancy and measured slower).
pub const SMEM_TABLE_BYTES: usize = 16 * 1024;
pub const SMEM_TABLES_BUDGET: usize = 24 * 1024;

/// The entry type of a probe table over a single key of C type `c_ty`, if it has one.
pub fn entry_type(c_ty: &str) -> Option<(&'static str, usize)> {
    match c_ty {
        "int32_t" => Some(("int2", 8)),
        "int64_t" => Some(("longlong2", 16)),
        _ => None,
    }
}

/// A generated module: the pipeline kernel and, for aggregations, an init kernel that
/// fills the hash table and MIN/MAX states with their identities.
#[derive(Debug, Clone)]
pub struct KernelSpec {
    pub source: String,
    pub entry: String,
    pub params: Vec<Param>,
    pub init: Option<InitKernel>,
    /// Source columns the kernel loads (others are declared but never read: a key a
    /// replicated table replaces by the rows' slots).
    pub source_columns_read: Vec<usize>,
    /// The literal sets of `Param::InSet` (the executor uploads `in_set::buffer`s).
    pub in_sets: Vec<std::sync::Arc<gpusql_plan::LiteralSet>>,
    /// The query constants of `Param::Literal` (the executor binds them through
    /// `literals::LiteralData`). Queries that differ only in these share the source.
    pub literals: Vec<KernelLiteral>,
}

#[derive(Debug, Clone)]
pub struct InitKernel {
    pub entry: String,
    pub params: Vec<Param>,
}

impl Param {
    /// The parameter's C name in a pipeline kernel.
    pub fn c_name(&self) -> String {
        let lower = |part: &dyn std::fmt::Debug| format!("{part:?}").to_lowercase();
        match self {
            Param::RowCount => "n_rows".to_string(),
            Param::Input { column, part } => format!("in{column}_{}", lower(part)),
            Param::Output { column, part } => format!("out{column}_{}", lower(part)),
            Param::OutCount => "out_count".into(),
            Param::OutCapacity => "out_capacity".into(),
            Param::State { index } => format!("state{index}"),
            Param::HashSlots => "ht_slots".into(),
            Param::HashMask => "ht_mask".into(),
            Param::MaxGroups => "max_groups".into(),
            Param::ErrorFlag => "err".into(),
            Param::Arena => "arena_base".into(),
            Param::ArenaCapacity => "arena_cap".into(),
            Param::ArenaUsed => "arena_used".into(),
            Param::GroupKey { key, part } => format!("gkey{key}_{}", lower(part)),
            Param::GroupRows => "group_rows".into(),
            Param::GroupCount => "group_count".into(),
            Param::RowGroup => "row_group".into(),
            Param::MultiFlag => "multi_flag".into(),
            Param::Replica { index, part } => match part {
                ReplicaPart::RowSlots => format!("rp{index}_slots"),
                ReplicaPart::SlotValues => format!("rp{index}_values"),
                ReplicaPart::SlotCodes => format!("rp{index}_codes"),
            },
            Param::InSet { index, part } => in_set::param_name(*index, *part),
            Param::Literal { index, part } => literals::param_name(*index, *part),
            Param::Build { id, part } => match part {
                BuildPart::Slots => format!("ht{id}_slots"),
                BuildPart::Mask => format!("ht{id}_mask"),
                BuildPart::Key(k) => format!("ht{id}_key{k}"),
                BuildPart::Offsets => format!("ht{id}_offsets"),
                BuildPart::Counts => format!("ht{id}_counts"),
                BuildPart::Payload { column, part } => format!("ht{id}_col{column}_{}", lower(part)),
                BuildPart::Entries => format!("ht{id}_entries"),
                BuildPart::Direct => format!("ht{id}_direct"),
                BuildPart::Bitmap => format!("ht{id}_bitmap"),
                BuildPart::SlotMask => format!("ht{id}_slot_mask"),
                BuildPart::BandMax => format!("ht{id}_band_max"),
            },
        }
    }
}
