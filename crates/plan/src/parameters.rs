//! Plan templates: a SELECT planned once for every value of its literals.
//!
//! The engine binds a query with its literals as parameters (`Expr::Parameter`; which
//! literals, the SQL crate's `parameterize` decides) and keeps the physical plan by the
//! statement's shape, its text with those literals replaced. A query that differs only in
//! them is not parsed into a new plan: the kept one is instantiated with its values
//! (`instantiate`), and its kernels, already generated and compiled, are launched with the
//! new constants.
//!
//! That is sound because nothing decides on a parameter's value at plan time: constant
//! folding turns a column-free expression over parameters into a derived parameter (its
//! expression kept, evaluated again per run) instead of a literal; row-group pruning,
//! literal sets and the code generator's constant keys only look at `Expr::Literal`.
//! A LIKE pattern that is a parameter (`LikePattern::source`) is compiled again per run,
//! and must keep its form (`LikePattern::form`: the code differs by it).
//! Selectivity estimates do read the first values (they order filters and joins, which
//! changes no result). A value that would not fit the plan (a derived parameter that
//! becomes NULL, an error evaluating one) makes `instantiate` refuse: the statement is
//! then planned as written.

use crate::eval::eval;
use crate::expr::{Expr, LikePattern};
use crate::physical::{PhysicalPlan, PipelineOp, Sink, Stage};
use gpusql_common::{DataType, Result, ScalarValue};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Where a parameter's value comes from. `id` names it in the plans made from one
/// template (clones keep it), and in the kernel constants bound from it.
#[derive(Debug)]
pub struct ParamSource {
    pub id: u64,
    pub kind: ParamKind,
}

/// Two parameters of one kind (the same literal of the statement, or the same expression
/// of such) have the same value in every run: plans equal but for their ids are equal (a
/// CTE's two copies, which the planner then aggregates once, as it does for the literals'
/// values when the statement is planned as written).
impl PartialEq for ParamSource {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
    }
}

#[derive(Debug, PartialEq)]
pub enum ParamKind {
    /// The statement's literal number `index` (from 0), of the parameter's type.
    Literal(usize),
    /// A column-free expression of parameters (folded at plan time for a literal).
    Expr(Expr),
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

fn source(kind: ParamKind) -> Arc<ParamSource> {
    Arc::new(ParamSource { id: NEXT_ID.fetch_add(1, Ordering::Relaxed), kind })
}

/// The statement's literal number `index`, of value `value` (not NULL) and type `ty`.
pub fn literal_parameter(index: usize, value: ScalarValue, ty: DataType) -> Expr {
    Expr::Parameter { value, ty, source: source(ParamKind::Literal(index)) }
}

/// Whether `e` reads a parameter.
pub fn has_parameters(e: &Expr) -> bool {
    matches!(e, Expr::Parameter { .. }) || e.children().iter().any(|c| has_parameters(c))
}

/// Column-free `e`, which reads parameters, as one parameter computed from them (what
/// constant folding makes of a literal expression). Where `e` may be NULL it stays as it
/// is: backends treat a parameter as a non-NULL constant.
pub fn derived(e: Expr) -> Result<Expr> {
    if e.nullable() || matches!(e, Expr::Parameter { .. }) {
        return Ok(e);
    }
    let value = eval(&e, &[])?;
    if value.is_null() {
        return Ok(e);
    }
    Ok(Expr::Parameter { value, ty: e.ty(), source: source(ParamKind::Expr(e)) })
}

/// The values of a plan's parameters in one run, by `ParamSource::id` (the GPU executor
/// binds kernel constants of parameters from it: kernels generated for an earlier run
/// of the template hold that run's values).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParamValues(pub HashMap<u64, ScalarValue>);

impl ParamValues {
    pub fn get(&self, id: u64) -> Option<&ScalarValue> {
        self.0.get(&id)
    }
}

/// `template` (a plan made from a parameterized statement) with the values its
/// parameters take for the statement's literals `literals`, in order (each of the type
/// the template's statement had there). None where a value does not fit the template
/// (see the module's comment): plan the statement as written then.
pub fn instantiate(template: &PhysicalPlan, literals: &[ScalarValue]) -> Option<PhysicalPlan> {
    let mut plan = template.clone();
    let mut values = ParamValues::default();
    let mut ok = true;
    for_each_expr(&mut plan, &mut |e| {
        if ok {
            let taken = std::mem::replace(e, Expr::literal(ScalarValue::Null, DataType::Boolean));
            *e = taken.transform(&mut |n| match n {
                Expr::Parameter { value, ty, source } if ok => match value_of(&source, literals, &mut values) {
                    Some(v) => Expr::Parameter { value: v, ty, source },
                    None => {
                        ok = false;
                        Expr::Parameter { value, ty, source }
                    }
                },
                // A pattern that is a parameter: compiled again, to the same form.
                Expr::Like { expr, pattern: old, negated } if ok && old.source.is_some() => {
                    let source = old.source.clone().expect("checked");
                    let new = match value_of(&source, literals, &mut values) {
                        Some(ScalarValue::Utf8(t)) => LikePattern::new(&t, None).ok(),
                        _ => None,
                    };
                    match new.filter(|p| p.form() == old.form()) {
                        Some(p) => Expr::Like { expr, pattern: LikePattern { source: Some(source), ..p }, negated },
                        None => {
                            ok = false;
                            Expr::Like { expr, pattern: old, negated }
                        }
                    }
                }
                other => other,
            });
        }
    });
    ok.then(|| {
        plan.parameters = values;
        plan
    })
}

/// The value of `source` for `literals` (None: it does not fit), remembered in `values`.
fn value_of(source: &ParamSource, literals: &[ScalarValue], values: &mut ParamValues) -> Option<ScalarValue> {
    if let Some(v) = values.get(source.id) {
        return Some(v.clone());
    }
    let v = match &source.kind {
        ParamKind::Literal(i) => literals.get(*i)?.clone(),
        ParamKind::Expr(e) => {
            // Its parameters first (they are column-free: evaluated without a row).
            let mut inner_ok = true;
            let e = e.clone().transform(&mut |n| match n {
                Expr::Parameter { value, ty, source } => {
                    let v = value_of(&source, literals, values);
                    inner_ok &= v.is_some();
                    Expr::Parameter { value: v.unwrap_or(value), ty, source }
                }
                other => other,
            });
            if !inner_ok {
                return None;
            }
            eval(&e, &[]).ok()?
        }
    };
    if v.is_null() {
        return None;
    }
    values.0.insert(source.id, v.clone());
    Some(v)
}

/// Calls `f` on every expression of `plan`'s stages.
fn for_each_expr(plan: &mut PhysicalPlan, f: &mut dyn FnMut(&mut Expr)) {
    for stage in &mut plan.stages {
        let Stage::Pipeline(p) = stage else { continue };
        for op in &mut p.ops {
            match op {
                PipelineOp::Filter(filter) => filter.groups.iter_mut().flatten().for_each(&mut *f),
                PipelineOp::Project { exprs, .. } => exprs.iter_mut().for_each(&mut *f),
                PipelineOp::HashProbe { keys, residual, band, .. } => {
                    keys.iter_mut().for_each(&mut *f);
                    residual.iter_mut().for_each(&mut *f);
                    band.iter_mut().flat_map(|b| b.conditions_mut()).for_each(&mut *f);
                }
                PipelineOp::LaneRefill { .. } => {}
            }
        }
        match &mut p.sink {
            Sink::Materialize { .. } => {}
            Sink::HashBuild { keys, .. } => keys.iter_mut().for_each(&mut *f),
            Sink::Aggregate { keys, states, .. } => {
                keys.iter_mut().for_each(&mut *f);
                states.iter_mut().filter_map(|s| s.arg.as_mut()).for_each(&mut *f);
            }
        }
    }
}
