//! The query's constants as kernel parameters. Literal values, LIKE patterns and interval
//! amounts are passed to the kernel at launch (`Param::Literal`) instead of being written
//! into its source, so two queries that differ only in them generate byte-identical
//! sources and share one compiled module (the kernel cache is keyed by the source's
//! sha256; NVRTC takes 50-300 ms per module). Long IN lists were already buffers
//! (`in_set.rs`); their sets are registered here too, so comments can name them.
//!
//! How each constant travels (constant `k` is `lit<k>` in the code; parameters live in the
//! constant bank, so reading one costs no memory access per row):
//! - INTEGER, DATE: `const int32_t lit<k>`; BIGINT, TIMESTAMP, DECIMAL of ≤ 18 digits:
//!   `const int64_t lit<k>`; DOUBLE: `const double lit<k>` (the executor passes its bits).
//! - BOOLEAN: `const uint32_t lit<k>_flag`; DECIMAL of more than 18 digits: its `__int128`
//!   as `lit<k>_lo` and `lit<k>_hi`; INTERVAL: months and days in `lit<k>_lo`, microseconds
//!   in `lit<k>_hi`; VARCHAR: `lit<k>_bytes` (a pointer into the launch's
//!   literal buffer), `lit<k>_len` and `lit<k>_hash` (its `str_hash32`, so comparisons
//!   with dictionary-encoded columns skip the bytes). Each is assembled once at the top of
//!   the kernel into a local `lit<k>` of the value's C type.
//! - LIKE patterns: their bytes and per-byte kinds in the literal buffer and their length
//!   (`like_match`); where the pattern is `%s1%s2%…%`, also its segments, KMP failure links
//!   and segment ends in the buffer and the segment count (`like_kmp_pivot4`, `ops/like_kmp.rs`).
//! - Regular expressions (`Expr::Regex`): their DFA's byte classes and transition table in
//!   the buffer (the table 4-byte aligned), its column count, start state and entry count
//!   (`dfa_match`); the kernel copies both tables into shared memory first where the
//!   table is small (`Literals::locals`).
//! - Interval amounts of `DateAdd` (months, days: each a parameter where it is not zero)
//!   and `TimestampAdd` (months, days, microseconds).
//!
//! What stays in the source, because the code's structure depends on it: NULL literals
//! (their NULL flag is the constant `true`, which removes code), types and decimal scales
//! (the C types and the rescaling factors), the number of items of a short IN list, the
//! form of a LIKE pattern (KMP or the byte matcher), which interval fields of a `DateAdd`
//! are zero, whether a long IN list holds a NULL, and truncation units. Also, though they
//! could travel as parameters: SUBSTRING positions and ROUND's digits (arguments of
//! device helpers, folded into their arithmetic), and join keys that are integer literals
//! (`ops/common.rs` `constant_key`: the planner's constant key of scalar subqueries).
//!
//! The executor uploads the bytes of all string and pattern constants of a launch as one
//! small buffer (`LiteralData`) and binds each parameter from it.
//!
//! Constants are registered per node of the plan (its address, which is stable while the
//! pipeline is generated from a borrowed plan), so the same constant read twice (a LIKE's
//! KMP and fallback paths) is one parameter, and a comment printed before the code names
//! the same parameter the code reads. Numbering follows the order in which comments and
//! code first meet the constants, which depends only on the plan's shape.

use crate::types::c_type;
use gpusql_common::{DataType, Error, Result, ScalarValue};
use gpusql_plan::expr::KMP_MAX_BYTES;
use gpusql_plan::parameters::ParamValues;
use gpusql_plan::regex::{RegexDfa, SHARED_TABLE_ENTRIES};
use gpusql_plan::{ConstantField, ConstantNames, Expr, LikeItem, LikePattern, LiteralSet};
use std::collections::HashMap;
use std::sync::Arc;

/// A constant a kernel takes as parameters (`KernelSpec::literals`, `Param::Literal`).
#[derive(Debug, Clone, PartialEq)]
pub enum KernelLiteral {
    /// A non-NULL value of type `ty`.
    Value { value: ScalarValue, ty: DataType },
    /// The value of a plan template's parameter `id` (`Expr::Parameter`), `value` in the run
    /// the kernel was generated for: a later run binds its own (`resolve`).
    Parameter { id: u64, value: ScalarValue, ty: DataType },
    /// A LIKE pattern.
    Pattern(LikePattern),
    /// A regular expression's DFA.
    Regex(Arc<RegexDfa>),
}

/// The parameters a constant is passed as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LiteralPart {
    /// The value in its C type: `int32_t`, `int64_t` or `double` (passed as its bits).
    Value,
    /// BOOLEAN: `uint32_t` 0 or 1.
    Flag,
    /// DECIMAL of more than 18 digits: the low and high 64 bits of the `__int128`.
    Low,
    High,
    /// VARCHAR: pointer to the bytes, their count and their `str_hash32`. LIKE (`like_match`):
    /// the pattern's bytes (`%` and `_` included) and their count.
    Bytes,
    Len,
    Hash,
    /// LIKE (`like_match`): per pattern byte, 0 literal, 1 `_`, 2 `%`.
    Kinds,
    /// LIKE `%s1%s2%…%` (`like_kmp_pivot4`): the segments' bytes concatenated, the KMP
    /// failure links, each segment's end, and the segment count.
    KmpBytes,
    KmpNext,
    KmpEnds,
    KmpSegments,
    /// Regular expressions (`dfa_match`): the 256 byte classes, the transition table
    /// (`uint16_t`), its column count, the start state and the table's entry count.
    DfaClasses,
    DfaNext,
    DfaColumns,
    DfaStart,
    DfaEntries,
}

/// The C name of constant `index` in expressions.
pub fn literal_name(index: usize) -> String {
    format!("lit{index}")
}

/// The C name of constant `index`'s parameter `part`.
pub fn param_name(index: usize, part: LiteralPart) -> String {
    let suffix = match part {
        LiteralPart::Value => return literal_name(index),
        LiteralPart::Flag => "flag",
        LiteralPart::Low => "lo",
        LiteralPart::High => "hi",
        LiteralPart::Bytes => "bytes",
        LiteralPart::Len => "len",
        LiteralPart::Hash => "hash",
        LiteralPart::Kinds => "kinds",
        LiteralPart::KmpBytes => "kmp_bytes",
        LiteralPart::KmpNext => "kmp_next",
        LiteralPart::KmpEnds => "kmp_ends",
        LiteralPart::KmpSegments => "kmp_segments",
        LiteralPart::DfaClasses => "dfa_classes",
        LiteralPart::DfaNext => "dfa_next",
        LiteralPart::DfaColumns => "dfa_columns",
        LiteralPart::DfaStart => "dfa_start",
        LiteralPart::DfaEntries => "dfa_entries",
    };
    format!("lit{index}_{suffix}")
}

/// The C declaration of a parameter `part` of `literal`.
fn param_decl(literal: &KernelLiteral, part: LiteralPart) -> String {
    match part {
        LiteralPart::Value => match literal {
            KernelLiteral::Value { ty, .. } | KernelLiteral::Parameter { ty, .. } => format!("const {}", c_type(ty)),
            KernelLiteral::Pattern(_) | KernelLiteral::Regex(_) => "const uint32_t".into(),
        },
        LiteralPart::Low | LiteralPart::High => "const uint64_t".into(),
        LiteralPart::Flag
        | LiteralPart::Len
        | LiteralPart::Hash
        | LiteralPart::KmpSegments
        | LiteralPart::DfaColumns
        | LiteralPart::DfaStart
        | LiteralPart::DfaEntries => "const uint32_t".into(),
        LiteralPart::DfaNext => "const uint16_t* __restrict__".into(),
        LiteralPart::Bytes
        | LiteralPart::DfaClasses
        | LiteralPart::Kinds
        | LiteralPart::KmpBytes
        | LiteralPart::KmpNext
        | LiteralPart::KmpEnds => "const uint8_t* __restrict__".into(),
    }
}

/// The parameters a value of `ty` is passed as, and the local that assembles them at the
/// top of the kernel (None: the parameter is the value itself).
fn value_parts(ty: &DataType) -> (&'static [LiteralPart], Option<&'static str>) {
    match c_type(ty) {
        "bool" => (&[LiteralPart::Flag], Some("const bool $ = $_flag != 0u;")),
        "__int128" => (
            &[LiteralPart::Low, LiteralPart::High],
            Some("const __int128 $ = (__int128)(((unsigned __int128)$_hi << 64) | (unsigned __int128)$_lo);"),
        ),
        "Str" => (
            &[LiteralPart::Bytes, LiteralPart::Len, LiteralPart::Hash],
            Some("const Str $ = make_str_h((const char*)$_bytes, $_len, $_hash);"),
        ),
        // Months and days in the low word, microseconds in the high.
        "Interval" => (&[LiteralPart::Low, LiteralPart::High], Some("const Interval $ = iv_from_bits($_lo, $_hi);")),
        _ => (&[LiteralPart::Value], None),
    }
}

/// The data of a constant's parameters: a number, or bytes that go into the launch's
/// literal buffer.
enum PartData {
    U32(u32),
    U64(u64),
    Bytes(Vec<u8>),
}

/// What the executor passes for one literal parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiteralArg {
    U32(u32),
    U64(u64),
    /// A pointer into the literal buffer (`LiteralData::bytes`), at this offset.
    Buffer(usize),
}

/// The parameter data of `literal`, for every part it can be passed as.
fn part_data(literal: &KernelLiteral) -> Result<Vec<(LiteralPart, PartData)>> {
    match literal {
        KernelLiteral::Value { value, ty } | KernelLiteral::Parameter { value, ty, .. } => value_data(value, ty),
        KernelLiteral::Pattern(p) => {
            let mut bytes = vec![];
            let mut kinds = vec![];
            for item in &p.items {
                let (b, k) = match item {
                    LikeItem::Byte(b) => (*b, 0u8),
                    LikeItem::One => (b'_', 1),
                    LikeItem::Any => (b'%', 2),
                };
                bytes.push(b);
                kinds.push(k);
            }
            let mut out = vec![
                (LiteralPart::Len, PartData::U32(bytes.len() as u32)),
                (LiteralPart::Bytes, PartData::Bytes(bytes)),
                (LiteralPart::Kinds, PartData::Bytes(kinds)),
            ];
            if let Some(seg) = kmp_segments(p) {
                out.push((LiteralPart::KmpSegments, PartData::U32(seg.ends.len() as u32)));
                out.push((LiteralPart::KmpBytes, PartData::Bytes(seg.bytes)));
                out.push((LiteralPart::KmpNext, PartData::Bytes(seg.next)));
                out.push((LiteralPart::KmpEnds, PartData::Bytes(seg.ends)));
            }
            if let Some(dfa) = &p.dfa {
                out.extend(dfa_data(dfa));
            }
            Ok(out)
        }
        KernelLiteral::Regex(dfa) => Ok(dfa_data(dfa)),
    }
}

/// The shared memory a kernel's DFA tables may take together (the kernel's other tables
/// take theirs from the same 48 KiB); the DFAs past it are read through the read-only cache.
const DFA_SHARED_BYTES: usize = 20 << 10;

/// The parameters of a DFA (`dfa_match`).
fn dfa_data(dfa: &RegexDfa) -> Vec<(LiteralPart, PartData)> {
    vec![
        (LiteralPart::DfaClasses, PartData::Bytes(dfa.classes.to_vec())),
        (LiteralPart::DfaNext, PartData::Bytes(dfa.next.iter().flat_map(|s| s.to_le_bytes()).collect())),
        (LiteralPart::DfaColumns, PartData::U32(dfa.classes_count as u32 + 1)),
        (LiteralPart::DfaStart, PartData::U32(dfa.start as u32)),
        (LiteralPart::DfaEntries, PartData::U32(dfa.next.len() as u32)),
    ]
}

/// The DFA of a constant whose code walks one: a regular expression, or a LIKE pattern
/// whose DFA parameters are in use.
fn dfa_of(r: &Registered) -> Option<&RegexDfa> {
    match &r.literal {
        KernelLiteral::Regex(d) => Some(d),
        KernelLiteral::Pattern(p) if r.parts.contains(&LiteralPart::DfaNext) => p.dfa.as_deref(),
        _ => None,
    }
}

/// The parameter data of a value of `ty` (in the C type of `ty`).
fn value_data(value: &ScalarValue, ty: &DataType) -> Result<Vec<(LiteralPart, PartData)>> {
    let mismatch = || Error::plan(format!("literal {value:?} cannot be a kernel parameter of type {ty}"));
    let int = |lo: i128, hi: i128| value.as_i128().filter(|x| (lo..=hi).contains(x)).ok_or_else(mismatch);
    Ok(match c_type(ty) {
        "bool" => match value {
            ScalarValue::Boolean(b) => vec![(LiteralPart::Flag, PartData::U32(*b as u32))],
            _ => return Err(mismatch()),
        },
        "int32_t" => vec![(LiteralPart::Value, PartData::U32(int(i32::MIN as i128, i32::MAX as i128)? as i32 as u32))],
        "int64_t" => vec![(LiteralPart::Value, PartData::U64(int(i64::MIN as i128, i64::MAX as i128)? as i64 as u64))],
        "__int128" => {
            let x = int(i128::MIN, i128::MAX)? as u128;
            vec![(LiteralPart::Low, PartData::U64(x as u64)), (LiteralPart::High, PartData::U64((x >> 64) as u64))]
        }
        "double" => match value {
            ScalarValue::Float64(f) => vec![(LiteralPart::Value, PartData::U64(f.to_bits()))],
            v => vec![(LiteralPart::Value, PartData::U64((v.as_i128().ok_or_else(mismatch)? as f64).to_bits()))],
        },
        "Interval" => match value {
            ScalarValue::Interval(iv) => vec![
                (LiteralPart::Low, PartData::U64(iv.months as u32 as u64 | (iv.days as u32 as u64) << 32)),
                (LiteralPart::High, PartData::U64(iv.micros as u64)),
            ],
            _ => return Err(mismatch()),
        },
        "Str" => match value {
            ScalarValue::Utf8(s) => vec![
                (LiteralPart::Len, PartData::U32(u32::try_from(s.len()).map_err(|_| mismatch())?)),
                (LiteralPart::Hash, PartData::U32(gpusql_common::str_hash32(s.as_bytes()))),
                (LiteralPart::Bytes, PartData::Bytes(s.as_bytes().to_vec())),
            ],
            _ => return Err(mismatch()),
        },
        _ => return Err(mismatch()),
    })
}

/// The literal segments of an unanchored LIKE pattern without `_` (`%s1%s2%…%`),
/// concatenated, with KMP failure links (absolute positions) and each segment's end: the
/// data of lock-step KMP (`ops/like_kmp.rs`). None for other patterns (the byte matcher
/// takes them). Which patterns qualify is part of the kernel's shape; the bytes are not.
pub struct KmpSegments {
    pub bytes: Vec<u8>,
    pub next: Vec<u8>,
    pub ends: Vec<u8>,
}

pub fn kmp_segments(p: &LikePattern) -> Option<KmpSegments> {
    let items = &p.items;
    if !matches!(items.first(), Some(LikeItem::Any))
        || !matches!(items.last(), Some(LikeItem::Any))
        || items.iter().any(|i| matches!(i, LikeItem::One))
    {
        return None;
    }
    let mut segs: Vec<Vec<u8>> = vec![];
    let mut cur = vec![];
    for i in items {
        match i {
            LikeItem::Byte(b) => cur.push(*b),
            _ if !cur.is_empty() => segs.push(std::mem::take(&mut cur)),
            _ => {}
        }
    }
    let total: usize = segs.iter().map(|s| s.len()).sum();
    // A pattern of only `%` needs no search.
    if segs.is_empty() || total > KMP_MAX_BYTES {
        return None;
    }
    let (mut bytes, mut next, mut ends) = (vec![], vec![], vec![]);
    for s in segs {
        let base = bytes.len();
        // pi[q]: length of the longest proper border of s[..=q] (prefix function).
        let mut pi = vec![0usize; s.len()];
        for q in 1..s.len() {
            let mut k = pi[q - 1];
            while k > 0 && s[q] != s[k] {
                k = pi[k - 1];
            }
            if s[q] == s[k] {
                k += 1;
            }
            pi[q] = k;
        }
        // After a mismatch at pattern position j (> segment start) continue at the border.
        for j in 0..s.len() {
            next.push((base + if j == 0 { 0 } else { pi[j - 1] }) as u8);
        }
        bytes.extend_from_slice(&s);
        ends.push(bytes.len() as u8);
    }
    Some(KmpSegments { bytes, next, ends })
}

/// The data the executor passes for a kernel's constants: the bytes of its string and
/// pattern constants (one buffer, uploaded per launch) and each parameter's argument.
#[derive(Debug, Default)]
pub struct LiteralData {
    /// The literal buffer (empty: the kernel reads none).
    pub bytes: Vec<u8>,
    args: HashMap<(usize, LiteralPart), LiteralArg>,
}

/// `literals` with the values their parameters take in a run with `values` (None: they
/// are the values the kernel was generated with).
pub fn resolve(literals: &[KernelLiteral], values: &ParamValues) -> Option<Vec<KernelLiteral>> {
    let new_text = |p: &LikePattern| match (&p.source, p.source.as_ref().and_then(|s| values.get(s.id))) {
        (Some(_), Some(ScalarValue::Utf8(t))) if *t != p.text => Some(t.clone()),
        _ => None,
    };
    let stale = |l: &KernelLiteral| match l {
        KernelLiteral::Parameter { id, value, .. } => values.get(*id).is_some_and(|v| v != value),
        KernelLiteral::Pattern(p) => new_text(p).is_some(),
        _ => false,
    };
    if !literals.iter().any(stale) {
        return None;
    }
    Some(
        literals
            .iter()
            .map(|l| match l {
                KernelLiteral::Parameter { id, value, ty } => KernelLiteral::Parameter {
                    id: *id,
                    value: values.get(*id).cloned().unwrap_or_else(|| value.clone()),
                    ty: *ty,
                },
                // (`instantiate` checked that the new text compiles to the same form.)
                KernelLiteral::Pattern(p) => match new_text(p).and_then(|t| LikePattern::new(&t, None).ok()) {
                    Some(new) => KernelLiteral::Pattern(LikePattern { source: p.source.clone(), ..new }),
                    None => KernelLiteral::Pattern(p.clone()),
                },
                other => other.clone(),
            })
            .collect(),
    )
}

impl LiteralData {
    pub fn new(literals: &[KernelLiteral]) -> Result<LiteralData> {
        let mut data = LiteralData::default();
        for (index, literal) in literals.iter().enumerate() {
            for (part, d) in part_data(literal)? {
                let arg = match d {
                    PartData::U32(x) => LiteralArg::U32(x),
                    PartData::U64(x) => LiteralArg::U64(x),
                    PartData::Bytes(b) => {
                        // (4-byte aligned: a DFA table is read as `uint16_t`.)
                        data.bytes.resize(data.bytes.len().next_multiple_of(4), 0);
                        data.bytes.extend_from_slice(&b);
                        LiteralArg::Buffer(data.bytes.len() - b.len())
                    }
                };
                data.args.insert((index, part), arg);
            }
        }
        if !data.bytes.is_empty() {
            // (No empty allocation; a pointer to an empty part's end stays inside it.)
            data.bytes.resize(data.bytes.len() + 16, 0);
        }
        Ok(data)
    }

    /// `SET like_dfa = off`: LIKE patterns take their wildcard matchers; a DFA entry
    /// count of 0 tells the kernel so (regular expressions keep theirs).
    pub fn without_like_dfas(mut self, literals: &[KernelLiteral]) -> LiteralData {
        for (index, l) in literals.iter().enumerate() {
            if matches!(l, KernelLiteral::Pattern(p) if p.dfa.is_some()) {
                self.args.insert((index, LiteralPart::DfaEntries), LiteralArg::U32(0));
            }
        }
        self
    }

    /// The argument of constant `index`'s parameter `part`.
    pub fn arg(&self, index: usize, part: LiteralPart) -> Result<LiteralArg> {
        self.args.get(&(index, part)).copied().ok_or_else(|| {
            Error::exec(format!(
                "kernel parameter {} has no value (constant {index} has no part {part:?})",
                param_name(index, part)
            ))
        })
    }
}

/// A constant registered for a kernel: what it is, the node and field it came from, and
/// the parameters the code reads.
struct Registered {
    literal: KernelLiteral,
    parts: Vec<LiteralPart>,
}

/// The constants a kernel's code reads, registered while its code and comments are
/// generated (`Emitter::literals` of the row loop's body); `KernelBuilder::finish`
/// declares their parameters and the locals that assemble them.
#[derive(Default)]
pub struct Literals {
    list: Vec<Registered>,
    /// Which constant each (node address, field) is (None: the node is an `Expr::Literal`).
    by_node: HashMap<(usize, Option<ConstantField>), usize>,
    /// The literal sets of long IN lists (`in_set.rs`), by their `Arc`.
    pub in_sets: Vec<Arc<LiteralSet>>,
}

fn address(e: &Expr) -> usize {
    e as *const Expr as usize
}

impl Literals {
    /// The index of the constant `field` of node `e` holding `literal`, registered if new.
    /// (A node address seen before with another constant is a temporary expression that
    /// reused the memory of a dropped one: it gets its own parameter.)
    fn register(&mut self, e: &Expr, field: Option<ConstantField>, literal: KernelLiteral) -> usize {
        let key = (address(e), field);
        if let Some(&i) = self.by_node.get(&key) {
            if self.list[i].literal == literal {
                return i;
            }
        }
        self.list.push(Registered { literal, parts: vec![] });
        self.by_node.insert(key, self.list.len() - 1);
        self.list.len() - 1
    }

    fn use_part(&mut self, index: usize, part: LiteralPart) {
        let parts = &mut self.list[index].parts;
        if !parts.contains(&part) {
            parts.push(part);
        }
    }

    /// The C expression of the value `value` of type `ty` that constant `field` of node `e`
    /// holds (`field` None: `e` is the `Expr::Literal`). Not for NULL, which stays in the
    /// source.
    pub fn value(
        &mut self,
        e: &Expr,
        field: Option<ConstantField>,
        value: &ScalarValue,
        ty: DataType,
    ) -> Result<String> {
        self.value_parts_of(e, field, KernelLiteral::Value { value: value.clone(), ty })
    }

    /// The C expression of parameter `e` (an `Expr::Parameter` of source `id`), whose
    /// value is `value` in this run.
    pub fn parameter(&mut self, e: &Expr, id: u64, value: &ScalarValue, ty: DataType) -> Result<String> {
        self.value_parts_of(e, None, KernelLiteral::Parameter { id, value: value.clone(), ty })
    }

    /// Registers value constant `literal` (a `Value` or `Parameter`) with the parameters
    /// its type is passed as; its C expression.
    fn value_parts_of(&mut self, e: &Expr, field: Option<ConstantField>, literal: KernelLiteral) -> Result<String> {
        let (KernelLiteral::Value { value, ty } | KernelLiteral::Parameter { value, ty, .. }) = &literal else {
            return Err(Error::plan("a value constant expected"));
        };
        // (Checks that the value fits the parameter's type before anything is registered.)
        value_data(value, ty)?;
        let parts = value_parts(ty).0;
        let i = self.register(e, field, literal);
        for &part in parts {
            self.use_part(i, part);
        }
        Ok(literal_name(i))
    }

    /// The index of the pattern of LIKE node `e`, with the parameters of the byte matcher
    /// (`kmp` false: `lit<k>_bytes`, `_kinds`, `_len`) or of lock-step KMP (`_kmp_bytes`,
    /// `_kmp_next`, `_kmp_ends`, `_kmp_segments`) in use.
    pub fn pattern(&mut self, e: &Expr, pattern: &LikePattern, kmp: bool) -> usize {
        let i = self.register(e, Some(ConstantField::Pattern), KernelLiteral::Pattern(pattern.clone()));
        let parts: &[LiteralPart] = if kmp {
            &[LiteralPart::KmpBytes, LiteralPart::KmpNext, LiteralPart::KmpEnds, LiteralPart::KmpSegments]
        } else {
            &[LiteralPart::Bytes, LiteralPart::Kinds, LiteralPart::Len]
        };
        for &part in parts {
            self.use_part(i, part);
        }
        i
    }

    /// The index of the DFA of regex node `e`, with all its parameters in use.
    pub fn regex(&mut self, e: &Expr, dfa: &Arc<RegexDfa>) -> usize {
        let i = self.register(e, Some(ConstantField::Pattern), KernelLiteral::Regex(dfa.clone()));
        self.use_dfa(i);
        i
    }

    /// Puts the DFA parameters of constant `i` (a regex, or a LIKE pattern with a DFA) in use.
    pub fn use_dfa(&mut self, i: usize) {
        for part in [
            LiteralPart::DfaClasses,
            LiteralPart::DfaNext,
            LiteralPart::DfaColumns,
            LiteralPart::DfaStart,
            LiteralPart::DfaEntries,
        ] {
            self.use_part(i, part);
        }
    }

    /// The index of literal set `set` (one per `Arc`).
    pub fn in_set(&mut self, set: &Arc<LiteralSet>) -> usize {
        match self.in_sets.iter().position(|s| Arc::ptr_eq(s, set)) {
            Some(i) => i,
            None => {
                self.in_sets.push(set.clone());
                self.in_sets.len() - 1
            }
        }
    }

    /// Registers the constants of `e` and its subexpressions that the code passes as
    /// parameters (in the order a comment shows them), so a comment can name them.
    pub fn name_constants(&mut self, e: &Expr) {
        match e {
            // (A value its type cannot pass is left to `value`, which reports it.)
            Expr::Literal { value, ty } if !value.is_null() && value_data(value, ty).is_ok() => {
                self.register(e, None, KernelLiteral::Value { value: value.clone(), ty: *ty });
            }
            Expr::Parameter { value, ty, source } if value_data(value, ty).is_ok() => {
                self.register(e, None, KernelLiteral::Parameter { id: source.id, value: value.clone(), ty: *ty });
            }
            Expr::Like { pattern, .. } => {
                self.register(e, Some(ConstantField::Pattern), KernelLiteral::Pattern(pattern.clone()));
            }
            Expr::InSet { set, .. } => {
                self.in_set(set);
            }
            Expr::Regex { dfa, .. } | Expr::RegexFind { dfa, .. } => {
                self.register(e, Some(ConstantField::Pattern), KernelLiteral::Regex(dfa.clone()));
            }
            _ => {
                for (field, value, ty) in interval_constants(e) {
                    self.register(e, Some(field), KernelLiteral::Value { value, ty });
                }
            }
        }
        for c in e.children() {
            self.name_constants(c);
        }
    }

    /// The parameters the code reads, in order: (literal index, part, C declaration).
    pub fn params(&self) -> Vec<(usize, LiteralPart, String)> {
        let mut out = vec![];
        for (i, r) in self.list.iter().enumerate() {
            for &part in &r.parts {
                out.push((i, part, param_decl(&r.literal, part)));
            }
        }
        out
    }

    /// The statements at the top of the kernel that assemble constants passed in parts
    /// (BOOLEAN, 128-bit DECIMAL, VARCHAR) into locals `lit<k>`, and that copy small regex
    /// DFAs into shared memory (`lit<k>_classes_`, `lit<k>_next_`: where the walk reads).
    /// (Before the row loop, where every thread of the block reaches the barrier.)
    pub fn locals(&self) -> Vec<String> {
        let mut out = vec![];
        let mut shared = 0;
        for (i, r) in self.list.iter().enumerate() {
            if let Some(dfa) = dfa_of(r) {
                let name = literal_name(i);
                let (classes, next) = (param_name(i, LiteralPart::DfaClasses), param_name(i, LiteralPart::DfaNext));
                let bytes = 256 + 2 * dfa.shared_entries();
                if dfa.next.len() > SHARED_TABLE_ENTRIES || shared + bytes > DFA_SHARED_BYTES {
                    out.push(format!("const uint8_t* {name}_classes_ = {classes};"));
                    out.push(format!("const uint16_t* {name}_next_ = {next};"));
                    continue;
                }
                shared += bytes;
                let n = dfa.shared_entries();
                let entries = param_name(i, LiteralPart::DfaEntries);
                out.push(format!("// {name}: its DFA's byte classes and table in shared memory"));
                out.push(format!("__shared__ uint8_t {name}_classes_[256];"));
                out.push(format!("__shared__ uint16_t {name}_next_[{n}];"));
                out.push(format!(
                    "for (uint32_t i = threadIdx.x; i < 256u; i += blockDim.x) {name}_classes_[i] = {classes}[i];"
                ));
                out.push(format!(
                    "for (uint32_t i = threadIdx.x; i < {entries}; i += blockDim.x) {name}_next_[i] = {next}[i];"
                ));
                out.push("__syncthreads();".into());
                continue;
            }
            if let KernelLiteral::Value { ty, .. } | KernelLiteral::Parameter { ty, .. } = &r.literal {
                if let (_, Some(template)) = value_parts(ty) {
                    if !r.parts.is_empty() {
                        out.push(template.replace('$', &literal_name(i)));
                    }
                }
            }
        }
        out
    }

    /// The constants, by index (`KernelSpec::literals`).
    pub fn into_list(self) -> (Vec<KernelLiteral>, Vec<Arc<LiteralSet>>) {
        (self.list.into_iter().map(|r| r.literal).collect(), self.in_sets)
    }

    fn find(&self, e: &Expr, field: Option<ConstantField>) -> Option<usize> {
        self.by_node.get(&(address(e), field)).copied()
    }
}

/// The interval amounts of `e` passed as parameters: a `DateAdd`'s months and days where
/// not zero (a zero one is left out of the code), a `TimestampAdd`'s three.
pub fn interval_constants(e: &Expr) -> Vec<(ConstantField, ScalarValue, DataType)> {
    match e {
        Expr::DateAdd { months, days, .. } => {
            let mut out = vec![];
            if *months != 0 {
                out.push((ConstantField::Months, ScalarValue::Int32(*months), DataType::Int32));
            }
            if *days != 0 {
                out.push((ConstantField::Days, ScalarValue::Int32(*days), DataType::Int32));
            }
            out
        }
        Expr::TimestampAdd { months, days, micros, .. } => vec![
            (ConstantField::Months, ScalarValue::Int32(*months), DataType::Int32),
            (ConstantField::Days, ScalarValue::Int32(*days), DataType::Int32),
            (ConstantField::Micros, ScalarValue::Int64(*micros), DataType::Int64),
        ],
        _ => vec![],
    }
}

impl ConstantNames for Literals {
    fn literal(&self, e: &Expr) -> Option<String> {
        self.find(e, None).map(literal_name)
    }

    fn field(&self, e: &Expr, field: ConstantField) -> Option<String> {
        match (e, field) {
            (Expr::InSet { set, .. }, ConstantField::Set) => {
                self.in_sets.iter().position(|s| Arc::ptr_eq(s, set)).map(|i| format!("inset{i}"))
            }
            _ => self.find(e, Some(field)).map(literal_name),
        }
    }

    /// A computed column's name spells its expression: one that shows a constant
    /// (`sum(CASE WHEN (nation#2 = 'BRAZIL') …)`) is shortened to its head, `sum(…)` (or
    /// `(…)`); other names (`l_quantity`, `count(*)`, `sum(lo_revenue#0)`) stay.
    fn column(&self, name: &str) -> Option<String> {
        if !shows_constant(name) {
            return None;
        }
        let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        Some(match name.split_once('(') {
            Some((head, _)) if ident(head) => format!("{head}(…)"),
            _ => "(…)".to_string(),
        })
    }
}

/// Whether expression text (a computed column's name) shows a constant: a quoted string
/// (strings, dates, timestamps, LIKE patterns), a number that is no part of a name or a
/// column index (`n1`, `#3`), or a BOOLEAN word; decimal types' `DECIMAL(p,s)` are none.
fn shows_constant(text: &str) -> bool {
    let mut rest = text.to_string();
    while let Some(at) = rest.find("DECIMAL(") {
        let end = rest[at..].find(')').map_or(rest.len(), |e| at + e + 1);
        rest.replace_range(at..end, "DECIMAL");
    }
    let b = rest.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\'' {
            return true;
        }
        if word(b[i]) && (i == 0 || !(word(b[i - 1]) || b[i - 1] == b'#')) {
            let start = i;
            while i < b.len() && word(b[i]) {
                i += 1;
            }
            let w = &rest[start..i];
            if w.as_bytes()[0].is_ascii_digit() || w.eq_ignore_ascii_case("true") || w.eq_ignore_ascii_case("false") {
                return true;
            }
            continue;
        }
        i += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_travel_in_their_c_types() {
        let lits = [
            KernelLiteral::Value { value: ScalarValue::Date(10471), ty: DataType::Date },
            KernelLiteral::Value { value: ScalarValue::Int64(-5), ty: DataType::Int64 },
            KernelLiteral::Value { value: ScalarValue::Float64(0.25), ty: DataType::Float64 },
            KernelLiteral::Value {
                value: ScalarValue::Decimal(-(1i128 << 70)),
                ty: DataType::Decimal { precision: 38, scale: 2 },
            },
            KernelLiteral::Value { value: ScalarValue::Utf8("MAIL".into()), ty: DataType::Utf8 },
            KernelLiteral::Value { value: ScalarValue::Boolean(true), ty: DataType::Boolean },
            KernelLiteral::Value { value: ScalarValue::Utf8(String::new()), ty: DataType::Utf8 },
        ];
        let d = LiteralData::new(&lits).unwrap();
        assert_eq!(d.arg(0, LiteralPart::Value).unwrap(), LiteralArg::U32(10471));
        assert_eq!(d.arg(1, LiteralPart::Value).unwrap(), LiteralArg::U64(-5i64 as u64));
        assert_eq!(d.arg(2, LiteralPart::Value).unwrap(), LiteralArg::U64(0.25f64.to_bits()));
        let x = (-(1i128 << 70)) as u128;
        assert_eq!(d.arg(3, LiteralPart::Low).unwrap(), LiteralArg::U64(x as u64));
        assert_eq!(d.arg(3, LiteralPart::High).unwrap(), LiteralArg::U64((x >> 64) as u64));
        assert_eq!(d.arg(4, LiteralPart::Len).unwrap(), LiteralArg::U32(4));
        assert_eq!(d.arg(4, LiteralPart::Hash).unwrap(), LiteralArg::U32(gpusql_common::str_hash32(b"MAIL")));
        let LiteralArg::Buffer(at) = d.arg(4, LiteralPart::Bytes).unwrap() else { panic!() };
        assert_eq!(&d.bytes[at..at + 4], b"MAIL");
        assert_eq!(d.arg(5, LiteralPart::Flag).unwrap(), LiteralArg::U32(1));
        assert_eq!(d.arg(6, LiteralPart::Len).unwrap(), LiteralArg::U32(0));
        // An empty string's pointer still points into the buffer.
        let LiteralArg::Buffer(at) = d.arg(6, LiteralPart::Bytes).unwrap() else { panic!() };
        assert!(at < d.bytes.len());
        assert!(d.arg(0, LiteralPart::Bytes).is_err());
    }

    #[test]
    fn values_that_do_not_fit_their_type_are_errors() {
        let bad = KernelLiteral::Value { value: ScalarValue::Int64(1 << 40), ty: DataType::Int32 };
        assert!(LiteralData::new(&[bad]).is_err());
        let bad = KernelLiteral::Value { value: ScalarValue::Int32(1), ty: DataType::Utf8 };
        assert!(LiteralData::new(&[bad]).is_err());
    }

    #[test]
    fn patterns_carry_both_matchers_data() {
        let p = LikePattern::new("%ab%a_c", None).unwrap();
        let d = LiteralData::new(&[KernelLiteral::Pattern(p)]).unwrap();
        assert_eq!(d.arg(0, LiteralPart::Len).unwrap(), LiteralArg::U32(7));
        let (LiteralArg::Buffer(b), LiteralArg::Buffer(k)) =
            (d.arg(0, LiteralPart::Bytes).unwrap(), d.arg(0, LiteralPart::Kinds).unwrap())
        else {
            panic!()
        };
        assert_eq!(&d.bytes[b..b + 7], b"%ab%a_c");
        assert_eq!(&d.bytes[k..k + 7], &[2, 0, 0, 2, 0, 1, 0]);
        // Not `%…%`: no KMP data.
        assert!(d.arg(0, LiteralPart::KmpBytes).is_err());

        let p = LikePattern::new("%abab%c%", None).unwrap();
        let d = LiteralData::new(&[KernelLiteral::Pattern(p.clone())]).unwrap();
        let seg = kmp_segments(&p).unwrap();
        assert_eq!(d.arg(0, LiteralPart::KmpSegments).unwrap(), LiteralArg::U32(2));
        for (part, want) in
            [(LiteralPart::KmpBytes, &seg.bytes), (LiteralPart::KmpNext, &seg.next), (LiteralPart::KmpEnds, &seg.ends)]
        {
            let LiteralArg::Buffer(at) = d.arg(0, part).unwrap() else { panic!() };
            assert_eq!(&d.bytes[at..at + want.len()], want.as_slice(), "{part:?}");
        }
        assert_eq!(seg.bytes, b"ababc");
        assert_eq!(seg.ends, vec![4, 5]);
    }

    #[test]
    fn a_node_is_one_constant_and_names_follow_first_use() {
        let a = Expr::literal(ScalarValue::Int32(7), DataType::Int32);
        let b = Expr::literal(ScalarValue::Int32(7), DataType::Int32);
        let mut l = Literals::default();
        l.name_constants(&b);
        assert_eq!(l.value(&a, None, &ScalarValue::Int32(7), DataType::Int32).unwrap(), "lit1");
        assert_eq!(l.value(&b, None, &ScalarValue::Int32(7), DataType::Int32).unwrap(), "lit0");
        assert_eq!(l.literal(&a).as_deref(), Some("lit1"));
        // NULL stays in the source.
        let null = Expr::literal(ScalarValue::Null, DataType::Int32);
        l.name_constants(&null);
        assert_eq!(l.literal(&null), None);
        assert_eq!(l.params().len(), 2);
    }

    #[test]
    fn computed_column_names_that_show_constants_are_shortened() {
        let l = Literals::default();
        for name in ["l_quantity", "__mark0", "n1", "count(*)", "sum(lo_revenue#0)", "CAST(sum(x#1) AS DECIMAL(38,2))"]
        {
            assert_eq!(l.column(name), None, "{name}");
        }
        for (name, shown) in [
            ("sum(CASE WHEN (nation#2 = 'BRAZIL') THEN volume#1 ELSE 0 END)", "sum(…)"),
            ("sum((l_extendedprice#0 * (1.00 - l_discount#1)))", "sum(…)"),
            ("(a#0 + 5)", "(…)"),
            ("'abc'", "(…)"),
            ("TRUE", "(…)"),
            ("min((x#1 * CAST(2 AS DECIMAL(10,0))))", "min(…)"),
        ] {
            assert_eq!(l.column(name).as_deref(), Some(shown), "{name}");
        }
    }
}
