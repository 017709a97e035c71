//! The catalog: named tables (in memory, or read from files), views, and the tables
//! that file scans in queries open (`read_parquet('…')`, `FROM 'file.csv'`).

use crate::constraints;
use crate::convert::{build_array, normalize_array};
use crate::files::{self, FileStamp};
use crate::host::HostTable;
use arrow::array::ArrayRef;
use arrow::record_batch::RecordBatch;
use gpusql_common::{
    one_row_schema, Catalog, DataType, DictionaryCatalog, Error, Field, FileScan, OnConflict, ReplicaCatalog,
    ReplicaRequest, ReplicaSummary, Result, ScalarValue, Schema, TableInfo, TableSample, UniqueKey, ViewInfo,
    ONE_ROW_TABLE,
};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A chunk smaller than this is merged with the rows appended after it (INSERT … VALUES
/// one row at a time must not make a chunk per row).
const SMALL_CHUNK_ROWS: usize = 1 << 16;

pub struct TableStore {
    tables: BTreeMap<String, Arc<HostTable>>,
    views: BTreeMap<String, ViewInfo>,
    /// The UNIQUE / PRIMARY KEY constraints of tables made by CREATE TABLE, by table key.
    unique_keys: BTreeMap<String, Vec<UniqueKey>>,
    /// Tables opened by file scans in queries, by `FileScan::display()`, with the files'
    /// sizes and modification times when they were opened (a changed file is opened anew).
    files: Mutex<HashMap<String, (FileStamp, Arc<HostTable>)>>,
    next_version: AtomicU64,
    /// Whether the catalog hands the planner table samples (else it guesses selectivities).
    pub sampling: bool,
    /// [`ONE_ROW_TABLE`], which queries without FROM scan (found by `get`, listed nowhere).
    one_row: Arc<HostTable>,
    /// The tables of VALUES lists in queries (`Catalog::values_table`), by name, with the
    /// rows they hold (a name is a hash of them; equal rows are checked, not assumed).
    values: Mutex<HashMap<String, (Vec<Vec<ScalarValue>>, Arc<HostTable>)>>,
}

/// VALUES tables kept at most; past that they are all dropped (the catalog's generation
/// changes, so no kept plan names one).
const VALUES_TABLES: usize = 256;

impl Default for TableStore {
    fn default() -> Self {
        let one: ArrayRef = Arc::new(arrow::array::Int32Array::from(vec![1]));
        let one_row = HostTable::in_memory(ONE_ROW_TABLE.to_string(), one_row_schema(), vec![vec![one]], 1)
            .expect("the one-row table matches its schema");
        TableStore {
            tables: BTreeMap::new(),
            views: BTreeMap::new(),
            unique_keys: BTreeMap::new(),
            files: Mutex::new(HashMap::new()),
            next_version: AtomicU64::new(1),
            sampling: true,
            one_row: Arc::new(one_row),
            values: Mutex::new(HashMap::new()),
        }
    }
}

/// What loading a table under a name that is taken does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IfExists {
    /// Fail, naming the table (data sets with tables of the same name must not
    /// silently mix: TPC-H's and SSB's `customer`, `part`, `supplier`).
    #[default]
    Fail,
    /// Replace the table (a view of that name is still an error).
    Replace,
}

fn key(name: &str) -> String {
    name.to_ascii_lowercase()
}

impl TableStore {
    /// A table by name, or a table a file scan opened (by its `FileScan::display()`).
    pub fn get(&self, name: &str) -> Option<Arc<HostTable>> {
        if name == ONE_ROW_TABLE {
            return Some(self.one_row.clone());
        }
        if let Some(t) = self.tables.get(&key(name)) {
            return Some(t.clone());
        }
        if name.starts_with(gpusql_common::VALUES_TABLE_PREFIX) {
            return self.values.lock().ok()?.get(name).map(|(_, t)| t.clone());
        }
        self.files.lock().ok()?.get(name).map(|(_, t)| t.clone())
    }

    /// Names of the tables (not views), in order.
    pub fn names(&self) -> Vec<String> {
        self.tables.values().map(|t| t.name.clone()).collect()
    }

    pub fn views(&self) -> Vec<ViewInfo> {
        self.views.values().cloned().collect()
    }

    /// Changes with every change to the catalog (a table created, replaced, appended to
    /// or dropped, a view created or dropped): plans cached under one generation stay
    /// valid while it does not change.
    pub fn generation(&self) -> u64 {
        self.next_version.load(Ordering::Relaxed)
    }

    /// Whether `name` is a table of the catalog (not a view, not a file a query opened).
    pub fn is_catalog_table(&self, name: &str) -> bool {
        self.tables.contains_key(&key(name))
    }

    fn bump(&self) -> u64 {
        self.next_version.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Registers a table from Arrow batches of one schema; each batch is a chunk (not
    /// concatenated). A taken name is an error or replaced, as `if_exists` says.
    pub fn register_batches(&mut self, name: &str, batches: &[RecordBatch], if_exists: IfExists) -> Result<()> {
        self.check_names(&[name], if_exists)?;
        let first =
            batches.first().ok_or_else(|| Error::InvalidInput(format!("table {name}: no record batches given")))?;
        let fields = fields_of(name, first.schema().as_ref())?;
        let chunks = batches
            .iter()
            .filter(|b| b.num_rows() > 0 || batches.len() == 1)
            .map(|b| {
                if b.num_columns() != fields.len() {
                    return Err(Error::InvalidInput(format!("table {name}: batches of different schemas")));
                }
                fields.iter().enumerate().map(|(i, f)| normalize_array(b.column(i), &f.ty)).collect::<Result<Vec<_>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        let fields = fields
            .into_iter()
            .map(|f| Field { nullable: f.nullable || chunks.iter().any(|c| c.iter().any(|a| a.null_count() > 0)), ..f })
            .collect();
        let t = HostTable::in_memory(name.to_string(), Schema::new(fields), chunks, self.bump())?;
        self.unique_keys.remove(&key(name));
        self.tables.insert(key(name), Arc::new(t));
        Ok(())
    }

    /// Registers the files of `scan` as table `name`; a taken name is an error or
    /// replaced, as `if_exists` says. Nothing changes where the files do not open.
    pub fn register_files(&mut self, name: &str, scan: &FileScan, if_exists: IfExists) -> Result<Arc<HostTable>> {
        self.check_names(&[name], if_exists)?;
        let (_, t) = files::open(scan, name.to_string(), self.bump())?;
        let t = Arc::new(t);
        self.unique_keys.remove(&key(name));
        self.tables.insert(key(name), t.clone());
        Ok(t)
    }

    /// Fails where one of `names` is taken by a view, or, unless `if_exists` is
    /// `Replace`, by a table; the error names every such name.
    pub fn check_names(&self, names: &[&str], if_exists: IfExists) -> Result<()> {
        if let Some(n) = names.iter().find(|n| key(n) == ONE_ROW_TABLE) {
            return Err(Error::bind(format!("the table name '{n}' is reserved")));
        }
        if let Some(v) = names.iter().find(|n| self.views.contains_key(&key(n))) {
            return Err(Error::bind(format!("a view named '{v}' already exists")));
        }
        let taken: Vec<String> =
            names.iter().filter(|n| self.tables.contains_key(&key(n))).map(|n| format!("'{n}'")).collect();
        match (if_exists, taken.as_slice()) {
            (IfExists::Replace, _) | (_, []) => Ok(()),
            (IfExists::Fail, [one]) => Err(Error::bind(format!("table {one} already exists"))),
            (IfExists::Fail, [rest @ .., last]) => {
                Err(Error::bind(format!("tables {} and {last} already exist", rest.join(", "))))
            }
        }
    }

    /// Fails where `name` is taken by a table or a view.
    pub fn check_new_name(&self, name: &str) -> Result<()> {
        self.check_names(&[name], IfExists::Fail)
    }

    pub fn create_table(&mut self, name: &str, fields: Vec<Field>, unique_keys: Vec<UniqueKey>) -> Result<()> {
        self.check_new_name(name)?;
        let t = HostTable::in_memory(name.to_string(), Schema::new(fields), vec![], self.bump())?;
        self.tables.insert(key(name), Arc::new(t));
        if !unique_keys.is_empty() {
            self.unique_keys.insert(key(name), unique_keys);
        }
        Ok(())
    }

    /// Creates table `name` from query results (CREATE TABLE … AS).
    pub fn create_table_as(&mut self, name: &str, schema: Schema, batches: &[RecordBatch]) -> Result<usize> {
        self.check_new_name(name)?;
        let chunks = batch_chunks(&schema, batches)?;
        let rows = chunks.iter().map(|c| c.first().map_or(0, |a| a.len())).sum();
        let t = HostTable::in_memory(name.to_string(), schema, chunks, self.bump())?;
        self.unique_keys.remove(&key(name));
        self.tables.insert(key(name), Arc::new(t));
        Ok(rows)
    }

    /// Fails where `name` is a table over files (UPDATE and DELETE change tables in memory).
    pub fn check_writable(&self, name: &str) -> Result<()> {
        let t = self.get_table(name)?;
        if t.files().is_some() {
            return Err(Error::InvalidInput(format!(
                "table '{0}' is read-only: it reads its files. To change it, copy it into memory first: CREATE TABLE {0}_copy AS SELECT * FROM {0}",
                t.name
            )));
        }
        Ok(())
    }

    /// Replaces the rows of in-memory table `name` (UPDATE, DELETE) with `batches`, whose
    /// columns are the table's; checked against its NOT NULL and UNIQUE / PRIMARY KEY
    /// constraints first, so a failed change leaves the table as it was.
    pub fn replace_rows(&mut self, name: &str, batches: &[RecordBatch]) -> Result<()> {
        self.check_writable(name)?;
        let t = self.get_table(name)?;
        let chunks = batch_chunks(&t.schema, batches)?;
        let keys = self.unique_keys.get(&key(&t.name)).cloned().unwrap_or_default();
        let empty = HostTable::in_memory(t.name.clone(), t.schema.clone(), vec![], self.bump())?;
        let checked = constraints::check(&empty, &keys, chunks, OnConflict::Error)?;
        let new = HostTable::in_memory(t.name.clone(), t.schema.clone(), checked.new, self.bump())?;
        self.tables.insert(key(&t.name), Arc::new(new));
        Ok(())
    }

    /// Appends rows (values already of the column types).
    pub fn insert_rows(&mut self, name: &str, rows: &[Vec<ScalarValue>], on: OnConflict) -> Result<usize> {
        let t = self.get_table(name)?;
        let chunk = t
            .schema
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| build_array(&f.ty, &rows.iter().map(|r| r[i].clone()).collect::<Vec<_>>()))
            .collect::<Result<Vec<_>>>()?;
        self.append_checked(t, vec![chunk], on)
    }

    /// Appends query results whose columns are already of the table's types (INSERT …
    /// SELECT, COPY … FROM).
    pub fn insert_batches(&mut self, name: &str, batches: &[RecordBatch], on: OnConflict) -> Result<usize> {
        let t = self.get_table(name)?;
        let chunks = batch_chunks(&t.schema, batches)?;
        self.append_checked(t, chunks, on)
    }

    /// Appends `chunks` to `t` where its UNIQUE / PRIMARY KEY constraints allow (`on`
    /// says what a clash does); returns the rows appended.
    fn append_checked(&mut self, t: Arc<HostTable>, chunks: Vec<Vec<ArrayRef>>, on: OnConflict) -> Result<usize> {
        let keys = self.unique_keys.get(&key(&t.name)).cloned().unwrap_or_default();
        let checked = constraints::check(&t, &keys, chunks, on)?;
        let mut t = t;
        if let Some(kept) = &checked.kept_old {
            // INSERT OR REPLACE: the table without the rows replaced.
            let chunks = kept
                .iter()
                .enumerate()
                .map(|(k, mask)| {
                    (0..t.schema.len()).map(|c| Ok(arrow::compute::filter(t.chunk(c, k)?, mask)?)).collect()
                })
                .collect::<Result<Vec<Vec<ArrayRef>>>>()?;
            let rest = HostTable::in_memory(t.name.clone(), t.schema.clone(), chunks, self.bump())?;
            t = Arc::new(rest);
            self.tables.insert(key(&t.name), t.clone());
        }
        let rows = checked.new.iter().map(|c| c.first().map_or(0, |a| a.len())).sum();
        self.append(&t, checked.new)?;
        Ok(rows)
    }

    fn get_table(&self, name: &str) -> Result<Arc<HostTable>> {
        self.tables.get(&key(name)).cloned().ok_or_else(|| Error::bind(format!("unknown table '{name}'")))
    }

    /// Replaces `t` by itself with `chunks` appended; a small last chunk of `t` held in
    /// memory is merged with them.
    fn append(&mut self, t: &HostTable, mut chunks: Vec<Vec<ArrayRef>>) -> Result<()> {
        chunks.retain(|c| c.first().is_some_and(|a| !a.is_empty()));
        if chunks.is_empty() {
            return Ok(());
        }
        let last = t.chunks().checked_sub(1);
        let new_rows: usize = chunks.iter().map(|c| c[0].len()).sum();
        let merge = last.filter(|&k| t.files().is_none() && t.chunk_rows(k) + new_rows <= SMALL_CHUNK_ROWS);
        let new = match merge {
            Some(k) => {
                // The table without its last chunk, plus that chunk and the new ones as one.
                let mut kept: Vec<Vec<ArrayRef>> = (0..k)
                    .map(|j| (0..t.schema.len()).map(|c| t.chunk(c, j).cloned()).collect::<Result<_>>())
                    .collect::<Result<_>>()?;
                let mut merged = vec![];
                for c in 0..t.schema.len() {
                    let mut parts: Vec<&dyn arrow::array::Array> = vec![t.chunk(c, k)?.as_ref()];
                    parts.extend(chunks.iter().map(|ch| ch[c].as_ref()));
                    merged.push(arrow::compute::concat(&parts)?);
                }
                kept.push(merged);
                HostTable::in_memory(t.name.clone(), t.schema.clone(), kept, self.bump())?
            }
            None => t.appended(chunks, self.bump())?,
        };
        self.tables.insert(key(&t.name), Arc::new(new));
        Ok(())
    }

    /// COPY t FROM: the rows of `scan`'s files appended to table `name`, their columns
    /// by position cast to the table's types (a value that does not fit is an error).
    pub fn copy_from(&mut self, name: &str, scan: &FileScan) -> Result<usize> {
        let target = self.get_table(name)?;
        let (_, src) = files::open(scan, scan.display(), 0)?;
        if src.schema.len() != target.schema.len() {
            return Err(Error::bind(format!(
                "COPY {name}: the files have {} columns, the table {}",
                src.schema.len(),
                target.schema.len()
            )));
        }
        let columns: Vec<usize> = (0..src.schema.len()).collect();
        src.load(&columns, None)?;
        let mut chunks = vec![];
        for k in 0..src.chunks() {
            let chunk = target
                .schema
                .fields
                .iter()
                .enumerate()
                .map(|(c, f)| normalize_array(src.chunk(c, k)?, &f.ty))
                .collect::<Result<Vec<_>>>()?;
            chunks.push(chunk);
        }
        self.append_checked(target, chunks, OnConflict::Error)
    }

    /// Drops table `name`; false where there is none.
    pub fn drop_table(&mut self, name: &str) -> bool {
        self.bump();
        self.unique_keys.remove(&key(name));
        self.tables.remove(&key(name)).is_some()
    }

    pub fn create_view(&mut self, view: ViewInfo, replace: bool) -> Result<()> {
        self.bump();
        if self.tables.contains_key(&key(&view.name)) {
            return Err(Error::bind(format!("a table named '{}' already exists", view.name)));
        }
        if !replace && self.views.contains_key(&key(&view.name)) {
            return Err(Error::bind(format!("view '{}' already exists", view.name)));
        }
        self.views.insert(key(&view.name), view);
        Ok(())
    }

    pub fn drop_view(&mut self, name: &str) -> bool {
        self.bump();
        self.views.remove(&key(name)).is_some()
    }

    /// Forgets the tables file scans opened (they are opened again when next used).
    pub fn close_files(&self) {
        if let Ok(mut f) = self.files.lock() {
            f.clear();
        }
    }

    /// What the binder and planner see of table `t`.
    fn info(&self, t: &Arc<HostTable>) -> TableInfo {
        TableInfo {
            name: t.name.clone(),
            schema: t.schema.clone(),
            row_count: t.rows,
            sample: self.sampling.then(|| TableSample(t.clone())),
            unsupported: t.unsupported.clone(),
            statistics: t.statistics.clone(),
            unique_keys: self.unique_keys.get(&key(&t.name)).cloned().unwrap_or_default(),
        }
    }
}

/// The engine's fields for an Arrow schema (types it reads; others are an error).
fn fields_of(table: &str, schema: &arrow::datatypes::Schema) -> Result<Vec<Field>> {
    schema
        .fields()
        .iter()
        .map(|f| {
            let ty = DataType::from_arrow(f.data_type()).ok_or_else(|| {
                Error::not_supported(format!("column {}.{} of Arrow type {}", table, f.name(), f.data_type()))
            })?;
            Ok(Field::new(f.name().clone(), ty, f.is_nullable()))
        })
        .collect()
}

/// Batches as chunks of `schema`'s types (empty batches left out).
fn batch_chunks(schema: &Schema, batches: &[RecordBatch]) -> Result<Vec<Vec<ArrayRef>>> {
    batches
        .iter()
        .filter(|b| b.num_rows() > 0)
        .map(|b| {
            if b.num_columns() != schema.len() {
                return Err(Error::bind(format!(
                    "{} columns given for {} table columns",
                    b.num_columns(),
                    schema.len()
                )));
            }
            schema.fields.iter().enumerate().map(|(i, f)| normalize_array(b.column(i), &f.ty)).collect()
        })
        .collect()
}

impl ReplicaCatalog for TableStore {
    fn replica(&self, table: &str, request: ReplicaRequest) -> Option<ReplicaSummary> {
        let p = self.get(table)?.replica(request)?;
        Some(ReplicaSummary { values: p.values.len(), slots: p.slot_code.len(), copies: p.copies })
    }
}

impl DictionaryCatalog for TableStore {
    fn string_dictionary(&self, table: &str, column: usize) -> Option<usize> {
        Some(self.get(table)?.string_dictionary(column)?.len())
    }
}

impl Catalog for TableStore {
    fn table(&self, name: &str) -> Option<TableInfo> {
        self.tables.get(&key(name)).map(|t| self.info(t))
    }

    fn view(&self, name: &str) -> Option<ViewInfo> {
        self.views.get(&key(name)).cloned()
    }

    fn relation_names(&self) -> Vec<String> {
        self.names().into_iter().chain(self.views.values().map(|v| v.name.clone())).collect()
    }

    fn open_files(&self, scan: &FileScan) -> Result<TableInfo> {
        let name = scan.display();
        let stamp = files::stamp(scan)?;
        let mut open = self.files.lock().map_err(|_| Error::exec("file table cache poisoned"))?;
        if let Some((s, t)) = open.get(&name) {
            if *s == stamp {
                return Ok(self.info(t));
            }
        }
        let (stamp, t) = files::open(scan, name.clone(), self.bump())?;
        let t = Arc::new(t);
        open.insert(name, (stamp, t.clone()));
        Ok(self.info(&t))
    }

    fn values_table(&self, schema: &Schema, rows: &[Vec<ScalarValue>]) -> Result<TableInfo> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        for f in &schema.fields {
            (f.ty.to_string(), f.nullable).hash(&mut h);
        }
        for r in rows {
            for v in r {
                format!("{v:?}").hash(&mut h);
            }
        }
        let base = h.finish();
        let mut kept = self.values.lock().map_err(|_| Error::exec("VALUES table cache poisoned"))?;
        // (Another list of the same hash takes the next name.)
        for probe in 0u64.. {
            let name = format!("{}{:016x}", gpusql_common::VALUES_TABLE_PREFIX, base.wrapping_add(probe));
            match kept.get(&name) {
                Some((r, t)) if r.as_slice() == rows && t.schema == *schema => return Ok(self.info(t)),
                Some(_) => continue,
                None => {
                    if kept.len() >= VALUES_TABLES {
                        kept.clear();
                    }
                    let columns = (0..schema.len())
                        .map(|c| {
                            let values: Vec<ScalarValue> = rows.iter().map(|r| r[c].clone()).collect();
                            build_array(&schema.fields[c].ty, &values)
                        })
                        .collect::<Result<Vec<_>>>()?;
                    let t = Arc::new(HostTable::in_memory(name.clone(), schema.clone(), vec![columns], self.bump())?);
                    kept.insert(name, (rows.to_vec(), t.clone()));
                    return Ok(self.info(&t));
                }
            }
        }
        unreachable!("a free name is found")
    }
}
