//! Dictionary encoding of string columns with few distinct values (c_nation, p_brand1,
//! l_shipmode): each distinct string is stored once, each row holds a 2-byte code.
//!
//! On the GPU a row's string is then `dict[codes[row]]`: a `Str` record whose pointer is
//! the same for every row of equal value, and whose spare word (`pad_`) holds the
//! string's hash, computed here on the host with the device's function (`str_hash32`).
//! Group-bys and joins on such strings hash and compare without touching their bytes:
//! equal pointers mean equal strings, different known hashes mean different strings
//! (Crystal and most GPU engines group SSB's string columns by such codes).

use ahash::{AHashMap, AHashSet};
use arrow::array::{Array, DictionaryArray, StringArray};
use arrow::datatypes::Int32Type;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// Most distinct values a dictionary holds (codes are 16-bit).
pub const MAX_DICTIONARY_VALUES: usize = 1 << 16;

/// A column's distinct strings (byte order) and each row's code.
#[derive(Debug)]
pub struct StringDictionary {
    /// The distinct values, concatenated; value `c` is `bytes[offsets[c]..offsets[c + 1]]`.
    pub bytes: Vec<u8>,
    pub offsets: Vec<u32>,
    /// `str_hash32` of each value.
    pub hashes: Vec<u32>,
    /// Per row the code of its value (0 for NULL rows).
    pub codes: Vec<u16>,
}

impl StringDictionary {
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    pub fn value(&self, code: usize) -> &[u8] {
        &self.bytes[self.offsets[code] as usize..self.offsets[code + 1] as usize]
    }
}

pub use gpusql_common::str_hash32;

/// The dictionary of a column given as its chunks, or None where it has more than
/// `max_values` distinct values (found out early: the scan stops once a piece sees too
/// many) or more than half as many distinct values as non-NULL rows (nothing to share).
pub fn build(chunks: &[&StringArray], max_values: usize) -> Option<StringDictionary> {
    let valid: usize = chunks.iter().map(|a| a.len() - a.null_count()).sum();
    let limit = max_values.min(MAX_DICTIONARY_VALUES).min(valid / 2);
    if limit == 0 {
        return None;
    }
    // (Each chunk's first rows, all chunks at once: one after another this pass alone
    // took 1.2 s over lineitem's 60 M l_shipmode at SF 10.)
    if chunks.par_iter().any(|a| has_too_many_values(a, limit)) {
        return None;
    }
    // Pieces of at most 64k rows of one chunk: (chunk, first row, end row).
    let piece = 1 << 16;
    let pieces: Vec<(usize, usize, usize)> = chunks
        .iter()
        .enumerate()
        .flat_map(|(c, a)| (0..a.len().div_ceil(piece)).map(move |p| (c, p * piece, ((p + 1) * piece).min(a.len()))))
        .collect();
    // Distinct values per piece in parallel; any piece past the limit stops them all.
    let too_many = AtomicBool::new(false);
    let sets: Vec<AHashSet<&[u8]>> = pieces
        .par_iter()
        .map(|&(c, b, e)| {
            let a = chunks[c];
            let mut set = AHashSet::new();
            for r in b..e {
                if a.is_valid(r) {
                    set.insert(a.value(r).as_bytes());
                }
                if set.len() > limit || (r % 4096 == 0 && too_many.load(Ordering::Relaxed)) {
                    too_many.store(true, Ordering::Relaxed);
                    return set;
                }
            }
            set
        })
        .collect();
    if too_many.load(Ordering::Relaxed) {
        return None;
    }
    let mut all: AHashSet<&[u8]> = AHashSet::new();
    for s in sets {
        all.extend(s);
        if all.len() > limit {
            return None;
        }
    }
    let mut values: Vec<&[u8]> = all.into_iter().collect();
    values.sort_unstable();
    let index: AHashMap<&[u8], u16> = values.iter().enumerate().map(|(i, v)| (*v, i as u16)).collect();
    let per_piece: Vec<Vec<u16>> = pieces
        .par_iter()
        .map(|&(c, b, e)| {
            let a = chunks[c];
            (b..e).map(|r| if a.is_valid(r) { index[a.value(r).as_bytes()] } else { 0 }).collect()
        })
        .collect();
    Some(dictionary(&values, per_piece.concat()))
}

/// The dictionary of `values` (sorted, distinct) with the rows' `codes`.
fn dictionary(values: &[&[u8]], codes: Vec<u16>) -> StringDictionary {
    let mut bytes = vec![];
    let mut offsets = vec![0u32];
    for v in values {
        bytes.extend_from_slice(v);
        offsets.push(bytes.len() as u32);
    }
    let hashes = values.iter().map(|v| str_hash32(v)).collect();
    StringDictionary { bytes, offsets, hashes, codes }
}

/// Whether the first rows of `a` (up to 4x `limit`) hold more than `limit` distinct
/// values: a column of many distinct values shows it early, while the 64k-row pieces of
/// `build` never see more than the limit each and would hash every row to find out.
pub fn has_too_many_values(a: &StringArray, limit: usize) -> bool {
    let mut seen: AHashSet<&[u8]> = AHashSet::new();
    for r in 0..a.len().min(4 * limit) {
        if a.is_valid(r) && seen.insert(a.value(r).as_bytes()) && seen.len() > limit {
            return true;
        }
    }
    false
}

/// The dictionary of a column whose chunks are dictionary arrays (a Parquet file's own
/// dictionaries): their values merged and sorted, each row's key mapped to the merged
/// code. No row's string is hashed. None as for `build`.
pub fn merge(chunks: &[&DictionaryArray<Int32Type>], max_values: usize) -> Option<StringDictionary> {
    let valid: usize = chunks.iter().map(|a| a.len() - a.null_count()).sum();
    let limit = max_values.min(MAX_DICTIONARY_VALUES).min(valid / 2);
    let values: Vec<&StringArray> =
        chunks.iter().map(|a| a.values().as_any().downcast_ref::<StringArray>()).collect::<Option<_>>()?;
    let mut all: AHashSet<&[u8]> = AHashSet::new();
    for v in &values {
        for i in 0..v.len() {
            if v.is_valid(i) {
                all.insert(v.value(i).as_bytes());
            }
        }
        if all.len() > limit {
            return None;
        }
    }
    if limit == 0 {
        return None;
    }
    let mut sorted: Vec<&[u8]> = all.into_iter().collect();
    sorted.sort_unstable();
    let index: AHashMap<&[u8], u16> = sorted.iter().enumerate().map(|(i, v)| (*v, i as u16)).collect();
    // Each chunk's rows written straight into their part of the codes.
    let mut codes = vec![0u16; chunks.iter().map(|a| a.len()).sum()];
    let mut parts: Vec<&mut [u16]> = Vec::with_capacity(chunks.len());
    let mut rest = codes.as_mut_slice();
    for a in chunks {
        let (head, tail) = rest.split_at_mut(a.len());
        parts.push(head);
        rest = tail;
    }
    parts.into_par_iter().zip(chunks.par_iter()).zip(values.par_iter()).for_each(|((out, a), v)| {
        // The chunk's key -> the merged code (0 for a NULL value, and a NULL row).
        let map: Vec<u16> =
            (0..v.len()).map(|i| if v.is_valid(i) { index[v.value(i).as_bytes()] } else { 0 }).collect();
        let keys = a.keys();
        for (o, &k) in out.iter_mut().zip(keys.values().iter()) {
            *o = map.get(k as usize).copied().unwrap_or(0);
        }
        if let Some(nulls) = keys.nulls() {
            for r in nulls.iter().enumerate().filter(|(_, valid)| !valid).map(|(r, _)| r) {
                out[r] = 0;
            }
        }
    });
    Some(dictionary(&sorted, codes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_give_back_every_row() {
        let rows: Vec<Option<&str>> =
            (0..1000).map(|i| if i % 7 == 0 { None } else { Some(["ASIA", "EUROPE", "AMERICA", ""][i % 4]) }).collect();
        let a = StringArray::from(rows.clone());
        let d = build(&[&a], MAX_DICTIONARY_VALUES).expect("4 values in 1000 rows");
        assert_eq!(d.len(), 4);
        assert_eq!(d.value(0), b"", "values in byte order");
        assert_eq!(d.value(1), b"AMERICA");
        for (r, v) in rows.iter().enumerate() {
            if let Some(v) = v {
                assert_eq!(d.value(d.codes[r] as usize), v.as_bytes(), "row {r}");
            }
        }
        assert!(d.hashes.iter().all(|h| h & 1 == 1), "known hashes are never 0");
    }

    #[test]
    fn merged_file_dictionaries_match_built() {
        let a: DictionaryArray<Int32Type> = vec![Some("b"), Some("a"), None, Some("b")].into_iter().collect();
        let b: DictionaryArray<Int32Type> = vec![Some("c"), Some("a"), Some("c"), Some("c")].into_iter().collect();
        let d = merge(&[&a, &b], MAX_DICTIONARY_VALUES).expect("3 values in 7 rows");
        let plain_a = StringArray::from(vec![Some("b"), Some("a"), None, Some("b")]);
        let plain_b = StringArray::from(vec![Some("c"), Some("a"), Some("c"), Some("c")]);
        let e = build(&[&plain_a, &plain_b], MAX_DICTIONARY_VALUES).expect("same");
        assert_eq!((d.bytes, d.offsets, d.codes), (e.bytes, e.offsets, e.codes));
    }

    #[test]
    fn too_many_values_is_none() {
        let many = StringArray::from((0..200_000).map(|i| format!("v{}", i % 70_000)).collect::<Vec<_>>());
        assert!(build(&[&many], MAX_DICTIONARY_VALUES).is_none(), "70,000 distinct values do not fit 16-bit codes");
        let unique = StringArray::from((0..100).map(|i| format!("name{i}")).collect::<Vec<_>>());
        assert!(build(&[&unique], MAX_DICTIONARY_VALUES).is_none(), "all-distinct columns share nothing");
        let few = StringArray::from((0..100).map(|i| format!("v{}", i % 10)).collect::<Vec<_>>());
        assert!(build(&[&few], 5).is_none(), "the caller's limit holds");
        assert_eq!(build(&[&few], 10).map(|d| d.len()), Some(10));
    }
}
