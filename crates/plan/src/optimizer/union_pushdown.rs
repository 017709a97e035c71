//! Filters and aggregations over a UNION ALL move into its arms. A filter filters each arm
//! (the arms' columns are the union's, in its order and types).
//!
//! An aggregation over UNION ALL aggregates each arm first and combines the partial
//! results: `SELECT k, sum(v) FROM (a UNION ALL b) GROUP BY k` groups a's rows and b's rows
//! where they are read (one fused kernel per arm: scan, filters, group table) and then
//! only the arms' groups are copied and grouped again, instead of every row of both arms
//! being written out, copied into one intermediate and read back. SUM, COUNT, MIN and MAX
//! combine by SUM (counts too), MIN and MAX; AVG is carried as SUM and COUNT. Aggregates
//! of DISTINCT arguments do not split this way and keep the plan as it is.

use super::{map_plan, OptimizerRule};
use crate::expr::{BinaryOp, Expr};
use crate::logical::{AggExpr, AggFunc, LogicalPlan};
use gpusql_common::{DataType, Result, ScalarValue, Schema};

pub struct UnionPushdown;

impl OptimizerRule for UnionPushdown {
    fn name(&self) -> &'static str {
        "union_pushdown"
    }
    fn rewrite(&self, plan: LogicalPlan) -> Result<LogicalPlan> {
        map_plan(plan, &mut |node| {
            Ok(match node {
                LogicalPlan::Filter { input, predicate } if matches!(*input, LogicalPlan::Union { .. }) => {
                    let LogicalPlan::Union { inputs, schema } = *input else { unreachable!("matched above") };
                    let inputs = inputs
                        .into_iter()
                        .map(|arm| LogicalPlan::Filter { input: Box::new(arm), predicate: predicate.clone() })
                        .collect();
                    LogicalPlan::Union { inputs, schema }
                }
                LogicalPlan::Aggregate { input, group_by, group_names, aggs }
                    if matches!(*input, LogicalPlan::Union { .. }) && aggs.iter().all(|a| !a.distinct) =>
                {
                    let LogicalPlan::Union { inputs, .. } = *input else { unreachable!("matched above") };
                    split(inputs, group_by, group_names, aggs)
                }
                other => other,
            })
        })
    }
}

fn column(i: usize, name: &str, ty: DataType, nullable: bool) -> Expr {
    Expr::Column { index: i, name: name.to_string(), ty, nullable }
}

/// The aggregation as partial aggregations of the arms, their UNION ALL, a combining
/// aggregation, and a projection giving the original output (keys, then aggregates).
fn split(arms: Vec<LogicalPlan>, group_by: Vec<Expr>, group_names: Vec<String>, aggs: Vec<AggExpr>) -> LogicalPlan {
    let nkeys = group_by.len();
    // Partial aggregates per arm, and how each original aggregate combines them: the
    // indices of its partial states (AVG: sum, count).
    let mut partial: Vec<AggExpr> = vec![];
    let mut uses: Vec<Vec<usize>> = vec![];
    let mut add = |a: AggExpr| -> usize {
        if let Some(i) = partial.iter().position(|p| *p == a) {
            return i;
        }
        partial.push(a);
        partial.len() - 1
    };
    for a in &aggs {
        let arg_ty = a.arg.as_ref().map(|e| e.ty());
        let state = |func: AggFunc| AggExpr {
            func,
            arg: a.arg.clone(),
            arg2: None,
            ty: AggExpr::result_type(func, arg_ty.as_ref()).unwrap_or(a.ty),
            distinct: false,
            order: vec![],
        };
        uses.push(match a.func {
            AggFunc::Avg => vec![add(state(AggFunc::Sum)), add(state(AggFunc::Count))],
            f => vec![add(state(f))],
        });
    }
    let arms: Vec<LogicalPlan> = arms
        .into_iter()
        .map(|arm| LogicalPlan::Aggregate {
            input: Box::new(arm),
            group_by: group_by.clone(),
            group_names: group_names.clone(),
            aggs: partial.clone(),
        })
        .collect();
    let mut fields = arms[0].schema().fields;
    for arm in &arms[1..] {
        for (f, g) in fields.iter_mut().zip(arm.schema().fields) {
            f.nullable |= g.nullable;
        }
    }
    let union_schema = Schema::new(fields);
    let union = LogicalPlan::Union { inputs: arms, schema: union_schema.clone() };
    let col = |i: usize| {
        let f = &union_schema.fields[i];
        column(i, &f.name, f.ty, f.nullable)
    };
    let combined: Vec<AggExpr> = partial
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let func = match p.func {
                AggFunc::Count | AggFunc::Sum => AggFunc::Sum,
                f => f,
            };
            let arg = col(nkeys + i);
            let ty = AggExpr::result_type(func, Some(&arg.ty())).unwrap_or(p.ty);
            AggExpr { func, arg: Some(arg), ty, arg2: None, distinct: false, order: vec![] }
        })
        .collect();
    let keys = (0..nkeys).map(col).collect();
    let combining = LogicalPlan::Aggregate {
        input: Box::new(union),
        group_by: keys,
        group_names: group_names.clone(),
        aggs: combined.clone(),
    };
    // The original output: keys, then each aggregate from its combined states.
    let out = combining.schema();
    let state = |i: usize, nullable: bool| {
        let f = &out.fields[nkeys + i];
        column(nkeys + i, &f.name, f.ty, nullable)
    };
    let mut exprs: Vec<Expr> = (0..nkeys)
        .map(|i| {
            let f = &out.fields[i];
            column(i, &f.name, f.ty, f.nullable)
        })
        .collect();
    let mut names = group_names;
    for (a, u) in aggs.iter().zip(&uses) {
        let value = match a.func {
            // A sum of counts, of at least one partial row (each arm's group, or its one
            // global row): never NULL.
            AggFunc::Count => state(u[0], false),
            AggFunc::Avg => {
                let (sum, count) = (state(u[0], true), state(u[1], false));
                let double = |e: Expr| Expr::Cast { expr: Box::new(e), ty: DataType::Float64 };
                let zero = Expr::literal(ScalarValue::Int64(0), DataType::Int64);
                Expr::Case {
                    branches: vec![(
                        Expr::Binary {
                            op: BinaryOp::Eq,
                            left: Box::new(count.clone()),
                            right: Box::new(zero),
                            ty: DataType::Boolean,
                        },
                        Expr::literal(ScalarValue::Null, DataType::Float64),
                    )],
                    else_expr: Some(Box::new(Expr::Binary {
                        op: BinaryOp::Div,
                        left: Box::new(double(sum)),
                        right: Box::new(double(count)),
                        ty: DataType::Float64,
                    })),
                    ty: DataType::Float64,
                }
            }
            _ => state(u[0], true),
        };
        let value = if value.ty() == a.ty { value } else { Expr::Cast { expr: Box::new(value), ty: a.ty } };
        exprs.push(value);
        names.push(a.to_string());
    }
    LogicalPlan::Project { input: Box::new(combining), exprs, names }
}
