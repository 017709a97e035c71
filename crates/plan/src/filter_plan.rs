//! Multi-predicate selection ([Sitaridi 2016] ch. 4): how a pipeline evaluates a conjunction.
//! Terms over the same columns form one condition; conditions are ordered by the rank
//! metric (selectivity - 1) / cost, cheapest-and-most-selective first; then a dynamic
//! program over consecutive runs of that order decides where to branch: a group's
//! conditions are evaluated without branches between them (their columns loaded together,
//! results combined with `&`), and the next group only for rows that passed (`&&`, whose
//! lanes that failed do no loads). Cost of a group that starts after conditions of
//! combined selectivity s: r_k (branch-free loads of k columns overlap: r_1 = 1, r_2 =
//! 0.75, r_k = 0.68, the calibration of [Sitaridi 2016], not re-measured here) x the sum over its
//! conditions of: each column's bytes x the chance that its 32-byte sector still holds an
//! active lane, 1 - (1 - s)^(32 / width) ([Sitaridi 2016] counts whole warps, min(32 s, 1); loads
//! are per sector on current GPUs), plus the compare work x min(32 s, 1).
//! Terms that can raise an error (division) are never moved before others nor grouped:
//! they come last, each on its own, in written order, for the rows that passed the rest.
//! Selectivities are measured on table samples where the filter is over a scan (see
//! `selectivity.rs`). The default (`Ranked`) keeps the rank order but one branch per term:
//! the branch-free groups measured 5-14% slower on several TPC-H queries at SF 10 on the
//! H100, while the rank order alone fixes badly written orders (a LIKE before
//! `l_quantity < 2`: 4.47 -> 1.34 ms) and is within noise of the written order on TPC-H
//! (docs/BENCHMARKS.md). `SET filter_order = optimized | ranked | written` switches.

use crate::expr::{BinaryOp, ConstantNames, Expr};
use gpusql_common::{DataType, Schema};
use std::fmt;

/// Estimates the selectivity of a set of terms (all TRUE).
pub type SelectivityFn<'a> = &'a dyn Fn(&[Expr]) -> f64;

/// The conjunction as groups of terms: within a group no branches, between groups `&&`.
#[derive(Debug, Clone, PartialEq)]
pub struct FilterPlan {
    pub groups: Vec<Vec<Expr>>,
}

/// How the physical planner lays out filters (switchable to measure the gain).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterOrder {
    /// Rank order and branch placement from the cost model.
    Optimized,
    /// Rank order, each term behind its own branch (no branch-free groups; the default).
    Ranked,
    /// The terms as written, each behind its own branch (the naive form).
    Written,
}

impl FilterPlan {
    pub fn written(predicate: &Expr) -> FilterPlan {
        FilterPlan { groups: predicate.clone().conjuncts().into_iter().map(|t| vec![t]).collect() }
    }

    pub fn terms(&self) -> impl Iterator<Item = &Expr> {
        self.groups.iter().flatten()
    }

    pub fn plan(predicate: &Expr, schema: &Schema, order: FilterOrder, selectivity: SelectivityFn) -> FilterPlan {
        let terms = predicate.clone().conjuncts();
        if order == FilterOrder::Written || terms.len() < 2 {
            return FilterPlan::written(predicate);
        }
        let (safe, unsafe_terms): (Vec<Expr>, Vec<Expr>) = terms.into_iter().partition(|t| !can_raise_error(t));
        // Conditions: terms over the same columns (a BETWEEN's two bounds) stay together.
        let mut conds: Vec<(Vec<usize>, Vec<Expr>)> = vec![];
        for t in safe {
            let mut cols = vec![];
            t.columns(&mut cols);
            cols.sort_unstable();
            cols.dedup();
            match conds.iter_mut().find(|(c, _)| *c == cols) {
                Some((_, ts)) => ts.push(t),
                None => conds.push((cols, vec![t])),
            }
        }
        let mut conds: Vec<Condition> =
            conds.into_iter().map(|(cols, terms)| Condition::new(cols, terms, schema, selectivity)).collect();
        conds.sort_by(|a, b| a.rank().total_cmp(&b.rank()));
        let mut groups = match order {
            FilterOrder::Ranked => conds.iter().flat_map(|c| c.terms.iter().map(|t| vec![t.clone()])).collect(),
            _ => branch_placement(&conds),
        };
        groups.extend(unsafe_terms.into_iter().map(|t| vec![t]));
        FilterPlan { groups }
    }
}

impl FilterPlan {
    /// The plan as `Display` prints it, its constants as `names` says.
    pub fn display_with<'a>(&'a self, names: &'a dyn ConstantNames) -> impl fmt::Display + 'a {
        FilterPlanDisplay { plan: self, names: Some(names) }
    }
}

struct FilterPlanDisplay<'a> {
    plan: &'a FilterPlan,
    names: Option<&'a dyn ConstantNames>,
}

impl fmt::Display for FilterPlanDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |e: &Expr| match self.names {
            Some(n) => e.display_with(n).to_string(),
            None => e.to_string(),
        };
        let groups: Vec<String> = self
            .plan
            .groups
            .iter()
            .map(|g| {
                let t: Vec<String> = g.iter().map(show).collect();
                if g.len() == 1 {
                    t.join("")
                } else {
                    format!("[{}]", t.join(" & "))
                }
            })
            .collect();
        write!(f, "{}", groups.join(" && "))
    }
}

impl fmt::Display for FilterPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        FilterPlanDisplay { plan: self, names: None }.fmt(f)
    }
}

struct Condition {
    terms: Vec<Expr>,
    sel: f64,
    /// Widths of the columns it loads.
    widths: Vec<f64>,
    /// Compare work per row (1 per term, 16 more per string predicate).
    compute: f64,
}

impl Condition {
    fn new(cols: Vec<usize>, terms: Vec<Expr>, schema: &Schema, selectivity: SelectivityFn) -> Condition {
        let sel = selectivity(&terms).clamp(1e-6, 1.0);
        // Bytes loaded per row, plus one per term for the compare, plus the bytes a string
        // predicate walks (a guess: 16 per LIKE / string comparison).
        let widths = cols.iter().map(|c| schema.fields.get(*c).map_or(8.0, |f| width(&f.ty))).collect();
        let strings: f64 = terms.iter().map(|t| if touches_strings(t, schema) { 16.0 } else { 0.0 }).sum();
        Condition { compute: strings + terms.len() as f64, sel, widths, terms }
    }

    /// Cost per row when the rows reaching it passed conditions of selectivity `s`.
    fn cost(&self, s: f64) -> f64 {
        let loads: f64 = self.widths.iter().map(|w| w * (1.0 - (1.0 - s).powf(32.0 / w))).sum();
        loads + self.compute * (32.0 * s).min(1.0)
    }

    /// Ascending rank = the order the conditions run in (Hellerstein's metric).
    fn rank(&self) -> f64 {
        (self.sel - 1.0) / self.cost(1.0)
    }
}

fn width(ty: &DataType) -> f64 {
    match ty {
        DataType::Boolean => 1.0,
        DataType::Int32 | DataType::Date => 4.0,
        DataType::Decimal { precision, .. } if *precision > 18 => 16.0,
        DataType::Utf8 => 8.0,
        _ => 8.0,
    }
}

fn touches_strings(e: &Expr, schema: &Schema) -> bool {
    let mut cols = vec![];
    e.columns(&mut cols);
    matches!(e, Expr::Like { .. } | Expr::Regex { .. })
        || cols.iter().any(|c| schema.fields.get(*c).is_some_and(|f| f.ty == DataType::Utf8))
}

/// Whether evaluating `e` can raise an error (`%` of integers or decimals by zero, INTEGER /
/// BIGINT arithmetic or a narrowed DECIMAL product out of range, a DOUBLE cast out of an integer type's range, a
/// TIMESTAMP out of range, text that does not read as a number or date; `/` divides as
/// DOUBLE, by zero too).
fn can_raise_error(e: &Expr) -> bool {
    let mut found = false;
    e.clone().transform(&mut |x| {
        let timestamp_range = match &x {
            Expr::TimestampAdd { .. } | Expr::DateTrunc { .. } => true,
            Expr::Cast { expr, ty: DataType::Timestamp } => expr.ty() != DataType::Timestamp,
            Expr::Extract { field, expr } => expr.ty() == DataType::Date && !field.is_day_field(),
            _ => false,
        };
        let modulo =
            matches!(&x, Expr::Binary { op: BinaryOp::Mod | BinaryOp::Div, ty, .. } if *ty != DataType::Float64);
        let integer_overflow = matches!(&x, Expr::Binary { op: BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul, ty, .. }
            if matches!(ty, DataType::Int32 | DataType::Int64))
            || matches!(&x, Expr::Binary { op: BinaryOp::Mul, left, right, ty } if Expr::decimal_product_narrowed(left, right, ty));
        let cast_of_double =
            matches!(&x, Expr::Cast { expr, ty } if expr.ty() == DataType::Float64 && *ty != DataType::Float64);
        // Text that does not read as the type (TRY_CAST: text the engine does not read).
        let cast_of_text = matches!(&x, Expr::Cast { expr, ty } | Expr::TryCast { expr, ty }
            if expr.ty() == DataType::Utf8 && *ty != DataType::Utf8);
        if timestamp_range || modulo || integer_overflow || cast_of_double || cast_of_text {
            found = true;
        }
        x
    });
    found
}

/// r_k: how much cheaper k branch-free column loads are than k separate ones.
fn overlap(k: usize) -> f64 {
    match k {
        0 | 1 => 1.0,
        2 => 0.75,
        _ => 0.68,
    }
}

/// The cheapest split of the ordered conditions into consecutive groups ([Sitaridi 2016]
/// Fig. 4.6, as a prefix dynamic program: best[j] = min over i < j of best[i] + cost of
/// group i..j).
fn branch_placement(conds: &[Condition]) -> Vec<Vec<Expr>> {
    let n = conds.len();
    let mut prefix_sel = vec![1.0; n + 1];
    for i in 0..n {
        prefix_sel[i + 1] = prefix_sel[i] * conds[i].sel;
    }
    let mut best = vec![f64::INFINITY; n + 1];
    let mut split = vec![0usize; n + 1];
    best[0] = 0.0;
    for j in 1..=n {
        for i in 0..j {
            let cost: f64 = conds[i..j].iter().map(|c| c.cost(prefix_sel[i])).sum();
            let total = best[i] + overlap(j - i) * cost;
            if total < best[j] {
                best[j] = total;
                split[j] = i;
            }
        }
    }
    let mut bounds = vec![];
    let mut j = n;
    while j > 0 {
        bounds.push((split[j], j));
        j = split[j];
    }
    bounds.reverse();
    bounds.into_iter().map(|(i, j)| conds[i..j].iter().flat_map(|c| c.terms.iter().cloned()).collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::selectivity::conjunction_selectivity;
    use gpusql_common::{Field, ScalarValue};

    fn col(i: usize, ty: DataType) -> Expr {
        Expr::Column { index: i, name: format!("c{i}"), ty, nullable: false }
    }
    fn cmp(op: BinaryOp, l: Expr, r: Expr) -> Expr {
        Expr::Binary { op, left: Box::new(l), right: Box::new(r), ty: DataType::Boolean }
    }
    fn and(a: Expr, b: Expr) -> Expr {
        cmp(BinaryOp::And, a, b)
    }

    #[test]
    fn selective_cheap_condition_runs_first_and_modulo_last() {
        let schema =
            Schema::new(vec![Field::new("c0", DataType::Utf8, false), Field::new("c1", DataType::Int32, false)]);
        let like = Expr::Like {
            expr: Box::new(col(0, DataType::Utf8)),
            pattern: crate::expr::LikePattern::new("%x%", None).unwrap(),
            negated: false,
        };
        let eq = cmp(BinaryOp::Eq, col(1, DataType::Int32), Expr::literal(ScalarValue::Int32(3), DataType::Int32));
        let div = cmp(
            BinaryOp::Gt,
            Expr::Binary {
                op: BinaryOp::Mod,
                left: Box::new(Expr::literal(ScalarValue::Int32(10), DataType::Int32)),
                right: Box::new(col(1, DataType::Int32)),
                ty: DataType::Int32,
            },
            Expr::literal(ScalarValue::Int32(1), DataType::Int32),
        );
        let written = and(and(div.clone(), like.clone()), eq.clone());
        let plan = FilterPlan::plan(&written, &schema, FilterOrder::Optimized, &conjunction_selectivity);
        let order: Vec<&Expr> = plan.terms().collect();
        assert_eq!(order, vec![&eq, &like, &div], "{plan}");
        assert_eq!(plan.groups.last(), Some(&vec![div.clone()]));
        assert_eq!(
            FilterPlan::plan(&written, &schema, FilterOrder::Written, &conjunction_selectivity).groups,
            vec![vec![div], vec![like], vec![eq]]
        );
    }
}
