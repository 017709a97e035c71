//! HashProbe: an operator fused into the probe side's pipeline; it looks the row's key up
//! in a finished hash table (HashBuild). Keys known to be unique take a single-match path.
//! For repeating keys a row continues once per match: with push-down parallelism
//! ([Funke & Teubner 2020] §3) the warp takes one lane's match range at a time, broadcasts
//! that lane's row with shuffles and lets all 32 lanes process 32 of its matches per step;
//! per-lane, each lane walks its own range (the naive form, kept to measure the gain).
//! A semi/anti/mark probe with a residual condition (Q21) walks the key's matches per lane
//! until one satisfies it.

use super::common::{check_replicated_key, key_values, show_keys};
use super::lane_refill::LaneRefill;
use super::Operator;
use crate::emit::Emitter;
use crate::expr::gen;
use crate::hash_table::{emit_hash, emit_lookup, KeyArrays};
use crate::kernel_builder::KernelBuilder;
use crate::spec::{entry_type, BuildHint, BuildPart, Param, Part, ReplicaPart, SMEM_TABLES_BUDGET, SMEM_TABLE_BYTES};
use crate::types::c_type;
use crate::value::Value;
use gpusql_common::{DataType, Error, Result, Schema};
use gpusql_plan::{BandSearch, Expr, JoinKind, MultiMatch, PipelineOp, ReplicaUser};

/// Probes finished hash table `build` with `keys`.
pub struct HashProbe<'a> {
    pub build: usize,
    pub keys: &'a [Expr],
    pub build_schema: &'a Schema,
    pub mode: MultiMatch,
    pub kind: JoinKind,
    pub residual: Option<&'a Expr>,
    /// The Lane Refill planned right after this probe. Where the table has a key bitmap it
    /// is placed between the bitmap test and the lookup instead (`refill_inside`): the
    /// bitmap is exact, so the rows it keeps all match, and the lookup then runs on full
    /// warps rather than on the ~1 in 5 lanes whose key passed. The key bitmaps of
    /// `refill.early` are tested there too (their own probes then skip the test).
    pub refill: Option<RefillPoint>,
    /// A band join: the candidate rows are the range binary searches find in the sorted
    /// band table (`gpusql_plan::band`), not a key's matches.
    pub band: Option<&'a BandSearch>,
}

/// How the probe reaches its table's group ids.
struct TableAccess {
    hint: BuildHint,
    /// Dense keys: the table is direct-mapped from this minimum.
    direct: Option<i64>,
    /// The table's {key, group} entries are copied into shared memory.
    in_smem: bool,
    /// The table's slot mask parameter.
    mask: String,
}

impl Operator for HashProbe<'_> {
    fn consume(&self, k: &mut KernelBuilder) -> Result<()> {
        if let Some(band) = self.band {
            return self.consume_band(k, band);
        }
        let (b, kind) = (self.build, self.kind);
        let mut hint = k.build_hint(b).unwrap_or(BuildHint { generic: false, ..BuildHint::generic(b) });
        // Semi/anti probes only test for a match: never an expansion loop.
        let multi = hint.multi && matches!(kind, JoinKind::Inner | JoinKind::Left);
        let entry = match self.keys {
            [key] if !hint.generic => entry_type(c_type(&key.ty())),
            _ => None,
        };
        let replica = k.replica_of(ReplicaUser::Probe(b));
        let bytes = entry.map_or(usize::MAX, |(_, size)| hint.slots.saturating_mul(size));
        let in_smem = !k.has_replicated_tables()
            && hint.shared_memory
            && hint.direct_min.is_none()
            && bytes <= SMEM_TABLE_BYTES
            && k.smem_tables() + bytes <= SMEM_TABLES_BUDGET;
        if in_smem {
            k.claim_smem_table(bytes);
        }
        let direct = hint.direct_min.filter(|_| entry.is_some());
        let key_text = show_keys(k, self.keys);
        if self.refill_inside(k) {
            self.bitmaps_then_refill(k, &key_text, hint)?;
            hint.bitmap = None;
        }
        let how = match (multi, self.mode) {
            _ if kind == JoinKind::Semi => "semi join: keeps rows with a match",
            _ if kind == JoinKind::Anti => "anti join: keeps rows without a match",
            _ if kind == JoinKind::Mark => "mark join: keeps every row, appends whether it has a match",
            (false, _) => "unique keys: single match",
            (true, MultiMatch::PushDown) => "multi-match: push-down parallelism",
            (true, MultiMatch::PerLane) => "multi-match: per lane",
        };
        let table = match (entry, in_smem) {
            _ if replica.is_some() => "bank-replicated table in shared memory",
            _ if direct.is_some() => "direct-mapped by key",
            _ if hint.generic => "slots + key arrays, any table: generated before the build ran",
            (Some(_), true) => "{key, group} entries in shared memory",
            (Some(_), false) => "{key, group} entries",
            _ => "slots + key arrays",
        };
        k.body().line(format!("// ---- HashProbe #{b} keys=[{key_text}] ({how}; {table}) ----"));
        let mask_part = if hint.generic { BuildPart::SlotMask } else { BuildPart::Mask };
        let mask = k.param(Param::Build { id: b, part: mask_part }, "const uint32_t");
        let access = TableAccess { hint, direct, in_smem, mask };
        self.find_group(k, replica, &access)?;
        match kind {
            JoinKind::Semi | JoinKind::Anti => {}
            JoinKind::Mark => {
                // With a residual, the matches decide (see residual()).
                if self.residual.is_none() {
                    k.body().line(format!("const bool hp{b}_mark = hp{b}_gid >= 0;"));
                    k.push_computed_column(Value::not_null(format!("hp{b}_mark")), DataType::Boolean);
                }
            }
            JoinKind::Inner | JoinKind::Left => {
                let (pos, matched) = self.expand(k, multi);
                self.append_build_columns(k, &pos, &matched);
            }
        }
        if let Some(cond) = self.residual {
            self.test_residual(k, cond)?;
        }
        Ok(())
    }
}

impl HashProbe<'_> {
    /// Whether the Lane Refill after this probe goes inside it, between its key bitmap test
    /// and its lookup (then the pipeline skips the refill operator that follows). Keys
    /// that are columns stay in top-level variables across the refill.
    pub fn refill_inside(&self, k: &KernelBuilder) -> bool {
        self.refill.is_some() && testable_bitmap(k, self.build, self.keys, self.kind).is_some() && k.at_loop_top()
    }

    /// The key bitmap tests (this probe's and `refill.early`'s) that rows whose key a
    /// table lacks fail before the Lane Refill, then the refill.
    fn bitmaps_then_refill(&self, k: &mut KernelBuilder, key_text: &str, hint: BuildHint) -> Result<()> {
        let (Some(r), Some((min, bits))) = (&self.refill, hint.bitmap) else { return Ok(()) };
        let b = self.build;
        k.body().line(format!("// ---- HashProbe #{b} keys=[{key_text}]: key bitmap first (rows whose key the table lacks drop out before the Lane Refill and the lookup) ----"));
        if !r.early.is_empty() {
            let also: Vec<String> = r.early.iter().map(|(e, key, _)| format!("#{e} [{key}]")).collect();
            k.body().line(format!("// with the key bitmaps of the later probes {} (most rows reach them: their keys are loaded with this one, all tests before one refill)", also.join(", ")));
        }
        k.body().open("if (active)");
        k.set_prefetch_keys(true);
        let (kv, any_null) = key_values(k, self.keys)?;
        // Every key is loaded before the first test: the loads are in flight together.
        let mut tests = vec![(b, kv[0].clone(), c_type(&self.keys[0].ty()), (min, bits))];
        let mut nulls: Vec<String> = any_null.into_iter().collect();
        for (e, key, bitmap) in &r.early {
            let (ekv, e_null) = key_values(k, std::slice::from_ref(key))?;
            tests.push((*e, ekv[0].clone(), c_type(&key.ty()), *bitmap));
            nulls.extend(e_null);
        }
        k.set_prefetch_keys(false);
        if !nulls.is_empty() {
            k.body().line(format!("active = !({});", nulls.join(" || ")));
        }
        for (t, kv, ct, (min, bits)) in tests {
            let (offset, has_key) = bitmap_test(k, t, &kv, ct, min, bits);
            k.body().open("");
            k.body().line(offset);
            k.body().line(format!("active = active && {has_key};"));
            k.body().close();
        }
        k.body().close();
        LaneRefill { threshold: r.threshold, live: r.live.clone() }.consume(k)?;
        for (e, _, _) in &r.early {
            k.forget_bitmap(*e);
        }
        Ok(())
    }

    /// Finds the row's group in the table (`hp<b>_gid`, -1: none) and drops the rows the
    /// join kind drops.
    fn find_group(&self, k: &mut KernelBuilder, replica: Option<usize>, access: &TableAccess) -> Result<()> {
        let (b, kind) = (self.build, self.kind);
        let gid = format!("hp{b}_gid");
        k.body().line(format!("int {gid} = -1;"));
        k.body().open("if (active)");
        let any_null = match replica {
            Some(r) => {
                self.replica_lookup(k, r, access, &gid)?;
                None
            }
            None => self.key_lookup(k, access, &gid)?,
        };
        if any_null.is_some() {
            k.body().close();
        }
        // An anti join keeps rows without a match, NULL keys included (they match nothing); a
        // left outer join keeps every row. With a residual the matches decide (see residual()).
        let residual = self.residual.is_some();
        if kind != JoinKind::Left
            && kind != JoinKind::Mark
            && !(matches!(kind, JoinKind::Semi | JoinKind::Anti) && residual)
        {
            k.body().line(format!("active = {gid} {} 0;", if kind == JoinKind::Anti { "<" } else { ">=" }));
        }
        k.body().close();
        Ok(())
    }

    /// The lookup through a bank-replicated table: the rows' slots were placed at load
    /// time; the block's table maps each slot to the group its key finds, so the key
    /// itself is not loaded.
    fn replica_lookup(&self, k: &mut KernelBuilder, r: usize, access: &TableAccess, gid: &str) -> Result<()> {
        let b = self.build;
        let rt = k.replicated(r).clone();
        check_replicated_key(self.keys, &rt)?;
        let ct = c_type(&self.keys[0].ty());
        let slots = k.param(Param::Replica { index: r, part: ReplicaPart::RowSlots }, "const uint16_t* __restrict__");
        let values =
            k.param(Param::Replica { index: r, part: ReplicaPart::SlotValues }, &format!("const {ct}* __restrict__"));
        let codes = k.param(Param::Replica { index: r, part: ReplicaPart::SlotCodes }, "const uint16_t* __restrict__");
        let (n, distinct) = (rt.summary.slots, rt.summary.values);
        let mut fill = k.pre().fork(1);
        let key = Value::not_null("key_");
        let in_fill = TableAccess { in_smem: false, mask: access.mask.clone(), ..*access };
        in_fill.emit_lookup(k, &mut fill, b, &self.keys[0], &key, "g_")?;
        let pre = k.pre();
        pre.line(format!("// HashProbe #{b}: {rt}"));
        pre.line(
            "// filled per block: each value's first copy (slot = its code) by a lookup, the other copies from it",
        );
        pre.line(format!("__shared__ int rp{r}_sm[{n}];"));
        pre.open(format!("for (uint32_t s_ = threadIdx.x; s_ < {distinct}u; s_ += blockDim.x)"));
        pre.line(format!("const {ct} key_ = {values}[s_];"));
        pre.line("int g_ = -1;");
        pre.append(fill);
        pre.line(format!("rp{r}_sm[s_] = g_;"));
        pre.close();
        pre.line("__syncthreads();");
        pre.line(format!("for (uint32_t s_ = {distinct}u + threadIdx.x; s_ < {n}u; s_ += blockDim.x) rp{r}_sm[s_] = rp{r}_sm[{codes}[s_]];"));
        pre.line("__syncthreads();");
        k.body().line(format!("{gid} = rp{r}_sm[{slots}[row]];"));
        Ok(())
    }

    /// The lookup of the row's key values; returns the "some key is NULL" condition, whose
    /// block (skipping the lookup) the caller closes.
    fn key_lookup(&self, k: &mut KernelBuilder, access: &TableAccess, gid: &str) -> Result<Option<String>> {
        let b = self.build;
        let (kv, any_null) = key_values(k, self.keys)?;
        if let Some(any_null) = &any_null {
            k.body().open(format!("if (!({any_null}))"));
        }
        let mut lookup = k.body().fork(0);
        match self.keys {
            [key] if entry_type(c_type(&key.ty())).is_some() => {
                access.emit_lookup(k, &mut lookup, b, key, &kv[0], gid)?
            }
            _ => access.emit_key_arrays_lookup(k, &mut lookup, b, self.keys, &kv, gid),
        }
        k.body().append(lookup);
        Ok(any_null)
    }

    /// The build row(s) the row continues with: its position in the payload (`hp<b>_pos`)
    /// and whether it has one (`hp<b>_m`; always, but for left outer joins). Repeating
    /// keys open an expansion loop over the matches (per lane, or push-down parallelism).
    pub(super) fn expand(&self, k: &mut KernelBuilder, multi: bool) -> (String, String) {
        let b = self.build;
        let gid = format!("hp{b}_gid");
        let matched = format!("hp{b}_m");
        let pos = format!("hp{b}_pos");
        if !multi {
            // Unique keys: every group has one row and the payload is in group order.
            // (Not const: a Lane Refill after this probe reassigns them.)
            k.body().line(format!("uint32_t {pos} = {gid} >= 0 ? (uint32_t){gid} : 0u;"));
            k.body().line(format!("bool {matched} = {gid} >= 0;"));
        } else {
            let offsets = k.param(Param::Build { id: b, part: BuildPart::Offsets }, "const uint32_t* __restrict__");
            let counts = k.param(Param::Build { id: b, part: BuildPart::Counts }, "const uint32_t* __restrict__");
            let (beg, end, has) = (format!("hp{b}_beg"), format!("hp{b}_end"), format!("hp{b}_has"));
            k.body().line(format!("uint32_t {beg} = 0, {end} = 0;"));
            if self.band.is_some() {
                k.body().line(format!("if (active) {{ {beg} = hp{b}_bb; {end} = hp{b}_be; }}"));
            } else if self.kind == JoinKind::Left {
                // A row without a match goes through the loop once, with NULL build columns.
                k.body().line(format!("if (active) {{ if ({gid} >= 0) {{ {beg} = {offsets}[{gid}]; {end} = {beg} + {counts}[{gid}]; }} else {{ {beg} = 0; {end} = 1; }} }}"));
            } else {
                k.body().line(format!("if (active) {{ {beg} = {offsets}[{gid}]; {end} = {beg} + {counts}[{gid}]; }}"));
            }
            k.body().line(format!("const bool {has} = active;"));
            k.body().line(format!("const bool hp{b}_found = {gid} >= 0;"));
            match self.mode {
                MultiMatch::PerLane => {
                    let cond = format!("{has} && {beg} < {end}");
                    let any = if k.block_sync() {
                        format!("__syncthreads_or({cond})")
                    } else {
                        format!("__any_sync(FULL_MASK, {cond})")
                    };
                    k.open_expansion_loop(format!("while ({any})"));
                    k.body().line(format!("bool active = {cond};"));
                    k.body().line(format!("const uint32_t {pos} = {beg};"));
                    k.body().line(format!("if (active) {beg}++;"));
                    k.body().line(format!("const bool {matched} = hp{b}_found;"));
                }
                MultiMatch::PushDown => self.push_down_loop(k, [&beg, &end, &has, &pos, &matched]),
            }
        }
        k.push_index_var(pos.clone(), "uint32_t");
        k.push_index_var(matched.clone(), "bool");
        (pos, matched)
    }

    /// Push-down parallelism: the warp takes one lane's match range at a time and all 32
    /// lanes process 32 of its matches per step, with the leader lane's row broadcast.
    fn push_down_loop(&self, k: &mut KernelBuilder, vars: [&str; 5]) {
        let [beg, end, has, pos, matched] = vars;
        let b = self.build;
        let (todo, leader) = (format!("hp{b}_todo"), format!("hp{b}_leader"));
        k.open_expansion_loop("while (true)".into());
        k.body().line(format!("const uint32_t {todo} = __ballot_sync(FULL_MASK, {has} && {beg} < {end});"));
        if k.block_sync() {
            k.body().line(format!("if (!__syncthreads_or({todo} != 0)) break;"));
        } else {
            k.body().line(format!("if ({todo} == 0) break;"));
        }
        let body = k.body();
        body.line(format!("const int {leader} = {todo} ? __ffs({todo}) - 1 : 0;"));
        body.line(format!("const uint32_t hp{b}_lb = __shfl_sync(FULL_MASK, {beg}, {leader}), hp{b}_le = __shfl_sync(FULL_MASK, {end}, {leader});"));
        body.line(format!("if ((int)(threadIdx.x & 31) == {leader}) {beg} += 32;"));
        body.line(format!("const uint32_t {pos} = hp{b}_lb + (threadIdx.x & 31);"));
        body.line(format!("bool active = {todo} != 0 && {pos} < hp{b}_le;"));
        body.line(format!("const bool {matched} = bcast(hp{b}_found, {leader});"));
        // The leader's row, for every lane: loaded values, and the indices that later
        // (lazy) loads read.
        body.line("// broadcast the leader lane's row to the warp");
        for i in 0..k.width() {
            if k.is_pending(i) {
                continue;
            }
            let mut v = k.row()[i].clone();
            let ty = c_type(&k.row_type(i));
            let nv = format!("{}_b{b}", v.v);
            k.body().line(format!("const {ty} {nv} = bcast({}, {leader});", v.v));
            v.v = nv;
            if !v.is_never_null() {
                let nn = format!("{}_b{b}", v.null);
                k.body().line(format!("const bool {nn} = bcast({}, {leader});", v.null));
                v.null = nn;
            }
            k.rename(i, v);
        }
        for (name, ty) in k.index_vars() {
            k.body().line(format!("const {ty} {name}_b{b}_ = bcast({name}, {leader});"));
            k.body().line(format!("const {ty} {name} = {name}_b{b}_;"));
        }
    }

    /// The build row's columns join the row; each is loaded by its first reader.
    pub(super) fn append_build_columns(&self, k: &mut KernelBuilder, pos: &str, matched: &str) {
        let b = self.build;
        let left = self.kind == JoinKind::Left;
        for (i, f) in self.build_schema.fields.iter().enumerate() {
            let ct = c_type(&f.ty);
            let v = format!("j{b}_{i}");
            k.body().line(format!("{ct} {v}{};", crate::types::c_init(ct)));
            let col = k.param(
                Param::Build { id: b, part: BuildPart::Payload { column: i, part: Part::Values } },
                &format!("const {ct}* __restrict__"),
            );
            let mut load = format!("{v} = {col}[{pos}];");
            let null = if f.nullable {
                k.body().line(format!("bool {v}_null = true;"));
                let valid = k.param(
                    Param::Build { id: b, part: BuildPart::Payload { column: i, part: Part::Validity } },
                    "const uint8_t* __restrict__",
                );
                load = format!("{v}_null = !{matched} || {valid}[{pos}] == 0; if (!{v}_null) {{ {load} }}");
                format!("{v}_null")
            } else if left {
                k.body().line(format!("bool {v}_null = true;"));
                load = format!("{v}_null = !{matched}; if ({matched}) {{ {load} }}");
                format!("{v}_null")
            } else {
                "false".to_string()
            };
            k.push_loaded_column(Value { v, null }, f.ty, load, None, None);
        }
    }
}

/// A Lane Refill planned right after a probe: its threshold, the row columns live after
/// it, and the later probes whose key bitmaps may be tested before it
/// (`early_bitmap_probes`: build id, key, bitmap).
pub struct RefillPoint {
    pub threshold: u32,
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
fn testable_bitmap(k: &KernelBuilder, b: usize, keys: &[Expr], kind: JoinKind) -> Option<(i64, u64)> {
    let hint = k.build_hint(b)?;
    let [key @ Expr::Column { .. }] = keys else { return None };
    let entry = entry_type(c_type(&key.ty()));
    let replica = k.replica_of(ReplicaUser::Probe(b)).is_some();
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
pub fn early_bitmap_probes(k: &KernelBuilder, rest: &[PipelineOp]) -> Vec<(usize, Expr, (i64, u64))> {
    let mut out = vec![];
    let mut reach = 1.0;
    for op in rest {
        match op {
            PipelineOp::LaneRefill { activity, .. } => reach *= activity,
            PipelineOp::Filter(_) => {}
            PipelineOp::Project { .. } => break,
            PipelineOp::HashProbe { kind: JoinKind::Left | JoinKind::Anti | JoinKind::Mark, .. } => break,
            PipelineOp::HashProbe { build, keys, kind, residual, .. } => {
                let from_scan = matches!(keys.as_slice(), [Expr::Column { index, .. }] if *index < k.source_width());
                let early = k.build_hint(*build).is_some_and(|h| h.early);
                if let Some(bitmap) = testable_bitmap(k, *build, keys, *kind)
                    .filter(|_| early && from_scan && residual.is_none() && reach >= EARLY_BITMAP_MIN_REACH)
                {
                    out.push((*build, keys[0].clone(), bitmap));
                }
            }
        }
    }
    out
}

/// The test of table #b's key bitmap for key value `kv` (of C type `ct`): the statement
/// computing the bit offset `bd_`, and the condition "the table has this key".
fn bitmap_test(k: &mut KernelBuilder, b: usize, kv: &Value, ct: &str, min: i64, bits: u64) -> (String, String) {
    let bitmap = k.param(Param::Build { id: b, part: BuildPart::Bitmap }, "const uint32_t* __restrict__");
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

impl TableAccess {
    /// Emits into `out` the lookup of the single integer key value `kv` in the finished table
    /// `b` ({key, group} entries, copied into shared memory with `in_smem`, or direct-mapped),
    /// leaving the group id in `gid` (-1: no match).
    fn emit_lookup(
        &self,
        k: &mut KernelBuilder,
        out: &mut Emitter,
        b: usize,
        key: &Expr,
        kv: &Value,
        gid: &str,
    ) -> Result<()> {
        let (hint, direct, in_smem, mask) = (self.hint, self.direct, self.in_smem, &self.mask);
        if hint.generic {
            self.emit_key_arrays_lookup(k, out, b, std::slice::from_ref(key), std::slice::from_ref(kv), gid);
            return Ok(());
        }
        let Some((ety, _)) = entry_type(c_type(&key.ty())) else {
            return Err(Error::exec(format!("probe table #{b}: key {key} has no entry layout")));
        };
        if let Some(min) = direct {
            // Dense keys: the group id sits at key - min; one load, no hashing.
            let table = k.param(Param::Build { id: b, part: BuildPart::Direct }, "const int* __restrict__");
            out.line(format!("const int64_t d_ = (int64_t)({}) - ({min}ll);", kv.v));
            out.line(format!("if (d_ >= 0 && d_ < {}ll) {gid} = __ldg(&{table}[d_]);", hint.slots));
            return Ok(());
        }
        let entries = k.param(Param::Build { id: b, part: BuildPart::Entries }, &format!("const {ety}* __restrict__"));
        let read = if in_smem {
            // Small tables: one copy per block in shared memory, filled before the loop.
            let n = hint.slots;
            k.pre().line(format!("// HashProbe #{b}: the {n}-slot table is copied into shared memory"));
            k.pre().line(format!("__shared__ {ety} ht{b}_sm[{n}];"));
            k.pre()
                .line(format!("for (uint32_t i = threadIdx.x; i < {n}u; i += blockDim.x) ht{b}_sm[i] = {entries}[i];"));
            k.pre().line("__syncthreads();");
            format!("ht{b}_sm[slot_]")
        } else {
            format!("__ldg(&{entries}[slot_])")
        };
        let arrays = [KeyArrays { values: String::new(), validity: None, ty: key.ty() }];
        if let Some((min, bits)) = hint.bitmap {
            // The key bitmap first: keys the table lacks (most, behind a filtered dimension)
            // never hash or touch the table.
            let (offset, has_key) = bitmap_test(k, b, kv, c_type(&key.ty()), min, bits);
            out.line(offset);
            out.open(format!("if ({has_key})"));
        } else {
            out.open("");
        }
        emit_hash(out, std::slice::from_ref(kv), &arrays);
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
}

impl TableAccess {
    /// The lookup of key values `kv` through the build's slots and key arrays (any key
    /// types; with `hint.generic` any table), leaving the group id in `gid`.
    fn emit_key_arrays_lookup(
        &self,
        k: &mut KernelBuilder,
        out: &mut Emitter,
        b: usize,
        keys: &[Expr],
        kv: &[Value],
        gid: &str,
    ) {
        let slots = k.param(Param::Build { id: b, part: BuildPart::Slots }, "const int* __restrict__");
        let mut arrays = vec![];
        for (i, e) in keys.iter().enumerate() {
            let ct = c_type(&e.ty());
            let values = k.param(Param::Build { id: b, part: BuildPart::Key(i) }, &format!("const {ct}* __restrict__"));
            arrays.push(KeyArrays { values, validity: None, ty: e.ty() });
        }
        emit_lookup(out, kv, &arrays, &slots, &self.mask, gid);
    }
}

impl HashProbe<'_> {
    /// The residual condition of a semi/anti/mark probe: a key match counts only if the condition
    /// holds over the probe row followed by the match's build row. Each lane walks its key's
    /// match range and stops at the first match that satisfies it (NULL does not).
    pub(super) fn test_residual(&self, k: &mut KernelBuilder, cond: &Expr) -> Result<()> {
        let (b, build_schema, kind) = (self.build, self.build_schema, self.kind);
        let cond_text = k.show(cond);
        k.body().line(format!("// residual of HashProbe #{b}: {cond_text}"));
        let width = k.width();
        // The probe row's columns it reads are loaded for every active row (later operators
        // rely on them being loaded).
        let mut cols = vec![];
        cond.columns(&mut cols);
        if cols.iter().any(|c| k.is_pending(*c)) {
            k.body().open("if (active)");
            k.load_columns(&[cond]);
            k.body().close();
        }
        let gid = format!("hp{b}_gid");
        let any = format!("hp{b}_any");
        k.body().line(format!("bool {any} = false;"));
        k.body().open(format!("if (active && {gid} >= 0)"));
        if self.band.is_some() {
            k.body().line(format!("const uint32_t hp{b}_rb = hp{b}_bb, hp{b}_re = hp{b}_be;"));
        } else if k.build_hint(b).is_some_and(|h| !h.multi) {
            // Unique keys: the key's one row sits at its group id (the build kept no offsets).
            k.body().line(format!("const uint32_t hp{b}_rb = (uint32_t){gid}, hp{b}_re = hp{b}_rb + 1u;"));
        } else {
            let offsets = k.param(Param::Build { id: b, part: BuildPart::Offsets }, "const uint32_t* __restrict__");
            let counts = k.param(Param::Build { id: b, part: BuildPart::Counts }, "const uint32_t* __restrict__");
            k.body()
                .line(format!("const uint32_t hp{b}_rb = {offsets}[{gid}], hp{b}_re = hp{b}_rb + {counts}[{gid}];"));
        }
        k.body().open(format!("for (uint32_t hp{b}_r = hp{b}_rb; hp{b}_r < hp{b}_re; hp{b}_r++)"));
        cols.sort_unstable();
        cols.dedup();
        let mut row = k.row().to_vec();
        row.extend(build_schema.fields.iter().map(|_| Value::not_null("0")));
        for c in cols.into_iter().filter(|c| *c >= width) {
            let i = c - width;
            let f = &build_schema.fields[i];
            let ct = c_type(&f.ty);
            let v = format!("r{b}_{i}");
            let col = k.param(
                Param::Build { id: b, part: BuildPart::Payload { column: i, part: Part::Values } },
                &format!("const {ct}* __restrict__"),
            );
            k.body().line(format!("const {ct} {v} = {col}[hp{b}_r];"));
            row[c] = if f.nullable {
                let valid = k.param(
                    Param::Build { id: b, part: BuildPart::Payload { column: i, part: Part::Validity } },
                    "const uint8_t* __restrict__",
                );
                k.body().line(format!("const bool {v}_null = {valid}[hp{b}_r] == 0;"));
                Value { v: v.clone(), null: format!("{v}_null") }
            } else {
                Value::not_null(v)
            };
        }
        let r = gen(cond, &row, k.body())?;
        k.body().line(format!("if (!({}) && ({})) {{ {any} = true; break; }}", r.null, r.v));
        k.body().close();
        k.body().close();
        if kind == JoinKind::Mark {
            k.body().line(format!("const bool hp{b}_mark = {any};"));
            k.push_computed_column(Value::not_null(format!("hp{b}_mark")), gpusql_common::DataType::Boolean);
            return Ok(());
        }
        k.body().line(format!("active = active && {}{any};", if kind == JoinKind::Anti { "!" } else { "" }));
        Ok(())
    }
}
