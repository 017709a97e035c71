//! GPU-resident columns: uploaded on first use, kept until the table changes.

use crate::convert::{pivot_strings, to_gpu_layout};
use crate::host::HostTable;
use gpusql_common::{DataType, Error, ReplicaRequest, Result};
use gpusql_cuda::{cudarc::driver::DevicePtr, CudaError, CudaSlice, GpuDevice};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub struct DeviceColumn {
    pub ty: DataType,
    /// Fixed-width values, or the bytes of a string column.
    pub values: CudaSlice<u8>,
    /// String columns: rows + 1 offsets into `values`.
    pub offsets: Option<CudaSlice<i32>>,
    pub validity: Option<CudaSlice<u8>>,
    /// Bytes this column occupies on the GPU.
    pub bytes: usize,
}

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
    /// Pivot-4 copies of string columns (None: the column does not qualify).
    pivoted: Mutex<HashMap<(String, usize), (u64, Option<Arc<DevicePivot>>)>>,
    /// Replica placements (rows' slots, slots' values) by table and request.
    replicas: Mutex<HashMap<(String, ReplicaRequest), (u64, Arc<DeviceReplica>)>>,
    /// Dictionary-encoded string columns.
    dictionaries: Mutex<HashMap<(String, usize), (u64, Arc<DeviceDictionary>)>>,
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
    pub values: usize,
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
    pub fn column(&self, dev: &GpuDevice, table: &HostTable, col: usize, stats: &mut UploadStats) -> Result<Arc<DeviceColumn>> {
        let key = (table.name.to_ascii_lowercase(), col);
        if let Some((v, c)) = self.columns.lock().map_err(|_| Error::exec("device store poisoned"))?.get(&key) {
            if *v == table.version {
                return Ok(c.clone());
            }
        }
        let f = &table.schema.fields[col];
        let start = std::time::Instant::now();
        let layout = to_gpu_layout(table.columns[col].as_ref(), &f.ty, f.nullable)?;
        let what = format!("column {}.{}", table.name, f.name);
        // cudarc cannot allocate 0 bytes portably; keep at least one element.
        let values = dev.upload(if layout.values.is_empty() { &[0u8][..] } else { &layout.values }, &what).map_err(cuda_error)?;
        let offsets = layout.offsets.as_ref().map(|o| dev.upload(o, &what)).transpose().map_err(cuda_error)?;
        let validity = layout
            .validity
            .as_ref()
            .map(|v| dev.upload(if v.is_empty() { &[0u8][..] } else { v }, &what))
            .transpose()
            .map_err(cuda_error)?;
        let bytes = layout.values.len() + layout.offsets.as_ref().map_or(0, |o| o.len() * 4) + layout.validity.as_ref().map_or(0, |v| v.len());
        dev.synchronize().map_err(cuda_error)?;
        stats.bytes += bytes;
        stats.ms += start.elapsed().as_secs_f64() * 1e3;
        let c = Arc::new(DeviceColumn { ty: f.ty, values, offsets, validity, bytes });
        self.columns.lock().map_err(|_| Error::exec("device store poisoned"))?.insert(key, (table.version, c.clone()));
        Ok(c)
    }

    /// The Pivot-4 copy of string column `col`, built and uploaded on first use (LIKE
    /// over it), or None where the column's strings are too long or too uneven for it.
    pub fn pivoted(&self, dev: &GpuDevice, table: &HostTable, col: usize, stats: &mut UploadStats) -> Result<Option<Arc<DevicePivot>>> {
        let key = (table.name.to_ascii_lowercase(), col);
        let mut map = self.pivoted.lock().map_err(|_| Error::exec("device store poisoned"))?;
        if let Some((v, p)) = map.get(&key) {
            if *v == table.version {
                return Ok(p.clone());
            }
        }
        let start = std::time::Instant::now();
        let p = match pivot_strings(table.columns[col].as_ref()) {
            None => None,
            Some(p) => {
                let what = format!("pivoted column {}.{}", table.name, table.schema.fields[col].name);
                let words = dev.upload(&p.words, &what).map_err(cuda_error)?;
                dev.synchronize().map_err(cuda_error)?;
                let bytes = p.words.len() * 4;
                stats.bytes += bytes;
                Some(Arc::new(DevicePivot { words, pieces: p.pieces, bytes }))
            }
        };
        stats.ms += start.elapsed().as_secs_f64() * 1e3;
        map.insert(key, (table.version, p.clone()));
        Ok(p)
    }

    /// The replica placement `r` of `table` on the GPU, placed (on the host, see
    /// `HostTable::replica`) and uploaded on first use.
    pub fn replica(&self, dev: &GpuDevice, table: &HostTable, r: ReplicaRequest, stats: &mut UploadStats) -> Result<Arc<DeviceReplica>> {
        let key = (table.name.to_ascii_lowercase(), r);
        let col = r.column;
        let mut map = self.replicas.lock().map_err(|_| Error::exec("device store poisoned"))?;
        if let Some((v, r)) = map.get(&key) {
            if *v == table.version {
                return Ok(r.clone());
            }
        }
        let what = format!("replica placement of {}.{}", table.name, table.schema.fields[col].name);
        let p = table.replica(r).ok_or_else(|| Error::exec(format!("{what}: column does not qualify")))?;
        let start = std::time::Instant::now();
        let values = p.slot_values();
        let value_bytes: Vec<u8> = match table.schema.fields[col].ty {
            DataType::Int64 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
            _ => values.iter().flat_map(|v| (*v as i32).to_le_bytes()).collect(),
        };
        let row_slots = dev.upload(if p.row_slot.is_empty() { &[0u16][..] } else { &p.row_slot }, &what).map_err(cuda_error)?;
        let slot_values = dev.upload(&value_bytes, &what).map_err(cuda_error)?;
        let codes: Vec<u16> = p.slot_code.iter().map(|&c| if c == crate::replica::HOLE { 0 } else { c as u16 }).collect();
        let slot_codes = dev.upload(&codes, &what).map_err(cuda_error)?;
        dev.synchronize().map_err(cuda_error)?;
        let bytes = p.row_slot.len() * 2 + value_bytes.len() + codes.len() * 2;
        stats.bytes += bytes;
        stats.ms += start.elapsed().as_secs_f64() * 1e3;
        let r = Arc::new(DeviceReplica { row_slots, slot_values, slot_codes, bytes });
        map.insert(key, (table.version, r.clone()));
        Ok(r)
    }

    /// The dictionary encoding of string column `col` on the GPU, built (on the host,
    /// see `HostTable::string_dictionary`) and uploaded on first use.
    pub fn dictionary(&self, dev: &GpuDevice, table: &HostTable, col: usize, stats: &mut UploadStats) -> Result<Arc<DeviceDictionary>> {
        let key = (table.name.to_ascii_lowercase(), col);
        let mut map = self.dictionaries.lock().map_err(|_| Error::exec("device store poisoned"))?;
        if let Some((v, d)) = map.get(&key) {
            if *v == table.version {
                return Ok(d.clone());
            }
        }
        let f = &table.schema.fields[col];
        let what = format!("dictionary of {}.{}", table.name, f.name);
        let d = table.string_dictionary(col).ok_or_else(|| Error::exec(format!("{what}: column is not dictionary-encoded")))?;
        let start = std::time::Instant::now();
        let value_bytes = dev.upload(if d.bytes.is_empty() { &[0u8][..] } else { &d.bytes }, &what).map_err(cuda_error)?;
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
        let records = dev.upload(if records.is_empty() { &[0u64, 0][..] } else { &records }, &what).map_err(cuda_error)?;
        let codes = dev.upload(if d.codes.is_empty() { &[0u16][..] } else { &d.codes }, &what).map_err(cuda_error)?;
        let validity = f.nullable.then(|| (0..table.rows).map(|r| table.columns[col].is_valid(r) as u8).collect::<Vec<u8>>());
        let validity = validity.map(|v| dev.upload(if v.is_empty() { &[0u8][..] } else { &v }, &what)).transpose().map_err(cuda_error)?;
        dev.synchronize().map_err(cuda_error)?;
        let bytes = d.codes.len() * 2 + d.len() * 16 + d.bytes.len() + if f.nullable { table.rows } else { 0 };
        stats.bytes += bytes;
        stats.ms += start.elapsed().as_secs_f64() * 1e3;
        let dd = Arc::new(DeviceDictionary { codes, records, value_bytes, validity, values: d.len(), bytes });
        map.insert(key, (table.version, dd.clone()));
        Ok(dd)
    }

    /// Bytes of all resident columns (and pivoted copies, replica placements,
    /// dictionaries).
    pub fn resident_bytes(&self) -> usize {
        let columns: usize = self.columns.lock().map(|m| m.values().map(|(_, c)| c.bytes).sum()).unwrap_or(0);
        let pivoted: usize = self.pivoted.lock().map(|m| m.values().filter_map(|(_, p)| p.as_ref().map(|p| p.bytes)).sum()).unwrap_or(0);
        let replicas: usize = self.replicas.lock().map(|m| m.values().map(|(_, r)| r.bytes).sum()).unwrap_or(0);
        let dictionaries: usize = self.dictionaries.lock().map(|m| m.values().map(|(_, d)| d.bytes).sum()).unwrap_or(0);
        columns + pivoted + replicas + dictionaries
    }

    pub fn clear(&self) {
        if let Ok(mut m) = self.columns.lock() {
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
