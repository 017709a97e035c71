//! GPU buffers of a query: source columns, sink outputs, intermediates.

use super::replay::ReadBacks;
use super::{ptr, GpuExecutor};
use crate::gpu::device_store::{cuda_error, DeviceColumn, DeviceDictionary};
use crate::stats::KernelStat;
use gpusql_codegen::types::c_type;
use gpusql_codegen::Part;
use gpusql_common::{DataType, Error, Result, Schema};
use gpusql_cuda::{CudaSlice, GpuDevice};
use gpusql_plan::{Sink, StateFunc};
use std::sync::Arc;

/// A kernel argument.
#[derive(Debug, Clone, Copy)]
pub enum Arg {
    U64(u64),
    U32(u32),
}

/// Bytes per value in a fixed-width GPU column or register of type `ty`.
pub fn value_width(ty: &DataType) -> usize {
    match c_type(ty) {
        "bool" => 1,
        "int32_t" => 4,
        "int64_t" | "double" => 8,
        _ => 16, // __int128, Str
    }
}

/// A materialized column: fixed-width values (Str records for strings) + validity bytes.
pub struct OwnedColumn {
    pub ty: DataType,
    pub values: CudaSlice<u8>,
    pub validity: Option<CudaSlice<u8>>,
}

pub struct Intermediate {
    pub schema: Schema,
    pub rows: usize,
    pub columns: Vec<OwnedColumn>,
    /// Row order after a sort (first `rows` entries).
    pub perm: Option<CudaSlice<u32>>,
    /// After a sort with segments: each sorted row's position in its group (i64, in
    /// sorted order), for a Slice with positions.
    pub positions: Option<CudaSlice<u8>>,
}

/// A pipeline's view of one source column.
pub enum Column<'a> {
    Table(Arc<DeviceColumn>),
    /// A dictionary-encoded string column of a table.
    Dictionary(Arc<DeviceDictionary>),
    Owned(&'a OwnedColumn),
}

impl<'a> Column<'a> {
    pub fn borrowed(c: &'a OwnedColumn) -> Self {
        Column::Owned(c)
    }

    pub fn ptr(&self, part: Part, dev: &GpuDevice) -> Result<u64> {
        let missing = || Error::exec(format!("kernel asked for a missing column part {part:?}"));
        Ok(match (self, part) {
            (Column::Table(c), Part::Values | Part::Bytes) => ptr(&c.values, dev),
            (Column::Table(c), Part::Offsets) => ptr(c.offsets.as_ref().ok_or_else(missing)?, dev),
            (Column::Table(c), Part::Validity) => ptr(c.validity.as_ref().ok_or_else(missing)?, dev),
            (Column::Dictionary(d), Part::DictCodes) => ptr(&d.codes, dev),
            (Column::Dictionary(d), Part::DictValues) => ptr(&d.records, dev),
            (Column::Dictionary(d), Part::Validity) => ptr(d.validity.as_ref().ok_or_else(missing)?, dev),
            (Column::Owned(c), Part::Values) => ptr(&c.values, dev),
            (Column::Owned(c), Part::Validity) => ptr(c.validity.as_ref().ok_or_else(missing)?, dev),
            // The executor binds pivoted copies itself; null means "none, use the bytes".
            (_, Part::Pivoted) => 0,
            (Column::Owned(_) | Column::Table(_) | Column::Dictionary(_), _) => return Err(missing()),
        })
    }

    /// Bytes a scan of `rows` rows reads from this column.
    pub fn bytes(&self, rows: usize) -> usize {
        match self {
            Column::Table(c) => c.bytes,
            // The codes and validity; the dictionary's records and bytes are few and cached.
            Column::Dictionary(d) => rows * (2 + d.validity.as_ref().map_or(0, |_| 1)),
            Column::Owned(c) => rows * (value_width(&c.ty) + c.validity.as_ref().map_or(0, |_| 1)),
        }
    }
}

fn alloc(dev: &GpuDevice, bytes: usize, what: &str) -> Result<CudaSlice<u8>> {
    dev.alloc_zeros::<u8>(bytes.max(16), what).map_err(cuda_error)
}

/// `alloc` without zeroing: rows a sink writes in full before anything reads them.
fn alloc_unset(dev: &GpuDevice, bytes: usize, what: &str) -> Result<CudaSlice<u8>> {
    dev.alloc_unset::<u8>(bytes.max(16), what).map_err(cuda_error)
}

/// Buffers a sink writes: output/key columns, aggregate states, hash slots, a counter.
pub struct SinkBuffers {
    pub outputs: Vec<OwnedColumn>,
    pub states: Vec<OwnedColumn>,
    pub slots: Option<CudaSlice<i32>>,
    pub slot_count: usize,
    /// The words the kernel counts into (`Counter`), read back with one download.
    pub counters: CudaSlice<u64>,
    /// HashBuild only: key arrays per group, rows per group, group of each row.
    pub group_keys: Vec<OwnedColumn>,
    pub group_rows: Option<CudaSlice<u32>>,
    pub row_group: Option<CudaSlice<u32>>,
}

/// The words of `SinkBuffers::counters`: what a pipeline's run reports, read back in one
/// download (one wait for the GPU, where each was a download of its own).
#[derive(Debug, Clone, Copy)]
pub enum Counter {
    /// Rows (groups) the sink counted (`unsigned long long`).
    Rows = 0,
    /// HashBuild: distinct keys (`unsigned long long`).
    Groups = 1,
    /// HashBuild: set to 1 (an `int`) where some key has several rows.
    RepeatedKeys = 2,
    /// `int[2]`: the kernel's error code, and n minus the first row that found a group
    /// table full.
    Error = 3,
    /// Bytes the kernel's new strings took from its arena (`unsigned long long`; past the
    /// arena's size where it ran out: the size to run again with).
    ArenaUsed = 4,
}

/// u64 words between two counters: each in its own 128-byte line, so that a hash build's
/// atomics on its key count and stores to its repeated-keys flag (from every run of
/// equal keys) do not contend with each other or the row count in one line.
const COUNTER_STRIDE: usize = 16;

/// u64 words of `SinkBuffers::counters`.
pub const COUNTERS: usize = 5 * COUNTER_STRIDE;

/// What the counters said after a run.
#[derive(Debug, Clone, Copy)]
pub struct Counted {
    pub rows: usize,
    pub groups: usize,
    pub repeated_keys: bool,
    pub error: i32,
    /// n minus the first row that found the group table full (0: none).
    pub full_from_end: u32,
    /// Bytes of the string arena taken (or asked for).
    pub arena_used: usize,
}

/// A finished hash table of a join's build side: payload rows grouped by key.
pub struct BuiltTable {
    pub slots: CudaSlice<i32>,
    pub slot_count: usize,
    pub keys: Vec<OwnedColumn>,
    /// Where each key's rows start; None where every key has one row (at its group id).
    pub offsets: Option<CudaSlice<u32>>,
    pub counts: CudaSlice<u32>,
    /// Per payload column, grouped by key; None for columns no probe reads.
    pub payload: Vec<Option<OwnedColumn>>,
    pub multi: bool,
    /// {key, group} per slot for single integer keys, and that table's slot count.
    pub entries: Option<CudaSlice<u8>>,
    pub entry_slots: usize,
    /// Dense single integer keys: group ids indexed by key - min.
    pub direct: Option<DirectTable>,
    /// Single integer keys over a small range: a bit per value (probes test it first).
    pub bitmap: Option<KeyBitmap>,
    /// Unique keys: group g's match range starts at g (made when a generic probe asks).
    pub iota: std::sync::OnceLock<CudaSlice<u32>>,
    /// A band table's running maximum of the column its probes search an upper bound of.
    pub band_max: Option<OwnedColumn>,
}

pub struct KeyBitmap {
    pub words: CudaSlice<u32>,
    pub min: i64,
    pub bits: usize,
}

pub struct DirectTable {
    pub table: CudaSlice<i32>,
    pub min: i64,
    pub slots: usize,
}

impl BuiltTable {
    /// Where each key's matches start: the offsets of repeating keys; for unique keys
    /// 0, 1, 2, … (group g's one row is at g), which only a generic probe reads, made by
    /// `make_match_offsets` first.
    pub fn match_offsets(&self) -> Result<&CudaSlice<u32>> {
        self.offsets.as_ref().or(self.iota.get()).ok_or_else(|| Error::exec("hash table match offsets missing"))
    }

    /// Makes the match offsets of a unique-key table (0, 1, 2, … on the GPU) unless they
    /// exist.
    pub fn make_match_offsets(&self, ex: &GpuExecutor) -> Result<()> {
        if self.offsets.is_some() || self.iota.get().is_some() {
            return Ok(());
        }
        let groups = self.counts.len();
        let iota = ex.dev.alloc_zeros::<u32>(groups.max(1), "hash table match offsets").map_err(cuda_error)?;
        let f = ex.util("iota_u32", &mut KernelStat::default())?;
        ex.launch_untimed(&f, &[Arg::U64(ptr(&iota, &ex.dev)), Arg::U64(groups as u64)], groups, Some(1024))?;
        let _ = self.iota.set(iota);
        Ok(())
    }

    /// Slots of the table probes read (the entries table when there is one).
    pub fn probe_slots(&self) -> usize {
        if let Some(d) = &self.direct {
            d.slots
        } else if self.entries.is_some() {
            self.entry_slots
        } else {
            self.slot_count
        }
    }
}

impl SinkBuffers {
    /// Device pointer of counter `c`.
    pub fn counter_ptr(&self, c: Counter, dev: &GpuDevice) -> u64 {
        ptr(&self.counters, dev) + (8 * COUNTER_STRIDE * c as usize) as u64
    }

    /// Reads the counters back (waits for the GPU, unless `reads` replays a run).
    pub fn counted(&self, dev: &GpuDevice, reads: &mut ReadBacks, site: u64) -> Result<Counted> {
        let w = reads.read(dev, site, &self.counters)?;
        // (Little-endian halves: the int at a word's address is its low half.)
        let word = |c: Counter| w[COUNTER_STRIDE * c as usize];
        let error_word = word(Counter::Error);
        Ok(Counted {
            rows: word(Counter::Rows) as usize,
            groups: word(Counter::Groups) as usize,
            repeated_keys: (word(Counter::RepeatedKeys) as u32) != 0,
            error: error_word as u32 as i32,
            full_from_end: (error_word >> 32) as u32,
            arena_used: word(Counter::ArenaUsed) as usize,
        })
    }

    /// `capacity`: rows (materialize) or groups (aggregate) the buffers hold.
    pub fn allocate(dev: &GpuDevice, sink: &Sink, capacity: usize) -> Result<SinkBuffers> {
        let count = dev.alloc_zeros::<u64>(COUNTERS, "sink counters").map_err(cuda_error)?;
        let column = |ty: DataType, nullable: bool, what: &str| -> Result<OwnedColumn> {
            Ok(OwnedColumn {
                ty,
                values: alloc(dev, capacity * value_width(&ty), what)?,
                validity: if nullable { Some(alloc(dev, capacity, what)?) } else { None },
            })
        };
        // Rows of materializations and hash builds: each written in full (values and
        // validity) before it is read; a build's keys per group likewise, and its slots
        // by the init kernel.
        let rows_column = |ty: DataType, nullable: bool, what: &str| -> Result<OwnedColumn> {
            Ok(OwnedColumn {
                ty,
                values: alloc_unset(dev, capacity * value_width(&ty), what)?,
                validity: if nullable { Some(alloc_unset(dev, capacity, what)?) } else { None },
            })
        };
        match sink {
            Sink::Materialize { id, schema } => {
                let outputs = schema
                    .fields
                    .iter()
                    .map(|f| rows_column(f.ty, f.nullable, &format!("result #{id} column {}", f.name)))
                    .collect::<Result<_>>()?;
                Ok(SinkBuffers::plain(outputs, vec![], None, 0, count))
            }
            Sink::HashBuild { id, keys, schema } => {
                let outputs = schema
                    .fields
                    .iter()
                    .map(|f| rows_column(f.ty, f.nullable, &format!("hash table #{id} column {}", f.name)))
                    .collect::<Result<_>>()?;
                let group_keys = keys
                    .iter()
                    .enumerate()
                    .map(|(i, k)| rows_column(k.ty(), false, &format!("hash table #{id} key {i}")))
                    .collect::<Result<_>>()?;
                let n = (capacity * 2).next_power_of_two();
                let what = format!("hash table #{id}");
                let mut b = SinkBuffers::plain(
                    outputs,
                    vec![],
                    Some(dev.alloc_unset::<i32>(n, &what).map_err(cuda_error)?),
                    n,
                    count,
                );
                b.group_keys = group_keys;
                b.group_rows = Some(dev.alloc_zeros::<u32>(capacity.max(1), &what).map_err(cuda_error)?);
                b.row_group = Some(dev.alloc_unset::<u32>(capacity.max(1), &what).map_err(cuda_error)?);
                Ok(b)
            }
            Sink::Aggregate { id, keys, states, .. } => {
                let outputs = keys
                    .iter()
                    .enumerate()
                    .map(|(i, k)| column(k.ty(), k.nullable(), &format!("group keys of #{id} (key {i})")))
                    .collect::<Result<_>>()?;
                let states = states
                    .iter()
                    .map(|s| {
                        let ty = if s.func == StateFunc::Count { DataType::Int64 } else { s.ty };
                        column(ty, false, &format!("aggregate state {s} of #{id}"))
                    })
                    .collect::<Result<_>>()?;
                let (slots, slot_count) = if keys.is_empty() {
                    (None, 0)
                } else {
                    let n = (capacity * 2).next_power_of_two();
                    (Some(dev.alloc_zeros::<i32>(n, &format!("hash table of #{id}")).map_err(cuda_error)?), n)
                };
                Ok(SinkBuffers::plain(outputs, states, slots, slot_count, count))
            }
        }
    }

    fn plain(
        outputs: Vec<OwnedColumn>,
        states: Vec<OwnedColumn>,
        slots: Option<CudaSlice<i32>>,
        slot_count: usize,
        counters: CudaSlice<u64>,
    ) -> Self {
        SinkBuffers {
            outputs,
            states,
            slots,
            slot_count,
            counters,
            group_keys: vec![],
            group_rows: None,
            row_group: None,
        }
    }

    pub fn output_ptr(&self, column: usize, part: Part, dev: &GpuDevice) -> Result<u64> {
        let c = self.outputs.get(column).ok_or_else(|| Error::exec(format!("no output column {column}")))?;
        Column::Owned(c).ptr(part, dev)
    }

    pub fn state_ptr(&self, index: usize, dev: &GpuDevice) -> Result<u64> {
        let c = self.states.get(index).ok_or_else(|| Error::exec(format!("no aggregate state {index}")))?;
        Ok(ptr(&c.values, dev))
    }

    pub fn into_intermediate(self, schema: Schema, rows: usize) -> Intermediate {
        let mut columns = self.outputs;
        columns.extend(self.states);
        Intermediate { schema, rows, columns, perm: None, positions: None }
    }
}

/// The first `m` values of T in `b` (bytes downloaded from the GPU).
pub(crate) fn bytes_to<T: Copy>(b: &[u8], m: usize) -> Vec<T> {
    // (At most the values `b` holds: a short download makes a short array, which the
    // record batch then refuses.)
    let n = m.min(b.len() / std::mem::size_of::<T>().max(1));
    let mut v = Vec::<T>::with_capacity(n);
    // SAFETY: T is a plain number type (any bytes are a value); `b` holds n of them,
    // copied into the capacity reserved above.
    unsafe {
        std::ptr::copy_nonoverlapping(b.as_ptr(), v.as_mut_ptr() as *mut u8, n * std::mem::size_of::<T>());
        v.set_len(n);
    }
    v
}
