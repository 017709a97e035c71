//! Turns the binder's FROM list (a tree of cross joins under the WHERE filter) into a
//! left-deep tree of hash joins:
//! - single-table conjuncts are pushed onto their table (they filter the build or probe
//!   side before the join);
//! - `a = b` conjuncts between two tables become join keys;
//! - the largest (estimated, after its filters) table is the probe side, the fact table of
//!   a star schema; the others are added as build sides, most selective first, each one
//!   connected to the tables joined so far by at least one equi-join condition;
//! - whatever is left (conditions over three tables, non-equi conditions) filters the
//!   joined rows;
//! - semi/anti joins (IN / EXISTS) over the FROM list whose outer columns all belong to
//!   one table that ends up a build side are applied to that table before its hash table
//!   is built (TPC-H Q18: orders shrinks from 15M rows to the 624 whose lineitems sum
//!   above 300). On the probe side they stay after the joins, which usually drop rows
//!   first.
//!
//! A projection on top restores the FROM-list column order the binder bound against.
//!
//! WHERE conjuncts over the preserved side of a LEFT JOIN alone are moved below it first
//! (`below_left_join`): each preserved row is in the join's output, unchanged, so the
//! conjunct keeps the same rows there. TPC-DS q72's filters thus reach the inner joins
//! under its two LEFT JOINs, where they make join keys (`d1.d_week_seq = d2.d_week_seq`)
//! and shrink tables, instead of filtering the product of inventory and catalog_sales.

use super::OptimizerRule;
use crate::expr::{BinaryOp, Expr};
use crate::logical::{JoinKind, LogicalPlan};
use crate::selectivity::{estimate, Estimates};
use gpusql_common::{Error, Result};

pub struct JoinPlanning;

impl OptimizerRule for JoinPlanning {
    fn name(&self) -> &'static str {
        "join_planning"
    }
    fn rewrite(&self, plan: LogicalPlan) -> Result<LogicalPlan> {
        rewrite(plan)
    }
}

/// A semi/anti join taken off the top of a FROM list, to be placed by plan_joins.
struct SemiJoin {
    build: LogicalPlan,
    probe_keys: Vec<Expr>,
    build_keys: Vec<Expr>,
    kind: JoinKind,
    residual: Option<Expr>,
}

/// Whether the plan is semi/anti joins stacked on a FROM list (a cross join, maybe under
/// a filter).
fn peel_semi_joins(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Join { probe, kind: JoinKind::Semi | JoinKind::Anti, .. } => peel_semi_joins(probe),
        LogicalPlan::Filter { input, .. } => matches!(**input, LogicalPlan::CrossJoin { .. }),
        LogicalPlan::CrossJoin { .. } => true,
        _ => false,
    }
}

fn rewrite(plan: LogicalPlan) -> Result<LogicalPlan> {
    Ok(match plan {
        LogicalPlan::Join { kind: JoinKind::Semi | JoinKind::Anti, .. } if peel_semi_joins(&plan) => {
            let mut semis = vec![];
            let mut base = plan;
            while let LogicalPlan::Join { probe, build, probe_keys, build_keys, kind, residual } = base {
                semis.push(SemiJoin { build: rewrite(*build)?, probe_keys, build_keys, kind, residual });
                base = *probe;
            }
            semis.reverse();
            match base {
                LogicalPlan::Filter { input, predicate } => plan_joins(*input, Some(predicate), semis)?,
                cj => plan_joins(cj, None, semis)?,
            }
        }
        LogicalPlan::Filter { input, predicate } if matches!(*input, LogicalPlan::CrossJoin { .. }) => {
            plan_joins(*input, Some(predicate), vec![])?
        }
        LogicalPlan::Filter { input, predicate }
            if matches!(*input, LogicalPlan::Join { kind: JoinKind::Left, .. }) =>
        {
            match below_left_join(*input, predicate) {
                (moved, true) => rewrite(moved)?,
                (LogicalPlan::Filter { input, predicate }, false) => {
                    LogicalPlan::Filter { input: Box::new(rewrite(*input)?), predicate }
                }
                (other, false) => rewrite(other)?,
            }
        }
        cj @ LogicalPlan::CrossJoin { .. } => plan_joins(cj, None, vec![])?,
        LogicalPlan::Filter { input, predicate } => {
            LogicalPlan::Filter { input: Box::new(rewrite(*input)?), predicate }
        }
        LogicalPlan::Project { input, exprs, names } => {
            LogicalPlan::Project { input: Box::new(rewrite(*input)?), exprs, names }
        }
        LogicalPlan::Aggregate { input, group_by, group_names, aggs } => {
            LogicalPlan::Aggregate { input: Box::new(rewrite(*input)?), group_by, group_names, aggs }
        }
        LogicalPlan::Sort { input, keys } => LogicalPlan::Sort { input: Box::new(rewrite(*input)?), keys },
        LogicalPlan::Limit { input, skip, fetch } => {
            LogicalPlan::Limit { input: Box::new(rewrite(*input)?), skip, fetch }
        }
        LogicalPlan::Join { probe, build, probe_keys, build_keys, kind, residual } => LogicalPlan::Join {
            probe: Box::new(rewrite(*probe)?),
            build: Box::new(rewrite(*build)?),
            probe_keys,
            build_keys,
            kind,
            residual,
        },
        LogicalPlan::Repeat { input, times } => LogicalPlan::Repeat { input: Box::new(rewrite(*input)?), times },
        LogicalPlan::Enumerate { input, partition } => {
            LogicalPlan::Enumerate { input: Box::new(rewrite(*input)?), partition }
        }
        LogicalPlan::ConcatRuns { input, keys, value, position, separator } => {
            LogicalPlan::ConcatRuns { input: Box::new(rewrite(*input)?), keys, value, position, separator }
        }
        LogicalPlan::Window { input, windows } => LogicalPlan::Window { input: Box::new(rewrite(*input)?), windows },
        LogicalPlan::Union { inputs, schema } => {
            LogicalPlan::Union { inputs: inputs.into_iter().map(rewrite).collect::<Result<_>>()?, schema }
        }
        other => other,
    })
}

/// `predicate` over LEFT JOIN `join`, its conjuncts over the probe (preserved) side's
/// columns alone moved onto the probe (merged with a filter there); and whether any moved
/// (if not, the filter is as it was).
fn below_left_join(join: LogicalPlan, predicate: Expr) -> (LogicalPlan, bool) {
    let LogicalPlan::Join { probe, build, probe_keys, build_keys, kind, residual } = join else {
        return (LogicalPlan::Filter { input: Box::new(join), predicate }, false);
    };
    let probe_len = probe.schema().len();
    let (down, stay): (Vec<Expr>, Vec<Expr>) = predicate.conjuncts().into_iter().partition(|c| {
        let mut cols = vec![];
        c.columns(&mut cols);
        cols.iter().all(|i| *i < probe_len)
    });
    let Some(down) = and_all(down) else {
        let join = LogicalPlan::Join { probe, build, probe_keys, build_keys, kind, residual };
        let predicate = and_all(stay).expect("a predicate has a conjunct");
        return (LogicalPlan::Filter { input: Box::new(join), predicate }, false);
    };
    let probe = match *probe {
        LogicalPlan::Filter { input, predicate } => {
            LogicalPlan::Filter { input, predicate: and_all(vec![predicate, down]).expect("two conjuncts") }
        }
        other => LogicalPlan::Filter { input: Box::new(other), predicate: down },
    };
    let join = LogicalPlan::Join { probe: Box::new(probe), build, probe_keys, build_keys, kind, residual };
    let plan = match and_all(stay) {
        Some(predicate) => LogicalPlan::Filter { input: Box::new(join), predicate },
        None => join,
    };
    (plan, true)
}

fn flatten(plan: LogicalPlan, out: &mut Vec<LogicalPlan>) -> Result<()> {
    match plan {
        LogicalPlan::CrossJoin { left, right } => {
            flatten(*left, out)?;
            flatten(*right, out)
        }
        other => {
            out.push(rewrite(other)?);
            Ok(())
        }
    }
}

struct Edge {
    a: usize,
    a_expr: Expr,
    b: usize,
    b_expr: Expr,
    used: bool,
}

/// Where each relation of the flattened FROM list sits in the row the binder bound
/// against (their columns side by side).
struct Layout {
    lens: Vec<usize>,
    offsets: Vec<usize>,
}

impl Layout {
    fn new(rels: &[LogicalPlan]) -> Layout {
        let lens: Vec<usize> = rels.iter().map(|r| r.schema().len()).collect();
        let offsets: Vec<usize> = lens
            .iter()
            .scan(0, |acc, l| {
                let o = *acc;
                *acc += l;
                Some(o)
            })
            .collect();
        Layout { lens, offsets }
    }

    /// The relation FROM-list column `c` belongs to.
    fn rel_of(&self, c: usize) -> usize {
        self.offsets.iter().rposition(|o| *o <= c).unwrap_or(0)
    }

    /// `e` over FROM-list columns, rewritten over the columns of relation `r` alone.
    fn local(&self, e: Expr, r: usize) -> Expr {
        e.remap_columns(&|c| c - self.offsets[r])
    }

    /// The relations whose columns `e` reads, ascending, each once.
    fn rels_of(&self, e: &Expr) -> Vec<usize> {
        let mut cols = vec![];
        e.columns(&mut cols);
        let mut rs: Vec<usize> = cols.iter().map(|c| self.rel_of(*c)).collect();
        rs.sort_unstable();
        rs.dedup();
        rs
    }
}

/// The WHERE conjuncts, sorted by what they constrain.
struct Conjuncts {
    /// Per relation, conditions on it alone (over its own columns): they filter it
    /// before the join.
    pushed: Vec<Vec<Expr>>,
    /// `a = b` between two relations: the join keys to choose from.
    edges: Vec<Edge>,
    /// Everything else (over FROM-list columns): it filters the joined rows.
    residual: Vec<Expr>,
}

fn classify_conjuncts(predicate: Option<Expr>, layout: &Layout) -> Conjuncts {
    let mut out = Conjuncts { pushed: vec![vec![]; layout.lens.len()], edges: vec![], residual: vec![] };
    let terms: Vec<Expr> =
        predicate.map(|p| p.conjuncts()).unwrap_or_default().into_iter().flat_map(factor_or).collect();
    for term in terms {
        let rs = layout.rels_of(&term);
        if rs.len() > 1 {
            // A disjunction over several tables still implies, for each table every branch
            // restricts, the disjunction of those restrictions: it filters that table early
            // (TPC-H Q7: n1.n_name IN ('FRANCE', 'GERMANY')). The term itself stays.
            for r in &rs {
                if let Some(implied) = implied_filter(&term, &|c| layout.rel_of(c) == *r) {
                    out.pushed[*r].push(layout.local(implied, *r));
                }
            }
        }
        match (rs.as_slice(), &term) {
            ([r], _) => out.pushed[*r].push(layout.local(term.clone(), *r)),
            ([_, _], Expr::Binary { op: BinaryOp::Eq, left, right, .. }) => {
                match (layout.rels_of(left).as_slice(), layout.rels_of(right).as_slice()) {
                    ([a], [b]) if a != b => out.edges.push(Edge {
                        a: *a,
                        a_expr: layout.local((**left).clone(), *a),
                        b: *b,
                        b_expr: layout.local((**right).clone(), *b),
                        used: false,
                    }),
                    _ => out.residual.push(term),
                }
            }
            _ => out.residual.push(term),
        }
    }
    out
}

/// The probe side: the largest relation after its filters.
/// (Never a one-row relation while there is another: it joins on a constant key.)
fn probe_root(rels: &[LogicalPlan], est: &[(f64, f64)], lens: &[usize]) -> usize {
    let single: Vec<bool> = rels.iter().map(|r| r.yields_exactly_one_row()).collect();
    // Building costs more per row than probing and grows with the columns a build row
    // carries, so the root is the relation of most rows x columns (TPC-H Q7: the filtered
    // lineitem, 5 columns, probes rather than orders, 2 columns, of about as many rows).
    // Projection pushdown runs before this rule, so a scan has only the columns used.
    let weight = |r: usize| est[r].0 * lens[r].max(1) as f64;
    (0..rels.len())
        .max_by(|a, b| {
            (!single[*a], weight(*a)).partial_cmp(&(!single[*b], weight(*b))).unwrap_or(std::cmp::Ordering::Equal)
        })
        .unwrap_or(0)
}

/// The relations still to join (`None` once joined) and what is estimated of them.
struct Relations {
    slots: Vec<Option<LogicalPlan>>,
    /// (rows, selectivity) by the guessed estimates.
    est: Vec<(f64, f64)>,
    /// The fraction of rows kept, measured on table samples.
    kept: Vec<f64>,
}

/// Semi/anti joins on one build-side table filter it before its hash table is built; the
/// others are returned, to go on top of the joins.
fn place_semi_joins(
    semis: Vec<SemiJoin>,
    rels: &mut Relations,
    layout: &Layout,
    width: usize,
    root: usize,
) -> Result<Vec<SemiJoin>> {
    let mut on_top = vec![];
    for s in semis {
        let mut cols = vec![];
        for k in &s.probe_keys {
            k.columns(&mut cols);
        }
        if let Some(r) = &s.residual {
            r.columns(&mut cols);
        }
        let mut rs: Vec<usize> = cols.iter().filter(|c| **c < width).map(|c| layout.rel_of(*c)).collect();
        rs.sort_unstable();
        rs.dedup();
        match rs.as_slice() {
            [r] if *r != root => {
                let r = *r;
                let to_local = |c: usize| if c < width { c - layout.offsets[r] } else { c - width + layout.lens[r] };
                let input = rels.slots[r].take().ok_or_else(|| Error::plan("join planning"))?;
                rels.slots[r] = Some(LogicalPlan::Join {
                    probe: Box::new(input),
                    build: Box::new(s.build),
                    probe_keys: s.probe_keys.into_iter().map(|k| k.remap_columns(&to_local)).collect(),
                    build_keys: s.build_keys,
                    kind: s.kind,
                    residual: s.residual.map(|e| e.remap_columns(&to_local)),
                });
                // A rough guess: the join keeps half the rows.
                rels.est[r] = (rels.est[r].0 * 0.5, rels.est[r].1 * 0.5);
                rels.kept[r] *= 0.5;
            }
            _ => on_top.push(s),
        }
    }
    Ok(on_top)
}

/// The next build side, and whether it joins on a constant key (no equi-join condition).
fn next_build(rels: &Relations, edges: &[Edge], joined: &[usize]) -> Result<(usize, bool)> {
    let n = rels.slots.len();
    let connected =
        |r: usize| edges.iter().any(|e| (e.a == r && joined.contains(&e.b)) || (e.b == r && joined.contains(&e.a)));
    let open: Vec<usize> = (0..n).filter(|r| !joined.contains(r) && connected(*r)).collect();
    let most_selective = open.iter().map(|r| rels.kept[*r]).fold(f64::INFINITY, f64::min);
    let candidate = open
        .into_iter()
        .filter(|r| rels.kept[*r] <= most_selective * 10.0)
        .min_by(|a, b| rels.est[*a].1.total_cmp(&rels.est[*b].1).then(rels.est[*a].0.total_cmp(&rels.est[*b].0)));
    if let Some(next) = candidate {
        return Ok((next, false));
    }
    // Once nothing else can be joined: a relation of exactly one row (an uncorrelated
    // scalar subquery), else the smallest left (a cross join: its rows are every probe
    // row's matches, which the warp walks together; conditions between the two filter
    // the pairs above the join) joins every row on a constant key.
    let single =
        (0..n).find(|r| !joined.contains(r) && rels.slots[*r].as_ref().is_some_and(|p| p.yields_exactly_one_row()));
    let smallest = (0..n).filter(|r| !joined.contains(r)).min_by(|a, b| rels.est[*a].0.total_cmp(&rels.est[*b].0));
    single.or(smallest).map(|next| (next, true)).ok_or_else(|| Error::plan("join planning: no relation left"))
}

/// The keys joining `next` to the relations joined so far (each edge used once): the
/// probe keys over the joined row, the build keys over `next`'s columns.
fn join_keys(
    edges: &mut [Edge],
    next: usize,
    joined: &[usize],
    position: &[usize],
    constant_key: bool,
) -> (Vec<Expr>, Vec<Expr>) {
    let mut probe_keys = vec![];
    let mut build_keys = vec![];
    if constant_key {
        let zero = Expr::literal(gpusql_common::ScalarValue::Int32(0), gpusql_common::DataType::Int32);
        probe_keys.push(zero.clone());
        build_keys.push(zero);
    }
    for e in edges.iter_mut() {
        let (mine, mine_expr, other, other_expr) =
            if e.b == next { (e.b, &e.b_expr, e.a, &e.a_expr) } else { (e.a, &e.a_expr, e.b, &e.b_expr) };
        if mine == next && joined.contains(&other) && !e.used {
            e.used = true;
            let at = position[other];
            probe_keys.push(other_expr.clone().remap_columns(&|c| c + at));
            build_keys.push(mine_expr.clone());
        }
    }
    (probe_keys, build_keys)
}

/// The left-deep join tree from `root`, and where each relation's columns start in its
/// row.
fn join_all(mut rels: Relations, edges: &mut [Edge], lens: &[usize], root: usize) -> Result<(LogicalPlan, Vec<usize>)> {
    let mut current = rels.slots[root].take().ok_or_else(|| Error::plan("join planning"))?;
    let mut position = vec![usize::MAX; lens.len()];
    position[root] = 0;
    let mut width = lens[root];
    let mut joined = vec![root];
    while joined.len() < lens.len() {
        let (next, constant_key) = next_build(&rels, edges, &joined)?;
        let (probe_keys, build_keys) = join_keys(edges, next, &joined, &position, constant_key);
        let build = rels.slots[next].take().ok_or_else(|| Error::plan("join planning"))?;
        current = LogicalPlan::Join {
            probe: Box::new(current),
            build: Box::new(build),
            probe_keys,
            build_keys,
            kind: JoinKind::Inner,
            residual: None,
        };
        position[next] = width;
        width += lens[next];
        joined.push(next);
    }
    Ok((current, position))
}

fn plan_joins(cross: LogicalPlan, predicate: Option<Expr>, semis: Vec<SemiJoin>) -> Result<LogicalPlan> {
    let original_schema = cross.schema();
    let mut rels = vec![];
    flatten(cross, &mut rels)?;
    let layout = Layout::new(&rels);

    let Conjuncts { pushed, mut edges, residual } = classify_conjuncts(predicate, &layout);
    let rels: Vec<LogicalPlan> = rels
        .into_iter()
        .zip(pushed)
        .map(|(r, p)| match and_all(p) {
            Some(pred) => LogicalPlan::Filter { input: Box::new(r), predicate: pred },
            None => r,
        })
        .collect();
    let est: Vec<(f64, f64)> = rels.iter().map(|r| estimate(r, Estimates::Guessed)).collect();
    // The order of the build sides (most selective first): among the candidates whose
    // fraction of rows kept, measured on table samples, is within 10x of the most
    // selective one's, the guessed order. So SSB Q2.2/Q2.3 probe their 0.8% / 0.1% of
    // parts before the 20% of suppliers (1.2x / 1.4x faster at SF 20), whose guessed
    // equality filters tie. Ordering by the measured fractions alone reordered Q2.1 (4%
    // vs 20%), Q3.4 and Q4.3 for the worse (up to 1.5x slower): where fractions are close,
    // a probe's cost (its table's size, a shared-memory table) decides, which they do not
    // price. (The probe side stays chosen by guesses; see `estimate`.)
    let kept: Vec<f64> = rels.iter().map(|r| estimate(r, Estimates::Measured).1).collect();
    let root = probe_root(&rels, &est, &layout.lens);
    let mut rels = Relations { slots: rels.into_iter().map(Some).collect(), est, kept };
    let on_top = place_semi_joins(semis, &mut rels, &layout, original_schema.len(), root)?;
    let (mut current, position) = join_all(rels, &mut edges, &layout.lens, root)?;

    // Conditions between tables that were joined another way filter the result.
    let to_new = |c: usize| {
        let r = layout.rel_of(c);
        c - layout.offsets[r] + position[r]
    };
    let mut residual: Vec<Expr> = residual.into_iter().map(|t| t.remap_columns(&to_new)).collect();
    for e in edges.iter().filter(|e| !e.used) {
        let l = e.a_expr.clone().remap_columns(&|c| c + position[e.a]);
        let r = e.b_expr.clone().remap_columns(&|c| c + position[e.b]);
        residual.push(Expr::Binary {
            op: BinaryOp::Eq,
            left: Box::new(l),
            right: Box::new(r),
            ty: gpusql_common::DataType::Boolean,
        });
    }
    if let Some(pred) = and_all(residual) {
        current = LogicalPlan::Filter { input: Box::new(current), predicate: pred };
    }
    // Back to the FROM-list column order.
    let exprs = original_schema
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| Expr::Column { index: to_new(i), name: f.name.clone(), ty: f.ty, nullable: f.nullable })
        .collect();
    let names = original_schema.fields.iter().map(|f| f.name.clone()).collect();
    let mut plan = LogicalPlan::Project { input: Box::new(current), exprs, names };
    for s in on_top {
        plan = LogicalPlan::Join {
            probe: Box::new(plan),
            build: Box::new(s.build),
            probe_keys: s.probe_keys,
            build_keys: s.build_keys,
            kind: s.kind,
            residual: s.residual,
        };
    }
    Ok(plan)
}

fn and_all(terms: Vec<Expr>) -> Option<Expr> {
    terms.into_iter().reduce(|a, b| Expr::Binary {
        op: BinaryOp::And,
        left: Box::new(a),
        right: Box::new(b),
        ty: gpusql_common::DataType::Boolean,
    })
}

fn disjuncts(e: Expr) -> Vec<Expr> {
    match e {
        Expr::Binary { op: BinaryOp::Or, left, right, .. } => {
            let mut v = disjuncts(*left);
            v.extend(disjuncts(*right));
            v
        }
        e => vec![e],
    }
}

/// For a disjunction whose every branch has conjuncts over columns `mine` accepts only:
/// the disjunction of those conjuncts, which the term implies.
fn implied_filter(term: &Expr, mine: &dyn Fn(usize) -> bool) -> Option<Expr> {
    if !matches!(term, Expr::Binary { op: BinaryOp::Or, .. }) {
        return None;
    }
    let mut branches = vec![];
    for d in disjuncts(term.clone()) {
        let own: Vec<Expr> = d
            .conjuncts()
            .into_iter()
            .filter(|c| {
                let mut cols = vec![];
                c.columns(&mut cols);
                !cols.is_empty() && cols.iter().all(|x| mine(*x))
            })
            .collect();
        branches.push(and_all(own)?);
    }
    branches.into_iter().reduce(|a, b| Expr::Binary {
        op: BinaryOp::Or,
        left: Box::new(a),
        right: Box::new(b),
        ty: gpusql_common::DataType::Boolean,
    })
}

/// `(a AND b) OR (a AND c)` is `a AND (b OR c)`: conjuncts every branch of a disjunction
/// shares come out of it, so a join condition repeated in each branch (TPC-H Q19) becomes
/// a join key instead of a condition over a cross join.
fn factor_or(term: Expr) -> Vec<Expr> {
    if !matches!(term, Expr::Binary { op: BinaryOp::Or, .. }) {
        return vec![term];
    }
    let branches: Vec<Vec<Expr>> = disjuncts(term.clone()).into_iter().map(|d| d.conjuncts()).collect();
    let common: Vec<Expr> =
        branches[0].iter().filter(|c| branches[1..].iter().all(|b| b.contains(c))).cloned().collect();
    if common.is_empty() {
        return vec![term];
    }
    let mut rest = vec![];
    for b in branches {
        match and_all(b.into_iter().filter(|c| !common.contains(c)).collect()) {
            Some(r) => rest.push(r),
            // One branch is just the common part: the disjunction adds nothing.
            None => return common,
        }
    }
    let or = rest.into_iter().reduce(|a, b| Expr::Binary {
        op: BinaryOp::Or,
        left: Box::new(a),
        right: Box::new(b),
        ty: gpusql_common::DataType::Boolean,
    });
    common.into_iter().chain(or).collect()
}
