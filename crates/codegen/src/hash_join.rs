//! Hash join: HashBuild (a sink) and HashProbe (an operator fused into the probe side's
//! pipeline).
//! - HashBuild inserts each row's key into the shared open-addressing table (one group per
//!   distinct key, counting its rows) and writes the row (the payload) with the
//!   prefix-sum write; the host then groups the payload by key (scan of the counts,
//!   scatter), so a key's matches are one contiguous range.
//! - HashProbe looks the key up. Keys known to be unique take a single-match path. For
//!   repeating keys a row continues once per match: with push-down parallelism
//!   ([Funke & Teubner 2020] §3) the warp takes one lane's match range at a time,
//!   broadcasts that lane's row with shuffles and lets all 32 lanes process 32 of its
//!   matches per step; per-lane, each lane walks its own range (the naive form, kept to
//!   measure the gain).
//! - A semi/anti probe with a residual condition (Q21) walks the key's matches per lane
//!   until one satisfies it.

use crate::emit::Emitter;
use crate::expr::{gen, Value};
use crate::hash_table::{emit_insert_with_runs, emit_lookup, KeyArrays};
use crate::materialize::write_rows;
use crate::pipeline::PipelineGen;
use crate::types::c_type;
use crate::{
    entry_type, BuildHint, BuildPart, InitKernel, Param, Part, ReplicaPart, SMEM_TABLES_BUDGET, SMEM_TABLE_BYTES,
};
use gpusql_common::{Result, Schema};
use gpusql_plan::{Expr, JoinKind, MultiMatch, PipelineOp, ReplicaUser};

/// Loads the columns the join keys read and evaluates the keys; also returns the C
/// condition "some key is NULL" when a key can be NULL.
fn key_values(g: &mut PipelineGen, keys: &[Expr]) -> Result<(Vec<Value>, Option<String>)> {
    let refs: Vec<&Expr> = keys.iter().collect();
    g.load_columns(&refs);
    let kv: Vec<Value> = keys.iter().map(|k| gen(k, &g.row, &mut g.body)).collect::<Result<_>>()?;
    let nulls: Vec<String> = kv.iter().filter(|v| !v.is_never_null()).map(|v| v.null.clone()).collect();
    Ok((kv, (!nulls.is_empty()).then(|| nulls.join(" || "))))
}

pub fn build(g: &mut PipelineGen, id: usize, keys: &[Expr], schema: &Schema, entry: &str) -> Result<InitKernel> {
    let key_text: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    g.body.line(format!(
        "// ---- HashBuild -> #{id} keys=[{}] (global hash table, rows grouped by key) ----",
        key_text.join(", ")
    ));
    let (slots, mask, max_groups) = crate::aggregate::group_table_params(g);
    let groups = g.param(Param::GroupCount, "unsigned long long*");
    let group_rows = g.param(Param::GroupRows, "uint32_t* __restrict__");
    let row_group = g.param(Param::RowGroup, "uint32_t* __restrict__");
    let multi = g.param(Param::MultiFlag, "int*");
    let mut arrays = vec![];
    for (k, e) in keys.iter().enumerate() {
        let ct = c_type(&e.ty());
        let values = g.param(Param::GroupKey { key: k, part: Part::Values }, &format!("{ct}* __restrict__"));
        arrays.push(KeyArrays { values, validity: None, ty: e.ty() });
    }
    g.body.line("int gid_ = -1;");
    g.body.open("if (active)");
    let (kv, any_null) = key_values(g, keys)?;
    // NULL keys never match: such rows stay out of the table.
    if let Some(any_null) = any_null {
        g.body.line(format!("active = !({any_null});"));
    }
    let runs = emit_insert_with_runs(&mut g.body, keys, &kv, &arrays, &slots, &mask, &max_groups, &groups, true);
    if runs {
        // The run's leader counts the whole run: one atomic per run, not per row.
        g.body.line(format!(
            "if (gid_ >= 0 && !follower_ && atomicAdd(&{group_rows}[gid_], run_len_) + run_len_ >= 2u) *{multi} = 1;"
        ));
    } else {
        g.body.line(format!("if (gid_ >= 0 && atomicAdd(&{group_rows}[gid_], 1u) == 1u) *{multi} = 1;"));
    }
    g.body.line("active = gid_ >= 0;");
    g.body.close();
    write_rows(g, &format!("HashBuild -> #{id} payload"), schema, &[(row_group, "(uint32_t)gid_".into())])?;

    let init_entry = format!("{entry}_init");
    g.extra.push_str(&format!(
        "// Init of #{id}: empty hash slots\nextern \"C\" __global__ void {init_entry}(int* ht_slots, const uint32_t ht_mask) {{\n    const uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, stride = (uint64_t)gridDim.x * blockDim.x;\n    for (uint64_t i = tid; i <= ht_mask; i += stride) ht_slots[i] = -1;\n}}\n\n"
    ));
    Ok(InitKernel { entry: init_entry, params: vec![Param::HashSlots, Param::HashMask] })
}

/// A Lane Refill planned right after a probe: its threshold, the planner's estimate of the
/// lanes still active there, the row columns live after it, and the later probes whose
/// key bitmaps may be tested before it (`early_bitmap_probes`: build id, key, bitmap).
pub struct RefillPoint {
    pub threshold: u32,
    pub activity: f64,
    pub live: Vec<bool>,
    pub early: Vec<(usize, Expr, (i64, u64))>,
}

/// A later probe's key bitmap is tested up front, with the first probe's, when at least
/// this fraction of the rows is estimated to reach it. Its key column is then read for
/// every row, where the probe itself would read it only for the rows that get there; but
/// with a fifth of the rows reaching it only (1 - 0.2)^8 = 17% of its 32-byte sectors
/// (8 rows each) would be skipped, so the column costs little more, and every key load is
/// issued at once instead of one after the other behind each Lane Refill.
pub const EARLY_BITMAP_MIN_REACH: f64 = 0.16;

/// The key bitmap of table `b`, if a probe of it with `keys` (`kind`) can test it before
/// the lookup: a single integer column key, an inner or semi join, a table neither
/// bank-replicated nor direct-mapped.
fn testable_bitmap(g: &PipelineGen, b: usize, keys: &[Expr], kind: JoinKind) -> Option<(i64, u64)> {
    let hint = g.builds.iter().find(|h| h.id == b)?;
    let [key @ Expr::Column { .. }] = keys else { return None };
    let entry = entry_type(c_type(&key.ty()));
    let replica = g.replicated.iter().any(|r| r.user == ReplicaUser::Probe(b));
    let ok =
        entry.is_some() && !replica && hint.direct_min.is_none() && matches!(kind, JoinKind::Inner | JoinKind::Semi);
    hint.bitmap.filter(|_| ok)
}

/// The probes among `rest` (the operators after a probe whose key bitmap is tested before
/// a Lane Refill) whose key bitmaps can be tested there too: keyed by a column of the
/// scanned table, without a residual condition, reached by at least
/// `EARLY_BITMAP_MIN_REACH` of the rows (the product of the planner's lane activity
/// estimates at the refills on the way). A probe or filter that drops rows commutes with
/// the test; the search stops at a projection (the row is replaced) and at left outer and
/// anti joins.
pub fn early_bitmap_probes(g: &PipelineGen, rest: &[PipelineOp]) -> Vec<(usize, Expr, (i64, u64))> {
    let mut out = vec![];
    let mut reach = 1.0;
    for op in rest {
        match op {
            PipelineOp::LaneRefill { activity, .. } => reach *= activity,
            PipelineOp::Filter(_) => {}
            PipelineOp::Project { .. } => break,
            PipelineOp::HashProbe { kind: JoinKind::Left | JoinKind::Anti | JoinKind::Mark, .. } => break,
            PipelineOp::HashProbe { build, keys, kind, residual, .. } => {
                let from_scan = matches!(keys.as_slice(), [Expr::Column { index, .. }] if *index < g.source_width);
                let early = g.builds.iter().any(|h| h.id == *build && h.early);
                if let Some(bitmap) = testable_bitmap(g, *build, keys, *kind)
                    .filter(|_| early && from_scan && residual.is_none() && reach >= EARLY_BITMAP_MIN_REACH)
                {
                    out.push((*build, keys[0].clone(), bitmap));
                }
            }
        }
    }
    out
}

/// `refill`: the Lane Refill planned right after this probe. Where the table has a key
/// bitmap it is placed between the bitmap test and the lookup instead (returns true): the
/// bitmap is exact, so the rows it keeps all match, and the lookup then runs on full warps
/// rather than on the ~1 in 5 lanes whose key passed. The key bitmaps of `refill.early`
/// are tested there too (their own probes then skip the test).
#[allow(clippy::too_many_arguments)]
pub fn probe(
    g: &mut PipelineGen,
    b: usize,
    keys: &[Expr],
    build_schema: &Schema,
    mode: MultiMatch,
    kind: JoinKind,
    residual: bool,
    refill: Option<RefillPoint>,
) -> Result<bool> {
    let mut hint = g.builds.iter().find(|h| h.id == b).copied().unwrap_or(BuildHint {
        id: b,
        multi: true,
        slots: usize::MAX,
        shared_memory: false,
        direct_min: None,
        bitmap: None,
        early: false,
    });
    // Semi/anti probes only test for a match: never an expansion loop.
    let multi = hint.multi && matches!(kind, JoinKind::Inner | JoinKind::Left);
    let left = kind == JoinKind::Left;
    let entry = match keys {
        [k] => entry_type(c_type(&k.ty())),
        _ => None,
    };
    let replica = g.replicated.iter().position(|r| r.user == ReplicaUser::Probe(b));
    let bytes = entry.map_or(usize::MAX, |(_, size)| hint.slots.saturating_mul(size));
    let in_smem = g.replicated.is_empty()
        && hint.shared_memory
        && hint.direct_min.is_none()
        && bytes <= SMEM_TABLE_BYTES
        && g.smem_tables + bytes <= SMEM_TABLES_BUDGET;
    if in_smem {
        g.smem_tables += bytes;
    }
    let how = match (multi, mode) {
        _ if kind == JoinKind::Semi => "semi join: keeps rows with a match",
        _ if kind == JoinKind::Anti => "anti join: keeps rows without a match",
        _ if kind == JoinKind::Mark => "mark join: keeps every row, appends whether it has a match",
        (false, _) => "unique keys: single match",
        (true, MultiMatch::PushDown) => "multi-match: push-down parallelism",
        (true, MultiMatch::PerLane) => "multi-match: per lane",
    };
    let direct = hint.direct_min.filter(|_| entry.is_some());
    let table = match (entry, in_smem) {
        _ if replica.is_some() => "bank-replicated table in shared memory",
        _ if direct.is_some() => "direct-mapped by key",
        (Some(_), true) => "{key, group} entries in shared memory",
        (Some(_), false) => "{key, group} entries",
        _ => "slots + key arrays",
    };
    let key_text: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    // Keys that are columns stay in top-level variables across the refill.
    let bitmap_first =
        refill.filter(|_| testable_bitmap(g, b, keys, kind).is_some() && g.body.indent == 2 && g.open_loops == 0);
    let refilled = bitmap_first.is_some();
    if let (Some(r), Some((min, bits))) = (bitmap_first, hint.bitmap) {
        g.body.line(format!("// ---- HashProbe #{b} keys=[{}]: key bitmap first (rows whose key the table lacks drop out before the Lane Refill and the lookup) ----", key_text.join(", ")));
        if !r.early.is_empty() {
            let also: Vec<String> = r.early.iter().map(|(e, k, _)| format!("#{e} [{k}]")).collect();
            g.body.line(format!("// with the key bitmaps of the later probes {} (most rows reach them: their keys are loaded with this one, all tests before one refill)", also.join(", ")));
        }
        g.body.open("if (active)");
        g.prefetch_keys = true;
        let (kv, any_null) = key_values(g, keys)?;
        // Every key is loaded before the first test: the loads are in flight together.
        let mut tests = vec![(b, kv[0].clone(), c_type(&keys[0].ty()), (min, bits))];
        let mut nulls: Vec<String> = any_null.into_iter().collect();
        for (e, key, bitmap) in &r.early {
            let (ekv, e_null) = key_values(g, std::slice::from_ref(key))?;
            tests.push((*e, ekv[0].clone(), c_type(&key.ty()), *bitmap));
            nulls.extend(e_null);
        }
        g.prefetch_keys = false;
        if !nulls.is_empty() {
            g.body.line(format!("active = !({});", nulls.join(" || ")));
        }
        for (t, kv, ct, (min, bits)) in tests {
            let (offset, has_key) = bitmap_test(g, t, &kv, ct, min, bits);
            g.body.open("");
            g.body.line(offset);
            g.body.line(format!("active = active && {has_key};"));
            g.body.close();
        }
        g.body.close();
        crate::lane_refill::consume(g, r.threshold, r.activity, &r.live);
        hint.bitmap = None;
        for (e, _, _) in &r.early {
            if let Some(h) = g.builds.iter_mut().find(|h| h.id == *e) {
                h.bitmap = None;
            }
        }
    }
    g.body.line(format!("// ---- HashProbe #{b} keys=[{}] ({how}; {table}) ----", key_text.join(", ")));
    let mask = g.param(Param::Build { id: b, part: BuildPart::Mask }, "const uint32_t");
    let gid = format!("hp{b}_gid");
    g.body.line(format!("int {gid} = -1;"));
    g.body.open("if (active)");
    let any_null = if let Some(r) = replica {
        // The rows' slots were placed at load time; the block's table maps each slot to
        // the group its key finds, so the key itself is not loaded.
        let rt = g.replicated[r].clone();
        crate::check_replicated_key(keys, &rt)?;
        let ct = c_type(&keys[0].ty());
        let slots = g.param(Param::Replica { index: r, part: ReplicaPart::RowSlots }, "const uint16_t* __restrict__");
        let values =
            g.param(Param::Replica { index: r, part: ReplicaPart::SlotValues }, &format!("const {ct}* __restrict__"));
        let codes = g.param(Param::Replica { index: r, part: ReplicaPart::SlotCodes }, "const uint16_t* __restrict__");
        let (n, distinct) = (rt.summary.slots, rt.summary.values);
        let mut fill = Emitter { indent: g.pre.indent + 1, ..Default::default() };
        let key = Value::not_null("key_");
        emit_table_lookup(g, &mut fill, b, &keys[0], &key, hint, direct, false, &mask, "g_")?;
        g.pre.line(format!("// HashProbe #{b}: {rt}"));
        g.pre.line(
            "// filled per block: each value's first copy (slot = its code) by a lookup, the other copies from it",
        );
        g.pre.line(format!("__shared__ int rp{r}_sm[{n}];"));
        g.pre.open(format!("for (uint32_t s_ = threadIdx.x; s_ < {distinct}u; s_ += blockDim.x)"));
        g.pre.line(format!("const {ct} key_ = {values}[s_];"));
        g.pre.line("int g_ = -1;");
        g.pre.code.push_str(&fill.code);
        g.pre.line(format!("rp{r}_sm[s_] = g_;"));
        g.pre.close();
        g.pre.line("__syncthreads();");
        g.pre.line(format!("for (uint32_t s_ = {distinct}u + threadIdx.x; s_ < {n}u; s_ += blockDim.x) rp{r}_sm[s_] = rp{r}_sm[{codes}[s_]];"));
        g.pre.line("__syncthreads();");
        g.body.line(format!("{gid} = rp{r}_sm[{slots}[row]];"));
        None
    } else {
        let (kv, any_null) = key_values(g, keys)?;
        if let Some(any_null) = &any_null {
            g.body.open(format!("if (!({any_null}))"));
        }
        let mut lookup = Emitter { indent: g.body.indent, ..Default::default() };
        match entry {
            Some(_) => emit_table_lookup(g, &mut lookup, b, &keys[0], &kv[0], hint, direct, in_smem, &mask, &gid)?,
            None => {
                let slots = g.param(Param::Build { id: b, part: BuildPart::Slots }, "const int* __restrict__");
                let mut arrays = vec![];
                for (k, e) in keys.iter().enumerate() {
                    let ct = c_type(&e.ty());
                    let values =
                        g.param(Param::Build { id: b, part: BuildPart::Key(k) }, &format!("const {ct}* __restrict__"));
                    arrays.push(KeyArrays { values, validity: None, ty: e.ty() });
                }
                emit_lookup(&mut lookup, &kv, &arrays, &slots, &mask, &gid);
            }
        }
        g.body.code.push_str(&lookup.code);
        any_null
    };
    if any_null.is_some() {
        g.body.close();
    }
    // An anti join keeps rows without a match, NULL keys included (they match nothing); a
    // left outer join keeps every row. With a residual the matches decide (see residual()).
    if !left && kind != JoinKind::Mark && !(matches!(kind, JoinKind::Semi | JoinKind::Anti) && residual) {
        g.body.line(format!("active = {gid} {} 0;", if kind == JoinKind::Anti { "<" } else { ">=" }));
    }
    g.body.close();
    if matches!(kind, JoinKind::Semi | JoinKind::Anti) {
        return Ok(refilled);
    }
    if kind == JoinKind::Mark {
        // With a residual, the matches decide (see residual()).
        if !residual {
            g.body.line(format!("const bool hp{b}_mark = {gid} >= 0;"));
            g.push_computed_column(Value::not_null(format!("hp{b}_mark")), gpusql_common::DataType::Boolean);
        }
        return Ok(refilled);
    }
    // Whether the row being processed has a build row (always, but for left outer joins).
    let matched = format!("hp{b}_m");

    let pos = format!("hp{b}_pos");
    if !multi {
        // Unique keys: every group has one row and the payload is in group order.
        // (Not const: a Lane Refill after this probe reassigns them.)
        g.body.line(format!("uint32_t {pos} = {gid} >= 0 ? (uint32_t){gid} : 0u;"));
        g.body.line(format!("bool {matched} = {gid} >= 0;"));
    } else {
        let offsets = g.param(Param::Build { id: b, part: BuildPart::Offsets }, "const uint32_t* __restrict__");
        let counts = g.param(Param::Build { id: b, part: BuildPart::Counts }, "const uint32_t* __restrict__");
        let (beg, end, has) = (format!("hp{b}_beg"), format!("hp{b}_end"), format!("hp{b}_has"));
        g.body.line(format!("uint32_t {beg} = 0, {end} = 0;"));
        if left {
            // A row without a match goes through the loop once, with NULL build columns.
            g.body.line(format!("if (active) {{ if ({gid} >= 0) {{ {beg} = {offsets}[{gid}]; {end} = {beg} + {counts}[{gid}]; }} else {{ {beg} = 0; {end} = 1; }} }}"));
        } else {
            g.body.line(format!("if (active) {{ {beg} = {offsets}[{gid}]; {end} = {beg} + {counts}[{gid}]; }}"));
        }
        g.body.line(format!("const bool {has} = active;"));
        g.body.line(format!("const bool hp{b}_found = {gid} >= 0;"));
        match mode {
            MultiMatch::PerLane => {
                let cond = format!("{has} && {beg} < {end}");
                let any = if g.block_sync {
                    format!("__syncthreads_or({cond})")
                } else {
                    format!("__any_sync(FULL_MASK, {cond})")
                };
                g.body.open(format!("while ({any})"));
                g.open_loops += 1;
                g.body.line(format!("bool active = {cond};"));
                g.body.line(format!("const uint32_t {pos} = {beg};"));
                g.body.line(format!("if (active) {beg}++;"));
                g.body.line(format!("const bool {matched} = hp{b}_found;"));
            }
            MultiMatch::PushDown => {
                let (todo, leader) = (format!("hp{b}_todo"), format!("hp{b}_leader"));
                g.body.open("while (true)");
                g.open_loops += 1;
                g.body.line(format!("const uint32_t {todo} = __ballot_sync(FULL_MASK, {has} && {beg} < {end});"));
                if g.block_sync {
                    g.body.line(format!("if (!__syncthreads_or({todo} != 0)) break;"));
                } else {
                    g.body.line(format!("if ({todo} == 0) break;"));
                }
                g.body.line(format!("const int {leader} = {todo} ? __ffs({todo}) - 1 : 0;"));
                g.body.line(format!("const uint32_t hp{b}_lb = __shfl_sync(FULL_MASK, {beg}, {leader}), hp{b}_le = __shfl_sync(FULL_MASK, {end}, {leader});"));
                g.body.line(format!("if ((int)(threadIdx.x & 31) == {leader}) {beg} += 32;"));
                g.body.line(format!("const uint32_t {pos} = hp{b}_lb + (threadIdx.x & 31);"));
                g.body.line(format!("bool active = {todo} != 0 && {pos} < hp{b}_le;"));
                g.body.line(format!("const bool {matched} = bcast(hp{b}_found, {leader});"));
                // The leader's row, for every lane: loaded values, and the indices that
                // later (lazy) loads read.
                g.body.line("// broadcast the leader lane's row to the warp");
                let mut row = g.row.clone();
                for (i, v) in row.iter_mut().enumerate() {
                    if g.pending_loads.get(i).is_some_and(|l| l.is_some()) {
                        continue;
                    }
                    let ty = c_type(&g.row_types[i]);
                    let nv = format!("{}_b{b}", v.v);
                    g.body.line(format!("const {ty} {nv} = bcast({}, {leader});", v.v));
                    v.v = nv;
                    if !v.is_never_null() {
                        let nn = format!("{}_b{b}", v.null);
                        g.body.line(format!("const bool {nn} = bcast({}, {leader});", v.null));
                        v.null = nn;
                    }
                }
                g.row = row;
                for (name, ty) in g.index_vars.clone() {
                    g.body.line(format!("const {ty} {name}_b{b}_ = bcast({name}, {leader});"));
                    g.body.line(format!("const {ty} {name} = {name}_b{b}_;"));
                }
            }
        }
    }
    g.index_vars.push((pos.clone(), "uint32_t"));
    g.index_vars.push((matched.clone(), "bool"));

    // The build row's columns join the row; each is loaded by its first reader.
    for (i, f) in build_schema.fields.iter().enumerate() {
        let ct = c_type(&f.ty);
        let v = format!("j{b}_{i}");
        g.body.line(format!("{ct} {v}{};", if ct == "Str" { " = make_str(\"\", 0)" } else { " = 0" }));
        let col = g.param(
            Param::Build { id: b, part: BuildPart::Payload { column: i, part: Part::Values } },
            &format!("const {ct}* __restrict__"),
        );
        let mut load = format!("{v} = {col}[{pos}];");
        let null = if f.nullable {
            g.body.line(format!("bool {v}_null = true;"));
            let valid = g.param(
                Param::Build { id: b, part: BuildPart::Payload { column: i, part: Part::Validity } },
                "const uint8_t* __restrict__",
            );
            load = format!("{v}_null = !{matched} || {valid}[{pos}] == 0; if (!{v}_null) {{ {load} }}");
            format!("{v}_null")
        } else if left {
            g.body.line(format!("bool {v}_null = true;"));
            load = format!("{v}_null = !{matched}; if ({matched}) {{ {load} }}");
            format!("{v}_null")
        } else {
            "false".to_string()
        };
        g.push_loaded_column(Value { v, null }, f.ty, load, None, None);
    }
    Ok(refilled)
}

/// The test of table #b's key bitmap for key value `kv` (of C type `ct`): the statement
/// computing the bit offset `bd_`, and the condition "the table has this key".
fn bitmap_test(g: &mut PipelineGen, b: usize, kv: &Value, ct: &str, min: i64, bits: u64) -> (String, String) {
    let bitmap = g.param(Param::Build { id: b, part: BuildPart::Bitmap }, "const uint32_t* __restrict__");
    // 32-bit keys: the offset in 32-bit arithmetic (a test runs for every row; the 64-bit
    // form took twice the instructions). The difference wraps modulo 2^32; a key below
    // `min` then lands at or above `bits` as long as min <= 2^31 - bits (the lowest key,
    // -2^31, is then at least 2^32 - bits below min).
    let narrow =
        matches!(ct, "int32_t" | "int16_t" | "int8_t") && min >= i32::MIN as i64 && min <= (1i64 << 31) - bits as i64;
    let offset = match narrow {
        true => format!("const uint32_t bd_ = (uint32_t)({}) - (uint32_t)({min});", kv.v),
        false => format!("const uint64_t bd_ = (uint64_t)((int64_t)({}) - ({min}ll));", kv.v),
    };
    (
        offset,
        format!("bd_ < {bits}u{} && ((__ldg(&{bitmap}[bd_ >> 5]) >> (bd_ & 31)) & 1u)", if narrow { "" } else { "ll" }),
    )
}

/// Emits into `out` the lookup of the single integer key value `kv` in the finished table
/// `b` ({key, group} entries, copied into shared memory with `in_smem`, or direct-mapped),
/// leaving the group id in `gid` (-1: no match).
#[allow(clippy::too_many_arguments)]
fn emit_table_lookup(
    g: &mut PipelineGen,
    out: &mut Emitter,
    b: usize,
    key: &Expr,
    kv: &Value,
    hint: BuildHint,
    direct: Option<i64>,
    in_smem: bool,
    mask: &str,
    gid: &str,
) -> Result<()> {
    let Some((ety, _)) = entry_type(c_type(&key.ty())) else {
        return Err(gpusql_common::Error::exec(format!("probe table #{b}: key {key} has no entry layout")));
    };
    if let Some(min) = direct {
        // Dense keys: the group id sits at key - min; one load, no hashing.
        let table = g.param(Param::Build { id: b, part: BuildPart::Direct }, "const int* __restrict__");
        out.line(format!("const int64_t d_ = (int64_t)({}) - ({min}ll);", kv.v));
        out.line(format!("if (d_ >= 0 && d_ < {}ll) {gid} = __ldg(&{table}[d_]);", hint.slots));
        return Ok(());
    }
    let entries = g.param(Param::Build { id: b, part: BuildPart::Entries }, &format!("const {ety}* __restrict__"));
    let read = if in_smem {
        // Small tables: one copy per block in shared memory, filled before the loop.
        let n = hint.slots;
        g.pre.line(format!("// HashProbe #{b}: the {n}-slot table is copied into shared memory"));
        g.pre.line(format!("__shared__ {ety} ht{b}_sm[{n}];"));
        g.pre.line(format!("for (uint32_t i = threadIdx.x; i < {n}u; i += blockDim.x) ht{b}_sm[i] = {entries}[i];"));
        g.pre.line("__syncthreads();");
        format!("ht{b}_sm[slot_]")
    } else {
        format!("__ldg(&{entries}[slot_])")
    };
    let arrays = [KeyArrays { values: String::new(), validity: None, ty: key.ty() }];
    if let Some((min, bits)) = hint.bitmap {
        // The key bitmap first: keys the table lacks (most, behind a filtered dimension)
        // never hash or touch the table.
        let (offset, has_key) = bitmap_test(g, b, kv, c_type(&key.ty()), min, bits);
        out.line(offset);
        out.open(format!("if ({has_key})"));
    } else {
        out.open("");
    }
    crate::hash_table::emit_hash(out, std::slice::from_ref(kv), &arrays);
    out.line(format!("uint32_t slot_ = (uint32_t)h_ & {mask};"));
    out.open(format!("for (uint32_t probe_ = 0; probe_ <= {mask}; probe_++)"));
    out.line(format!("const {ety} e_ = {read};"));
    out.line("if (e_.y < 0) break;");
    out.line(format!("if (e_.x == {}) {{ {gid} = (int)e_.y; break; }}", kv.v));
    out.line(format!("slot_ = (slot_ + 1) & {mask};"));
    out.close();
    out.close();
    Ok(())
}

/// The residual condition of a semi/anti/mark probe: a key match counts only if the condition
/// holds over the probe row followed by the match's build row. Each lane walks its key's
/// match range and stops at the first match that satisfies it (NULL does not).
pub fn residual(g: &mut PipelineGen, b: usize, build_schema: &Schema, kind: JoinKind, cond: &Expr) -> Result<()> {
    g.body.line(format!("// residual of HashProbe #{b}: {cond}"));
    let width = g.row.len();
    // The probe row's columns it reads are loaded for every active row (later operators
    // rely on them being loaded).
    let mut cols = vec![];
    cond.columns(&mut cols);
    if cols.iter().any(|c| g.pending_loads.get(*c).is_some_and(|l| l.is_some())) {
        g.body.open("if (active)");
        g.load_columns(&[cond]);
        g.body.close();
    }
    let gid = format!("hp{b}_gid");
    let any = format!("hp{b}_any");
    g.body.line(format!("bool {any} = false;"));
    g.body.open(format!("if (active && {gid} >= 0)"));
    if g.builds.iter().find(|h| h.id == b).is_some_and(|h| !h.multi) {
        // Unique keys: the key's one row sits at its group id (the build kept no offsets).
        g.body.line(format!("const uint32_t hp{b}_rb = (uint32_t){gid}, hp{b}_re = hp{b}_rb + 1u;"));
    } else {
        let offsets = g.param(Param::Build { id: b, part: BuildPart::Offsets }, "const uint32_t* __restrict__");
        let counts = g.param(Param::Build { id: b, part: BuildPart::Counts }, "const uint32_t* __restrict__");
        g.body.line(format!("const uint32_t hp{b}_rb = {offsets}[{gid}], hp{b}_re = hp{b}_rb + {counts}[{gid}];"));
    }
    g.body.open(format!("for (uint32_t hp{b}_r = hp{b}_rb; hp{b}_r < hp{b}_re; hp{b}_r++)"));
    cols.sort_unstable();
    cols.dedup();
    let mut row = g.row.clone();
    row.extend(build_schema.fields.iter().map(|_| Value::not_null("0")));
    for c in cols.into_iter().filter(|c| *c >= width) {
        let i = c - width;
        let f = &build_schema.fields[i];
        let ct = c_type(&f.ty);
        let v = format!("r{b}_{i}");
        let col = g.param(
            Param::Build { id: b, part: BuildPart::Payload { column: i, part: Part::Values } },
            &format!("const {ct}* __restrict__"),
        );
        g.body.line(format!("const {ct} {v} = {col}[hp{b}_r];"));
        row[c] = if f.nullable {
            let valid = g.param(
                Param::Build { id: b, part: BuildPart::Payload { column: i, part: Part::Validity } },
                "const uint8_t* __restrict__",
            );
            g.body.line(format!("const bool {v}_null = {valid}[hp{b}_r] == 0;"));
            Value { v: v.clone(), null: format!("{v}_null") }
        } else {
            Value::not_null(v)
        };
    }
    let r = gen(cond, &row, &mut g.body)?;
    g.body.line(format!("if (!({}) && ({})) {{ {any} = true; break; }}", r.null, r.v));
    g.body.close();
    g.body.close();
    if kind == JoinKind::Mark {
        g.body.line(format!("const bool hp{b}_mark = {any};"));
        g.push_computed_column(Value::not_null(format!("hp{b}_mark")), gpusql_common::DataType::Boolean);
        return Ok(());
    }
    g.body.line(format!("active = active && {}{any};", if kind == JoinKind::Anti { "!" } else { "" }));
    Ok(())
}
