//! GPU-resident columns: uploaded on first use, kept until the table changes.

use super::upload::{upload_column, upload_slice};
use gpusql_common::{DataType, Error, ReplicaRequest, Result};
use gpusql_cuda::cudarc::driver::{DevicePtr, DeviceRepr};
use gpusql_cuda::{CudaError, CudaSlice, GpuDevice};
use gpusql_storage::convert::{pivot_pieces, validity_bytes};
use gpusql_storage::host::HostTable;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

pub struct DeviceColumn {
    pub ty: DataType,
    /// Fixed-width values, or the bytes of a string column.
    pub values: CudaSlice<u8>,
    /// String columns: rows + 1 `int64` offsets into `values`.
    pub offsets: Option<CudaSlice<u8>>,
    pub validity: Option<CudaSlice<u8>>,
    /// Rows of the column (of the chunks it holds).
    pub rows: usize,
    /// Bytes this column occupies on the GPU.
    pub bytes: usize,
}

/// Which chunks of a table a scan reads: all, or those row-group pruning kept.
pub type ChunkSelection<'a> = Option<&'a [usize]>;

pub fn cuda_error(e: CudaError) -> Error {
    match e {
        CudaError::OutOfMemory { what, requested, free } => Error::OutOfMemory { what, requested, free },
        other => Error::Gpu(other.to_string()),
    }
}

/// Upload cache keyed by (table, column), checked against the table's version.
#[derive(Default)]
pub struct DeviceStore {
    columns: Mutex<HashMap<(String, usize), (u64, Arc<DeviceColumn>)>>,
    /// Columns of the chunks a pruned scan kept, by (table, column): the last selection
    /// only (another selection replaces it; the whole column, once resident, serves all).
    pruned: Mutex<HashMap<(String, usize), (u64, Vec<usize>, Arc<DeviceColumn>)>>,
    /// Pivot-4 copies of string columns (None: the column does not qualify).
    pivoted: Mutex<HashMap<(String, usize), (u64, Option<Arc<DevicePivot>>)>>,
    /// Replica placements (rows' slots, slots' values) by table and request.
    replicas: Mutex<HashMap<(String, ReplicaRequest), (u64, Arc<DeviceReplica>)>>,
    /// Dictionary-encoded string columns.
    dictionaries: Mutex<HashMap<(String, usize), (u64, Arc<DeviceDictionary>)>>,
    /// Counts the times GPU copies were freed or replaced: a graph that read them must
    /// not run again (`epoch`).
    epoch: AtomicU64,
}

/// A dictionary-encoded string column on the GPU (see `string_dictionary`): each row's
/// 2-byte code and, per code, a 16-byte `Str` record {pointer to the value's bytes,
/// length, hash}. Kernels read it instead of the offsets + bytes layout.
pub struct DeviceDictionary {
    pub codes: CudaSlice<u16>,
    pub records: CudaSlice<u64>,
    /// The distinct values' bytes, which the records point into.
    pub value_bytes: CudaSlice<u8>,
    pub validity: Option<CudaSlice<u8>>,
    pub bytes: usize,
}

/// A replica placement on the GPU (see `replica`): each row's slot, and each slot's key
/// value in the column's GPU layout (int32 or int64).
pub struct DeviceReplica {
    pub row_slots: CudaSlice<u16>,
    pub slot_values: CudaSlice<u8>,
    /// Per slot, the code of its value (0 for holes).
    pub slot_codes: CudaSlice<u16>,
    pub bytes: usize,
}

/// A string column's Pivot-4 copy on the GPU (see `convert::pivot_strings`), kept beside
/// the contiguous offsets + bytes, which every other string operation reads.
pub struct DevicePivot {
    pub words: CudaSlice<u32>,
    pub pieces: u32,
    pub bytes: usize,
}

/// Statistics of one `column()` call.
#[derive(Debug, Default, Clone, Copy)]
pub struct UploadStats {
    pub bytes: usize,
    pub ms: f64,
}

impl DeviceStore {
    /// The GPU copy of `table`'s column `col`, uploading it if needed.
    pub fn column(
        &self,
        dev: &GpuDevice,
        table: &HostTable,
        col: usize,
        stats: &mut UploadStats,
    ) -> Result<Arc<DeviceColumn>> {
        cached(&self.columns, &self.epoch, (table.name.to_ascii_lowercase(), col), table.version, dev, stats, || {
            let c = Arc::new(make_column(dev, table, col, None)?);
            let bytes = c.bytes;
            Ok((c, bytes))
        })
    }

    /// Whether the whole of column `col` is resident (a pruned scan then reads it
    /// instead of uploading its chunks again).
    pub fn is_resident(&self, table: &HostTable, col: usize) -> bool {
        self.columns
            .lock()
            .is_ok_and(|m| m.get(&(table.name.to_ascii_lowercase(), col)).is_some_and(|(v, _)| *v == table.version))
    }

    /// Column `col` of chunks `chunks` only (a scan that row-group pruning narrowed).
    pub fn column_chunks(
        &self,
        dev: &GpuDevice,
        table: &HostTable,
        col: usize,
        chunks: &[usize],
        stats: &mut UploadStats,
    ) -> Result<Arc<DeviceColumn>> {
        let key = (table.name.to_ascii_lowercase(), col);
        let mut map = self.pruned.lock().map_err(|_| Error::exec("device store poisoned"))?;
        if let Some((v, sel, c)) = map.get(&key) {
            if *v == table.version && sel == chunks {
                return Ok(c.clone());
            }
        }
        // Free the previous selection's copy before making this one.
        if map.remove(&key).is_some() {
            self.epoch.fetch_add(1, Ordering::Relaxed);
        }
        let start = std::time::Instant::now();
        let c = Arc::new(make_column(dev, table, col, Some(chunks))?);
        dev.synchronize().map_err(cuda_error)?;
        stats.bytes += c.bytes;
        stats.ms += start.elapsed().as_secs_f64() * 1e3;
        map.insert(key, (table.version, chunks.to_vec(), c.clone()));
        Ok(c)
    }

    /// The Pivot-4 copy of string column `col`, built and uploaded on first use (LIKE
    /// over it), or None where the column's strings are too long or too uneven for it.
    pub fn pivoted(
        &self,
        dev: &GpuDevice,
        table: &HostTable,
        col: usize,
        stats: &mut UploadStats,
        make: impl FnOnce(&DeviceColumn, u32) -> Result<CudaSlice<u32>>,
    ) -> Result<Option<Arc<DevicePivot>>> {
        // Made on the GPU from the column (15 M o_comment rows: 0.7 s pivoted on the host
        // and uploaded, a few ms here).
        let column = self.column(dev, table, col, stats)?;
        cached(&self.pivoted, &self.epoch, (table.name.to_ascii_lowercase(), col), table.version, dev, stats, || {
            let Some(pieces) = pivot_pieces(&table.column(col)?) else { return Ok((None, 0)) };
            let words = make(&column, pieces)?;
            let bytes = words.len() * 4;
            Ok((Some(Arc::new(DevicePivot { words, pieces, bytes })), bytes))
        })
    }

    /// The replica placement `r` of `table` on the GPU, placed (on the host, see
    /// `HostTable::replica`) and uploaded on first use.
    pub fn replica(
        &self,
        dev: &GpuDevice,
        table: &HostTable,
        r: ReplicaRequest,
        stats: &mut UploadStats,
    ) -> Result<Arc<DeviceReplica>> {
        cached(&self.replicas, &self.epoch, (table.name.to_ascii_lowercase(), r), table.version, dev, stats, || {
            let col = r.column;
            let what = format!("replica placement of {}.{}", table.name, table.schema.fields[col].name);
            let p = table.replica(r).ok_or_else(|| Error::exec(format!("{what}: column does not qualify")))?;
            let values = p.slot_values();
            let value_bytes: Vec<u8> = match table.schema.fields[col].ty {
                DataType::Int64 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
                _ => values.iter().flat_map(|v| (*v as i32).to_le_bytes()).collect(),
            };
            let codes: Vec<u16> =
                p.slot_code.iter().map(|&c| if c == gpusql_storage::replica::HOLE { 0 } else { c as u16 }).collect();
            let row_slots = upload_padded(dev, p.row_slot(), &what)?;
            let slot_values = upload_padded(dev, &value_bytes, &what)?;
            let slot_codes = upload_padded(dev, &codes, &what)?;
            let bytes = p.row_slot().len() * 2 + value_bytes.len() + codes.len() * 2;
            Ok((Arc::new(DeviceReplica { row_slots, slot_values, slot_codes, bytes }), bytes))
        })
    }

    /// The dictionary encoding of string column `col` on the GPU, built (on the host,
    /// see `HostTable::string_dictionary`) and uploaded on first use.
    pub fn dictionary(
        &self,
        dev: &GpuDevice,
        table: &HostTable,
        col: usize,
        stats: &mut UploadStats,
    ) -> Result<Arc<DeviceDictionary>> {
        cached(
            &self.dictionaries,
            &self.epoch,
            (table.name.to_ascii_lowercase(), col),
            table.version,
            dev,
            stats,
            || {
                let f = &table.schema.fields[col];
                let what = format!("dictionary of {}.{}", table.name, f.name);
                let d = table
                    .string_dictionary(col)
                    .ok_or_else(|| Error::exec(format!("{what}: column is not dictionary-encoded")))?;
                let value_bytes = upload_padded(dev, &d.bytes, &what)?;
                let base = {
                    let (p, _sync) = value_bytes.device_ptr(dev.stream());
                    p
                };
                // Str records as the kernels lay them out: {const uint8_t* p; uint32_t len; uint32_t pad_}.
                let records: Vec<u64> = (0..d.len())
                    .flat_map(|c| {
                        let (a, b) = (d.offsets[c], d.offsets[c + 1]);
                        [base + a as u64, (b - a) as u64 | (d.hashes[c] as u64) << 32]
                    })
                    .collect();
                let records = upload_padded(dev, &records, &what)?;
                let codes = upload_padded(dev, &d.codes, &what)?;
                let validity = if f.nullable {
                    let stored =
                        (0..table.chunks()).map(|k| table.stored_chunk(col, k).cloned()).collect::<Result<Vec<_>>>()?;
                    Some(validity_bytes(&stored))
                } else {
                    None
                };
                let validity_len = validity.as_ref().map_or(0, |v| v.len());
                let validity = validity.map(|v| upload_padded(dev, &v, &what)).transpose()?;
                let bytes = d.codes.len() * 2 + d.len() * 16 + d.bytes.len() + validity_len;
                Ok((Arc::new(DeviceDictionary { codes, records, value_bytes, validity, bytes }), bytes))
            },
        )
    }

    /// Bytes of all resident columns (and pivoted copies, replica placements,
    /// dictionaries).
    pub fn resident_bytes(&self) -> usize {
        let columns: usize = self.columns.lock().map(|m| m.values().map(|(_, c)| c.bytes).sum()).unwrap_or(0)
            + self.pruned.lock().map(|m| m.values().map(|(_, _, c)| c.bytes).sum()).unwrap_or(0);
        let pivoted: usize =
            self.pivoted.lock().map(|m| m.values().filter_map(|(_, p)| p.as_ref().map(|p| p.bytes)).sum()).unwrap_or(0);
        let replicas: usize = self.replicas.lock().map(|m| m.values().map(|(_, r)| r.bytes).sum()).unwrap_or(0);
        let dictionaries: usize = self.dictionaries.lock().map(|m| m.values().map(|(_, d)| d.bytes).sum()).unwrap_or(0);
        columns + pivoted + replicas + dictionaries
    }

    /// Frees the GPU copies (columns, pivoted copies, placements, dictionaries) of every
    /// table column not in `keep` ((lower-case table name, column)), so that a query that
    /// does not fit beside them can run. Returns the bytes given up.
    pub fn evict_except(&self, keep: &std::collections::HashSet<(String, usize)>) -> usize {
        self.epoch.fetch_add(1, Ordering::Relaxed);
        let mut freed = 0;
        let kept = |k: &(String, usize)| keep.contains(k);
        if let Ok(mut m) = self.columns.lock() {
            m.retain(|k, (_, c)| {
                kept(k) || {
                    freed += c.bytes;
                    false
                }
            });
        }
        if let Ok(mut m) = self.pruned.lock() {
            m.retain(|k, (_, _, c)| {
                kept(k) || {
                    freed += c.bytes;
                    false
                }
            });
        }
        if let Ok(mut m) = self.pivoted.lock() {
            m.retain(|k, (_, p)| {
                kept(k) || {
                    freed += p.as_ref().map_or(0, |p| p.bytes);
                    false
                }
            });
        }
        if let Ok(mut m) = self.replicas.lock() {
            m.retain(|(t, r), (_, x)| {
                kept(&(t.clone(), r.column)) || {
                    freed += x.bytes;
                    false
                }
            });
        }
        if let Ok(mut m) = self.dictionaries.lock() {
            m.retain(|k, (_, d)| {
                kept(k) || {
                    freed += d.bytes;
                    false
                }
            });
        }
        freed
    }

    /// Changes whenever a GPU copy is freed or replaced: work recorded with the copies
    /// of one epoch reads freed memory in another.
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Relaxed)
    }

    /// Frees the GPU copies of table `name` (dropped or replaced).
    pub fn forget_table(&self, name: &str) {
        self.epoch.fetch_add(1, Ordering::Relaxed);
        let name = name.to_ascii_lowercase();
        if let Ok(mut m) = self.columns.lock() {
            m.retain(|k, _| k.0 != name);
        }
        if let Ok(mut m) = self.pruned.lock() {
            m.retain(|k, _| k.0 != name);
        }
        if let Ok(mut m) = self.pivoted.lock() {
            m.retain(|k, _| k.0 != name);
        }
        if let Ok(mut m) = self.replicas.lock() {
            m.retain(|k, _| k.0 != name);
        }
        if let Ok(mut m) = self.dictionaries.lock() {
            m.retain(|k, _| k.0 != name);
        }
    }

    pub fn clear(&self) {
        self.epoch.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut m) = self.columns.lock() {
            m.clear();
        }
        if let Ok(mut m) = self.pruned.lock() {
            m.clear();
        }
        if let Ok(mut m) = self.pivoted.lock() {
            m.clear();
        }
        if let Ok(mut m) = self.replicas.lock() {
            m.clear();
        }
        if let Ok(mut m) = self.dictionaries.lock() {
            m.clear();
        }
    }
}

/// The entry of `map` under `key` made from table version `version`, or else `make`'s
/// (value, bytes uploaded), kept in its place. The making is timed, and its uploads
/// waited for, into `stats`.
fn cached<K: Eq + Hash, V: Clone>(
    map: &Mutex<HashMap<K, (u64, V)>>,
    epoch: &AtomicU64,
    key: K,
    version: u64,
    dev: &GpuDevice,
    stats: &mut UploadStats,
    make: impl FnOnce() -> Result<(V, usize)>,
) -> Result<V> {
    let mut map = map.lock().map_err(|_| Error::exec("device store poisoned"))?;
    if let Some((v, x)) = map.get(&key) {
        if *v == version {
            return Ok(x.clone());
        }
    }
    let start = std::time::Instant::now();
    let (x, bytes) = make()?;
    dev.synchronize().map_err(cuda_error)?;
    stats.bytes += bytes;
    stats.ms += start.elapsed().as_secs_f64() * 1e3;
    if map.insert(key, (version, x.clone())).is_some() {
        epoch.fetch_add(1, Ordering::Relaxed);
    }
    Ok(x)
}

/// Column `col` of `table` (of chunks `chunks`, or all) uploaded into the GPU layout.
fn make_column(dev: &GpuDevice, table: &HostTable, col: usize, chunks: ChunkSelection) -> Result<DeviceColumn> {
    let f = &table.schema.fields[col];
    table.load(&[col], chunks)?;
    let chunks = table.chunk_list(chunks);
    // Decimals as stored (Decimal64 is the GPU layout); strings as plain strings, made
    // from dictionary-encoded chunks on all cores and not kept.
    use rayon::prelude::*;
    let arrays: Vec<arrow::array::ArrayRef> = chunks
        .par_iter()
        .map(|&k| {
            if matches!(f.ty, DataType::Decimal { .. }) {
                table.stored_chunk(col, k).cloned()
            } else {
                table.chunk_once(col, k)
            }
        })
        .collect::<Result<_>>()?;
    let what = format!("column {}.{}", table.name, f.name);
    let u = upload_column(dev, &arrays, &f.ty, f.nullable, &what)?;
    let rows = arrays.iter().map(|a| a.len()).sum();
    Ok(DeviceColumn { ty: f.ty, values: u.values, offsets: u.offsets, validity: u.validity, rows, bytes: u.bytes })
}

/// Uploads `v`, or one zero element where it is empty (cudarc cannot allocate 0 bytes
/// portably); large vectors go through the staging buffers.
fn upload_padded<T: DeviceRepr + Default + Copy + Sync>(dev: &GpuDevice, v: &[T], what: &str) -> Result<CudaSlice<T>> {
    if std::mem::size_of_val(v) >= 4 << 20 {
        return upload_slice(dev, v, what);
    }
    let zero = [T::default()];
    dev.upload(if v.is_empty() { &zero[..] } else { v }, what).map_err(cuda_error)
}
