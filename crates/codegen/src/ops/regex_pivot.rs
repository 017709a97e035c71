//! `col ~ pattern` (any `Expr::Regex` of a filter) over a table column's Pivot-4 copy: the
//! DFA walk of `dfa_match` (prelude.cu), reading the string as the copy's 4-byte pieces,
//! piece k of row r at `piv[k * n_rows + r]`, so the lanes of a warp read one piece column
//! of consecutive rows together (coalesced) instead of each lane its own bytes. The same
//! layout lock-step KMP reads for LIKE (`like_kmp.rs`); where the column has no pivoted
//! copy the kernel takes `dfa_match` over offsets + bytes: a uniform branch on the copy's
//! pointer.

use crate::kernel_builder::KernelBuilder;
use crate::literals::{literal_name, param_name, LiteralPart};
use crate::spec::{Param, Part};
use crate::value::Value;
use gpusql_plan::Expr;

/// Emits `term` when it is a regex test of a pivotable table string column; returns its
/// value (None: not this form, the caller generates it the usual way).
pub fn try_gen(k: &mut KernelBuilder, term: &Expr) -> Option<Value> {
    let Expr::Regex { expr, dfa, negated } = term else { return None };
    let Expr::Column { index, .. } = &**expr else { return None };
    let source_col = k.pivot_source(*index)?;
    let r = k.body().literals().ok()?.regex(term, dfa);
    let piv = k.param(Param::Input { column: source_col, part: Part::Pivoted }, "const uint32_t* __restrict__");
    let x = k.row()[*index].clone();
    let name = literal_name(r);
    let (columns, start) = (param_name(r, LiteralPart::DfaColumns), param_name(r, LiteralPart::DfaStart));
    let t = k.body().tmp("re");
    k.body().line(format!("// {name}: the DFA walks the Pivot-4 copy where the column has one"));
    k.body().line(format!("bool {t};"));
    k.body().open(format!("if ({piv} != nullptr)"));
    k.body().line(format!(
        "{t} = {}dfa_match_pivot4({piv}, n_rows, row, {}.len, {name}_classes_, {name}_next_, {columns}, {start});",
        if *negated { "!" } else { "" },
        x.v,
    ));
    k.body().close_with("else");
    let fallback = k.eval(term).ok()?;
    k.body().line(format!("{t} = {};", fallback.v));
    k.body().close();
    Some(Value { v: t, null: x.null })
}
