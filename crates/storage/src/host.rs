//! The host-side catalog: named tables of Arrow arrays in the engine's types.

use crate::convert::{build_array, normalize_array, value_at};
use arrow::array::ArrayRef;
use arrow::record_batch::RecordBatch;
use crate::replica::{dictionary, min_max, place, ReplicaPlacement};
use arrow::array::{Array, Date32Array, Int32Array, Int64Array, StringArray};
use crate::string_dictionary::{self, StringDictionary, MAX_DICTIONARY_VALUES};
use gpusql_common::{Catalog, DataType, DictionaryCatalog, Error, Field, ReplicaCatalog, ReplicaRequest, ReplicaSummary, Result, ScalarValue, Schema, TableInfo, TableSample};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

/// Rows in a table's sample (selectivity estimates: 1% is about 10 rows).
pub const SAMPLE_ROWS: usize = 1024;

#[derive(Debug)]
pub struct HostTable {
    pub name: String,
    pub schema: Schema,
    /// One array per column, all of `rows` length.
    pub columns: Vec<ArrayRef>,
    pub rows: usize,
    /// Bumped on every change so GPU copies know they are stale.
    pub version: u64,
    /// Taken on first use (a changed table is a new HostTable, so it never goes stale).
    sample: OnceLock<TableSample>,
    /// Replica placements (see `replica`), computed on first use.
    replicas: Mutex<HashMap<ReplicaRequest, Option<Arc<ReplicaPlacement>>>>,
    /// Value ranges of integer columns (see `column_range`).
    ranges: Mutex<HashMap<usize, Option<(i64, i64)>>>,
    /// Dictionaries of string columns (see `string_dictionary`).
    string_dictionaries: Mutex<HashMap<usize, Option<Arc<StringDictionary>>>>,
}

/// An integer column's values without copying them (dates are int32 days).
enum IntSlice<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
}


impl HostTable {
    fn new(name: String, schema: Schema, columns: Vec<ArrayRef>, rows: usize, version: u64) -> HostTable {
        HostTable { name, schema, columns, rows, version, sample: OnceLock::new(), replicas: Mutex::new(HashMap::new()), ranges: Mutex::new(HashMap::new()), string_dictionaries: Mutex::new(HashMap::new()) }
    }

    /// The bank-replicated placement `r` asks for (seed 000 §3.4), computed on first use
    /// and kept with the table; None for columns that are not NULL-free integers or dates,
    /// or have more distinct values than slots.
    pub fn replica(&self, r: ReplicaRequest) -> Option<Arc<ReplicaPlacement>> {
        memo(&self.replicas, r, || {
            let start = std::time::Instant::now();
            let (col, mode) = (r.column, r.mode);
            let p = Arc::new(self.dictionary(col, r.max_slots).map(|(values, codes)| place(&codes, values, mode, r.max_slots, r.replicate))?);
            tracing::info!(
                "replica placement of {}.{} ({mode:?}): {} values, {} copies in {} slots, {:.0} ms",
                self.name,
                self.schema.fields[col].name,
                p.values.len(),
                p.copies,
                p.slot_code.len(),
                start.elapsed().as_secs_f64() * 1e3
            );
            Some(p)
        })
    }

    /// The dictionary encoding of string column `col` (`string_dictionary::build`),
    /// computed on first use; None for other types and for columns with too many
    /// distinct values.
    pub fn string_dictionary(&self, col: usize) -> Option<Arc<StringDictionary>> {
        memo(&self.string_dictionaries, col, || {
            let start = std::time::Instant::now();
            let a = self.columns[col].as_any().downcast_ref::<StringArray>().filter(|_| self.schema.fields[col].ty == DataType::Utf8)?;
            let d = Arc::new(string_dictionary::build(a, MAX_DICTIONARY_VALUES)?);
            tracing::info!("string dictionary of {}.{}: {} values, {:.0} ms", self.name, self.schema.fields[col].name, d.len(), start.elapsed().as_secs_f64() * 1e3);
            Some(d)
        })
    }

    /// The smallest and largest value of integer or date column `col` (NULL slots may
    /// widen it: a bound, not an exact range), computed once; None for other types or an
    /// empty table.
    pub fn column_range(&self, col: usize) -> Option<(i64, i64)> {
        memo(&self.ranges, col, || match self.int_slice(col)? {
            IntSlice::I32(v) => min_max(v),
            IntSlice::I64(v) => min_max(v),
        })
    }

    /// The values of integer or date column `col` (NULL slots included), as stored.
    fn int_slice(&self, col: usize) -> Option<IntSlice<'_>> {
        let a = self.columns[col].as_any();
        Some(match self.schema.fields[col].ty {
            DataType::Int32 => IntSlice::I32(a.downcast_ref::<Int32Array>()?.values()),
            DataType::Date => IntSlice::I32(a.downcast_ref::<Date32Array>()?.values()),
            DataType::Int64 => IntSlice::I64(a.downcast_ref::<Int64Array>()?.values()),
            _ => return None,
        })
    }

    /// Column `col`'s distinct values and per-row codes (None: see `replica`).
    fn dictionary(&self, col: usize, max_values: usize) -> Option<(Vec<i64>, Vec<u16>)> {
        let a = self.columns[col].as_ref();
        if a.null_count() > 0 || self.rows == 0 {
            return None;
        }
        match self.int_slice(col)? {
            IntSlice::I32(v) => dictionary(v, max_values),
            IntSlice::I64(v) => dictionary(v, max_values),
        }
    }

    /// SAMPLE_ROWS evenly spaced rows (every row of a smaller table).
    pub fn sample(&self) -> TableSample {
        self.sample
            .get_or_init(|| {
                let n = self.rows.min(SAMPLE_ROWS);
                let rows = (0..n)
                    .map(|k| {
                        let r = if n == self.rows { k } else { k * self.rows / n };
                        self.columns.iter().zip(&self.schema.fields).map(|(c, f)| value_at(c.as_ref(), &f.ty, r)).collect()
                    })
                    .collect();
                TableSample(Arc::new(rows))
            })
            .clone()
    }
}

/// What `cache` holds for `key`, computed by `make` the first time (None while its lock
/// is poisoned, as if nothing could be computed).
fn memo<K: Eq + std::hash::Hash, V: Clone>(cache: &Mutex<HashMap<K, Option<V>>>, key: K, make: impl FnOnce() -> Option<V>) -> Option<V> {
    let mut cache = cache.lock().ok()?;
    if let Some(v) = cache.get(&key) {
        return v.clone();
    }
    let v = make();
    cache.insert(key, v.clone());
    v
}

pub struct TableStore {
    tables: BTreeMap<String, Arc<HostTable>>,
    next_version: u64,
    /// Whether the catalog hands the planner table samples (else it guesses selectivities).
    pub sampling: bool,
}

impl Default for TableStore {
    fn default() -> Self {
        TableStore { tables: BTreeMap::new(), next_version: 0, sampling: true }
    }
}

fn key(name: &str) -> String {
    name.to_ascii_lowercase()
}

impl TableStore {
    pub fn get(&self, name: &str) -> Option<Arc<HostTable>> {
        self.tables.get(&key(name)).cloned()
    }

    pub fn names(&self) -> Vec<String> {
        self.tables.values().map(|t| t.name.clone()).collect()
    }

    fn bump(&mut self) -> u64 {
        self.next_version += 1;
        self.next_version
    }

    /// Registers (or replaces) a table from Arrow batches of one schema.
    pub fn register_batches(&mut self, name: &str, batches: &[RecordBatch]) -> Result<()> {
        let first = batches.first().ok_or_else(|| Error::plan(format!("table {name}: no record batches given")))?;
        let arrow_schema = first.schema();
        let mut fields = vec![];
        for f in arrow_schema.fields() {
            let ty = DataType::from_arrow(f.data_type())
                .ok_or_else(|| Error::not_supported(format!("column {}.{} of Arrow type {}", name, f.name(), f.data_type())))?;
            fields.push(Field::new(f.name().clone(), ty, f.is_nullable()));
        }
        let mut columns = vec![];
        for (i, f) in fields.iter().enumerate() {
            let parts: Vec<ArrayRef> = batches.iter().map(|b| normalize_array(b.column(i), &f.ty)).collect::<Result<_>>()?;
            let refs: Vec<&dyn arrow::array::Array> = parts.iter().map(|a| a.as_ref()).collect();
            let whole = if refs.len() == 1 { parts[0].clone() } else { arrow::compute::concat(&refs)? };
            columns.push(whole);
        }
        let rows = columns.first().map_or(0, |c| c.len());
        let version = self.bump();
        self.tables.insert(key(name), Arc::new(HostTable::new(name.to_string(), Schema::new(fields), columns, rows, version)));
        Ok(())
    }

    pub fn create_table(&mut self, name: &str, fields: Vec<Field>) -> Result<()> {
        if self.tables.contains_key(&key(name)) {
            return Err(Error::plan(format!("table '{name}' already exists")));
        }
        let columns = fields.iter().map(|f| build_array(&f.ty, &[])).collect::<Result<_>>()?;
        let version = self.bump();
        self.tables.insert(key(name), Arc::new(HostTable::new(name.to_string(), Schema::new(fields), columns, 0, version)));
        Ok(())
    }

    /// Appends rows (values already of the column types).
    pub fn insert_rows(&mut self, name: &str, rows: &[Vec<ScalarValue>]) -> Result<usize> {
        let t = self.get(name).ok_or_else(|| Error::plan(format!("unknown table '{name}'")))?;
        let mut columns = vec![];
        for (i, f) in t.schema.fields.iter().enumerate() {
            let values: Vec<ScalarValue> = rows.iter().map(|r| r[i].clone()).collect();
            let new = build_array(&f.ty, &values)?;
            columns.push(arrow::compute::concat(&[t.columns[i].as_ref(), new.as_ref()])?);
        }
        let version = self.bump();
        let n = t.rows + rows.len();
        self.tables.insert(key(name), Arc::new(HostTable::new(t.name.clone(), t.schema.clone(), columns, n, version)));
        Ok(rows.len())
    }

    pub fn drop_table(&mut self, name: &str) -> bool {
        self.tables.remove(&key(name)).is_some()
    }
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
        self.get(name).map(|t| TableInfo {
            name: t.name.clone(),
            schema: t.schema.clone(),
            row_count: t.rows,
            sample: self.sampling.then(|| t.sample()),
        })
    }
}
