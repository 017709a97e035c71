//! The per-block code index of a HashAggregate whose keys are all dictionary-encoded
//! string columns of the scanned table: the row's codes, combined into one number, index a
//! small shared-memory array of group ids. A row of a known combination finds its group
//! with one shared load: no key value loaded, no hash, no key compared (the group cache
//! does all three). Codes name values one to one, so a combination is a group.

use crate::hash_table::{emit_insert, KeyArrays};
use crate::kernel_builder::KernelBuilder;
use gpusql_common::Result;
use gpusql_plan::Expr;

/// The most combinations of codes indexed (one int each in shared memory: 8 KiB, within
/// the group cache's share that it replaces).
const CODE_INDEX_SLOTS: usize = 2048;

/// Per key: the row's code (C expression), the dictionary's size, whether the key may be
/// NULL (NULL takes the code after the last). None where a key is not a dictionary-encoded
/// source column or the combinations are too many to index.
pub fn code_keys(k: &KernelBuilder, keys: &[Expr]) -> Option<Vec<(String, usize, bool)>> {
    let mut out = vec![];
    let mut slots = 1usize;
    for key in keys {
        let Expr::Column { index, nullable, .. } = key else { return None };
        let (code, values) = k.dictionary_code(*index)?;
        if values == 0 {
            return None;
        }
        slots = slots.checked_mul(values + usize::from(*nullable))?;
        out.push((code, values, *nullable));
    }
    (slots <= CODE_INDEX_SLOTS).then_some(out)
}

/// Emits the lookup of the row's group (`gid_`) by its keys' codes (`codes`, from
/// `code_keys`), inside the sink's `if (active)`: a known combination takes the block's
/// entry; a new one loads the keys, finds or inserts its group in the global table
/// (`table`: slots, mask, group capacity, group count) and enters it. Entries are written
/// by every lane that missed, all with the same group id, so no lane waits for another.
pub fn emit_code_index(
    k: &mut KernelBuilder,
    id: usize,
    keys: &[Expr],
    codes: &[(String, usize, bool)],
    arrays: &[KeyArrays],
    table: [&str; 4],
) -> Result<()> {
    let [slots, mask, max_groups, count] = table;
    let n: usize = codes.iter().map(|(_, values, nullable)| values + usize::from(*nullable)).product();
    k.pre().line(format!(
        "// HashAggregate #{id}: the group of each combination of the keys' dictionary codes this block saw ({n} entries)"
    ));
    k.pre().line(format!("__shared__ int ci_gid_[{n}];"));
    k.pre().line(format!("for (int i = threadIdx.x; i < {n}; i += blockDim.x) ci_gid_[i] = -1;"));
    // NULL keys need their flags: those columns load first.
    let nullable: Vec<&Expr> = keys.iter().zip(codes).filter(|(_, c)| c.2).map(|(e, _)| e).collect();
    k.load_columns(&nullable);
    let mut index = String::new();
    let mut in_range = vec![];
    for (i, ((code, values, null), key)) in codes.iter().zip(keys).enumerate() {
        let c = if *null {
            let v = k.eval(key)?;
            format!("{} ? {values}u : (uint32_t){code}", v.null)
        } else {
            format!("(uint32_t){code}")
        };
        let width = values + usize::from(*null);
        k.body().line(format!("const uint32_t ck{i}_ = {c};"));
        in_range.push(format!("ck{i}_ < {width}u"));
        index = if i == 0 { format!("ck{i}_") } else { format!("({index}) * {width}u + ck{i}_") };
    }
    let b = k.body();
    b.line("// the block's entry for the row's codes first; the global table where it has none");
    b.line("// (a code outside its dictionary would take none: the global table decides)");
    b.line(format!("const uint32_t cs_ = {} ? {index} : {n}u;", in_range.join(" && ")));
    b.line(format!("if (cs_ < {n}u) gid_ = ci_gid_[cs_];"));
    b.open("if (gid_ < 0)");
    let all: Vec<&Expr> = keys.iter().collect();
    k.load_columns(&all);
    let mut kv = vec![];
    for key in keys {
        kv.push(k.eval(key)?);
    }
    let b = k.body();
    emit_insert(b, &kv, arrays, slots, mask, max_groups, count);
    b.line(format!("if (gid_ >= 0 && cs_ < {n}u) ci_gid_[cs_] = gid_;"));
    b.close();
    Ok(())
}
