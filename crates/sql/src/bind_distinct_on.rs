//! SELECT DISTINCT ON (keys) …: per distinct value of the keys, the first row in ORDER
//! BY's order. Planned from aggregations and joins, so both backends run it with their
//! existing operators: per ORDER BY key in turn, the group's MIN (MAX for DESC) of it is
//! joined back and the rows that have it are kept (or those with NULL, where NULLs come
//! first and the group has one). Rows still tied are narrowed by each output column
//! ascending, and rows then alike in every column are one. DuckDB takes any of the tied
//! rows; this takes the smallest.

use crate::bind_aggregate::{aggregate_plan, join_on_groups, orderable};
use crate::bind_expr::AtSpan;
use gpusql_common::{DataType, Error, Result};
use gpusql_plan::{AggExpr, AggFunc, BinaryOp, Expr, LogicalPlan, SortKey};
use sqlparser::ast::{self, Spanned};

/// The DISTINCT ON keys as indices into the select's columns (`exprs`, `names`; the first
/// `visible` are the select list): a position, a select alias, or an expression, which is
/// added as a hidden column where the list lacks it.
pub(crate) fn on_keys(
    ctx: &crate::bind_expr::Context,
    on: &[ast::Expr],
    visible: usize,
    exprs: &mut Vec<Expr>,
    names: &mut Vec<String>,
) -> Result<Vec<usize>> {
    let mut keys = vec![];
    for e in on {
        let index = match e {
            ast::Expr::Value(v) if matches!(v.value, ast::Value::Number(..)) => {
                let pos: usize = e.to_string().parse().unwrap_or(0);
                if pos == 0 || pos > visible {
                    return Err(
                        Error::bind(format!("DISTINCT ON position {pos} is not in the select list")).at_span(e.span())
                    );
                }
                pos - 1
            }
            ast::Expr::Identifier(id) if ctx.bind(e).is_err() => {
                match names[..visible].iter().position(|n| n.eq_ignore_ascii_case(&id.value)) {
                    Some(i) => i,
                    None => return Err(ctx.bind(e).err().unwrap_or_else(|| Error::bind("DISTINCT ON key"))),
                }
            }
            _ => {
                let k = ctx.bind(e)?;
                match exprs.iter().position(|x| *x == k) {
                    Some(i) => i,
                    None => {
                        exprs.push(k);
                        names.push(format!("__on{}", exprs.len()));
                        exprs.len() - 1
                    }
                }
            }
        };
        keys.push(index);
    }
    Ok(keys)
}

/// One row of `rows` per distinct combination of its columns `on`: the first by `order`
/// (sort keys over `rows`' columns), ties broken by every column ascending. The result
/// has `rows`' columns.
pub(crate) fn distinct_on_plan(rows: LogicalPlan, on: &[usize], order: &[SortKey]) -> Result<LogicalPlan> {
    let schema = rows.schema();
    let width = schema.len();
    let names: Vec<String> = schema.fields.iter().map(|f| f.name.clone()).collect();
    let mut steps: Vec<(usize, bool, bool)> = vec![];
    for k in order {
        let Expr::Column { index, .. } = k.expr else {
            return Err(Error::plan("DISTINCT ON: a sort key that is not a column"));
        };
        steps.push((index, k.asc, k.nulls_first));
    }
    // (The keys are alike within a group already, and so is a column once a step kept
    // its first value.) Each step reads the rows left by the one before twice (for the
    // MIN / MAX and for the join), so the input is read 2^steps times: fine for short
    // select lists; reading it once needs the reuse of shared subplans (issue 33's CTEs).
    let ordered: Vec<usize> = steps.iter().map(|s| s.0).collect();
    steps.extend((0..width).filter(|c| !on.contains(c) && !ordered.contains(c)).map(|c| (c, true, false)));
    let mut plan = rows;
    for (column, asc, nulls_first) in steps {
        plan = keep_first(plan, on, column, asc, nulls_first)?;
    }
    let all: Vec<Expr> = (0..width).map(|i| Expr::column_of(&plan.schema(), i)).collect();
    aggregate_plan(plan, &all, &names, vec![])
}

/// The rows of `plan` whose `column` comes first within their group of `on`: equal to the
/// group's MIN (ASC) or MAX (DESC); NULL where NULLs come first and the group has one, or
/// where the group has nothing else.
fn keep_first(plan: LogicalPlan, on: &[usize], column: usize, asc: bool, nulls_first: bool) -> Result<LogicalPlan> {
    let schema = plan.schema();
    let width = schema.len();
    let keys: Vec<Expr> = on.iter().map(|&i| Expr::column_of(&schema, i)).collect();
    let key_names: Vec<String> = on.iter().map(|&i| schema.fields[i].name.clone()).collect();
    let value = orderable(Expr::column_of(&schema, column));
    let agg = |func: AggFunc, arg: Option<Expr>, ty: DataType| AggExpr {
        func,
        arg,
        ty,
        arg2: None,
        distinct: false,
        order: vec![],
    };
    let best = LogicalPlan::Aggregate {
        input: Box::new(plan.clone()),
        group_by: keys.clone(),
        group_names: key_names,
        aggs: vec![
            agg(if asc { AggFunc::Min } else { AggFunc::Max }, Some(value.clone()), value.ty()),
            agg(AggFunc::Count, Some(value.clone()), DataType::Int64),
            agg(AggFunc::Count, None, DataType::Int64),
        ],
    };
    let k = keys.len();
    let best_keys = (0..k).map(|i| Expr::column_of(&best.schema(), i)).collect();
    let joined = join_on_groups(plan, keys, best, best_keys);
    let joined_schema = joined.schema();
    let at = |i: usize| Expr::column_of(&joined_schema, width + k + i);
    let (first, non_null, all) = (at(0), at(1), at(2));
    let is_null = |e: &Expr| Expr::IsNull { expr: Box::new(e.clone()), negated: false };
    let binary =
        |op, l: Expr, r: Expr| Expr::Binary { op, left: Box::new(l), right: Box::new(r), ty: DataType::Boolean };
    let equal = binary(BinaryOp::Eq, value.clone(), first.clone());
    let null_wins = if nulls_first { binary(BinaryOp::Lt, non_null, all) } else { is_null(&first) };
    let keep = Expr::Case {
        branches: vec![(null_wins, is_null(&value))],
        else_expr: Some(Box::new(equal)),
        ty: DataType::Boolean,
    };
    let kept = LogicalPlan::Filter { input: Box::new(joined), predicate: keep };
    let kept_schema = kept.schema();
    Ok(LogicalPlan::Project {
        input: Box::new(kept),
        exprs: (0..width).map(|i| Expr::column_of(&kept_schema, i)).collect(),
        names: schema.fields.iter().map(|f| f.name.clone()).collect(),
    })
}
