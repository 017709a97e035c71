//! A table on the host: Arrow arrays in the engine's types, in chunks (a file's row
//! groups, a generator's batches, each INSERT), never concatenated into one array, so a
//! string column may hold any number of bytes. A table read from files decodes a chunk's
//! column the first time something needs it (`load`), so columns and row groups no query
//! touches are never read.

use crate::convert::stored_value_at;
use crate::replica::{dictionary_of_chunks, min_max, place_in_background, ReplicaPlacement};
use crate::string_dictionary::{self, StringDictionary, MAX_DICTIONARY_VALUES};
use arrow::array::{Array, ArrayRef, Date32Array, Int32Array, Int64Array, StringArray};
use gpusql_common::{DataType, Error, ReplicaRequest, Result, SampleRows, ScalarValue, Schema, TableStatistics};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Rows in a table's sample (selectivity estimates: 1% is about 10 rows).
pub const SAMPLE_ROWS: usize = 1024;

/// Chunks a sample of a table read from files is drawn from (each decoded for the
/// columns filters test; evenly spaced over the table).
const SAMPLE_CHUNKS: usize = 8;

/// Where the chunks of a table read from files come from.
pub trait ChunkSource: Send + Sync {
    /// Decodes columns `columns` (table column indices, ascending) of chunk `chunk` into
    /// arrays of the engine's Arrow types (`DataType::to_arrow`), each of the chunk's rows.
    fn read(&self, chunk: usize, columns: &[usize]) -> Result<Vec<ArrayRef>>;
    /// About how many bytes those arrays take in memory (from the file's metadata), so a
    /// load larger than the memory left fails with a clear error instead of the OOM killer.
    fn decoded_bytes(&self, chunk: usize, columns: &[usize]) -> u64;
    /// The files, their total size on disk, and what format they are in (`\d`).
    fn describe(&self) -> FilesInfo;
}

#[derive(Debug, Clone, PartialEq)]
pub struct FilesInfo {
    pub format: &'static str,
    pub paths: Vec<String>,
    pub bytes: u64,
}

pub struct HostTable {
    pub name: String,
    pub schema: Schema,
    pub rows: usize,
    /// Bumped on every change so GPU copies know they are stale.
    pub version: u64,
    /// First row of each chunk, then `rows`.
    starts: Vec<usize>,
    /// [column][chunk]: the chunk's array, set once it is decoded (or from the start for
    /// tables held in memory). Decoded from a file, a chunk may be kept in a cheaper
    /// *stored form* (`is_stored_form`): a string chunk the file dictionary-encoded stays
    /// a `DictionaryArray` (the column's engine dictionary is merged from those without
    /// hashing every row), a DECIMAL of up to 18 digits stays `Decimal64` (the file's
    /// int64s, which the GPU layout is). The column's own Arrow type is made from it only
    /// where something reads that (`chunk`).
    data: Vec<Vec<OnceLock<ArrayRef>>>,
    /// [column][chunk]: a stored-form chunk in the column's Arrow type, made on first use.
    plain: Vec<Vec<OnceLock<ArrayRef>>>,
    /// Where chunks not yet decoded come from; None for tables held in memory.
    source: Option<Arc<dyn ChunkSource>>,
    /// Per chunk and column, value ranges from the files' metadata (row-group pruning).
    pub statistics: Option<Arc<TableStatistics>>,
    /// Columns of the files the engine cannot read yet (name, file type).
    pub unsupported: Vec<(String, String)>,
    /// Rows the sample draws, computed once; and the sample's values per column.
    sample_positions: OnceLock<Vec<usize>>,
    sample_columns: Memo<usize, Arc<Vec<ScalarValue>>>,
    /// Replica placements (see `replica`), computed on first use.
    replicas: Memo<ReplicaRequest, Arc<ReplicaPlacement>>,
    /// Value ranges of integer columns (see `column_range`).
    ranges: Memo<usize, (i64, i64)>,
    /// Dictionaries of string columns (see `string_dictionary`).
    string_dictionaries: Memo<usize, Arc<StringDictionary>>,
}

impl std::fmt::Debug for HostTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HostTable({}, {} rows in {} chunks, version {})", self.name, self.rows, self.chunks(), self.version)
    }
}

/// An integer column's values without copying them (dates are int32 days).
enum IntSlice<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl HostTable {
    /// A table held in memory: `chunks[k][c]` is column `c` of chunk `k`, already of the
    /// column's Arrow type.
    pub fn in_memory(name: String, schema: Schema, chunks: Vec<Vec<ArrayRef>>, version: u64) -> Result<HostTable> {
        let rows: Vec<usize> = chunks.iter().map(|c| c.first().map_or(0, |a| a.len())).collect();
        let t = HostTable::empty(name, schema, &rows, None, version);
        for (k, chunk) in chunks.into_iter().enumerate() {
            if chunk.len() != t.schema.len() {
                return Err(Error::exec(format!(
                    "table {}: chunk {k} has {} columns, not {}",
                    t.name,
                    chunk.len(),
                    t.schema.len()
                )));
            }
            for (c, a) in chunk.into_iter().enumerate() {
                t.check_array(c, k, &a)?;
                let _ = t.data[c][k].set(a);
            }
        }
        Ok(t)
    }

    /// A table whose chunks of `chunk_rows` rows are decoded from `source` on first use.
    pub fn from_source(
        name: String,
        schema: Schema,
        chunk_rows: &[usize],
        source: Arc<dyn ChunkSource>,
        version: u64,
    ) -> HostTable {
        HostTable::empty(name, schema, chunk_rows, Some(source), version)
    }

    fn empty(
        name: String,
        schema: Schema,
        chunk_rows: &[usize],
        source: Option<Arc<dyn ChunkSource>>,
        version: u64,
    ) -> HostTable {
        let mut starts = Vec::with_capacity(chunk_rows.len() + 1);
        let mut rows = 0;
        for r in chunk_rows {
            starts.push(rows);
            rows += r;
        }
        starts.push(rows);
        let data = schema.fields.iter().map(|_| chunk_rows.iter().map(|_| OnceLock::new()).collect()).collect();
        let plain = schema.fields.iter().map(|_| chunk_rows.iter().map(|_| OnceLock::new()).collect()).collect();
        HostTable {
            name,
            schema,
            rows,
            version,
            starts,
            data,
            plain,
            source,
            statistics: None,
            unsupported: vec![],
            sample_positions: OnceLock::new(),
            sample_columns: Mutex::new(HashMap::new()),
            replicas: Mutex::new(HashMap::new()),
            ranges: Mutex::new(HashMap::new()),
            string_dictionaries: Mutex::new(HashMap::new()),
        }
    }

    /// This table with chunks appended (INSERT): arrays already decoded are shared, the
    /// rest still come from the files.
    pub fn appended(&self, chunks: Vec<Vec<ArrayRef>>, version: u64) -> Result<HostTable> {
        let mut rows: Vec<usize> = (0..self.chunks()).map(|k| self.chunk_rows(k)).collect();
        rows.extend(chunks.iter().map(|c| c.first().map_or(0, |a| a.len())));
        let mut t = HostTable::empty(self.name.clone(), self.schema.clone(), &rows, self.source.clone(), version);
        t.statistics = self.statistics.clone().map(|s| {
            let mut s = (*s).clone();
            // Appended chunks have no statistics: every column's bounds unknown.
            s.chunks.extend(chunks.iter().map(|_| vec![Default::default(); self.schema.len()]));
            Arc::new(s)
        });
        t.unsupported = self.unsupported.clone();
        for c in 0..self.schema.len() {
            for k in 0..self.chunks() {
                if let Some(a) = self.data[c][k].get() {
                    let _ = t.data[c][k].set(a.clone());
                }
            }
        }
        for (i, chunk) in chunks.into_iter().enumerate() {
            let k = self.chunks() + i;
            for (c, a) in chunk.into_iter().enumerate() {
                t.check_array(c, k, &a)?;
                let _ = t.data[c][k].set(a);
            }
        }
        Ok(t)
    }

    fn check_array(&self, c: usize, k: usize, a: &ArrayRef) -> Result<()> {
        let f = &self.schema.fields[c];
        if a.len() != self.chunk_rows(k) || (a.data_type() != &f.ty.to_arrow() && !is_stored_form(&f.ty, a.data_type()))
        {
            return Err(Error::exec(format!(
                "table {}: column {} chunk {k} holds {} values of type {}, expected {} of {}",
                self.name,
                f.name,
                a.len(),
                a.data_type(),
                self.chunk_rows(k),
                f.ty.to_arrow()
            )));
        }
        if !f.nullable && a.null_count() > 0 {
            return Err(Error::exec(format!("NULL value in NOT NULL column {}.{}", self.name, f.name)));
        }
        Ok(())
    }

    pub fn chunks(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn chunk_rows(&self, k: usize) -> usize {
        self.starts[k + 1] - self.starts[k]
    }

    /// The first row of chunk `k`.
    pub fn chunk_start(&self, k: usize) -> usize {
        self.starts[k]
    }

    /// The files the table is read from, if it is.
    pub fn files(&self) -> Option<FilesInfo> {
        self.source.as_ref().map(|s| s.describe())
    }

    /// The chunks `chunks` names, or every chunk.
    pub fn chunk_list<'a>(&self, chunks: Option<&'a [usize]>) -> std::borrow::Cow<'a, [usize]> {
        match chunks {
            Some(c) => std::borrow::Cow::Borrowed(c),
            None => std::borrow::Cow::Owned((0..self.chunks()).collect()),
        }
    }

    /// Decodes what is not yet decoded of `columns` in `chunks` (None: every chunk), in
    /// parallel over chunks and, where there are fewer chunks than cores, columns.
    pub fn load(&self, columns: &[usize], chunks: Option<&[usize]>) -> Result<()> {
        let Some(source) = &self.source else { return Ok(()) };
        let chunks = self.chunk_list(chunks);
        let mut todo: Vec<(usize, Vec<usize>)> = chunks
            .iter()
            .filter_map(|&k| {
                let missing: Vec<usize> =
                    columns.iter().copied().filter(|&c| self.data[c][k].get().is_none()).collect();
                (!missing.is_empty()).then_some((k, missing))
            })
            .collect();
        if todo.is_empty() {
            return Ok(());
        }
        let need: u64 = todo.iter().map(|(k, cols)| source.decoded_bytes(*k, cols)).sum();
        check_memory(need, &self.name)?;
        if todo.len() < rayon::current_num_threads() {
            todo = todo.into_iter().flat_map(|(k, cols)| cols.into_iter().map(move |c| (k, vec![c]))).collect();
        }
        let start = std::time::Instant::now();
        todo.par_iter().try_for_each(|(k, cols)| -> Result<()> {
            let arrays = source.read(*k, cols)?;
            for (&c, a) in cols.iter().zip(arrays) {
                self.check_array(c, *k, &a)?;
                let _ = self.data[c][*k].set(a);
            }
            Ok(())
        })?;
        tracing::info!(
            "{}: decoded {} column chunks in {:.0} ms",
            self.name,
            todo.iter().map(|t| t.1.len()).sum::<usize>(),
            start.elapsed().as_secs_f64() * 1e3
        );
        Ok(())
    }

    /// Chunk `k` of column `col` (decoded now if it was not), of the column's Arrow type.
    pub fn chunk(&self, col: usize, k: usize) -> Result<&ArrayRef> {
        let stored = self.stored_chunk(col, k)?;
        let ty = self.schema.fields[col].ty.to_arrow();
        if stored.data_type() == &ty {
            return Ok(stored);
        }
        if self.plain[col][k].get().is_none() {
            let opts = arrow::compute::CastOptions { safe: false, ..Default::default() };
            let _ = self.plain[col][k].set(arrow::compute::cast_with_options(stored, &ty, &opts)?);
        }
        self.plain[col][k].get().ok_or_else(|| Error::exec(format!("{}: chunk {k} of column {col} missing", self.name)))
    }

    /// Chunk `k` of column `col` in the column's Arrow type, without keeping the converted
    /// array (for a one-time reader such as an upload; `chunk` keeps it).
    pub fn chunk_once(&self, col: usize, k: usize) -> Result<ArrayRef> {
        let stored = self.stored_chunk(col, k)?;
        let ty = self.schema.fields[col].ty.to_arrow();
        if stored.data_type() == &ty {
            return Ok(stored.clone());
        }
        if let Some(p) = self.plain[col][k].get() {
            return Ok(p.clone());
        }
        let opts = arrow::compute::CastOptions { safe: false, ..Default::default() };
        Ok(arrow::compute::cast_with_options(stored, &ty, &opts)?)
    }

    /// Chunk `k` of column `col` as stored: of the column's Arrow type, or in a stored form
    /// (`is_stored_form`).
    pub fn stored_chunk(&self, col: usize, k: usize) -> Result<&ArrayRef> {
        if self.data[col][k].get().is_none() {
            self.load(&[col], Some(&[k]))?;
        }
        self.data[col][k].get().ok_or_else(|| Error::exec(format!("{}: chunk {k} of column {col} missing", self.name)))
    }

    /// Every chunk of column `col`, decoded.
    pub fn column(&self, col: usize) -> Result<Vec<ArrayRef>> {
        self.load(&[col], None)?;
        (0..self.chunks()).map(|k| self.chunk(col, k).cloned()).collect()
    }

    /// Bytes of the decoded arrays held in memory.
    pub fn memory_bytes(&self) -> usize {
        self.data.iter().chain(&self.plain).flatten().filter_map(|a| a.get()).map(|a| a.get_array_memory_size()).sum()
    }

    /// The bank-replicated placement `r` asks for ([Sitaridi 2016] §3.4), computed on first use
    /// and kept with the table; None for columns that are not NULL-free integers or dates,
    /// or have more distinct values than slots.
    pub fn replica(&self, r: ReplicaRequest) -> Option<Arc<ReplicaPlacement>> {
        memo(&self.replicas, r, || {
            let start = std::time::Instant::now();
            let (col, mode) = (r.column, r.mode);
            let d = self.dictionary(col, r.max_slots);
            let dict_ms = start.elapsed().as_secs_f64() * 1e3;
            let p =
                Arc::new(d.map(|(values, codes)| place_in_background(codes, values, mode, r.max_slots, r.replicate))?);
            tracing::info!(
                "replica placement of {}.{} ({mode:?}): {} values, {} copies in {} slots, dictionary {dict_ms:.0} ms, {:.0} ms",
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
            if self.schema.fields[col].ty != DataType::Utf8 {
                return None;
            }
            let start = std::time::Instant::now();
            // A first chunk of many distinct strings says "no dictionary" before the rest of
            // the column is decoded.
            if self.chunks() > 0 {
                let first = self.stored_chunk(col, 0).ok()?;
                if let Some(plain) = first.as_any().downcast_ref::<StringArray>() {
                    if string_dictionary::has_too_many_values(plain, MAX_DICTIONARY_VALUES) {
                        return None;
                    }
                }
            }
            self.load(&[col], None).ok()?;
            let stored: Vec<ArrayRef> =
                (0..self.chunks()).map(|k| self.stored_chunk(col, k).cloned()).collect::<Result<_>>().ok()?;
            let merged = !stored.is_empty() && stored.iter().all(|a| is_string_dictionary(a.data_type()));
            let d = if merged {
                // Every chunk kept its file's dictionary: merge those.
                let dicts: Vec<&arrow::array::DictionaryArray<arrow::datatypes::Int32Type>> =
                    stored.iter().map(|a| a.as_any().downcast_ref()).collect::<Option<_>>()?;
                Arc::new(string_dictionary::merge(&dicts, MAX_DICTIONARY_VALUES)?)
            } else {
                let chunks = self.column(col).ok()?;
                let arrays: Vec<&StringArray> =
                    chunks.iter().map(|a| a.as_any().downcast_ref::<StringArray>()).collect::<Option<_>>()?;
                Arc::new(string_dictionary::build(&arrays, MAX_DICTIONARY_VALUES)?)
            };
            let how = if merged { "merged from the files' dictionaries" } else { "built" };
            tracing::info!(
                "string dictionary of {}.{}: {} values, {how} in {:.0} ms",
                self.name,
                self.schema.fields[col].name,
                d.len(),
                start.elapsed().as_secs_f64() * 1e3
            );
            Some(d)
        })
    }

    /// The smallest and largest value of integer or date column `col` (NULL slots may
    /// widen it: a bound, not an exact range), computed once; None for other types or an
    /// empty table.
    pub fn column_range(&self, col: usize) -> Option<(i64, i64)> {
        memo(&self.ranges, col, || {
            let chunks = self.column(col).ok()?;
            let ranges: Vec<Option<(i64, i64)>> = chunks
                .par_iter()
                .map(|a| match int_slice(a.as_ref(), &self.schema.fields[col].ty)? {
                    IntSlice::I32(v) => min_max(v),
                    IntSlice::I64(v) => min_max(v),
                })
                .collect();
            ranges.into_iter().flatten().reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
        })
    }

    /// Column `col`'s distinct values and per-row codes (None: see `replica`).
    fn dictionary(&self, col: usize, max_values: usize) -> Option<(Vec<i64>, Vec<u16>)> {
        let chunks = self.column(col).ok()?;
        if self.rows == 0 || chunks.iter().any(|a| a.null_count() > 0) {
            return None;
        }
        let ty = &self.schema.fields[col].ty;
        let slices: Vec<IntSlice> = chunks.iter().map(|a| int_slice(a.as_ref(), ty)).collect::<Option<_>>()?;
        if matches!(slices.first(), Some(IntSlice::I32(_))) {
            let v: Vec<&[i32]> =
                slices.iter().filter_map(|s| if let IntSlice::I32(v) = s { Some(*v) } else { None }).collect();
            dictionary_of_chunks(&v, max_values)
        } else {
            let v: Vec<&[i64]> =
                slices.iter().filter_map(|s| if let IntSlice::I64(v) = s { Some(*v) } else { None }).collect();
            dictionary_of_chunks(&v, max_values)
        }
    }

    /// The rows the sample draws: SAMPLE_ROWS evenly spaced rows (every row of a smaller
    /// table); of a table read from files, evenly spaced within SAMPLE_CHUNKS evenly
    /// spaced chunks, so that sampling decodes only those.
    fn sample_positions(&self) -> &[usize] {
        self.sample_positions.get_or_init(|| {
            let chunks: Vec<usize> = if self.source.is_some() && self.chunks() > SAMPLE_CHUNKS {
                (0..SAMPLE_CHUNKS).map(|j| j * self.chunks() / SAMPLE_CHUNKS).collect()
            } else {
                (0..self.chunks()).collect()
            };
            // Rows of the chosen chunks, seen as one range.
            let total: usize = chunks.iter().map(|&k| self.chunk_rows(k)).sum();
            let n = total.min(SAMPLE_ROWS);
            let mut out = Vec::with_capacity(n);
            let (mut ci, mut before) = (0, 0);
            for j in 0..n {
                let v = if n == total { j } else { j * total / n };
                while v >= before + self.chunk_rows(chunks[ci]) {
                    before += self.chunk_rows(chunks[ci]);
                    ci += 1;
                }
                out.push(self.chunk_start(chunks[ci]) + v - before);
            }
            out
        })
    }

    /// The sample's values of column `col`, read on first use.
    fn sample_column(&self, col: usize) -> Option<Arc<Vec<ScalarValue>>> {
        memo(&self.sample_columns, col, || {
            let positions = self.sample_positions();
            let mut chunks: Vec<usize> = positions.iter().map(|&r| self.chunk_of(r)).collect();
            chunks.dedup();
            self.load(&[col], Some(&chunks)).ok()?;
            let ty = &self.schema.fields[col].ty;
            let values = positions
                .iter()
                .map(|&r| {
                    let k = self.chunk_of(r);
                    Some(stored_value_at(self.stored_chunk(col, k).ok()?.as_ref(), ty, r - self.chunk_start(k)))
                })
                .collect::<Option<Vec<_>>>()?;
            Some(Arc::new(values))
        })
    }

    /// The chunk holding row `row`.
    pub fn chunk_of(&self, row: usize) -> usize {
        self.starts.partition_point(|&s| s <= row) - 1
    }
}

impl SampleRows for HostTable {
    fn rows(&self, columns: &[usize]) -> Option<Vec<Vec<ScalarValue>>> {
        let cols: Vec<Arc<Vec<ScalarValue>>> = columns.iter().map(|&c| self.sample_column(c)).collect::<Option<_>>()?;
        let n = self.sample_positions().len();
        Some((0..n).map(|r| cols.iter().map(|c| c[r].clone()).collect()).collect())
    }
}

/// Whether `t` is a dictionary of strings with Int32 keys (a string chunk kept as its
/// file's dictionary).
pub fn is_string_dictionary(t: &arrow::datatypes::DataType) -> bool {
    matches!(t, arrow::datatypes::DataType::Dictionary(k, v) if **k == arrow::datatypes::DataType::Int32 && **v == arrow::datatypes::DataType::Utf8)
}

/// Whether `t` is a stored form of a chunk of type `ty` (see `HostTable::data`): a string
/// dictionary, or `Decimal64` for a DECIMAL of up to 18 digits (same precision and scale).
pub fn is_stored_form(ty: &DataType, t: &arrow::datatypes::DataType) -> bool {
    match ty {
        DataType::Utf8 => is_string_dictionary(t),
        DataType::Decimal { precision, scale } => {
            *precision <= 18 && *t == arrow::datatypes::DataType::Decimal64(*precision, *scale as i8)
        }
        _ => false,
    }
}

/// The values of integer or date array `a` (NULL slots included), as stored.
fn int_slice<'a>(a: &'a dyn Array, ty: &DataType) -> Option<IntSlice<'a>> {
    let a = a.as_any();
    Some(match ty {
        DataType::Int32 => IntSlice::I32(a.downcast_ref::<Int32Array>()?.values()),
        DataType::Date => IntSlice::I32(a.downcast_ref::<Date32Array>()?.values()),
        DataType::Int64 => IntSlice::I64(a.downcast_ref::<Int64Array>()?.values()),
        _ => return None,
    })
}

/// Values computed once per key: each key has its own cell, so computing one (a column's
/// dictionary, built in the background after a load) does not hold up a query that needs
/// another; a second caller of the same key waits for the first.
type Memo<K, V> = Mutex<HashMap<K, Arc<std::sync::OnceLock<Option<V>>>>>;

/// What `cache` holds for `key`, computed by `make` the first time (None while its lock
/// is poisoned, as if nothing could be computed).
fn memo<K: Eq + std::hash::Hash, V: Clone>(cache: &Memo<K, V>, key: K, make: impl FnOnce() -> Option<V>) -> Option<V> {
    let cell = cache.lock().ok()?.entry(key).or_default().clone();
    cell.get_or_init(make).clone()
}

/// Fails when decoding `need` more bytes would not fit the memory the system has left
/// (Linux: MemAvailable), so a file larger than memory is an error, not an OOM kill.
pub fn check_memory(need: u64, what: &str) -> Result<()> {
    let Some(available) = available_memory() else { return Ok(()) };
    // Decoding needs some room beyond its result (buffers of the reader); keep 10% free.
    if need > available / 10 * 9 {
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        return Err(Error::Io(format!(
            "{what}: decoding needs about {:.2} GiB of memory, {:.2} GiB are available (read fewer columns or files)",
            gib(need),
            gib(available)
        )));
    }
    Ok(())
}

/// The memory available to new allocations, where the system says (Linux: the
/// smaller of MemAvailable and what the process's cgroup limit leaves).
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    let read = |p: &str| std::fs::read_to_string(p).ok().and_then(|s| s.trim().parse::<u64>().ok());
    let cgroup = match (read("/sys/fs/cgroup/memory.max"), read("/sys/fs/cgroup/memory.current")) {
        (Some(max), Some(cur)) => Some(max.saturating_sub(cur)),
        _ => None,
    };
    Some(cgroup.map_or(kib * 1024, |c| c.min(kib * 1024)))
}
