//! Finishing a hash join's build: the build kernel inserted every key (one group per
//! distinct key, with its row count) and wrote the rows in arrival order; here the rows
//! are regrouped so each key's matches form one range: offsets = exclusive scan of the
//! counts, each row gets a position in its group's range, every payload column a probe
//! reads is scattered to those positions. Where every key has one row, a row's position
//! is its group id: no scan, no positions.

use super::buffers::{value_width, Arg, BuiltTable, Counted, DirectTable, KeyBitmap, OwnedColumn, SinkBuffers};
use super::replay::ReadBacks;
use super::{ptr, GpuExecutor, LaunchQueue, Permute};
use crate::gpu::device_store::cuda_error;
use crate::stats::KernelStat;
use gpusql_common::{Error, Result};

/// What is known of a build's key column before the build: its value range in the scanned
/// table, and that table's rows.
#[derive(Debug, Clone, Copy)]
pub struct KeyRange {
    pub min: i64,
    pub max: i64,
    pub table_rows: usize,
}

/// `payload_read`: per payload column, whether a probe reads it (`payload_columns_read`).
/// Returns the table and the GPU span of its finishing launches, which may still run.
pub fn finish_build(
    ex: &GpuExecutor,
    sink: SinkBuffers,
    counted: Counted,
    key_range: Option<KeyRange>,
    payload_read: &[bool],
    stat: &mut KernelStat,
    reads: &mut ReadBacks,
) -> Result<(BuiltTable, gpusql_cuda::EndedTimer)> {
    let shared_memory = ex.config.shared_memory_probe_tables;
    let dev = &ex.dev;
    let missing = || Error::exec("hash build buffers missing");
    let (rows, groups, multi) = (counted.rows, counted.groups, counted.repeated_keys);
    let counts = sink.group_rows.ok_or_else(missing)?;
    let row_group = sink.row_group.ok_or_else(missing)?;
    // Buffers are allocated and launches gathered first, then run back to back (timed).
    let mut q = LaunchQueue::default();
    // Unique keys: group g's one row goes to position g (probes read payload[gid]).
    let (offsets, pos) = if multi {
        let offsets = super::scan::exclusive_scan::<u32, u32>(ex, &counts, groups, &mut q, stat)?;
        let fill = dev.alloc_zeros::<u32>(groups.max(1), "hash table fill").map_err(cuda_error)?;
        let pos = dev.alloc_zeros::<u32>(rows.max(1), "hash table positions").map_err(cuda_error)?;
        if rows > 0 {
            let f = ex.util("assign_positions", stat)?;
            let args = [
                Arg::U64(ptr(&row_group, dev)),
                Arg::U64(ptr(&offsets, dev)),
                Arg::U64(ptr(&fill, dev)),
                Arg::U64(ptr(&pos, dev)),
                Arg::U64(rows as u64),
            ];
            q.push(f, &args, rows, Some(1024));
        }
        q.keep(fill);
        (Some(offsets), pos)
    } else {
        (None, row_group)
    };
    let mut payload = vec![];
    let pos_ptr = ptr(&pos, dev);
    for (i, c) in sink.outputs.iter().enumerate() {
        if !payload_read.get(i).copied().unwrap_or(true) {
            payload.push(None);
            continue;
        }
        let values = ex.permute(Permute::Scatter, &c.values, value_width(&c.ty), pos_ptr, rows, &mut q, stat)?;
        let validity =
            c.validity.as_ref().map(|v| ex.permute(Permute::Scatter, v, 1, pos_ptr, rows, &mut q, stat)).transpose()?;
        payload.push(Some(OwnedColumn { ty: c.ty, values, validity }));
    }
    let slots = sink.slots.ok_or_else(missing)?;
    // Single integer keys get {key, group} entries: a probe step is one load. With shared-
    // memory tables on, a table whose groups fit at load factor <= 1/4 is rehashed to that size;
    // larger ones keep the build's slot order and its low load factor (most probes of a
    // filtered dimension miss, and a miss walks the run of occupied slots: compact
    // global tables measured up to 40% slower on SSB Q2/Q3).
    let direct =
        if ex.config.direct_tables { direct_table(ex, &sink.group_keys, groups, &mut q, stat, reads)? } else { None };
    let (entries, entry_slots) = match sink.group_keys.as_slice() {
        _ if direct.is_some() => (None, 0),
        [k] => match gpusql_codegen::entry_type(gpusql_codegen::c_type(&k.ty)) {
            Some((_, size)) => {
                let w = size / 2;
                let compact = (groups * 4).next_power_of_two().max(16);
                // Large tables of repeating keys (lineitem by l_orderkey: 134M slots for 15M
                // keys) are rehashed at load factor <= 1/2: writing 2 GB of entries cost
                // 1.4 ms per build, and probes into either size go to DRAM.
                let large = (groups * 2).next_power_of_two().max(16);
                let n = if shared_memory && compact * size <= gpusql_codegen::SMEM_TABLE_BYTES {
                    compact
                } else if groups >= LARGE_TABLE_GROUPS && large * 4 <= sink.slot_count {
                    large
                } else {
                    sink.slot_count
                };
                let out = dev.alloc_zeros::<u8>(n * size, "hash table entries").map_err(cuda_error)?;
                if n == sink.slot_count {
                    let f = ex.util(&format!("copy_entries_{w}"), stat)?;
                    let args = [
                        Arg::U64(ptr(&slots, dev)),
                        Arg::U64(ptr(&k.values, dev)),
                        Arg::U64(ptr(&out, dev)),
                        Arg::U64(n as u64),
                    ];
                    q.push(f, &args, n, Some(1024));
                } else {
                    let fill = ex.util(&format!("fill_entries_{w}"), stat)?;
                    q.push(fill, &[Arg::U64(ptr(&out, dev)), Arg::U64(n as u64)], n, Some(1024));
                    if groups > 0 {
                        let f = ex.util(&format!("make_entries_{w}"), stat)?;
                        let args = [
                            Arg::U64(ptr(&k.values, dev)),
                            Arg::U64(groups as u64),
                            Arg::U64(ptr(&out, dev)),
                            Arg::U32((n - 1) as u32),
                        ];
                        q.push(f, &args, groups, Some(1024));
                    }
                }
                (Some(out), n)
            }
            None => (None, 0),
        },
        _ => (None, 0),
    };
    let bitmap = match key_range {
        Some(r) if ex.config.key_bitmaps && entries.is_some() => {
            key_bitmap(ex, &sink.group_keys, groups, r, &mut q, stat)?
        }
        _ => None,
    };
    // Not waited for: the next stage's host work overlaps these launches. (Buffers freed
    // meanwhile, `pos` and the sink's arrival-order payload, are freed in stream order,
    // after the launches that read them.)
    let span = ex.submit_queue(q)?;
    drop((pos, sink.outputs));
    let table = BuiltTable {
        slots,
        slot_count: sink.slot_count,
        keys: sink.group_keys,
        offsets,
        counts,
        payload,
        multi,
        entries,
        entry_slots,
        direct,
        bitmap,
        iota: Default::default(),
        band_max: None,
    };
    Ok((table, span))
}

/// The smallest and largest of the `groups` keys (w bytes each), and the range's size.
fn key_range(
    ex: &GpuExecutor,
    k: &OwnedColumn,
    w: usize,
    groups: usize,
    stat: &mut KernelStat,
    reads: &mut ReadBacks,
) -> Result<([i64; 2], u128)> {
    let dev = &ex.dev;
    let minmax = dev.upload(&[i64::MAX, i64::MIN], "key range").map_err(cuda_error)?;
    let f = ex.util(&format!("key_range_{w}"), stat)?;
    ex.launch_untimed(
        &f,
        &[Arg::U64(ptr(&k.values, dev)), Arg::U64(groups as u64), Arg::U64(ptr(&minmax, dev))],
        groups,
        Some(1024),
    )?;
    let mm = reads.read(dev, super::replay::site(("key range", w, groups)), &minmax)?;
    Ok(([mm[0], mm[1]], (mm[1] as i128 - mm[0] as i128 + 1) as u128))
}

/// Bitmaps cover key ranges of at most this many values (128 KiB: mostly L1-resident).
const BITMAP_MAX_BITS: u128 = 1 << 20;

/// For a single integer key whose column's range `r` spans at most BITMAP_MAX_BITS values,
/// a bit per value saying whether the table has that key: probes test it before hashing,
/// so the rows a filtered dimension drops never touch the hash table. Only where the
/// build kept at most half its table's rows: probes of an unfiltered dimension (nearly
/// all hit) would pay the extra load for nothing.
fn key_bitmap(
    ex: &GpuExecutor,
    keys: &[OwnedColumn],
    groups: usize,
    r: KeyRange,
    q: &mut LaunchQueue,
    stat: &mut KernelStat,
) -> Result<Option<KeyBitmap>> {
    let [k] = keys else { return Ok(None) };
    let Some((_, size)) = gpusql_codegen::entry_type(gpusql_codegen::c_type(&k.ty)) else { return Ok(None) };
    let range = (r.max as i128 - r.min as i128 + 1) as u128;
    if groups == 0 || groups * 2 > r.table_rows || range > BITMAP_MAX_BITS {
        return Ok(None);
    }
    let dev = &ex.dev;
    let bits = range as usize;
    let words = dev.alloc_zeros::<u32>(bits.div_ceil(32), "join key bitmap").map_err(cuda_error)?;
    let f = ex.util(&format!("key_bitmap_{}", size / 2), stat)?;
    q.push(
        f,
        &[Arg::U64(ptr(&k.values, dev)), Arg::U64(groups as u64), Arg::U64(r.min as u64), Arg::U64(ptr(&words, dev))],
        groups,
        Some(1024),
    );
    Ok(Some(KeyBitmap { words, min: r.min, bits }))
}

/// Tables of at least this many keys may be rehashed compactly (smaller ones stay sparse:
/// probes into filtered dimensions mostly miss, and a miss in a compact table walks longer
/// runs; see docs/BENCHMARKS.md).
const LARGE_TABLE_GROUPS: usize = 1 << 20;

/// Direct-mapped tables: most entries this may hold, and the least density of keys.
const DIRECT_MAX_SLOTS: u64 = 1 << 26;
const DIRECT_MIN_DENSITY: u64 = 64;

/// For a single integer key whose values are dense enough (range <= 64 x keys, at most
/// 2^26), a table of group ids indexed by key - min: a probe is one 4-byte load, no hash.
fn direct_table(
    ex: &GpuExecutor,
    keys: &[OwnedColumn],
    groups: usize,
    q: &mut LaunchQueue,
    stat: &mut KernelStat,
    reads: &mut ReadBacks,
) -> Result<Option<DirectTable>> {
    let [k] = keys else { return Ok(None) };
    let Some((_, size)) = gpusql_codegen::entry_type(gpusql_codegen::c_type(&k.ty)) else { return Ok(None) };
    if groups == 0 {
        return Ok(None);
    }
    let dev = &ex.dev;
    let w = size / 2;
    let (mm, range) = key_range(ex, k, w, groups, stat, reads)?;
    if range > DIRECT_MAX_SLOTS as u128 || range > (groups as u128) * DIRECT_MIN_DENSITY as u128 {
        return Ok(None);
    }
    let n = range as usize;
    let table = dev.alloc_zeros::<i32>(n, "direct-mapped hash table").map_err(cuda_error)?;
    let fill = ex.util("fill_minus_one", stat)?;
    q.push(fill, &[Arg::U64(ptr(&table, dev)), Arg::U64(n as u64)], n, Some(1024));
    let f = ex.util(&format!("direct_table_{w}"), stat)?;
    let args =
        [Arg::U64(ptr(&k.values, dev)), Arg::U64(groups as u64), Arg::U64(mm[0] as u64), Arg::U64(ptr(&table, dev))];
    q.push(f, &args, groups, Some(1024));
    Ok(Some(DirectTable { table, min: mm[0], slots: n }))
}
