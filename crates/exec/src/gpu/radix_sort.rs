//! The radix sort of a sort stage: the keys encoded as words (`sort_encode`), the passes
//! whose digit varies found (`radix_constant_bits`), then per word from the last: the word
//! gathered in the current order, and per varying 8-bit digit a stable pass (per-tile digit
//! counts, their prefix sum, a scatter through shared memory). Kernels in radix_sort.cu
//! and radix_keys.cu (codegen).

use super::buffers::Arg;
use super::device_store::cuda_error;
use super::replay::{site, ReadBacks};
use super::{ptr, GpuExecutor, LaunchQueue, PlanMemo};
use crate::stats::KernelStat;
use gpusql_codegen::sort::{RadixKeys, SortSpec};
use gpusql_codegen::RADIX_TILE;
use gpusql_common::{Error, Result};
use gpusql_cuda::{CudaSlice, EndedTimer};
use std::sync::Arc;

/// Keys longer than this many bytes (long strings) sort by the comparator instead: each
/// byte is a pass over every row.
pub const MAX_RADIX_KEY_BYTES: usize = 256;

/// The sorted permutation of the `n` rows whose key columns `key_args` points to (the
/// spec's parameters), or None where the keys encode longer than `MAX_RADIX_KEY_BYTES`.
/// What it reads back (the strings' longest length, the bits that vary) goes through
/// `reads`, so that a replayed run takes it from the log (`input`: the sort's site).
#[allow(clippy::too_many_arguments)]
pub fn sort(
    ex: &GpuExecutor,
    spec: &Arc<SortSpec>,
    layout: &RadixKeys,
    key_args: &[Arg],
    string_values: &[u64],
    n: usize,
    (memo, reads, input): (&PlanMemo, &mut ReadBacks, usize),
    stat: &mut KernelStat,
) -> Result<Option<(CudaSlice<u32>, Vec<EndedTimer>)>> {
    if n > u32::MAX as usize {
        return Err(Error::not_supported(format!("sorting {n} rows (more than 2^32)")));
    }
    let dev = &ex.dev;
    let alloc = |len: usize, what: &str| dev.alloc_zeros::<u32>(len.max(1), what).map_err(cuda_error);
    let mut spans = vec![];
    // Each string key's longest string: its slot in the encoded key.
    let slots = alloc(layout.string_keys.len(), "sort key slots")?;
    let mut slot_lens = vec![];
    if !string_values.is_empty() {
        let f = ex.util("radix_max_length", stat)?;
        let mut q = LaunchQueue::default();
        for (j, values) in string_values.iter().enumerate() {
            let at = ptr(&slots, dev) + 4 * j as u64;
            q.push(f.clone(), &[Arg::U64(*values), Arg::U64(n as u64), Arg::U64(at)], n, Some(ex.grid_limit()));
        }
        spans.push(ex.submit_queue(q)?);
        slot_lens = reads.read(dev, site(("radix string slots", input, n)), &slots)?;
        slot_lens.truncate(string_values.len());
    }
    let nwords = layout.words(&slot_lens);
    if nwords * 4 > MAX_RADIX_KEY_BYTES {
        return Ok(None);
    }
    // The keys as words, and which bits vary between rows.
    let words = dev.alloc_unset::<u32>((nwords * n).max(1), "sort keys").map_err(cuda_error)?;
    let or_bits = alloc(nwords, "sort key bits")?;
    let nand_bits = alloc(nwords, "sort key bits")?;
    let encode = ex.load_sort(memo, spec, &layout.encode_entry, stat)?;
    let constant_bits = ex.util("radix_constant_bits", stat)?;
    let mut q = LaunchQueue::default();
    let mut args = vec![Arg::U64(ptr(&words, dev)), Arg::U64(n as u64), Arg::U64(ptr(&slots, dev))];
    args.extend(key_args.iter().copied());
    q.push(encode, &args, n, None);
    q.push(
        constant_bits,
        &[
            Arg::U64(ptr(&words, dev)),
            Arg::U64(n as u64),
            Arg::U32(nwords as u32),
            Arg::U64(ptr(&or_bits, dev)),
            Arg::U64(ptr(&nand_bits, dev)),
        ],
        n,
        Some(ex.grid_limit()),
    );
    spans.push(ex.submit_queue(q)?);
    let ors = reads.read(dev, site(("radix or bits", input, n, nwords)), &or_bits)?;
    let nands = reads.read(dev, site(("radix nand bits", input, n, nwords)), &nand_bits)?;
    stat.bytes_read += nwords * n * 8;

    let iota = ex.util("iota_u32", stat)?;
    let gather = ex.util("gather_4", stat)?;
    let counts_fn = ex.util("radix_tile_counts", stat)?;
    let scatter = ex.util("radix_scatter", stat)?;
    let tiles = n.div_ceil(RADIX_TILE);
    let mut perm = alloc(n, "sort permutation")?;
    let mut perm2 = alloc(n, "sort permutation")?;
    let mut cur = alloc(n, "sort key word")?;
    let mut cur2 = alloc(n, "sort key word")?;
    let counts = alloc(256 * tiles, "radix digit counts")?;
    let mut q = LaunchQueue::default();
    q.push(iota, &[Arg::U64(ptr(&perm, dev)), Arg::U64(n as u64)], n, None);
    for w in (0..nwords).rev() {
        // Bits set in some row and clear in another.
        let varying = ors[w] & nands[w];
        if varying == 0 {
            continue;
        }
        let word = ptr(&words, dev) + (w * n * 4) as u64;
        q.push(
            gather.clone(),
            &[Arg::U64(word), Arg::U64(ptr(&perm, dev)), Arg::U64(ptr(&cur, dev)), Arg::U64(n as u64)],
            n,
            Some(1024),
        );
        for shift in [0u32, 8, 16, 24] {
            if (varying >> shift) & 255 == 0 {
                continue;
            }
            q.push(
                counts_fn.clone(),
                &[
                    Arg::U64(ptr(&cur, dev)),
                    Arg::U64(n as u64),
                    Arg::U32(shift),
                    Arg::U64(ptr(&counts, dev)),
                    Arg::U32(tiles as u32),
                ],
                tiles * 256,
                None,
            );
            let offsets = super::scan::exclusive_scan::<u32, u64>(ex, &counts, 256 * tiles, &mut q, stat)?;
            q.push(
                scatter.clone(),
                &[
                    Arg::U64(ptr(&cur, dev)),
                    Arg::U64(ptr(&perm, dev)),
                    Arg::U64(ptr(&cur2, dev)),
                    Arg::U64(ptr(&perm2, dev)),
                    Arg::U64(n as u64),
                    Arg::U32(shift),
                    Arg::U64(ptr(&offsets, dev)),
                    Arg::U32(tiles as u32),
                ],
                tiles * 256,
                None,
            );
            // The pass's scratch is freed once it has run (a queue per pass keeps at
            // most one pass's prefix sums allocated).
            q.keep(offsets);
            spans.push(ex.submit_queue(std::mem::take(&mut q))?);
            std::mem::swap(&mut cur, &mut cur2);
            std::mem::swap(&mut perm, &mut perm2);
            stat.bytes_read += n * 20;
        }
    }
    if !q.is_empty() {
        spans.push(ex.submit_queue(q)?);
    }
    // (Buffers are freed in stream order: after the launches above that use them.)
    drop((words, cur, cur2, perm2, counts, slots, or_bits, nand_bits));
    Ok(Some((perm, spans)))
}
