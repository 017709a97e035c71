//! The Aggregate node of a grouped SELECT: plain aggregates in one aggregation; DISTINCT
//! aggregates as two (the distinct values per group, then the aggregate); the statistics
//! aggregates (variance, standard deviation) as two passes over the input (the group means,
//! then the squared deviations from them).

use gpusql_common::{DataType, Error, Result, ScalarValue};
use gpusql_plan::{AggExpr, AggFunc, Expr, LogicalPlan};

/// The Aggregate node. COUNT / SUM / AVG(DISTINCT x) becomes two: the distinct (keys, x) groups, with
/// partial states of the other aggregates (SUM, COUNT, MIN, MAX; AVG as SUM and COUNT),
/// then per key the count (sum, average) of x and the partials combined (SUM of sums and counts, MIN of
/// minimums, …), finished by a projection (COUNT over no rows is 0, AVG = SUM / COUNT).
/// The output has the same shape: keys, then one column per aggregate.
/// DISTINCT aggregates of several arguments: one such plan per argument (the first also
/// computing the other aggregates), joined on the group keys.
pub(crate) fn aggregate_plan(input: LogicalPlan, keys: &[Expr], key_names: &[String], aggs: Vec<AggExpr>) -> Result<LogicalPlan> {
    let mut args: Vec<&Expr> = vec![];
    for a in aggs.iter().filter(|a| a.distinct) {
        let arg = a.arg.as_ref().ok_or_else(|| Error::plan("a DISTINCT aggregate needs an argument"))?;
        if !args.contains(&arg) {
            args.push(arg);
        }
    }
    if args.len() <= 1 {
        return distinct_aggregate_plan(input, keys, key_names, aggs);
    }
    let k = keys.len();
    let mut plan: Option<LogicalPlan> = None;
    // Where each aggregate lands in the joined branches' columns.
    let mut slot = vec![0; aggs.len()];
    let mut width = 0;
    for (b, arg) in args.iter().enumerate() {
        let mine: Vec<usize> = (0..aggs.len())
            .filter(|i| if aggs[*i].distinct { aggs[*i].arg.as_ref() == Some(*arg) } else { b == 0 })
            .collect();
        for (j, i) in mine.iter().enumerate() {
            slot[*i] = width + k + j;
        }
        let branch =
            distinct_aggregate_plan(input.clone(), keys, key_names, mine.iter().map(|i| aggs[*i].clone()).collect())?;
        let branch_width = branch.schema().len();
        plan = Some(match plan {
            None => branch,
            // Global aggregates are one row each: the join planner joins them on a constant key.
            Some(p) if k == 0 => LogicalPlan::CrossJoin { left: Box::new(p), right: Box::new(branch) },
            Some(p) => {
                let (probe, build) = (p.schema(), branch.schema());
                let col = |s: &gpusql_common::Schema, i: usize| Expr::Column {
                    index: i,
                    name: s.fields[i].name.clone(),
                    ty: s.fields[i].ty,
                    nullable: s.fields[i].nullable,
                };
                let (mut probe_keys, mut build_keys) = (vec![], vec![]);
                for i in 0..k {
                    probe_keys.extend(group_join_keys(col(&probe, i)));
                    build_keys.extend(group_join_keys(col(&build, i)));
                }
                LogicalPlan::Join {
                    probe: Box::new(p),
                    build: Box::new(branch),
                    probe_keys,
                    build_keys,
                    kind: gpusql_plan::JoinKind::Inner,
                    residual: None,
                }
            }
        });
        width += branch_width;
    }
    let plan = plan.ok_or_else(|| Error::plan("aggregate planning"))?;
    let schema = plan.schema();
    let col = |i: usize| Expr::Column {
        index: i,
        name: schema.fields[i].name.clone(),
        ty: schema.fields[i].ty,
        nullable: schema.fields[i].nullable,
    };
    let exprs = (0..k).chain(slot).map(col).collect();
    let names = key_names.iter().cloned().chain(aggs.iter().map(|a| a.to_string())).collect();
    Ok(LogicalPlan::Project { input: Box::new(plan), exprs, names })
}

/// Join keys that match a group key with the same group key of another aggregation of
/// the same input, NULL included (a NULL group is a group): a nullable key is a NULL flag
/// and the value with NULL as a fixed value of its type; a boolean one a small integer.
fn group_join_keys(k: Expr) -> Vec<Expr> {
    let int = |v: i32| Expr::Literal { value: ScalarValue::Int32(v), ty: DataType::Int32 };
    let is_null = || Expr::IsNull { expr: Box::new(k.clone()), negated: false };
    let ty = k.ty();
    if ty == DataType::Boolean {
        let mut branches = vec![(k.clone(), int(1))];
        if k.nullable() {
            branches.insert(0, (is_null(), int(2)));
        }
        return vec![Expr::Case { branches, else_expr: Some(Box::new(int(0))), ty: DataType::Int32 }];
    }
    if !k.nullable() {
        return vec![k];
    }
    let zero = match ty {
        DataType::Int32 => ScalarValue::Int32(0),
        DataType::Int64 => ScalarValue::Int64(0),
        DataType::Float64 => ScalarValue::Float64(0.0),
        DataType::Decimal { .. } => ScalarValue::Decimal(0),
        DataType::Date => ScalarValue::Date(0),
        DataType::Timestamp => ScalarValue::Timestamp(0),
        DataType::Utf8 | DataType::Boolean => ScalarValue::Utf8(String::new()),
    };
    let flag =
        Expr::Case { branches: vec![(is_null(), int(1))], else_expr: Some(Box::new(int(0))), ty: DataType::Int32 };
    let value =
        Expr::Case { branches: vec![(is_null(), Expr::Literal { value: zero, ty })], else_expr: Some(Box::new(k)), ty };
    vec![flag, value]
}

/// DISTINCT aggregates of at most one argument `x` (see `aggregate_plan`).
fn distinct_aggregate_plan(
    input: LogicalPlan,
    keys: &[Expr],
    key_names: &[String],
    aggs: Vec<AggExpr>,
) -> Result<LogicalPlan> {
    let Some(x) = aggs.iter().find(|a| a.distinct).and_then(|a| a.arg.clone()) else {
        return Ok(LogicalPlan::Aggregate {
            input: Box::new(input),
            group_by: keys.to_vec(),
            group_names: key_names.to_vec(),
            aggs,
        });
    };
    let agg = |func: AggFunc, arg: Expr| -> Result<AggExpr> {
        let ty = AggExpr::result_type(func, Some(&arg.ty()))
            .ok_or_else(|| Error::bind(format!("{} is not defined for {}", func.name(), arg.ty())))?;
        Ok(AggExpr { func, arg: Some(arg), ty, distinct: false })
    };
    // Partial states over the (keys, x) groups.
    let mut partials: Vec<AggExpr> = vec![];
    for a in aggs.iter().filter(|a| !a.distinct) {
        match a.func {
            AggFunc::Avg => {
                let arg = a.arg.clone().ok_or_else(|| Error::plan("avg needs an argument"))?;
                partials.push(agg(AggFunc::Sum, arg.clone())?);
                partials.push(AggExpr { func: AggFunc::Count, arg: Some(arg), ty: DataType::Int64, distinct: false });
            }
            _ => partials.push(a.clone()),
        }
    }
    let k = keys.len();
    let mut inner_keys = keys.to_vec();
    inner_keys.push(x);
    let mut inner_names = key_names.to_vec();
    inner_names.push("__distinct".into());
    let inner = LogicalPlan::Aggregate {
        input: Box::new(input),
        group_by: inner_keys,
        group_names: inner_names,
        aggs: partials,
    };
    let schema = inner.schema();
    let col = |s: &gpusql_common::Schema, i: usize| Expr::Column {
        index: i,
        name: s.fields[i].name.clone(),
        ty: s.fields[i].ty,
        nullable: s.fields[i].nullable,
    };
    // Combine per key; `slots` remembers where each original aggregate's parts land.
    let mut outer_aggs = vec![];
    let mut slots = vec![];
    let mut next_partial = k + 1;
    for a in &aggs {
        let start = outer_aggs.len();
        if a.distinct {
            // COUNT, SUM or AVG of the distinct values: one per (keys, x) group.
            outer_aggs.push(agg(a.func, col(&schema, k))?);
        } else {
            let parts = if a.func == AggFunc::Avg { 2 } else { 1 };
            for _ in 0..parts {
                let p = col(&schema, next_partial);
                next_partial += 1;
                outer_aggs.push(match a.func {
                    AggFunc::Min | AggFunc::Max => agg(a.func, p)?,
                    _ => agg(AggFunc::Sum, p)?,
                });
            }
        }
        slots.push(start);
    }
    let outer = LogicalPlan::Aggregate {
        input: Box::new(inner),
        group_by: (0..k).map(|i| col(&schema, i)).collect(),
        group_names: key_names.to_vec(),
        aggs: outer_aggs,
    };
    let out = outer.schema();
    let mut exprs: Vec<Expr> = (0..k).map(|i| col(&out, i)).collect();
    let mut names = key_names.to_vec();
    for (a, start) in aggs.iter().zip(slots) {
        let c = col(&out, k + start);
        exprs.push(match a.func {
            AggFunc::Count if !a.distinct => Expr::Case {
                branches: vec![(
                    Expr::IsNull { expr: Box::new(c.clone()), negated: false },
                    Expr::Literal { value: ScalarValue::Int64(0), ty: DataType::Int64 },
                )],
                else_expr: Some(Box::new(c)),
                ty: DataType::Int64,
            },
            AggFunc::Avg if !a.distinct => Expr::Binary {
                op: gpusql_plan::BinaryOp::Div,
                left: Box::new(Expr::Cast { expr: Box::new(c), ty: DataType::Float64 }),
                right: Box::new(Expr::Cast { expr: Box::new(col(&out, k + start + 1)), ty: DataType::Float64 }),
                ty: DataType::Float64,
            },
            _ if c.ty() != a.ty => Expr::Cast { expr: Box::new(c), ty: a.ty },
            _ => c,
        });
        names.push(a.to_string());
    }
    Ok(LogicalPlan::Project { input: Box::new(outer), exprs, names })
}

