//! Band joins: a join without an equality whose conditions bound a build column by the probe
//! row (`x BETWEEN r.lo AND r.hi`, `a.t >= b.start`, `a.x < b.y`). Instead of walking every
//! build row for every probe row (a cross join under a filter), the build rows are sorted by
//! one bounded column and each probe row binary-searches the range of rows that can match:
//!
//! - a *lower* bound (`lo <= x`) holds for a prefix of the rows sorted by `lo`;
//! - an *upper* bound (`hi >= x`) holds for a suffix of the rows sorted by `hi`; with the
//!   rows sorted by `lo` instead, it is searched over the running maximum of `hi` (which
//!   only grows along the rows): rows before the first whose running maximum satisfies it
//!   cannot match.
//!
//! The search only narrows the rows a probe row visits: every condition still runs on each
//! visited pair (the filter above an inner join, the residual of a semi / anti / mark
//! join), so the answers are those of the cross join. A search condition is a comparison of
//! a build column with an expression of the probe row, evaluated with SQL's comparison (NaN
//! above every number, -0 = 0) over values the sort put in the same order. The column may
//! be under widening casts and under the addition or subtraction of a constant, which keep
//! its order (and commute with the running maximum); an overflow there is the error the
//! condition raises over that pair. Rows with a NULL bound match nothing and stay out.

use crate::expr::{BinaryOp, Expr};
use gpusql_common::{DataType, Schema};

/// How a probe row finds its candidate build rows (see the module comment). Conditions
/// are over the probe row followed by the build row, as the join's.
#[derive(Debug, Clone, PartialEq)]
pub struct BandSearch {
    /// The build column the rows are sorted by (ascending, no NULLs).
    pub key: usize,
    /// A condition true for a prefix of the sorted rows (reads build column `key` only).
    pub below: Option<Expr>,
    /// A condition true for a suffix of the rows in the order of the running maximum of
    /// build column `.0` (reads that column only). Where `.0` is `key` the sorted column
    /// is its own running maximum.
    pub above: Option<(usize, Expr)>,
}

impl BandSearch {
    /// The build column whose running maximum the probe searches, where it is not `key`.
    pub fn max_column(&self) -> Option<usize> {
        self.above.as_ref().map(|(c, _)| *c).filter(|c| *c != self.key)
    }

    /// Both bounds: a probe row visits only the rows of its band (else a prefix or a suffix).
    pub fn two_sided(&self) -> bool {
        self.below.is_some() && self.above.is_some()
    }

    /// The search conditions, the lower bound's first.
    pub fn conditions(&self) -> impl Iterator<Item = &Expr> {
        self.below.iter().chain(self.above.iter().map(|(_, c)| c))
    }

    pub fn conditions_mut(&mut self) -> impl Iterator<Item = &mut Expr> {
        self.below.iter_mut().chain(self.above.iter_mut().map(|(_, c)| c))
    }

    /// The build columns a band table must not hold NULL in.
    pub fn bounded_columns(&self) -> Vec<usize> {
        let mut out = vec![self.key];
        out.extend(self.max_column());
        out
    }
}

/// Which way a comparison bounds a build column.
#[derive(PartialEq)]
enum Bound {
    /// build <= probe: true for the small build values.
    Lower,
    /// build >= probe: true for the large build values.
    Upper,
}

/// The band search over `terms` (conjuncts over `probe_width` probe columns followed by the
/// build columns `build`), if a term bounds a build column. A lower bound, where there is
/// one, picks the sort column.
pub fn band_search(terms: &[Expr], probe_width: usize, build: &Schema) -> Option<BandSearch> {
    let mut lower: Option<(usize, Expr)> = None;
    let mut upper: Option<(usize, Expr)> = None;
    for t in terms {
        let Some((column, bound)) = bounded_column(t, probe_width, build) else { continue };
        let slot = if bound == Bound::Lower { &mut lower } else { &mut upper };
        if slot.is_none() {
            *slot = Some((column, t.clone()));
        }
    }
    match (lower, upper) {
        (Some((key, below)), above) => Some(BandSearch { key, below: Some(below), above }),
        (None, Some((key, above))) => Some(BandSearch { key, below: None, above: Some((key, above)) }),
        (None, None) => None,
    }
}

/// The build column `term` compares with an expression of the probe row, and which way.
fn bounded_column(term: &Expr, probe_width: usize, build: &Schema) -> Option<(usize, Bound)> {
    let Expr::Binary { op, left, right, .. } = term else { return None };
    let build_on_left = match (build_column(left, probe_width), build_column(right, probe_width)) {
        (Some(_), None) if reads_probe_only(right, probe_width) => true,
        (None, Some(_)) if reads_probe_only(left, probe_width) => false,
        _ => return None,
    };
    let column = build_column(if build_on_left { left } else { right }, probe_width)? - probe_width;
    if !searchable(&build.fields.get(column)?.ty) {
        return None;
    }
    let small_build_values = match op {
        BinaryOp::Lt | BinaryOp::LtEq => build_on_left,
        BinaryOp::Gt | BinaryOp::GtEq => !build_on_left,
        _ => return None,
    };
    Some((column, if small_build_values { Bound::Lower } else { Bound::Upper }))
}

/// The build column `e` reads, if `e` never decreases as that column grows: the column
/// under widening casts and under additions or subtractions of a constant (`r.lo - 5`).
fn build_column(e: &Expr, probe_width: usize) -> Option<usize> {
    let constant = |e: &Expr| matches!(e, Expr::Literal { .. } | Expr::Parameter { .. });
    match e {
        Expr::Column { index, .. } if *index >= probe_width => Some(*index),
        Expr::Cast { expr, ty } if widens(&expr.ty(), ty) => build_column(expr, probe_width),
        Expr::Binary { op: BinaryOp::Add | BinaryOp::Sub, left, right, .. } if constant(right) => {
            build_column(left, probe_width)
        }
        Expr::Binary { op: BinaryOp::Add, left, right, .. } if constant(left) => build_column(right, probe_width),
        _ => None,
    }
}

/// Casts that keep the order of every value and never fail.
fn widens(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    match (from, to) {
        (Int32, Int64 | Float64) | (Int64, Float64) | (Date, Timestamp) => true,
        (Decimal { .. }, Float64) => true,
        (Int32 | Int64, Decimal { precision, scale }) => {
            let digits = if *from == Int32 { 10 } else { 19 };
            precision - scale >= digits
        }
        (Decimal { precision: p1, scale: s1 }, Decimal { precision: p2, scale: s2 }) => s2 >= s1 && p2 - s2 >= p1 - s1,
        _ => false,
    }
}

/// Types whose columns the sort orders as SQL compares them and whose running maximum the
/// GPU keeps (4- and 8-byte integers, dates, timestamps, decimals up to 18 digits, doubles).
fn searchable(ty: &DataType) -> bool {
    match ty {
        DataType::Int32 | DataType::Int64 | DataType::Date | DataType::Timestamp | DataType::Float64 => true,
        DataType::Decimal { precision, .. } => *precision <= 18,
        DataType::Boolean | DataType::Utf8 | DataType::Interval => false,
    }
}

fn reads_probe_only(e: &Expr, probe_width: usize) -> bool {
    let mut cols = vec![];
    e.columns(&mut cols);
    cols.iter().all(|c| *c < probe_width)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpusql_common::Field;

    fn col(index: usize, ty: DataType) -> Expr {
        Expr::Column { index, name: format!("c{index}"), ty, nullable: true }
    }

    fn cmp(op: BinaryOp, l: Expr, r: Expr) -> Expr {
        Expr::Binary { op, left: Box::new(l), right: Box::new(r), ty: DataType::Boolean }
    }

    #[test]
    fn between_sorts_by_the_lower_bound_and_searches_the_running_maximum_of_the_upper() {
        // probe: x (0); build: lo (1), hi (2), label (3)
        let build = Schema::new(vec![
            Field::new("lo", DataType::Int64, true),
            Field::new("hi", DataType::Int64, true),
            Field::new("label", DataType::Utf8, true),
        ]);
        let x = col(0, DataType::Int64);
        let terms = vec![
            cmp(BinaryOp::GtEq, x.clone(), col(1, DataType::Int64)),
            cmp(BinaryOp::Gt, col(2, DataType::Int64), x.clone()),
        ];
        let b = band_search(&terms, 1, &build).unwrap();
        assert_eq!((b.key, b.max_column(), b.two_sided()), (0, Some(1), true));
        // An upper bound alone sorts by its own column: no running maximum.
        let b = band_search(&terms[1..], 1, &build).unwrap();
        assert_eq!((b.key, b.max_column(), b.below.is_some()), (1, None, false));
    }

    #[test]
    fn text_casts_strings_and_mixed_sides_are_not_bounds() {
        let build = Schema::new(vec![Field::new("s", DataType::Utf8, true), Field::new("n", DataType::Int32, true)]);
        let x = col(0, DataType::Int64);
        let text = Expr::Cast { expr: Box::new(col(1, DataType::Utf8)), ty: DataType::Int64 };
        let narrowing =
            Expr::Cast { expr: Box::new(col(2, DataType::Int32)), ty: DataType::Decimal { precision: 5, scale: 0 } };
        let both = Expr::Binary {
            op: BinaryOp::Add,
            left: Box::new(x.clone()),
            right: Box::new(Expr::Cast { expr: Box::new(col(2, DataType::Int32)), ty: DataType::Int64 }),
            ty: DataType::Int64,
        };
        let checks = [
            cmp(BinaryOp::Lt, x.clone(), text),
            cmp(BinaryOp::Lt, both, col(2, DataType::Int32)),
            cmp(BinaryOp::Lt, x.clone(), narrowing),
        ];
        for t in checks {
            assert!(band_search(&[t], 1, &build).is_none());
        }
        let widened = Expr::Cast { expr: Box::new(col(2, DataType::Int32)), ty: DataType::Int64 };
        assert_eq!(band_search(&[cmp(BinaryOp::Lt, x.clone(), widened.clone())], 1, &build).map(|b| b.key), Some(1));
        // n - 5 keeps n's order; 5 - n reverses it.
        let five = Expr::literal(gpusql_common::ScalarValue::Int64(5), DataType::Int64);
        let minus = |l: Expr, r: Expr| Expr::Binary {
            op: BinaryOp::Sub,
            left: Box::new(l),
            right: Box::new(r),
            ty: DataType::Int64,
        };
        let shifted = band_search(&[cmp(BinaryOp::Lt, x.clone(), minus(widened.clone(), five.clone()))], 1, &build);
        assert_eq!(shifted.map(|b| b.key), Some(1));
        assert!(band_search(&[cmp(BinaryOp::Lt, x, minus(five, widened))], 1, &build).is_none());
    }
}
