//! Columns and schemas of tables and plan nodes, and the catalog interface the binder uses.

use crate::DataType;

#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub ty: DataType,
    pub nullable: bool,
}

impl Field {
    pub fn new(name: impl Into<String>, ty: DataType, nullable: bool) -> Self {
        Field { name: name.into(), ty, nullable }
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Schema {
    pub fields: Vec<Field>,
}

impl Schema {
    pub fn new(fields: Vec<Field>) -> Self {
        Schema { fields }
    }
    pub fn len(&self) -> usize {
        self.fields.len()
    }
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name.eq_ignore_ascii_case(name))
    }
}

/// What the binder and planner know about a stored table.
#[derive(Debug, Clone)]
pub struct TableInfo {
    pub name: String,
    pub schema: Schema,
    pub row_count: usize,
    /// Evenly spaced rows of the table (all columns), from which the planner measures how
    /// selective filters are; None where the catalog offers none.
    pub sample: Option<TableSample>,
}

/// A sample of a table's rows. Shared, compared by identity, and shown by its size only
/// (plans carry it).
#[derive(Clone)]
pub struct TableSample(pub std::sync::Arc<Vec<Vec<crate::ScalarValue>>>);

impl std::fmt::Debug for TableSample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<sample of {} rows>", self.0.len())
    }
}

impl PartialEq for TableSample {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Name resolution for the binder; implemented by the engine's catalog.
pub trait Catalog {
    fn table(&self, name: &str) -> Option<TableInfo>;
}

/// How a pipeline uses a bank-replicated shared-memory table (seed 000 §3.4): a probe
/// *reads* (lanes asking for one value share a copy: the broadcast), an aggregation
/// *writes* (every row needs its own copy within a warp, and copies the block's other
/// warps used in the same tile are avoided: value conflicts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReplicaMode {
    Read,
    Write,
}

/// What the load-time placement of one column's values into replicated slots came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaSummary {
    /// Distinct values of the column.
    pub values: usize,
    /// Slots of the table (a multiple of the 32 banks; holes included).
    pub slots: usize,
    /// Copies placed (values plus their extra copies).
    pub copies: usize,
}

/// Which placement: of stored column `column`, for `mode`, in at most `max_slots` slots;
/// without `replicate` every value keeps its single copy (the unreplicated table, to
/// measure what the copies buy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReplicaRequest {
    pub column: usize,
    pub mode: ReplicaMode,
    pub max_slots: usize,
    pub replicate: bool,
}

/// The catalog side of dictionary-encoded string columns (computed once per table
/// version and column, on first use).
pub trait DictionaryCatalog {
    /// How many distinct values string column `column` of `table` has, if it is
    /// dictionary-encoded (few distinct values for its rows); None otherwise.
    fn string_dictionary(&self, table: &str, column: usize) -> Option<usize>;
}

/// The catalog side of replicated tables: placements are computed once per table
/// version, column, mode and size (at "load time": the first query that wants one).
pub trait ReplicaCatalog {
    /// The placement `request` asks for of `table`; None when its column is not a
    /// NULL-free integer or date column, or has more distinct values than slots.
    fn replica(&self, table: &str, request: ReplicaRequest) -> Option<ReplicaSummary>;
}
