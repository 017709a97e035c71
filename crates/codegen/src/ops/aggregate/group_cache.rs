//! The per-block group cache of a HashAggregate: the groups a block's rows found, kept in
//! shared memory, so most rows skip the global hash table.

use crate::hash_table::{emit_hash, emit_insert, emit_insert_hashed, sorted_runs_apply, KeyArrays};
use crate::kernel_builder::KernelBuilder;
use crate::types::{c_size, c_type};
use crate::value::Value;
use gpusql_common::DataType;
use gpusql_plan::replicated::GROUP_CACHE_BYTES;
use gpusql_plan::Expr;

/// The group cache is for aggregations that a good share of the rows reach (estimated):
/// its shared memory comes out of the L1 cache the pipeline's probes use, which costs
/// every row, while it saves only the rows that get to the aggregation.
const GROUP_CACHE_MIN_REACH: f64 = 0.02;

/// How a key is kept in the group cache: the parts stored (C type, the key's value of
/// that part); a cached key equals the row's when every part does. Strings keep their
/// pointer and length only: equal strings of one dictionary share their bytes, and a
/// string equal to the cached one at another address just misses the cache (the global
/// table decides).
fn cached_key(ty: &DataType, v: &str) -> Option<Vec<(&'static str, String)>> {
    match c_type(ty) {
        "Str" => {
            Some(vec![("unsigned long long", format!("(unsigned long long){v}.p")), ("uint32_t", format!("{v}.len"))])
        }
        ct @ ("int32_t" | "int64_t" | "int16_t" | "int8_t" | "uint8_t" | "bool") => Some(vec![(ct, v.to_string())]),
        _ => None,
    }
}

/// Finds or inserts the row's group (`gid_`) through a per-block cache in shared memory:
/// a slot chosen by the key hash's high bits (or the one after it) holds a group id and the
/// keys of the first group a row of the block found there (written once: claimed by
/// atomicCAS, keys stored, then the id published). A row whose keys equal the slot's takes its group without
/// touching the global table; the others look the global table up (or insert) as before
/// and claim the slot if it is still empty. With few groups (SSB Q3.1: 150) every block
/// soon finds all of them in its cache, where every row used to read the global slot and
/// key arrays (L2 round trips on the same few lines from every SM). Not where sorted runs
/// apply, nor for key types without a cached form; returns whether it emitted the lookup.
pub fn emit_group_cache(
    k: &mut KernelBuilder,
    id: usize,
    keys: &[Expr],
    kv: &[Value],
    arrays: &[KeyArrays],
    table: [&str; 4],
) -> bool {
    let [slots, mask, max_groups, count] = table;
    if sorted_runs_apply(keys, kv) || k.sink_reach() < GROUP_CACHE_MIN_REACH {
        return false;
    }
    // Per key: its parts, and its NULL flag where it may be NULL (NULL groups with NULL).
    let mut cached: Vec<(Vec<(&'static str, String)>, Option<String>)> = vec![];
    for (k, v) in keys.iter().zip(kv) {
        let Some(parts) = cached_key(&k.ty(), &v.v) else { return false };
        cached.push((parts, (!v.is_never_null()).then(|| v.null.clone())));
    }
    let bytes: usize = 4 + cached
        .iter()
        .map(|(parts, null)| parts.iter().map(|(ct, _)| c_size(ct)).sum::<usize>() + null.as_ref().map_or(0, |_| 1))
        .sum::<usize>();
    let fit = GROUP_CACHE_BYTES / bytes;
    if fit < 64 {
        return false;
    }
    let n = (1usize << (usize::BITS - 1 - fit.leading_zeros())).min(512);
    k.pre().line(format!("// HashAggregate #{id}: a per-block cache of the groups its rows found, {n} slots of {{group id, keys}} ({} bytes)", n * bytes));
    k.pre().line(format!("__shared__ int gc_gid_[{n}];"));
    // Per key, its parts' arrays (name, value stored), and its NULL flag's.
    let mut arrays_of: Vec<(Vec<(String, String)>, Option<(String, String)>)> = vec![];
    for (key, (parts, null)) in cached.iter().enumerate() {
        let mut named = vec![];
        for (i, (ct, val)) in parts.iter().enumerate() {
            let name = format!("gc_k{key}_{i}_");
            k.pre().line(format!("__shared__ {ct} {name}[{n}];"));
            named.push((name, val.clone()));
        }
        let null = null.as_ref().map(|nv| {
            let name = format!("gc_k{key}_{}_", parts.len());
            k.pre().line(format!("__shared__ bool {name}[{n}];"));
            (name, nv.clone())
        });
        arrays_of.push((named, null));
    }
    k.pre().line(format!("for (int i = threadIdx.x; i < {n}; i += blockDim.x) gc_gid_[i] = -1;"));

    let b = k.body();
    b.open("if (active)");
    b.line("// the block's group cache first; the global table where it misses");
    emit_hash(b, kv, arrays);
    // Two slots per key (the hash's and the next): a group finds a place while either is
    // free. Slots never empty again, so a free first slot means the group is not cached.
    b.line(format!("const uint32_t gch_ = (uint32_t)(h_ >> 32) & {}u;", n - 1));
    b.line("int gcf_ = -1; // a free slot seen, for this row's group");
    let hit = |slot: &str| -> String {
        let keys: Vec<String> = arrays_of
            .iter()
            .map(|(named, null)| {
                let eq: Vec<String> = named.iter().map(|(name, val)| format!("{name}[{slot}] == {val}")).collect();
                let eq = format!("({})", eq.join(" && "));
                match null {
                    Some((name, nv)) => format!("({name}[{slot}] == {nv} && ({nv} || {eq}))"),
                    None => eq,
                }
            })
            .collect();
        keys.join(" && ")
    };
    // (A slot's keys were stored before its id was published; the acquire load of the id
    // orders the key reads after it.)
    b.open("for (uint32_t t_ = 0; t_ < 2u; t_++)");
    b.line(format!("const uint32_t gcs_ = (gch_ + t_) & {}u;", n - 1));
    b.line("const int gcg_ = ld_acquire_cta(&gc_gid_[gcs_]);");
    b.line("if (gcg_ == -1) { gcf_ = (int)gcs_; break; }");
    b.line(format!("if (gcg_ >= 0 && {}) {{ gid_ = gcg_; break; }}", hit("gcs_")));
    b.close();
    b.open("if (gid_ < 0)");
    // (The insert hashes integer keys again, on the rare path: with `h_` reused instead,
    // SSB Q3.1's probe stage measured 0.82-0.84 ms against 0.76-0.77, docs/BENCHMARKS.md.
    // String keys reuse it: hashing them again reads their bytes, and the second copy of
    // the string hashes made TPC-DS q04's 8-key aggregations compile in 1,097 ms, not 773.)
    if keys.iter().any(|k| k.ty() == DataType::Utf8) {
        emit_insert_hashed(b, kv, arrays, slots, mask, max_groups, count);
    } else {
        emit_insert(b, kv, arrays, slots, mask, max_groups, count);
    }
    b.open("if (gid_ >= 0 && gcf_ >= 0 && atomicCAS(&gc_gid_[gcf_], -1, -2) == -1)");
    for (named, null) in &arrays_of {
        for (name, val) in named.iter().chain(null) {
            b.line(format!("{name}[gcf_] = {val};"));
        }
    }
    b.line("__threadfence_block();");
    b.line("atomicExch(&gc_gid_[gcf_], gid_);");
    b.close();
    b.close();
    b.close();
    true
}
