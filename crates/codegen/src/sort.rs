//! Sort stage: a bitonic sort of a row permutation over a materialized intermediate, with
//! a comparator generated for the key columns (NULL placement, ASC/DESC, strings), then
//! gathers. Ties break on the row index, so the order is deterministic.

use crate::types::c_type;
use crate::{Param, Part, PRELUDE};
use gpusql_common::{Result, Schema};
use gpusql_plan::SortColumn;

/// Inputs of at most this many rows sort by rank (`sort_rank` + `sort_scatter`): n^2
/// independent compares (16.8M at this size) instead of the bitonic network's launches.
pub const SMALL_SORT: usize = 4096;

pub struct SortSpec {
    pub source: String,
    /// `sort_step(uint32_t* idx, uint32_t npow2, uint64_t n, uint32_t j, uint32_t k, <params>)`
    pub step_entry: String,
    /// `sort_iota(uint32_t* idx, uint32_t npow2)`
    pub iota_entry: String,
    /// `sort_keep_halves(const uint32_t* in, uint32_t* out, uint32_t c, uint32_t out_len)`
    pub keep_halves_entry: String,
    /// `sort_rank(uint32_t* rank, uint64_t n, <params>)`: per row, the rows that sort
    /// before it (`rank` zeroed first; one warp per row and 32 other rows).
    pub rank_entry: String,
    /// `sort_scatter(const uint32_t* rank, uint32_t* perm, uint64_t n)`: perm[rank[i]] = i.
    pub scatter_entry: String,
    pub params: Vec<Param>,
}

pub fn generate_sort(schema: &Schema, keys: &[SortColumn]) -> Result<SortSpec> {
    let mut params = vec![];
    let mut decls = vec![];
    let mut body = String::new();
    for k in keys {
        let f = &schema.fields[k.column];
        let ct = c_type(&f.ty);
        let vals = format!("k{}_values", k.column);
        if !params.contains(&Param::Input { column: k.column, part: Part::Values }) {
            params.push(Param::Input { column: k.column, part: Part::Values });
            decls.push(format!("const {ct}* __restrict__ {vals}"));
        }
        body.push_str(&format!("    // key #{} {}\n    {{\n", k.column, if k.asc { "ASC" } else { "DESC" }));
        if f.nullable {
            let valid = format!("k{}_validity", k.column);
            if !params.contains(&Param::Input { column: k.column, part: Part::Validity }) {
                params.push(Param::Input { column: k.column, part: Part::Validity });
                decls.push(format!("const uint8_t* __restrict__ {valid}"));
            }
            let first = if k.nulls_first { -1 } else { 1 };
            body.push_str(&format!(
                "        const bool an = {valid}[a] == 0, bn = {valid}[b] == 0;\n        if (an != bn) return an ? {first} : {};\n        if (!an) {{\n",
                -first
            ));
        } else {
            body.push_str("        {\n");
        }
        let cmp = if ct == "Str" {
            format!("str_cmp({vals}[a], {vals}[b])")
        } else {
            format!("({vals}[a] < {vals}[b] ? -1 : ({vals}[a] > {vals}[b] ? 1 : 0))")
        };
        let sign = if k.asc { "" } else { "-" };
        body.push_str(&format!(
            "            const int c = {cmp};\n            if (c != 0) return {sign}c;\n        }}\n    }}\n"
        ));
    }
    let key_text: Vec<String> =
        keys.iter().map(|k| format!("#{} {}", k.column, if k.asc { "ASC" } else { "DESC" })).collect();
    let decl_list = if decls.is_empty() { String::new() } else { format!(", {}", decls.join(", ")) };
    let args: String = params
        .iter()
        .map(|p| match p {
            Param::Input { column, part: Part::Values } => format!(", k{column}_values"),
            Param::Input { column, .. } => format!(", k{column}_validity"),
            _ => String::new(),
        })
        .collect();
    let source = format!(
        "{PRELUDE}
// ======== Sort by [{keys}]: bitonic sort of a row permutation ========
__device__ int compare_rows(uint32_t a, uint32_t b{decl_list}) {{
{body}    return a < b ? -1 : (a > b ? 1 : 0);
}}

extern \"C\" __global__ void sort_iota(uint32_t* idx, uint32_t npow2) {{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < npow2) idx[i] = i;
}}

// The compare-exchange of entry i in step (j, k) of the bitonic network; rows >= n are
// padding and sort last.
__device__ __forceinline__ void bitonic_cx(uint32_t* idx, uint32_t i, uint64_t n, uint32_t j, uint32_t k{decl_list}) {{
    const uint32_t ixj = i ^ j;
    if (ixj <= i) return;
    const uint32_t a = idx[i], b = idx[ixj];
    bool a_after_b;
    if (a >= n || b >= n) a_after_b = a >= n && (b < n || a > b);
    else a_after_b = compare_rows(a, b{args}) > 0;
    const bool up = (i & k) == 0;
    if (up == a_after_b) {{ idx[i] = b; idx[ixj] = a; }}
}}

// One step (j, k) over all entries: a launch per step.
extern \"C\" __global__ void sort_step(uint32_t* idx, uint32_t npow2, uint64_t n, uint32_t j, uint32_t k{decl_list}) {{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < npow2) bitonic_cx(idx, i, n, j, k{args});
}}

// Small inputs (n <= {small}): a rank sort. Row i's rank is how many rows sort before it
// (ties break on the row index, so ranks are distinct); one warp per (row i, 32 rows j)
// counts them with a ballot and adds them with one atomic. The n^2 compares are
// independent and spread over the whole GPU: a bitonic network in one block ran its
// ~log^2 n steps one after another, each a chain of global loads (0.35 ms for 800 rows
// sorted by three keys, two of them strings).
extern \"C\" __global__ void sort_rank(uint32_t* __restrict__ rank, uint64_t n{decl_list}) {{
    const uint64_t chunks = (n + 31) / 32, warps = n * chunks;
    const uint32_t lane = threadIdx.x & 31;
    const uint64_t stride = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    for (uint64_t w = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5; w < warps; w += stride) {{
        const uint32_t i = (uint32_t)(w / chunks), j = (uint32_t)((w % chunks) * 32 + lane);
        const bool before = j < n && j != i && compare_rows(j, i{args}) < 0;
        const uint32_t c = __popc(__ballot_sync(FULL_MASK, before));
        if (lane == 0 && c != 0) atomicAdd(&rank[i], c);
    }}
}}

extern \"C\" __global__ void sort_scatter(const uint32_t* __restrict__ rank, uint32_t* __restrict__ perm, uint64_t n) {{
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) perm[rank[i]] = (uint32_t)i;
}}

// Top-N: after a compare-exchange at distance c (all ascending), the first c entries of
// each 2c block hold that block's c first rows (as a bitonic run); keep only those.
extern \"C\" __global__ void sort_keep_halves(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, uint32_t c, uint32_t out_len) {{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < out_len) out[i] = in[(i / c) * 2u * c + i % c];
}}
",
        keys = key_text.join(", "),
        small = SMALL_SORT
    );
    Ok(SortSpec {
        source,
        step_entry: "sort_step".into(),
        iota_entry: "sort_iota".into(),
        keep_halves_entry: "sort_keep_halves".into(),
        rank_entry: "sort_rank".into(),
        scatter_entry: "sort_scatter".into(),
        params,
    })
}

/// Kernels used to assemble results: gathers by a permutation and string byte copies.
/// Built once: every hash build and result download loads its kernels by this source.
pub fn util_module() -> &'static str {
    static SOURCE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SOURCE.get_or_init(util_module_source)
}

fn util_module_source() -> String {
    format!(
        "{PRELUDE}
// ======== Result assembly: gathers through a row permutation, string byte copies ========
#define GATHER(NAME, T) extern \"C\" __global__ void NAME(const T* __restrict__ in, const uint32_t* __restrict__ idx, T* __restrict__ out, uint64_t n) {{ \\
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) out[i] = in[idx[i]]; }}
GATHER(gather_1, uint8_t)
GATHER(gather_4, uint32_t)
GATHER(gather_8, uint64_t)
GATHER(gather_16, ulonglong2)

// Copies each string's bytes to out + offsets[i].
extern \"C\" __global__ void copy_strings(const Str* __restrict__ strs, const int64_t* __restrict__ offsets, uint8_t* __restrict__ out, uint64_t n) {{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {{
        const Str s = strs[i];
        uint8_t* dst = out + offsets[i];
        for (uint32_t b = 0; b < s.len; b++) dst[b] = s.p[b];
    }}
}}

// ---- hash-join build: group the payload rows by key ----
// Exclusive scan of 256 values per block; block totals go to sums (scanned again by the host loop).
extern \"C\" __global__ void scan_blocks(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, uint32_t* __restrict__ sums, uint64_t n) {{
    __shared__ uint32_t warp_tot[8];
    const uint64_t i = (uint64_t)blockIdx.x * 256 + threadIdx.x;
    const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const uint32_t v = i < n ? in[i] : 0u;
    uint32_t x = v;
    for (int o = 1; o < 32; o <<= 1) {{ const uint32_t y = __shfl_up_sync(FULL_MASK, x, o); if (lane >= (uint32_t)o) x += y; }}
    if (lane == 31) warp_tot[warp] = x;
    __syncthreads();
    if (warp == 0) {{
        uint32_t t = lane < 8 ? warp_tot[lane] : 0u;
        for (int o = 1; o < 8; o <<= 1) {{ const uint32_t y = __shfl_up_sync(FULL_MASK, t, o); if (lane >= (uint32_t)o) t += y; }}
        if (lane < 8) warp_tot[lane] = t;
    }}
    __syncthreads();
    const uint32_t before = warp > 0 ? warp_tot[warp - 1] : 0u;
    if (i < n) out[i] = before + x - v;
    if (threadIdx.x == 255) sums[blockIdx.x] = before + x;
}}
extern \"C\" __global__ void add_block_offsets(uint32_t* __restrict__ out, const uint32_t* __restrict__ offs, uint64_t n) {{
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] += offs[i / 256];
}}
// Position of each payload row: its group's first slot plus its rank inside the group.
extern \"C\" __global__ void assign_positions(const uint32_t* __restrict__ row_group, const uint32_t* __restrict__ offsets, uint32_t* __restrict__ fill, uint32_t* __restrict__ pos, uint64_t n) {{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {{
        const uint32_t g = row_group[i];
        pos[i] = offsets[g] + atomicAdd(&fill[g], 1u);
    }}
}}
#define SCATTER(NAME, T) extern \"C\" __global__ void NAME(const T* __restrict__ in, const uint32_t* __restrict__ pos, T* __restrict__ out, uint64_t n) {{ \\
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) out[pos[i]] = in[i]; }}
SCATTER(scatter_1, uint8_t)
SCATTER(scatter_4, uint32_t)
SCATTER(scatter_8, uint64_t)
SCATTER(scatter_16, ulonglong2)

// Probe tables of single integer keys: {{key, group id}} per slot (-1: empty), rehashed into
// a table sized for the groups actually built (a filtered dimension shrinks to a few KB and
// fits in shared memory). Same hash as the generated probes (hash_table.rs: emit_hash).
__device__ __forceinline__ uint32_t entry_slot(int64_t key, uint32_t mask) {{
    return (uint32_t)hash_combine(0x9e3779b97f4a7c15ull, hash_u64((uint64_t)key)) & mask;
}}
extern \"C\" __global__ void fill_entries_4(int2* __restrict__ out, uint64_t n) {{
    for (uint64_t s = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; s < n; s += (uint64_t)gridDim.x * blockDim.x) {{ int2 e; e.x = 0; e.y = -1; out[s] = e; }}
}}
extern \"C\" __global__ void fill_entries_8(longlong2* __restrict__ out, uint64_t n) {{
    for (uint64_t s = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; s < n; s += (uint64_t)gridDim.x * blockDim.x) {{ longlong2 e; e.x = 0; e.y = -1; out[s] = e; }}
}}
// Entries in the build's own slot order (large tables keep its low load factor).
extern \"C\" __global__ void copy_entries_4(const int* __restrict__ slots, const int32_t* __restrict__ keys, int2* __restrict__ out, uint64_t n) {{
    for (uint64_t s = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; s < n; s += (uint64_t)gridDim.x * blockDim.x) {{
        const int g = slots[s]; int2 e; e.x = g >= 0 ? keys[g] : 0; e.y = g; out[s] = e;
    }}
}}
extern \"C\" __global__ void copy_entries_8(const int* __restrict__ slots, const int64_t* __restrict__ keys, longlong2* __restrict__ out, uint64_t n) {{
    for (uint64_t s = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; s < n; s += (uint64_t)gridDim.x * blockDim.x) {{
        const int g = slots[s]; longlong2 e; e.x = g >= 0 ? keys[g] : 0; e.y = g; out[s] = e;
    }}
}}
extern \"C\" __global__ void make_entries_4(const int32_t* __restrict__ keys, uint64_t groups, int2* __restrict__ out, uint32_t mask) {{
    for (uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += (uint64_t)gridDim.x * blockDim.x) {{
        const int32_t k = keys[g];
        const unsigned long long packed = ((unsigned long long)(uint32_t)g << 32) | (uint32_t)k;
        const unsigned long long empty = 0xffffffff00000000ull;
        for (uint32_t slot = entry_slot(k, mask);; slot = (slot + 1) & mask) {{
            if (atomicCAS((unsigned long long*)&out[slot], empty, packed) == empty) break;
        }}
    }}
}}
extern \"C\" __global__ void make_entries_8(const int64_t* __restrict__ keys, uint64_t groups, longlong2* __restrict__ out, uint32_t mask) {{
    for (uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += (uint64_t)gridDim.x * blockDim.x) {{
        const int64_t k = keys[g];
        for (uint32_t slot = entry_slot(k, mask);; slot = (slot + 1) & mask) {{
            if (atomicCAS((unsigned long long*)&out[slot].y, (unsigned long long)-1ll, (unsigned long long)g) == (unsigned long long)-1ll) {{ out[slot].x = k; break; }}
        }}
    }}
}}

// Dense integer keys: the key range, then a direct-mapped table of group ids (-1: none).
extern \"C\" __global__ void key_range_4(const int32_t* __restrict__ keys, uint64_t n, long long* __restrict__ minmax) {{
    long long lo = 0x7fffffffffffffffll, hi = -0x7fffffffffffffffll - 1;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {{ const long long k = keys[i]; lo = k < lo ? k : lo; hi = k > hi ? k : hi; }}
    atomicMin(&minmax[0], lo); atomicMax(&minmax[1], hi);
}}
extern \"C\" __global__ void key_range_8(const int64_t* __restrict__ keys, uint64_t n, long long* __restrict__ minmax) {{
    long long lo = 0x7fffffffffffffffll, hi = -0x7fffffffffffffffll - 1;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {{ const long long k = keys[i]; lo = k < lo ? k : lo; hi = k > hi ? k : hi; }}
    atomicMin(&minmax[0], lo); atomicMax(&minmax[1], hi);
}}
// A bit per key value over [min, max] (a probe's pre-filter).
extern \"C\" __global__ void key_bitmap_4(const int32_t* __restrict__ keys, uint64_t groups, long long min, uint32_t* __restrict__ bits) {{
    for (uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += (uint64_t)gridDim.x * blockDim.x) {{ const uint64_t d = (uint64_t)((long long)keys[g] - min); atomicOr(&bits[d >> 5], 1u << (d & 31)); }}
}}
extern \"C\" __global__ void key_bitmap_8(const int64_t* __restrict__ keys, uint64_t groups, long long min, uint32_t* __restrict__ bits) {{
    for (uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += (uint64_t)gridDim.x * blockDim.x) {{ const uint64_t d = (uint64_t)((long long)keys[g] - min); atomicOr(&bits[d >> 5], 1u << (d & 31)); }}
}}
extern \"C\" __global__ void fill_minus_one(int* __restrict__ out, uint64_t n) {{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) out[i] = -1;
}}
extern \"C\" __global__ void direct_table_4(const int32_t* __restrict__ keys, uint64_t groups, long long min, int* __restrict__ out) {{
    for (uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += (uint64_t)gridDim.x * blockDim.x) out[(long long)keys[g] - min] = (int)g;
}}
extern \"C\" __global__ void direct_table_8(const int64_t* __restrict__ keys, uint64_t groups, long long min, int* __restrict__ out) {{
    for (uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += (uint64_t)gridDim.x * blockDim.x) out[(long long)keys[g] - min] = (int)g;
}}

// String lengths (to size the byte buffer on the host).
extern \"C\" __global__ void string_lengths(const Str* __restrict__ strs, uint32_t* __restrict__ lens, uint64_t n) {{
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) lens[i] = strs[i].len;
}}
"
    )
}
