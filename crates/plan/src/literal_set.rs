//! The literals of a long `x [NOT] IN (…)` list as one sorted set, built once at plan time
//! (`Expr::InSet`): the CPU backend looks a value up by binary search instead of comparing
//! it with every item, and the GPU kernel binary-searches the same sorted values passed as
//! a buffer (codegen `in_set.rs`), so the kernel source does not grow with the list.

use crate::expr::Expr;
use gpusql_common::{DataType, ScalarValue};
use std::cmp::Ordering;
use std::fmt;

/// Lists of more literals than this become sets; shorter ones stay comparisons (on the
/// GPU a few unrolled compares beat a search through global memory).
pub const IN_SET_MIN_ITEMS: usize = 16;

#[derive(Debug, Clone, PartialEq)]
pub struct LiteralSet {
    /// The type of the tested value and of every item (the binder casts them to one).
    pub ty: DataType,
    /// The distinct non-NULL items, ascending by `ScalarValue::compare` (byte order for
    /// strings, as the kernels' `str_cmp`).
    pub values: Vec<ScalarValue>,
    /// Some item was NULL: a value matching no item is then NULL, not FALSE.
    pub has_null: bool,
}

impl LiteralSet {
    /// The set of `list`, where every item is a literal of a type the set supports and the
    /// list is long enough to be worth it (else None: the list stays an `InList`).
    pub fn from_list(ty: DataType, list: &[Expr]) -> Option<LiteralSet> {
        if list.len() <= IN_SET_MIN_ITEMS || !supported(&ty) {
            return None;
        }
        let mut values = Vec::with_capacity(list.len());
        let mut has_null = false;
        for item in list {
            match item {
                Expr::Literal { value: ScalarValue::Null, .. } => has_null = true,
                Expr::Literal { value, ty: t } if *t == ty => values.push(value.clone()),
                _ => return None,
            }
        }
        values.sort_by(|a, b| a.compare(b));
        values.dedup_by(|a, b| a.compare(b) == Ordering::Equal);
        Some(LiteralSet { ty, values, has_null })
    }

    /// Whether the non-NULL `v` equals some item.
    pub fn contains(&self, v: &ScalarValue) -> bool {
        self.values.binary_search_by(|x| x.compare(v)).is_ok()
    }

    /// Whether some item lies in [lo, hi] (row-group pruning).
    pub fn any_between(&self, lo: &ScalarValue, hi: &ScalarValue) -> bool {
        let first = self.values.partition_point(|x| x.compare(lo) == Ordering::Less);
        self.values.get(first).is_some_and(|x| x.compare(hi) != Ordering::Greater)
    }
}

/// Types whose sets the kernels search with their C `<` and `==`. Not DOUBLE (SQL's order
/// of NaN and -0.0, `semantics::f64_cmp`, is not C's: its lists stay comparisons) nor
/// BOOLEAN (two values).
fn supported(ty: &DataType) -> bool {
    matches!(
        ty,
        DataType::Int32
            | DataType::Int64
            | DataType::Decimal { .. }
            | DataType::Date
            | DataType::Timestamp
            | DataType::Utf8
    )
}

/// EXPLAIN shows a few items and the count, not the whole list.
impl fmt::Display for LiteralSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 3;
        for v in self.values.iter().take(SHOWN) {
            write!(f, "{}, ", Expr::literal(v.clone(), self.ty))?;
        }
        if self.has_null {
            write!(f, "NULL, ")?;
        }
        write!(f, "… {} distinct values", self.values.len())
    }
}
