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
    /// Evenly spaced rows of the table, from which the planner measures how selective
    /// filters are; None where the catalog offers none.
    pub sample: Option<TableSample>,
    /// Columns of the table's files that the engine cannot read (name, type as the file
    /// has it); they are not in `schema`, and a query that names them fails with
    /// `not supported: column x of type T`.
    pub unsupported: Vec<(String, String)>,
    /// Per chunk (a file's row group) and column, the value ranges its metadata gives:
    /// filters skip chunks that cannot hold a matching row.
    pub statistics: Option<std::sync::Arc<TableStatistics>>,
    /// Its PRIMARY KEY and UNIQUE constraints (tables made by CREATE TABLE).
    pub unique_keys: Vec<crate::UniqueKey>,
}

impl TableInfo {
    pub fn new(name: impl Into<String>, schema: Schema, row_count: usize) -> TableInfo {
        TableInfo {
            name: name.into(),
            schema,
            row_count,
            sample: None,
            unsupported: vec![],
            statistics: None,
            unique_keys: vec![],
        }
    }
}

/// Value ranges of a table's chunks, from file metadata (Parquet row-group statistics).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TableStatistics {
    /// [chunk][column]; a column without statistics has `None` bounds.
    pub chunks: Vec<Vec<ColumnStatistics>>,
}

/// What one chunk's metadata says of one column: every non-NULL value lies in
/// [min, max] (exact or wider), and how many values are NULL, where known.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ColumnStatistics {
    pub min: Option<crate::ScalarValue>,
    pub max: Option<crate::ScalarValue>,
    pub nulls: Option<usize>,
    pub rows: usize,
}

/// Where a table's sample rows come from: a table keeps one, and the planner asks it for
/// the columns a filter reads only (a table read from files decodes nothing else).
pub trait SampleRows: Send + Sync {
    /// The sample rows' values of `columns` (table column indices), one Vec per row;
    /// None where they cannot be read.
    fn rows(&self, columns: &[usize]) -> Option<Vec<Vec<crate::ScalarValue>>>;
}

/// Rows held in memory (tests, small tables).
impl SampleRows for Vec<Vec<crate::ScalarValue>> {
    fn rows(&self, columns: &[usize]) -> Option<Vec<Vec<crate::ScalarValue>>> {
        Some(self.iter().map(|r| columns.iter().map(|c| r[*c].clone()).collect()).collect())
    }
}

/// A sample of a table's rows. Shared, compared by identity, and shown by name only
/// (plans carry it).
#[derive(Clone)]
pub struct TableSample(pub std::sync::Arc<dyn SampleRows>);

impl std::fmt::Debug for TableSample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<sample>")
    }
}

impl PartialEq for TableSample {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A view: a named query, bound anew wherever it is used.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewInfo {
    pub name: String,
    /// The query's SQL text.
    pub sql: String,
}

/// The table of one row and no visible column that a query without FROM scans
/// (`SELECT 1`), so that it runs as every other query does, through a pipeline over a
/// table. The catalog holds it from the start and lists it nowhere.
pub const ONE_ROW_TABLE: &str = "__one_row";

/// The columns of [`ONE_ROW_TABLE`]: one INTEGER that no query names (its one value is 1).
pub fn one_row_schema() -> Schema {
    Schema::new(vec![Field::new("one", DataType::Int32, false)])
}

/// Name resolution for the binder; implemented by the engine's catalog.
pub trait Catalog {
    fn table(&self, name: &str) -> Option<TableInfo>;

    /// The view called `name`, if there is one.
    fn view(&self, _name: &str) -> Option<ViewInfo> {
        None
    }

    /// The names of the tables and views (for an unknown name's nearest ones).
    fn relation_names(&self) -> Vec<String> {
        vec![]
    }

    /// Opens files as a table (`read_parquet(…)`, `FROM 'file.csv'`): reads their
    /// metadata (a CSV file's header and type inference), and returns the table under
    /// the name queries scan it by. Opening the same unchanged files again is free.
    fn open_files(&self, scan: &crate::FileScan) -> crate::Result<TableInfo> {
        Err(crate::Error::not_supported(format!("reading files ({})", scan.display())))
    }

    /// A table holding `rows` (each of `schema`'s types), for a VALUES list in a query:
    /// kept under a name of its own (listed nowhere), the same table for the same rows.
    fn values_table(&self, _schema: &Schema, _rows: &[Vec<crate::ScalarValue>]) -> crate::Result<TableInfo> {
        Err(crate::Error::not_supported("VALUES lists here"))
    }
}

/// Name prefix of the tables that hold the rows of VALUES lists (`Catalog::values_table`).
pub const VALUES_TABLE_PREFIX: &str = "__values_";

/// How a pipeline uses a bank-replicated shared-memory table ([Sitaridi 2016] §3.4): a probe
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
