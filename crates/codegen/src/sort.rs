//! Sort stage over a materialized intermediate: an LSD radix sort of the keys encoded as
//! words whose unsigned order is the rows' order (`sort_encode`, radix_keys.cu; the passes
//! in radix_sort.cu), or a bitonic sort of a row permutation with a comparator generated
//! for the key columns (NULL placement, ASC/DESC, strings): small inputs, top-N, INTERVAL
//! keys. Both are stable: ties keep the row order, so the order is deterministic.

use crate::device_constants::with_prelude;
use crate::spec::{Param, Part};
use crate::types::c_type;
use gpusql_common::{Result, Schema};
use gpusql_plan::SortColumn;

/// Inputs of at most this many rows sort by rank (`sort_rank` + `sort_scatter`): n^2
/// independent compares (16.8M at this size) instead of the bitonic network's launches.
pub const SMALL_SORT: usize = 4096;

/// The sort stage's kernels around the generated comparator (a template: `$KEYS` …).
const SORT_CU: &str = include_str!("sort.cu");
/// The radix sort's key encoding (`$ENCODE`, per key) and its kernel `sort_encode`.
const RADIX_KEYS_CU: &str = include_str!("radix_keys.cu");
/// The radix sort's passes (in the util module: they do not depend on the keys).
const RADIX_SORT_CU: &str = include_str!("radix_sort.cu");
/// Where the sorted rows' groups of the first `$K` keys start (`generate_sort`'s segments).
const SORT_HEADS_CU: &str = include_str!("sort_heads.cu");
/// Result assembly and hash-build helpers, and their kernels per key width (`$W` …).
const UTIL_CU: &str = include_str!("util.cu");
const KEYED_TABLES_CU: &str = include_str!("keyed_tables.cu");
/// string_agg's concatenation of sorted runs (`Stage::ConcatRuns`).
const CONCAT_RUNS_CU: &str = include_str!("concat_runs.cu");

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
    /// `sort_heads(const uint32_t* perm, uint64_t n, uint32_t* heads, <params>)`: 1 where
    /// sorted row i starts a group of the first `segments` keys (None: not asked for).
    pub heads_entry: Option<String>,
    /// The keys' radix encoding, where every key has one (not INTERVAL).
    pub radix: Option<RadixKeys>,
    pub params: Vec<Param>,
}

/// How `sort_encode(uint32_t* words, uint64_t n, const uint32_t* slots, <params>)` lays out
/// a row's key: `fixed_bytes` plus, for each string key (`string_keys`, their columns in key
/// order), its longest string's length (`slots`, found at run time), rounded up to 4-byte
/// words.
#[derive(Debug, Clone)]
pub struct RadixKeys {
    pub encode_entry: String,
    pub fixed_bytes: usize,
    pub string_keys: Vec<usize>,
}

impl RadixKeys {
    /// Words per row's key, given each string key's longest string.
    pub fn words(&self, slots: &[u32]) -> usize {
        (self.fixed_bytes + slots.iter().map(|s| *s as usize).sum::<usize>()).div_ceil(4)
    }
}

/// The radix encoding of `keys` (their parameters are `compare_body`'s): the body of
/// `sort_encode` and its layout, or None where a key has no byte order (INTERVAL).
fn radix_encoding(schema: &Schema, keys: &[SortColumn]) -> Option<(String, RadixKeys)> {
    let mut body = String::new();
    let mut layout = RadixKeys { encode_entry: "sort_encode".into(), fixed_bytes: 0, string_keys: vec![] };
    for k in keys {
        let f = &schema.fields[k.column];
        let ct = c_type(&f.ty);
        let v = format!("k{}_values[a]", k.column);
        let flip = if k.asc { "0u" } else { "0xffffffffu" };
        let (width, encode) = match ct {
            "bool" => (1, format!("kw_byte(k, ({v} ? 1u : 0u) ^ {flip});")),
            "int32_t" => (4, format!("kw_u32(k, (uint32_t){v} ^ 0x80000000u, {flip});")),
            "int64_t" => (8, format!("kw_u64(k, (uint64_t){v} ^ 0x8000000000000000ull, {flip});")),
            "__int128" => (
                16,
                format!(
                    "const __int128 v = {v};\n            kw_u64(k, (uint64_t)(v >> 64) ^ 0x8000000000000000ull, {flip});\n            kw_u64(k, (uint64_t)v, {flip});"
                ),
            ),
            "double" => (8, format!("kw_u64(k, f64_order_bits({v}), {flip});")),
            "Str" => {
                let j = layout.string_keys.len();
                layout.string_keys.push(k.column);
                // The length after the padded bytes; the bytes' slot is added at run time.
                (4, format!("kw_str(k, {v}, slots[{j}], {flip});"))
            }
            _ => return None,
        };
        let zeros =
            if ct == "Str" { format!("slots[{}] + 4u", layout.string_keys.len() - 1) } else { width.to_string() };
        layout.fixed_bytes += width;
        body.push_str(&format!("        // key #{} {}\n        {{\n", k.column, if k.asc { "ASC" } else { "DESC" }));
        if f.nullable {
            layout.fixed_bytes += 1;
            let null_byte = if k.nulls_first { 0 } else { 2 };
            body.push_str(&format!(
                "            const bool null_ = k{}_validity[a] == 0;\n            kw_byte(k, null_ ? {null_byte}u : 1u);\n            if (null_) kw_zeros(k, {zeros}); else {{\n            {encode}\n            }}\n",
                k.column
            ));
        } else {
            body.push_str(&format!("            {encode}\n"));
        }
        body.push_str("        }\n");
    }
    Some((body, layout))
}

/// The comparator of `keys` (their parameters and declarations added to `params` and
/// `decls`): per key, NULL placement, then the values' order, ASC or DESC.
pub(crate) fn compare_body(
    schema: &Schema,
    keys: &[SortColumn],
    params: &mut Vec<Param>,
    decls: &mut Vec<String>,
) -> String {
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
        } else if ct == "Interval" {
            format!("iv_cmp({vals}[a], {vals}[b])")
        } else if ct == "double" {
            format!("f64_cmp({vals}[a], {vals}[b])")
        } else {
            format!("({vals}[a] < {vals}[b] ? -1 : ({vals}[a] > {vals}[b] ? 1 : 0))")
        };
        let sign = if k.asc { "" } else { "-" };
        body.push_str(&format!(
            "            const int c = {cmp};\n            if (c != 0) return {sign}c;\n        }}\n    }}\n"
        ));
    }
    body
}

/// The sort of `keys`; with `segments` k, also the kernel marking where the rows' first k
/// keys change in sorted order (`sort_heads`: a Sort's positions within groups).
pub fn generate_sort(schema: &Schema, keys: &[SortColumn], segments: Option<usize>) -> Result<SortSpec> {
    let mut params = vec![];
    let mut decls = vec![];
    let body = compare_body(schema, keys, &mut params, &mut decls);
    let group_body = segments.map(|k| compare_body(schema, &keys[..k.min(keys.len())], &mut params, &mut decls));
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
    let mut source = SORT_CU
        .replace("$KEYS", &key_text.join(", "))
        .replace("$COMPARE", &body)
        .replace("$DECLS", &decl_list)
        .replace("$ARGS", &args)
        .replace("$SMALL", &SMALL_SORT.to_string());
    let radix = radix_encoding(schema, keys).map(|(encode, layout)| {
        source.push_str(
            &RADIX_KEYS_CU
                .replace("$KEYS", &key_text.join(", "))
                .replace("$ENCODE", &encode)
                .replace("$DECLS", &decl_list),
        );
        layout
    });
    if let (Some(k), Some(group)) = (segments, &group_body) {
        source.push_str(
            &SORT_HEADS_CU
                .replace("$K", &k.to_string())
                .replace("$COMPARE", group)
                .replace("$DECLS", &decl_list)
                .replace("$ARGS", &args),
        );
    }
    Ok(SortSpec {
        source: with_prelude(&source),
        step_entry: "sort_step".into(),
        iota_entry: "sort_iota".into(),
        keep_halves_entry: "sort_keep_halves".into(),
        rank_entry: "sort_rank".into(),
        scatter_entry: "sort_scatter".into(),
        heads_entry: segments.map(|_| "sort_heads".into()),
        radix,
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
    let mut src = format!("{UTIL_CU}{CONCAT_RUNS_CU}{RADIX_SORT_CU}");
    for (width, key, entry) in [("4", "int32_t", "int2"), ("8", "int64_t", "longlong2")] {
        src.push_str(&KEYED_TABLES_CU.replace("$W", width).replace("$KEY", key).replace("$ENTRY", entry));
    }
    with_prelude(&src)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpusql_common::{DataType, Field};

    fn key(column: usize, asc: bool, nulls_first: bool) -> SortColumn {
        SortColumn { column, asc, nulls_first }
    }

    /// The encoded key's layout: a NULL byte only for nullable columns, each value's
    /// width, a string's length after its bytes (their slot is found at run time).
    #[test]
    fn radix_key_layout() {
        let schema = Schema::new(vec![
            Field::new("i", DataType::Int32, false),
            Field::new("s", DataType::Utf8, true),
            Field::new("d", DataType::Decimal { precision: 38, scale: 2 }, true),
            Field::new("iv", DataType::Interval, false),
        ]);
        let spec =
            generate_sort(&schema, &[key(1, false, true), key(0, true, false), key(2, true, false)], None).unwrap();
        let radix = spec.radix.expect("these keys have a byte order");
        // s: 1 + 4 (and its slot); i: 4; d: 1 + 16.
        assert_eq!((radix.fixed_bytes, radix.string_keys.clone()), (26, vec![1]));
        assert_eq!(radix.words(&[7]), 9);
        assert!(spec.source.contains("kw_byte(k, null_ ? 0u : 1u);"), "{}", spec.source);
        assert!(spec.source.contains("kw_str(k, k1_values[a], slots[0], 0xffffffffu);"));
        // INTERVAL has no byte order: the comparator sorts.
        assert!(generate_sort(&schema, &[key(3, true, false)], None).unwrap().radix.is_none());
    }
}
