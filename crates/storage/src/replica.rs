//! Bank-replicated shared-memory tables ([Sitaridi 2016] §3.4): the load-time placement.
//!
//! A column with few distinct values (a star schema's foreign key to a small dimension, a
//! grouping column) indexes a table that each block keeps in shared memory: the filtered
//! dimension's group ids (a probe *reads* it) or the running aggregates of each group (an
//! aggregation *writes* it). Shared memory has 32 banks; lanes of a warp that touch
//! different words of one bank are served one after another (a bank conflict), and atomic
//! updates of one word are serialized (a value conflict). So the table holds extra
//! *copies* of values in distinct banks, and each row of the column is mapped, once, to
//! the copy (slot) it uses, such that the 32 rows a warp handles together hit distinct
//! banks. Slot `s` lies in bank `s % 32`; the table is `levels × 32` slots.
//!
//! The algorithm ([Sitaridi 2016] §3.4.1): every value starts with one copy (value `v` in slot
//! `v`). A chunk of 32 rows (one warp's rows: the kernels take 256 consecutive rows per
//! block and loop iteration, 8 chunks) is assigned copy by copy; a row whose copies'
//! banks are taken looks for the shortest sequence of reassignments that frees one (a
//! breadth-first search over the chunk's rows, like an augmenting path in bipartite
//! matching). Where none exists a new copy is made in a free bank, the bank with the
//! fewest slots first (so the table has few holes), until the budget of copies is spent;
//! after that the row keeps a conflicting copy. *Writes* give each row its own copy and
//! avoid copies the block's earlier warps of the same tile used (the inter-warp window,
//! here the tile: those warps' atomics may still be in flight); *reads* place each
//! distinct value of a chunk once and let its rows share the copy (a broadcast).
//!
//! Copies are created on evenly spread tiles of the column (at most `PLACEMENT_TILES`);
//! then every tile is assigned with the final copies, in parallel.

use gpusql_common::ReplicaMode;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;

pub const BANKS: usize = 32;
/// Rows a block takes per loop iteration (256 threads): its 8 warps' chunks.
pub const TILE_ROWS: usize = 256;
/// Copies per value the placement may spend on average ([Sitaridi 2016] §3.5.2: 2-4× gives most
/// of the benefit), or up to a copy per bank where that still fits the slots (tables of
/// few values, whose heavy hitters need many copies against value conflicts).
pub const COPY_BUDGET: usize = 4;
/// Tiles the copy-creating pass visits (evenly spread over the column).
const PLACEMENT_TILES: usize = 16_384;
/// Rows a breadth-first search may visit before it gives up (bounds the cost per chunk).
const SEARCH_LIMIT: usize = 64;
/// A slot no value occupies.
pub const HOLE: u32 = u32::MAX;

#[derive(Debug)]
pub struct ReplicaPlacement {
    pub mode: ReplicaMode,
    /// The column's distinct values, ascending: a value's code is its index.
    pub values: Vec<i64>,
    /// Per slot (`level * 32 + bank`): the code of the value it holds, or HOLE. Value
    /// `c`'s first copy is slot `c` (kernels fill those first and copy the rest).
    pub slot_code: Vec<u32>,
    /// Per row: the slot its value is read from / accumulated into (`row_slot`).
    row_slot: RowSlots,
    /// Copies placed: values plus extra copies.
    pub copies: usize,
}

/// The rows' slots: assigned on a background thread once the copies are made, so that
/// planning needs only the copies (the table's layout, which the kernels are generated
/// for) and the assignment of every row (lineitem: 234 K tiles) overlaps compiling them.
#[derive(Debug)]
struct RowSlots {
    done: OnceLock<Vec<u16>>,
    assigning: Mutex<Option<JoinHandle<Vec<u16>>>>,
}

impl RowSlots {
    fn ready(row_slot: Vec<u16>) -> Self {
        RowSlots { done: OnceLock::from(row_slot), assigning: Mutex::new(None) }
    }
}

impl ReplicaPlacement {
    /// Per row: the slot its value is read from / accumulated into (waits for the
    /// background assignment).
    pub fn row_slot(&self) -> &[u16] {
        self.row_slot.done.get_or_init(|| {
            let pending = self.row_slot.assigning.lock().unwrap_or_else(|e| e.into_inner()).take();
            // (A panicked assignment is a bug: it panics here again, in the query.)
            pending.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).unwrap_or_default()
        })
    }

    /// Per slot, the value it holds (holes hold the first value: no row maps to them).
    pub fn slot_values(&self) -> Vec<i64> {
        self.slot_code.iter().map(|&c| if c == HOLE { self.values[0] } else { self.values[c as usize] }).collect()
    }
}

/// The smallest and largest of `values` (None when empty).
pub fn min_max<T: Copy + Into<i64>>(values: &[T]) -> Option<(i64, i64)> {
    values.iter().fold(None, |r, &v| {
        let v: i64 = v.into();
        Some(r.map_or((v, v), |(lo, hi): (i64, i64)| (lo.min(v), hi.max(v))))
    })
}

/// The distinct values of `col` (ascending) and each row's code, or None when there are
/// more than `max_values`.
pub fn dictionary<T: Copy + Into<i64> + Sync>(col: &[T], max_values: usize) -> Option<(Vec<i64>, Vec<u16>)> {
    dictionary_of_chunks(&[col], max_values)
}

/// Rows a parallel task of `dictionary_of_chunks` takes.
const DICTIONARY_TASK_ROWS: usize = 1 << 16;

/// `dictionary` of a column held in chunks (codes of all rows in order), computed on all
/// cores without copying the column into one piece (lineitem at SF 10: copying 60 M keys
/// first took most of a first query's 0.5-1.2 s of planning, even for key columns that
/// then had far too many values).
pub fn dictionary_of_chunks<T: Copy + Into<i64> + Sync>(
    chunks: &[&[T]],
    max_values: usize,
) -> Option<(Vec<i64>, Vec<u16>)> {
    let max_values = max_values.min(1 << 16);
    let tasks = || chunks.par_iter().flat_map(|c| c.par_chunks(DICTIONARY_TASK_ROWS));
    let (min, max) = tasks().filter_map(min_max).reduce_with(|(a, b), (c, d)| (a.min(c), b.max(d)))?;
    let range = (max as i128 - min as i128) as u128;
    let code_of: Box<dyn Fn(i64) -> u16 + Sync>;
    let values: Vec<i64>;
    if range < (1 << 22) {
        // Dense range: a bit per value of the range says which occur, then a code per value
        // of the range instead of hashing.
        let words = (range as usize + 1).div_ceil(64);
        let present = tasks()
            .fold(
                || vec![0u64; words],
                |mut bits, rows| {
                    for &v in rows {
                        let i = (v.into() - min) as usize;
                        bits[i / 64] |= 1 << (i % 64);
                    }
                    bits
                },
            )
            .reduce(
                || vec![0u64; words],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x |= y);
                    a
                },
            );
        if present.iter().map(|w| w.count_ones() as usize).sum::<usize>() > max_values {
            return None;
        }
        values =
            (0..=range as usize).filter(|i| present[i / 64] >> (i % 64) & 1 == 1).map(|i| min + i as i64).collect();
        let mut code = vec![0u16; range as usize + 1];
        for (c, v) in values.iter().enumerate() {
            code[(v - min) as usize] = c as u16;
        }
        code_of = Box::new(move |v| code[(v - min) as usize]);
    } else {
        // A hash set, given up at too many values (most key columns, after a few rows).
        let mut seen: HashMap<i64, ()> = HashMap::new();
        for &v in chunks.iter().flat_map(|c| c.iter()) {
            seen.insert(v.into(), ());
            if seen.len() > max_values {
                return None;
            }
        }
        let mut sorted: Vec<i64> = seen.into_keys().collect();
        sorted.sort_unstable();
        let index: HashMap<i64, u16> = sorted.iter().enumerate().map(|(i, v)| (*v, i as u16)).collect();
        values = sorted;
        code_of = Box::new(move |v| index[&v]);
    }
    let mut codes = vec![0u16; chunks.iter().map(|c| c.len()).sum()];
    let mut outs = Vec::with_capacity(chunks.len());
    let mut rest = codes.as_mut_slice();
    for c in chunks {
        let (out, tail) = rest.split_at_mut(c.len());
        outs.push(out);
        rest = tail;
    }
    outs.into_par_iter().zip(chunks.par_iter()).for_each(|(out, c)| {
        out.par_chunks_mut(DICTIONARY_TASK_ROWS).zip(c.par_chunks(DICTIONARY_TASK_ROWS)).for_each(|(o, rows)| {
            o.iter_mut().zip(rows).for_each(|(o, &v)| *o = code_of(v.into()));
        })
    });
    Some((values, codes))
}

/// The copies of every value and the slots each bank has used.
struct Copies {
    of: Vec<Vec<u16>>,
    levels: [usize; BANKS],
    max_levels: usize,
    budget: usize,
    total: usize,
}

impl Copies {
    fn new(values: usize, max_slots: usize) -> Copies {
        let mut levels = [0; BANKS];
        let of = (0..values)
            .map(|v| {
                levels[v % BANKS] += 1;
                vec![v as u16]
            })
            .collect();
        let budget = (values * COPY_BUDGET).max((values * BANKS).min(max_slots));
        Copies { of, levels, max_levels: max_slots / BANKS, budget, total: values }
    }

    /// Words of a bitset of every slot.
    fn words(&self) -> usize {
        (self.max_levels * BANKS).div_ceil(64)
    }

    /// A new copy of `code` in one of the `free` banks (that has none of it yet), the bank
    /// with the fewest slots first, ties broken from `rotate`; None when the budget or the
    /// slots are spent.
    fn add(&mut self, code: u32, free: u32, rotate: usize) -> Option<u16> {
        if self.total >= self.budget {
            return None;
        }
        let mut taken = 0u32;
        for &s in &self.of[code as usize] {
            taken |= 1 << bank(s);
        }
        let b = (0..BANKS)
            .map(|k| (k + rotate) % BANKS)
            .filter(|&b| free & (1 << b) != 0 && taken & (1 << b) == 0 && self.levels[b] < self.max_levels)
            .min_by_key(|&b| self.levels[b])?;
        let slot = (self.levels[b] * BANKS + b) as u16;
        self.levels[b] += 1;
        self.total += 1;
        self.of[code as usize].push(slot);
        Some(slot)
    }

    fn slots(&self) -> usize {
        self.levels.iter().max().copied().unwrap_or(0) * BANKS
    }
}

fn bank(slot: u16) -> usize {
    slot as usize % BANKS
}

/// One chunk's assignment of items (codes) to slots in distinct banks.
struct Chunk<'a> {
    items: &'a [u32],
    slot: [u16; BANKS],
    /// Item owning each bank (-1: free).
    owner: [i8; BANKS],
}

const NONE: u16 = u16::MAX;

impl Chunk<'_> {
    /// Breadth-first search for the shortest reassignment sequence that gives item `i` a
    /// bank: each step, an item takes a copy whose bank another item holds, which moves on.
    /// `avoid` (a bit per slot) marks copies not to use.
    fn augment(&mut self, i: usize, copies: &Copies, avoid: &[u64], rotate: usize) -> bool {
        let mut prev: [(i8, u16); BANKS] = [(-1, NONE); BANKS];
        let mut visited = 1u64 << i;
        let mut queue = [0u8; BANKS];
        let (mut head, mut tail) = (0, 1);
        queue[0] = i as u8;
        while head < tail && head < SEARCH_LIMIT {
            let x = queue[head] as usize;
            head += 1;
            let of = &copies.of[self.items[x] as usize];
            for k in 0..of.len() {
                let s = of[(k + rotate) % of.len()];
                if avoid[s as usize / 64] & (1 << (s % 64)) != 0 || self.slot[x] == s {
                    continue;
                }
                let b = bank(s);
                match self.owner[b] {
                    -1 => {
                        // Free bank: x takes s, and each item on the path takes the bank
                        // of the one after it.
                        let (mut z, mut t) = (x, s);
                        loop {
                            self.owner[bank(t)] = z as i8;
                            self.slot[z] = t;
                            if z == i {
                                return true;
                            }
                            let (px, ps) = prev[z];
                            z = px as usize;
                            t = ps;
                        }
                    }
                    y if visited & (1 << y) == 0 && self.slot[y as usize] != NONE => {
                        visited |= 1 << y;
                        prev[y as usize] = (x as i8, s);
                        queue[tail] = y as u8;
                        tail += 1;
                    }
                    _ => {}
                }
            }
        }
        false
    }
}

/// The copies a tile is assigned with: growing (the copy-creating pass) or fixed.
enum CopySet<'a> {
    Grow(&'a mut Copies),
    Fixed(&'a Copies),
}

impl CopySet<'_> {
    fn get(&self) -> &Copies {
        match self {
            CopySet::Grow(c) => c,
            CopySet::Fixed(c) => c,
        }
    }
}

/// Assigns one tile's rows (`codes`) to slots, writing `out`. `avoid` is scratch (a bit
/// per slot, all clear) for the write window, `clear` all clear bits of the same size.
fn assign_tile(
    codes: &[u16],
    mode: ReplicaMode,
    copies: &mut CopySet,
    avoid: &mut [u64],
    clear: &[u64],
    rotate: usize,
    out: &mut [u16],
) {
    let mut used: Vec<u16> = vec![];
    for (c, (chunk, out)) in codes.chunks(BANKS).zip(out.chunks_mut(BANKS)).enumerate() {
        // Items: rows (writes) or distinct values (reads).
        let mut items: Vec<u32> = vec![];
        let mut item_of_row = [0u8; BANKS];
        for (r, &code) in chunk.iter().enumerate() {
            let code = code as u32;
            let found = if mode == ReplicaMode::Read { items.iter().position(|&x| x == code) } else { None };
            item_of_row[r] = match found {
                Some(i) => i as u8,
                None => {
                    items.push(code);
                    (items.len() - 1) as u8
                }
            };
        }
        let rot = rotate.wrapping_add(c * 7);
        let mut ch = Chunk { items: &items, slot: [NONE; BANKS], owner: [-1; BANKS] };
        for i in 0..items.len() {
            if ch.augment(i, copies.get(), avoid, rot) {
                continue;
            }
            let free = ch.owner.iter().enumerate().filter(|(_, o)| **o < 0).fold(0u32, |m, (b, _)| m | 1 << b);
            if let CopySet::Grow(c) = copies {
                if let Some(s) = c.add(items[i], free, rot) {
                    ch.owner[bank(s)] = i as i8;
                    ch.slot[i] = s;
                    continue;
                }
            }
            // Out of budget: ignore the window, then accept a conflict (the copy of this
            // value the chunk uses least).
            if mode == ReplicaMode::Write && ch.augment(i, copies.get(), clear, rot) {
                continue;
            }
            let of = &copies.get().of[items[i] as usize];
            let uses = |s: u16| ch.slot[..items.len()].iter().filter(|&&t| t == s).count();
            ch.slot[i] = *of.iter().min_by_key(|&&s| uses(s)).unwrap_or(&of[0]);
        }
        for (r, o) in out.iter_mut().enumerate().take(chunk.len()) {
            *o = ch.slot[item_of_row[r] as usize];
        }
        if mode == ReplicaMode::Write {
            for &s in &ch.slot[..items.len()] {
                avoid[s as usize / 64] |= 1 << (s % 64);
                used.push(s);
            }
        }
    }
    for s in used {
        avoid[s as usize / 64] = 0;
    }
}

/// Places the rows `codes` (of `values` distinct values) into at most `max_slots` slots;
/// without `replicate`, one copy per value (rows only pick it).
pub fn place(
    codes: &[u16],
    values: Vec<i64>,
    mode: ReplicaMode,
    max_slots: usize,
    replicate: bool,
) -> ReplicaPlacement {
    let (copies, slot_code) = make_copies(codes, values.len(), mode, max_slots, replicate);
    let row_slot = RowSlots::ready(assign_rows(codes, &copies, mode));
    ReplicaPlacement { mode, values, slot_code, row_slot, copies: copies.total }
}

/// `place`, returning once the copies are made: the rows are assigned on another thread
/// (`ReplicaPlacement::row_slot` waits for them).
pub fn place_in_background(
    codes: Vec<u16>,
    values: Vec<i64>,
    mode: ReplicaMode,
    max_slots: usize,
    replicate: bool,
) -> ReplicaPlacement {
    let (copies, slot_code) = make_copies(&codes, values.len(), mode, max_slots, replicate);
    let total = copies.total;
    let work = std::sync::Arc::new((codes, copies));
    let job = work.clone();
    let assign = move || assign_rows(&job.0, &job.1, mode);
    let row_slot = match std::thread::Builder::new().name("gpusql-placement".into()).spawn(assign) {
        Ok(h) => RowSlots { done: OnceLock::new(), assigning: Mutex::new(Some(h)) },
        Err(e) => {
            tracing::warn!(error = %e, "cannot start a placement thread: assigning the rows here");
            RowSlots::ready(assign_rows(&work.0, &work.1, mode))
        }
    };
    ReplicaPlacement { mode, values, slot_code, row_slot, copies: total }
}

/// The copies of each value (made on evenly spread tiles of the column), and per slot the
/// code of the value it holds.
fn make_copies(
    codes: &[u16],
    values: usize,
    mode: ReplicaMode,
    max_slots: usize,
    replicate: bool,
) -> (Copies, Vec<u32>) {
    let max_slots = max_slots.min(1 << 16) / BANKS * BANKS;
    assert!(values <= max_slots, "more values than slots");
    let mut copies = Copies::new(values, max_slots);
    if !replicate {
        copies.budget = values;
    }
    let tiles = codes.len().div_ceil(TILE_ROWS);
    let step = tiles.div_ceil(PLACEMENT_TILES).max(1);
    let clear = vec![0u64; copies.words()];
    let mut avoid = clear.clone();
    let mut scratch = vec![0u16; TILE_ROWS];
    for t in (0..tiles).step_by(step) {
        let rows = &codes[t * TILE_ROWS..((t + 1) * TILE_ROWS).min(codes.len())];
        assign_tile(rows, mode, &mut CopySet::Grow(&mut copies), &mut avoid, &clear, t, &mut scratch[..rows.len()]);
    }
    let slots = copies.slots().max(BANKS);
    let mut slot_code = vec![HOLE; slots];
    for (code, of) in copies.of.iter().enumerate() {
        for &s in of {
            slot_code[s as usize] = code as u32;
        }
    }
    (copies, slot_code)
}

/// Every tile assigned with the final copies, on all cores.
fn assign_rows(codes: &[u16], copies: &Copies, mode: ReplicaMode) -> Vec<u16> {
    let clear = vec![0u64; copies.words()];
    let mut row_slot = vec![0u16; codes.len()];
    row_slot.par_chunks_mut(TILE_ROWS).zip(codes.par_chunks(TILE_ROWS)).enumerate().for_each_init(
        || clear.clone(),
        |avoid, (t, (out, rows))| assign_tile(rows, mode, &mut CopySet::Fixed(copies), avoid, &clear, t, out),
    );
    row_slot
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Zipf(z) codes over `values` values (inverse CDF, deterministic generator).
    fn zipf(rows: usize, values: usize, z: f64, seed: u64) -> Vec<u16> {
        let weights: Vec<f64> = (1..=values).map(|k| 1.0 / (k as f64).powf(z)).collect();
        let total: f64 = weights.iter().sum();
        let mut cdf = vec![];
        let mut acc = 0.0;
        for w in &weights {
            acc += w / total;
            cdf.push(acc);
        }
        let mut x = seed;
        (0..rows)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let u = (x >> 11) as f64 / (1u64 << 53) as f64;
                // Scatter the ranks over the codes so frequent values do not share a bank.
                (cdf.partition_point(|&c| c < u).min(values - 1) * 37 % values) as u16
            })
            .collect()
    }

    /// Serialization rounds of each chunk: the most accesses one bank serves (reads: the
    /// distinct slots it holds; writes: every row, as equal slots are value conflicts).
    fn rounds(row_slot: &[u16], mode: ReplicaMode) -> f64 {
        let mut sum = 0usize;
        let chunks = row_slot.chunks(BANKS);
        let n = chunks.len();
        for chunk in chunks {
            let mut per_bank = [0usize; BANKS];
            let mut seen: Vec<u16> = vec![];
            for &s in chunk {
                if mode == ReplicaMode::Read && seen.contains(&s) {
                    continue;
                }
                seen.push(s);
                per_bank[bank(s)] += 1;
            }
            sum += per_bank.iter().max().unwrap();
        }
        sum as f64 / n as f64
    }

    fn check(codes: &[u16], values: usize, mode: ReplicaMode, max_slots: usize) -> ReplicaPlacement {
        let p = place(codes, (0..values as i64).map(|v| v * 10).collect(), mode, max_slots, true);
        assert_eq!(p.row_slot().len(), codes.len());
        for (r, (&c, &s)) in codes.iter().zip(p.row_slot()).enumerate() {
            assert_eq!(p.slot_code[s as usize], c as u32, "row {r} maps to a slot of another value");
        }
        assert!(p.slot_code.len() <= max_slots && p.slot_code.len().is_multiple_of(BANKS));
        assert!((0..values).all(|c| p.slot_code[c] == c as u32), "a value's first copy is not at its code");
        assert!(p.copies <= (values * COPY_BUDGET).max((values * BANKS).min(max_slots)));
        // Each value's copies lie in distinct banks.
        for v in 0..values as u32 {
            let banks: Vec<usize> =
                p.slot_code.iter().enumerate().filter(|(_, c)| **c == v).map(|(s, _)| s % BANKS).collect();
            let mut dedup = banks.clone();
            dedup.dedup();
            assert_eq!(banks.len(), dedup.len());
        }
        p
    }

    #[test]
    fn every_row_reads_its_own_value_and_conflicts_drop() {
        for (z, mode) in
            [(0.0, ReplicaMode::Write), (1.0, ReplicaMode::Write), (0.0, ReplicaMode::Read), (1.0, ReplicaMode::Read)]
        {
            let codes = zipf(200_000, 1024, z, 7);
            let naive: Vec<u16> = codes.clone();
            let p = check(&codes, 1024, mode, 4096);
            let (before, after) = (rounds(&naive, mode), rounds(p.row_slot(), mode));
            eprintln!("zipf {z} {mode:?}: {before:.2} -> {after:.2} rounds per chunk, {} copies", p.copies);
            assert!(after < before * 0.75, "zipf {z} {mode:?}: {before:.2} -> {after:.2}");
        }
    }

    #[test]
    fn tight_budgets_and_small_columns() {
        // No room for copies: every value keeps its one slot.
        let codes = zipf(5_000, 64, 0.5, 3);
        let p = check(&codes, 64, ReplicaMode::Write, 64);
        assert_eq!(p.copies, 64);
        assert_eq!(p.row_slot(), codes);
        // One value, fewer rows than a chunk.
        let p = check(&[0, 0, 0], 1, ReplicaMode::Write, 1024);
        assert_eq!(rounds(p.row_slot(), ReplicaMode::Write), 1.0);
        let p = check(&[0, 0, 0], 1, ReplicaMode::Read, 1024);
        assert_eq!(p.copies, 1);
    }

    #[test]
    fn dictionary_codes_ascending_values() {
        let (values, codes) = dictionary(&[50i64, -3, 50, 7, 1 << 40], 10).unwrap();
        assert_eq!(values, vec![-3, 7, 50, 1 << 40]);
        assert_eq!(codes, vec![2, 0, 2, 1, 3]);
        assert!(dictionary(&[1i64, 2, 3], 2).is_none());
        assert!(dictionary(&(0..100_000i64).map(|v| v * 1_000_003).collect::<Vec<_>>(), 50).is_none());
    }

    #[test]
    fn dictionary_of_chunks_matches_the_whole_column() {
        // Dense (a range of 2000) and sparse (multiples of 2^40) columns, cut into uneven
        // chunks, some longer than a parallel task.
        for scale in [1i64, 1 << 40] {
            let col: Vec<i64> = (0..200_000i64).map(|i| (i * 7919 % 2000 - 1000) * scale).collect();
            let (values, codes) = dictionary(&col, 4000).unwrap();
            assert_eq!(values.len(), 2000);
            let cuts = [0, 1, 70_000, 70_001, 200_000];
            let chunks: Vec<&[i64]> = cuts.windows(2).map(|w| &col[w[0]..w[1]]).collect();
            assert_eq!(dictionary_of_chunks(&chunks, 4000), Some((values.clone(), codes.clone())));
            for (r, &c) in codes.iter().enumerate() {
                assert_eq!(values[c as usize], col[r]);
            }
            assert!(dictionary_of_chunks(&chunks, 1999).is_none());
        }
    }

    #[test]
    fn placed_in_background_as_in_the_foreground() {
        let codes = zipf(100_000, 300, 1.0, 7);
        let values: Vec<i64> = (0..300).collect();
        for mode in [ReplicaMode::Read, ReplicaMode::Write] {
            let a = place(&codes, values.clone(), mode, 4096, true);
            let b = place_in_background(codes.clone(), values.clone(), mode, 4096, true);
            assert_eq!((a.slot_code.clone(), a.copies), (b.slot_code.clone(), b.copies));
            assert_eq!(a.row_slot(), b.row_slot());
        }
    }
}
