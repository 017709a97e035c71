//! The window stage's kernels (`Stage::Window`), generated per stage: the comparators of
//! its partition and order keys (`window_heads`), a segmented scan per aggregate whose
//! frame runs from the partition's start or to its end (`window_scan.cu`), and
//! `window_calls`, which computes each call of the window per row from the row's
//! partition and peer bounds, its frame, and those scans (the CPU twin:
//! exec/src/cpu/window.rs; the rules: gpusql_plan::window).

use crate::device_constants::{typed_code, with_prelude, KernelError};
use crate::spec::{Param, Part};
use crate::types::{c_type, i128_literal};
use gpusql_common::{DataType, Error, Result, ScalarValue, Schema};
use gpusql_plan::physical::{SortColumn, WindowCall};
use gpusql_plan::window::{Frame, FrameBound, FrameUnits, WindowFunc};
use gpusql_plan::AggFunc;

const WINDOW_CU: &str = include_str!("window.cu");
const WINDOW_SCAN_CU: &str = include_str!("window_scan.cu");

/// Rows each thread of a scan walks.
pub const SCAN_CHUNK: usize = 256;

/// A segmented scan of one call's values (`window_scan.cu`).
#[derive(Debug, Clone, PartialEq)]
pub struct WindowScan {
    /// Its kernels: `<name>_rows`, `<name>_states`, `<name>_carry`.
    pub name: String,
    /// The call it is for, and the input column it scans.
    pub call: usize,
    pub column: usize,
    /// Forward (restarting at partition heads) or backward (at partition ends).
    pub forward: bool,
    /// Bytes of one state.
    pub state_bytes: usize,
}

pub struct WindowSpec {
    pub source: String,
    /// `window_heads(uint64_t n, uint32_t* part_heads, uint32_t* peer_heads, uint32_t*
    /// part_ends, <params>)`.
    pub heads_entry: String,
    /// `window_calls(uint64_t n, const uint32_t* part_heads, const uint64_t* part_first,
    /// const uint64_t* part_starts, const uint32_t* peer_heads, const uint64_t* peer_first,
    /// const uint64_t* peer_starts, int* err, <each scan's states>, <each call's values
    /// and validity>, <params>)`.
    pub calls_entry: String,
    pub scans: Vec<WindowScan>,
    /// The input columns `window_calls` reads (values and validity, each); the first
    /// `key_params` of them, the keys', are `window_heads`'s.
    pub params: Vec<Param>,
    pub key_params: usize,
}

/// How an aggregate call reads its frame.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Reach {
    /// From the partition's start: the forward scan at the frame's last row.
    FromStart,
    /// To the partition's end: the backward scan at the frame's first row.
    ToEnd,
    /// Any other frame: its rows added in order.
    Walk,
}

/// The aggregate a call scans and how it reads the scan: its own aggregate, or for IGNORE
/// NULLS (lag, lead, first_value, last_value, nth_value) a count of the non-NULL values
/// from the partition's start, whose positions `window_nth_non_null` finds by bisection.
fn scanned(c: &WindowCall) -> Option<(AggFunc, Reach)> {
    match c.func {
        WindowFunc::Aggregate(_) if c.args.is_empty() => None,
        WindowFunc::Aggregate(f) => Some((f, reach(&c.frame))),
        WindowFunc::Lag | WindowFunc::Lead | WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue
            if c.ignore_nulls =>
        {
            Some((AggFunc::Count, Reach::FromStart))
        }
        _ => None,
    }
}

fn reach(frame: &Frame) -> Reach {
    match (&frame.start, &frame.end) {
        (FrameBound::UnboundedPreceding, _) => Reach::FromStart,
        (_, FrameBound::UnboundedFollowing) => Reach::ToEnd,
        _ => Reach::Walk,
    }
}

/// An aggregate's state in C, its identity, the state of row `i` and the combination of
/// two (with `k<c>_values` / `k<c>_validity` the argument's columns).
struct StateCode {
    ty: &'static str,
    bytes: usize,
    ident: String,
    load: String,
    combine: String,
}

/// The state of aggregate `func` over values of `ty` in `x_values` / `x_validity` (the
/// helpers' parameters).
fn state_code(func: AggFunc, ty: &DataType) -> Result<StateCode> {
    let vals = "x_values";
    let present = "WVALID(x_validity, i)";
    Ok(match func {
        AggFunc::Count => StateCode {
            ty: "unsigned long long",
            bytes: 8,
            ident: "0ull".into(),
            load: format!("    return {present} ? 1ull : 0ull;\n"),
            combine: "    (void)x_values;\n    return a + b;\n".into(),
        },
        AggFunc::Sum | AggFunc::Avg if *ty == DataType::Float64 => StateCode {
            ty: "SumF",
            bytes: 16,
            ident: "SumF{0.0, 0ull}".into(),
            load: format!("    return {present} ? SumF{{{vals}[i], 1ull}} : SumF{{0.0, 0ull}};\n"),
            combine: "    (void)x_values;\n    return SumF{a.s + b.s, a.n + b.n};\n".into(),
        },
        AggFunc::Sum | AggFunc::Avg => StateCode {
            ty: "SumI",
            bytes: 32,
            ident: "SumI{0, 0ull}".into(),
            load: format!("    return {present} ? SumI{{(__int128){vals}[i], 1ull}} : SumI{{0, 0ull}};\n"),
            combine: "    (void)x_values;\n    return SumI{a.s + b.s, a.n + b.n};\n".into(),
        },
        AggFunc::VarPop | AggFunc::VarSamp | AggFunc::StddevPop | AggFunc::StddevSamp => StateCode {
            ty: "Moments",
            bytes: 24,
            ident: "Moments{0ull, 0.0, 0.0}".into(),
            load: format!("    return {present} ? Moments{{1ull, {vals}[i], 0.0}} : Moments{{0ull, 0.0, 0.0}};\n"),
            combine: "    (void)x_values;\n    return moments_combine(a, b);\n".into(),
        },
        AggFunc::Min | AggFunc::Max => {
            // The row holding the extreme so far (of equal values the first, as the CPU
            // backend keeps the first it meets).
            let cmp = compare_values(ty, "x_values[a]", "x_values[b]");
            let better = if func == AggFunc::Min { "c < 0" } else { "c > 0" };
            StateCode {
                ty: "uint32_t",
                bytes: 4,
                ident: "NO_ROW".into(),
                load: format!("    return {present} ? (uint32_t)i : NO_ROW;\n"),
                combine: format!(
                    "    if (a == NO_ROW) return b;\n    if (b == NO_ROW) return a;\n    const int c = {cmp};\n    return {better} ? a : (c == 0 ? min(a, b) : b);\n"
                ),
            }
        }
        other => return Err(Error::plan(format!("{} as a window aggregate", other.name()))),
    })
}

/// -1, 0 or 1 comparing two values of `ty` (the engine's order: NaN above every number,
/// strings by bytes).
fn compare_values(ty: &DataType, a: &str, b: &str) -> String {
    match c_type(ty) {
        "Str" => format!("str_cmp({a}, {b})"),
        "Interval" => format!("iv_cmp({a}, {b})"),
        "double" => format!("f64_cmp({a}, {b})"),
        _ => format!("({a} < {b} ? -1 : ({a} > {b} ? 1 : 0))"),
    }
}

/// Adds the values and validity of input column `c` to the kernels' parameters (a
/// validity pointer is null where the column has none: WVALID).
fn read_column(schema: &Schema, c: usize, params: &mut Vec<Param>, decls: &mut Vec<String>) {
    let f = &schema.fields[c];
    if !params.contains(&Param::Input { column: c, part: Part::Values }) {
        params.push(Param::Input { column: c, part: Part::Values });
        decls.push(format!("const {}* __restrict__ k{c}_values", c_type(&f.ty)));
    }
    if !params.contains(&Param::Input { column: c, part: Part::Validity }) {
        params.push(Param::Input { column: c, part: Part::Validity });
        decls.push(format!("const uint8_t* __restrict__ k{c}_validity"));
    }
}

/// `, a, b, …` of a parameter list.
fn listed(items: &[String]) -> String {
    items.iter().map(|d| format!(", {d}")).collect()
}

/// The argument names of `params` (`k<c>_values`, `k<c>_validity`).
fn param_names(params: &[Param]) -> Vec<String> {
    params
        .iter()
        .filter_map(|p| match p {
            Param::Input { column, part: Part::Values } => Some(format!("k{column}_values")),
            Param::Input { column, .. } => Some(format!("k{column}_validity")),
            _ => None,
        })
        .collect()
}

/// The window stage's kernels over rows of `schema` sorted by `keys`, the first
/// `partition` of them the partition's.
pub fn generate_window(
    schema: &Schema,
    keys: &[SortColumn],
    partition: usize,
    calls: &[WindowCall],
) -> Result<WindowSpec> {
    // The keys' columns first: `window_heads` reads those (a prefix of the parameters).
    let (mut params, mut decls) = (vec![], vec![]);
    for k in keys {
        read_column(schema, k.column, &mut params, &mut decls);
    }
    let partition_body = crate::sort::compare_body(schema, &keys[..partition], &mut params, &mut decls);
    let peers_body = crate::sort::compare_body(schema, keys, &mut params, &mut decls);
    let key_params = params.len();
    let (key_decls, key_args) = (listed(&decls), listed(&param_names(&params)));
    for c in calls {
        for a in &c.args {
            read_column(schema, *a, &mut params, &mut decls);
        }
    }
    let (all_decls, all_args) = (listed(&decls), listed(&param_names(&params)));
    let names: Vec<String> = keys.iter().map(|k| format!("#{}", k.column)).collect();
    let mut source = format!(
        "// ======== Window: partitions [{}] ordered by [{}] ========\n{}",
        names[..partition].join(", "),
        names[partition..].join(", "),
        WINDOW_CU
            .replace("$PARTITION", &partition_body)
            .replace("$PEERS", &peers_body)
            .replace("$DECLS", &key_decls)
            .replace("$ARGS", &key_args)
    );
    let mut scans = vec![];
    for (j, c) in calls.iter().enumerate() {
        let Some((f, reach)) = scanned(c) else { continue };
        let x = c.args[0];
        let x_ty = schema.fields[x].ty;
        let code = state_code(f, &x_ty)?;
        let x_decls =
            format!(", const {}* __restrict__ x_values, const uint8_t* __restrict__ x_validity", c_type(&x_ty));
        let forward = match reach {
            Reach::FromStart => true,
            Reach::ToEnd => false,
            Reach::Walk => {
                // A frame of its own per row: the state functions its walk adds rows with.
                let (st, name) = (code.ty, format!("walk{j}"));
                source.push_str(&format!(
                    "// ---- walk{j}: {c}, each row's frame added in order ----\n__device__ __forceinline__ {st} {name}_combine({st} a, {st} b{x_decls}) {{\n    (void)x_validity;\n{}}}\n__device__ __forceinline__ {st} {name}_load(uint64_t i{x_decls}) {{\n{}}}\n",
                    code.combine, code.load
                ));
                continue;
            }
        };
        let name = format!("scan{j}");
        source.push_str(
            &WINDOW_SCAN_CU
                .replace("$STATE", code.ty)
                .replace("$S", &name)
                .replace("$WHAT", &c.to_string())
                .replace(
                    "$DIRECTION",
                    if forward {
                        "forward, from each partition's start"
                    } else {
                        "backward, from each partition's end"
                    },
                )
                .replace("$IDENT", &code.ident)
                .replace("$COMBINE", &format!("    (void)x_validity;\n{}", code.combine))
                .replace("$LOAD", &code.load)
                .replace("$FORWARD", if forward { "true" } else { "false" })
                .replace("$DECLS", &x_decls)
                .replace("$ARGS", ", x_values, x_validity"),
        );
        scans.push(WindowScan { name, call: j, column: x, forward, state_bytes: code.bytes });
    }
    for (j, c) in calls.iter().enumerate() {
        if c.frame.units == FrameUnits::Range && c.func.uses_frame() {
            for (bound, is_start) in [(&c.frame.start, true), (&c.frame.end, false)] {
                if matches!(bound, FrameBound::Preceding(_) | FrameBound::Following(_)) {
                    source.push_str(&range_bound(schema, keys[partition], bound, is_start, j, &all_decls)?);
                }
            }
        }
    }
    source.push_str(&calls_kernel(schema, calls, &scans, &all_decls, &all_args)?);
    Ok(WindowSpec {
        source: with_prelude(&source),
        heads_entry: "window_heads".into(),
        calls_entry: "window_calls".into(),
        scans,
        params,
        key_params,
    })
}

/// The device function finding a RANGE frame's end at `bound` for call `j`: the first row
/// of the partition's non-NULL keys past the bound's value (for the start, at or past it);
/// a NULL key's frame is its peers (exec's CPU twin: `range_bound`).
fn range_bound(
    schema: &Schema,
    key: SortColumn,
    bound: &FrameBound,
    is_start: bool,
    j: usize,
    decls: &str,
) -> Result<String> {
    let (offset, preceding) = match bound {
        FrameBound::Preceding(a) => (a, true),
        FrameBound::Following(a) => (a, false),
        _ => return Err(Error::plan("a RANGE bound without an offset")),
    };
    let ty = schema.fields[key.column].ty;
    let (vals, valid) = (format!("k{}_values", key.column), format!("k{}_validity", key.column));
    // Toward the start of the order: smaller values ascending, larger descending.
    let toward_smaller = preceding == key.asc;
    let sign = if toward_smaller { "-" } else { "+" };
    let (target, cmp) = match ty {
        DataType::Float64 => {
            let a = match offset {
                ScalarValue::Float64(x) => crate::types::f64_literal(*x),
                other => crate::types::f64_literal(other.as_f64(&DataType::Float64).unwrap_or(0.0)),
            };
            (format!("const double target = {vals}[i] {sign} {a};"), format!("f64_cmp({vals}[j], target)"))
        }
        // (DATE keys move by days, TIMESTAMP keys by microseconds.)
        DataType::Int32 | DataType::Int64 | DataType::Decimal { .. } | DataType::Date | DataType::Timestamp => {
            let a = i128_literal(offset.as_i128().unwrap_or(0));
            (
                format!("const __int128 target = (__int128){vals}[i] {sign} {a};"),
                "((__int128)k_j < target ? -1 : ((__int128)k_j > target ? 1 : 0))"
                    .replace("k_j", &format!("{vals}[j]")),
            )
        }
        other => return Err(Error::not_supported(format!("RANGE frame offsets over a key of {other}"))),
    };
    let directed = if key.asc { "c" } else { "-c" };
    let before = if is_start { format!("{directed} < 0") } else { format!("{directed} <= 0") };
    let (peer, which) = if is_start { ("qs", "start") } else { ("qe", "end") };
    // The partition's NULL keys lie together at one end.
    let non_null = if key.nulls_first {
        format!("    uint64_t lo = ps, hi = pe;\n    while (lo < hi) {{ const uint64_t m = (lo + hi) / 2; if (!WVALID({valid}, m)) lo = m + 1; else hi = m; }}\n    const uint64_t ns = lo, ne = pe;\n")
    } else {
        format!("    uint64_t lo = ps, hi = pe;\n    while (lo < hi) {{ const uint64_t m = (lo + hi) / 2; if (WVALID({valid}, m)) lo = m + 1; else hi = m; }}\n    const uint64_t ns = ps, ne = lo;\n")
    };
    Ok(format!(
        "// The RANGE frame's {which} of call {j} ({bound}).\n__device__ uint64_t range{j}_{which}(uint64_t i, uint64_t ps, uint64_t pe, uint64_t qs, uint64_t qe{decls}) {{\n    if (!WVALID({valid}, i)) return {peer};\n{non_null}    {target}\n    lo = ns; hi = ne;\n    while (lo < hi) {{\n        const uint64_t j = (lo + hi) / 2;\n        const int c = {cmp};\n        if ({before}) lo = j + 1; else hi = j;\n    }}\n    return lo;\n}}\n"
    ))
}

/// C expressions of a call's frame [fs, fe) at row i.
fn frame_code(frame: &Frame, j: usize, args: &str) -> (String, String) {
    let offset = |v: &ScalarValue| format!("{}ull", v.as_i128().unwrap_or(0).clamp(0, i64::MAX as i128));
    let range = |which: &str| format!("range{j}_{which}(i, ps, pe, qs, qe{args})");
    let start = match (&frame.start, frame.units) {
        (FrameBound::UnboundedPreceding, _) => "ps".to_string(),
        (FrameBound::CurrentRow, FrameUnits::Rows) => "i".into(),
        (FrameBound::CurrentRow, FrameUnits::Range) => "qs".into(),
        (FrameBound::Preceding(v), FrameUnits::Rows) => format!("(i - ps >= {a} ? i - {a} : ps)", a = offset(v)),
        (FrameBound::Following(v), FrameUnits::Rows) => format!("min(pe, i + {})", offset(v)),
        (FrameBound::Preceding(_) | FrameBound::Following(_), FrameUnits::Range) => range("start"),
        (FrameBound::UnboundedFollowing, _) => "pe".into(),
    };
    let end = match (&frame.end, frame.units) {
        (FrameBound::UnboundedFollowing, _) => "pe".to_string(),
        (FrameBound::CurrentRow, FrameUnits::Rows) => "i + 1".into(),
        (FrameBound::CurrentRow, FrameUnits::Range) => "qe".into(),
        (FrameBound::Preceding(v), FrameUnits::Rows) => {
            format!("(i + 1 - ps >= {a} ? i + 1 - {a} : ps)", a = offset(v))
        }
        (FrameBound::Following(v), FrameUnits::Rows) => format!("min(pe, i + {} + 1)", offset(v)),
        (FrameBound::Preceding(_) | FrameBound::Following(_), FrameUnits::Range) => range("end"),
        (FrameBound::UnboundedPreceding, _) => "ps".into(),
    };
    (start, end)
}

/// `window_calls`: per row, its partition and peer bounds, then each call.
fn calls_kernel(
    schema: &Schema,
    calls: &[WindowCall],
    scans: &[WindowScan],
    decls: &str,
    args: &str,
) -> Result<String> {
    let mut sig = String::from(
        "extern \"C\" __global__ void window_calls(uint64_t n, const uint32_t* __restrict__ part_heads, const uint64_t* __restrict__ part_first, const uint64_t* __restrict__ part_starts, const uint32_t* __restrict__ peer_heads, const uint64_t* __restrict__ peer_first, const uint64_t* __restrict__ peer_starts, int* __restrict__ err",
    );
    for s in scans {
        let c = &calls[s.call];
        let Some((f, _)) = scanned(c) else { continue };
        let st = state_code(f, &schema.fields[c.args[0]].ty)?.ty;
        sig.push_str(&format!(", const {st}* __restrict__ {}", s.name));
    }
    for (j, c) in calls.iter().enumerate() {
        sig.push_str(&format!(", {}* __restrict__ o{j}_values, uint8_t* __restrict__ o{j}_validity", c_type(&c.ty)));
    }
    let mut body = String::from(
        "    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {\n        // The row's partition [ps, pe) and peers [qs, qe): group numbers from the heads'\n        // prefix sums, group starts from segment_starts.\n        const uint64_t pg = part_first[i] + part_heads[i] - 1, qg = peer_first[i] + peer_heads[i] - 1;\n        const uint64_t ps = part_starts[pg], pe = pg + 1 < part_first[n] ? part_starts[pg + 1] : n;\n        const uint64_t qs = peer_starts[qg], qe = qg + 1 < peer_first[n] ? peer_starts[qg + 1] : n;\n        const int64_t rows = (int64_t)(pe - ps);\n        (void)qs; (void)qe; (void)rows;\n",
    );
    for (j, c) in calls.iter().enumerate() {
        body.push_str(&format!("        // ---- {} ----\n        {{\n", c));
        let out = |v: &str| format!("            o{j}_values[i] = {v}; o{j}_validity[i] = 1;\n");
        let null = format!("o{j}_validity[i] = 0;");
        let col = |k: usize| c.args[k];
        let vals = |k: usize| format!("k{}_values", col(k));
        let valid = |k: usize| format!("k{}_validity", col(k));
        match c.func {
            WindowFunc::RowNumber => body.push_str(&out("(int64_t)(i - ps + 1)")),
            WindowFunc::Rank => body.push_str(&out("(int64_t)(qs - ps + 1)")),
            WindowFunc::DenseRank => body.push_str(&out("(int64_t)(peer_first[i] + peer_heads[i] - peer_first[ps])")),
            WindowFunc::PercentRank => body.push_str(&out("rows > 1 ? (double)(qs - ps) / (double)(rows - 1) : 0.0")),
            WindowFunc::CumeDist => body.push_str(&out("(double)(qe - ps) / (double)rows")),
            WindowFunc::Ntile => body.push_str(&format!(
                "            if (!WVALID({v}, i)) {{ {null} }} else {{\n                const int64_t b = {a}[i];\n                if (b <= 0) raise_error(err, ERR_NTILE_ARGUMENT);\n                o{j}_values[i] = window_ntile(b, (int64_t)(i - ps), rows); o{j}_validity[i] = 1;\n            }}\n",
                v = valid(0),
                a = vals(0)
            )),
            WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue if c.ignore_nulls => {
                // The frame's first / last / n-th non-NULL value (scan{j}: the partition's
                // non-NULL values through each row).
                let (fs, fe) = frame_code(&c.frame, j, args);
                let n = match c.func {
                    WindowFunc::FirstValue => "1ull".to_string(),
                    WindowFunc::LastValue => format!("fe > fs ? scan{j}[fe - 1] - (fs > ps ? scan{j}[fs - 1] : 0ull) : 0ull"),
                    _ => format!("WVALID({nv}, i) && {n}[i] >= 1 ? (unsigned long long){n}[i] : 0ull", nv = valid(1), n = vals(1)),
                };
                body.push_str(&format!(
                    "            const uint64_t fs = {fs}; uint64_t fe = {fe}; if (fe < fs) fe = fs;\n            const uint64_t r = window_nth_non_null(scan{j}, ps, fs, fe, {n});\n            if (r != NO_ROW64) {{ o{j}_values[i] = {a}[r]; o{j}_validity[i] = 1; }} else {{ {null} }}\n",
                    a = vals(0)
                ));
            }
            WindowFunc::Lag | WindowFunc::Lead => {
                // The row `offset` before (lag) or after (lead), within the partition; a
                // NULL offset gives NULL, a row outside the default (NULL). IGNORE NULLS:
                // the |offset|-th non-NULL value before (lag) or after (lead) the row (a
                // negative offset turns the direction), the row's own at 0 (scan{j}: the
                // partition's non-NULL values through each row).
                let (known, offset) = match c.args.len() {
                    1 => ("true".to_string(), "(__int128)1".to_string()),
                    _ => (format!("WVALID({}, i)", valid(1)), format!("(__int128){}[i]", vals(1))),
                };
                let default = if c.args.len() > 2 {
                    format!(
                        "if (WVALID({dv}, i)) {{ o{j}_values[i] = {d}[i]; o{j}_validity[i] = 1; }} else {{ {null} }}",
                        dv = valid(2),
                        d = vals(2)
                    )
                } else {
                    null.clone()
                };
                if c.ignore_nulls {
                    let lag = c.func == WindowFunc::Lag;
                    body.push_str(&format!(
                        "            const __int128 off = {known} ? {offset} : 0;\n            uint64_t r = NO_ROW64;\n            if (off == 0) r = i;\n            else if ((off > 0) == {lag}) {{\n                const unsigned long long before = i > ps ? scan{j}[i - 1] : 0ull;\n                const __int128 k = off > 0 ? off : -off;\n                if (k <= (__int128)before) r = window_nth_non_null(scan{j}, ps, ps, i, before + 1ull - (unsigned long long)k);\n            }} else {{\n                const __int128 k = off > 0 ? off : -off;\n                if (k <= (__int128)(pe - i)) r = window_nth_non_null(scan{j}, ps, i + 1, pe, (unsigned long long)k);\n            }}\n            if (!({known})) {{ {null} }}\n            else if (r != NO_ROW64) {{ if (WVALID({v}, r)) {{ o{j}_values[i] = {a}[r]; o{j}_validity[i] = 1; }} else {{ {null} }} }}\n            else {{ {default} }}\n",
                        v = valid(0),
                        a = vals(0)
                    ));
                } else {
                    let sign = if c.func == WindowFunc::Lag { "-" } else { "+" };
                    body.push_str(&format!(
                        "            const __int128 at = {known} ? (__int128)i {sign} {offset} : -1;\n            if (!({known})) {{ {null} }}\n            else if (at >= (__int128)ps && at < (__int128)pe) {{\n                const uint64_t r = (uint64_t)at;\n                if (WVALID({v}, r)) {{ o{j}_values[i] = {a}[r]; o{j}_validity[i] = 1; }} else {{ {null} }}\n            }} else {{ {default} }}\n",
                        v = valid(0),
                        a = vals(0)
                    ));
                }
            }
            WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue => {
                let (fs, fe) = frame_code(&c.frame, j, args);
                let at = match c.func {
                    WindowFunc::FirstValue => "fs".to_string(),
                    WindowFunc::LastValue => "fe - 1".into(),
                    _ => format!("WVALID({nv}, i) && {n}[i] >= 1 ? fs + (uint64_t)({n}[i] - 1) : fe", nv = valid(1), n = vals(1)),
                };
                body.push_str(&format!(
                    "            const uint64_t fs = {fs}; uint64_t fe = {fe}; if (fe < fs) fe = fs;\n            const uint64_t r = fe > fs ? {at} : fe;\n            if (r >= fs && r < fe && WVALID({v}, r)) {{ o{j}_values[i] = {a}[r]; o{j}_validity[i] = 1; }} else {{ {null} }}\n",
                    v = valid(0),
                    a = vals(0)
                ));
            }
            WindowFunc::Aggregate(f) => {
                let (fs, fe) = frame_code(&c.frame, j, args);
                body.push_str(&format!("            const uint64_t fs = {fs}; uint64_t fe = {fe}; if (fe < fs) fe = fs;\n"));
                if c.args.is_empty() {
                    body.push_str(&out("(int64_t)(fe - fs)"));
                } else {
                    let arg_ty = schema.fields[col(0)].ty;
                    let code = state_code(f, &arg_ty)?;
                    let st = code.ty;
                    let state = match reach(&c.frame) {
                        Reach::FromStart => format!("fe > fs ? scan{j}[fe - 1] : {}", code.ident),
                        Reach::ToEnd => format!("fe > fs ? scan{j}[fs] : {}", code.ident),
                        Reach::Walk => String::new(),
                    };
                    if state.is_empty() {
                        body.push_str(&format!(
                            "            {st} st = {ident};\n            for (uint64_t r = fs; r < fe; r++) st = walk{j}_combine(st, walk{j}_load(r, {x}), {x});\n",
                            ident = code.ident,
                            x = format!("{}, {}", vals(0), valid(0))
                        ));
                    } else {
                        body.push_str(&format!("            const {st} st = {state};\n"));
                    }
                    body.push_str(&finish(f, &arg_ty, &c.ty, j, &vals(0))?);
                }
            }
        }
        body.push_str("        }\n");
    }
    body.push_str("    }\n");
    Ok(format!("{sig}{decls}) {{\n{body}}}\n"))
}

/// An aggregate's value from its state `st`: NULL over no value (COUNT: 0); SUM and AVG
/// as the grouped aggregation finishes them (a DECIMAL(38) sum cast to the result type;
/// AVG that sum over the count, in DOUBLE).
fn finish(f: AggFunc, arg: &DataType, ty: &DataType, j: usize, vals: &str) -> Result<String> {
    let set = |v: &str| format!("o{j}_values[i] = {v}; o{j}_validity[i] = 1;");
    let null = format!("o{j}_validity[i] = 0;");
    Ok(match f {
        AggFunc::Count => format!("            {}\n", set("(int64_t)st")),
        AggFunc::Min | AggFunc::Max => {
            format!("            if (st == NO_ROW) {{ {null} }} else {{ {} }}\n", set(&format!("{vals}[st]")))
        }
        AggFunc::Sum if *ty == DataType::Float64 => {
            format!("            if (st.n == 0) {{ {null} }} else {{ {} }}\n", set("st.s"))
        }
        AggFunc::Sum if *ty == DataType::Int64 => format!(
            "            if (st.n == 0) {{ {null} }}\n            else if (st.s < {min} || st.s > {max}) {{ raise_error(err, {code}); {null} }}\n            else {{ {} }}\n",
            set("(int64_t)st.s"),
            min = i128_literal(i64::MIN as i128),
            max = i128_literal(i64::MAX as i128),
            code = typed_code(KernelError::Overflow, ty)
        ),
        AggFunc::Sum => format!("            if (st.n == 0) {{ {null} }} else {{ {} }}\n", set("st.s")),
        // NULL over no value (the samples: over fewer than two), as DuckDB.
        AggFunc::VarPop | AggFunc::VarSamp | AggFunc::StddevPop | AggFunc::StddevSamp => {
            let sample = matches!(f, AggFunc::VarSamp | AggFunc::StddevSamp);
            let moment = if sample { "st.m2 / (double)(st.n - 1)" } else { "st.m2 / (double)st.n" };
            let value = if matches!(f, AggFunc::StddevPop | AggFunc::StddevSamp) {
                format!("sqrt({moment})")
            } else {
                moment.to_string()
            };
            format!(
                "            if (st.n < {least}) {{ {null} }} else {{ {} }}\n",
                set(&value),
                least = if sample { 2 } else { 1 }
            )
        }
        AggFunc::Avg => {
            let sum = if *arg == DataType::Float64 {
                "st.s".to_string()
            } else {
                crate::expr::cast("st.s", &DataType::decimal(38, arg.scale()), &DataType::Float64)?
            };
            format!("            if (st.n == 0) {{ {null} }} else {{ {} }}\n", set(&format!("{sum} / (double)st.n")))
        }
        other => return Err(Error::plan(format!("{} as a window aggregate", other.name()))),
    })
}
