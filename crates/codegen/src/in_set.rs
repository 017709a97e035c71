//! `x [NOT] IN (<literal set>)` (`Expr::InSet`): each row binary-searches the set's sorted
//! values, which the executor uploads as kernel buffers (`buffer`).
//!
//! Why a buffer: the kernel source stays the same size whatever the list's length (a
//! comparison per item made NVRTC take minutes over 100,000 items, and even the values
//! as an initialized array cost about a second of compile time per 100,000), a list of
//! the same length and type reuses the cached kernel, and the expression keeps working
//! anywhere an expression may stand (a projection, CASE, an aggregate's argument), which
//! a semi/anti join against a table of the literals would not. A search is ~17 loads for
//! 100,000 values, all from a few L2-resident KiB near the top of the search.

use crate::emit::Emitter;
use crate::types::c_type;
use crate::value::Value;
use gpusql_common::{DataType, Result, ScalarValue};
use gpusql_plan::LiteralSet;
use std::sync::Arc;

/// The parts of an in-set a kernel parameter points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InSetPart {
    /// `const uint32_t`: how many values.
    Len,
    /// Fixed-width sets: the values ascending, in the type's C type.
    Values,
    /// String sets: int64 offsets (values + 1) and the bytes, values in byte order.
    Offsets,
    Bytes,
}

/// The parts a set of type `ty` is passed as.
pub fn parts(ty: &DataType) -> &'static [InSetPart] {
    match ty {
        DataType::Utf8 => &[InSetPart::Len, InSetPart::Offsets, InSetPart::Bytes],
        _ => &[InSetPart::Len, InSetPart::Values],
    }
}

/// The C name of set `index`'s parameter `part`.
pub fn param_name(index: usize, part: InSetPart) -> String {
    format!("inset{index}_{}", format!("{part:?}").to_lowercase())
}

/// The C declaration of a set's parameter `part`.
pub fn param_decl(ty: &DataType, part: InSetPart) -> String {
    match part {
        InSetPart::Len => "const uint32_t".into(),
        InSetPart::Values => format!("const {}* __restrict__", c_type(ty)),
        InSetPart::Offsets => "const int64_t* __restrict__".into(),
        InSetPart::Bytes => "const uint8_t* __restrict__".into(),
    }
}

/// The bytes of a pointer part of `set` as the kernel reads them (little-endian values of
/// the C type; at least 16 bytes, so no part is an empty allocation).
pub fn buffer(set: &LiteralSet, part: InSetPart) -> Vec<u8> {
    let mut out = vec![];
    match part {
        InSetPart::Len => {}
        InSetPart::Values => {
            for v in &set.values {
                let x = v.as_i128().unwrap_or(0);
                match c_type(&set.ty) {
                    "int32_t" => out.extend_from_slice(&(x as i32).to_le_bytes()),
                    "int64_t" => out.extend_from_slice(&(x as i64).to_le_bytes()),
                    _ => out.extend_from_slice(&x.to_le_bytes()),
                }
            }
        }
        InSetPart::Offsets => {
            let mut end = 0i64;
            out.extend_from_slice(&end.to_le_bytes());
            for v in &set.values {
                end += string(v).len() as i64;
                out.extend_from_slice(&end.to_le_bytes());
            }
        }
        InSetPart::Bytes => set.values.iter().for_each(|v| out.extend_from_slice(string(v).as_bytes())),
    }
    out.resize(out.len().max(16), 0);
    out
}

fn string(v: &ScalarValue) -> &str {
    match v {
        ScalarValue::Utf8(s) => s,
        _ => "",
    }
}

/// Emits the test of `x` against `set` (registered with the emitter's constants, whose
/// pipeline declares its parameters). NULL rules as `InList`: a NULL `x` is NULL; a value
/// in no item is NULL where the list held a NULL, else FALSE.
pub fn gen(x: &Value, set: &Arc<LiteralSet>, negated: bool, out: &mut Emitter) -> Result<Value> {
    let index = out.literals()?.in_set(set);
    let len = param_name(index, InSetPart::Len);
    let search = match set.ty {
        DataType::Utf8 => format!(
            "in_sorted_str({}, {}, {len}, {})",
            param_name(index, InSetPart::Offsets),
            param_name(index, InSetPart::Bytes),
            x.v
        ),
        _ => format!("in_sorted({}, {len}, ({}){})", param_name(index, InSetPart::Values), c_type(&set.ty), x.v),
    };
    let found = out.tmp("in");
    if x.is_never_null() {
        out.line(format!("const bool {found} = {search};"));
    } else {
        // (A NULL x's bits mean nothing: no search.)
        out.line(format!("const bool {found} = !({}) && {search};", x.null));
    }
    let null = match (x.is_never_null(), set.has_null) {
        (_, false) => x.null.clone(),
        (true, true) => format!("(!{found})"),
        (false, true) => format!("({} || !{found})", x.null),
    };
    Ok(Value { v: if negated { format!("(!{found})") } else { found }, null })
}
