//! approx_count_distinct(x) as DuckDB's HyperLogLog (`gpusql_plan::hyperloglog`), in two
//! aggregations both backends have: the largest rank per (group, register), which are the
//! group's registers, then per group the histogram of their values, from which the
//! estimate is computed. A NULL x goes to a NULL register (so a group of NULLs keeps its
//! row) and counts in no histogram bin.

use crate::bind_aggregate::plan_apart;
use gpusql_common::{DataType, Error, Result, ScalarValue};
use gpusql_plan::hyperloglog::{SketchOp, M, Q};
use gpusql_plan::{AggExpr, AggFunc, BinaryOp, Expr, LogicalPlan};

/// The approx_count_distinct aggregates, each from its registers; the others planned as
/// `aggregate_plan` plans them; all joined on the groups (keys, then one column per
/// aggregate).
pub(crate) fn approx_count_plan(
    input: LogicalPlan,
    keys: &[Expr],
    key_names: &[String],
    aggs: Vec<AggExpr>,
) -> Result<LogicalPlan> {
    let mut batch = |batch: &[&AggExpr]| estimate_plan(&input, keys, key_names, batch[0]);
    let apart = |a: &AggExpr| a.func == AggFunc::ApproxCountDistinct;
    plan_apart(&input, keys, key_names, &aggs, &apart, &|_, _| false, &mut batch)
}

/// One approx_count_distinct: keys, then its estimate.
fn estimate_plan(input: &LogicalPlan, keys: &[Expr], key_names: &[String], a: &AggExpr) -> Result<LogicalPlan> {
    let k = keys.len();
    let x = a.arg.clone().ok_or_else(|| Error::plan("approx_count_distinct needs an argument"))?;
    let agg = |func: AggFunc, arg: Expr, ty: DataType| AggExpr {
        func,
        arg: Some(arg),
        ty,
        arg2: None,
        distinct: false,
        order: vec![],
    };
    let sketch = |op: SketchOp, args: Vec<Expr>| Expr::Sketch { op, args };
    let registers = LogicalPlan::Aggregate {
        input: Box::new(input.clone()),
        group_by: keys.iter().cloned().chain([sketch(SketchOp::Register, vec![x.clone()])]).collect(),
        group_names: key_names.iter().cloned().chain(["__register".to_string()]).collect(),
        aggs: vec![agg(AggFunc::Max, sketch(SketchOp::Rank, vec![x]), DataType::Int32)],
    };
    let rs = registers.schema();
    let rank = Expr::column_of(&rs, k + 1);
    let int = |v: i64| Expr::literal(ScalarValue::Int64(v), DataType::Int64);
    // How many registers are set, and how many hold each rank 1 ..= Q.
    let mut bins = vec![agg(AggFunc::Count, rank.clone(), DataType::Int64)];
    for v in 1..=Q as i32 {
        let hit = Expr::Binary {
            op: BinaryOp::Eq,
            left: Box::new(rank.clone()),
            right: Box::new(Expr::literal(ScalarValue::Int32(v), DataType::Int32)),
            ty: DataType::Boolean,
        };
        let one = Expr::Case { branches: vec![(hit, int(1))], else_expr: None, ty: DataType::Int64 };
        bins.push(agg(AggFunc::Count, one, DataType::Int64));
    }
    let histogram = LogicalPlan::Aggregate {
        input: Box::new(registers),
        group_by: (0..k).map(|i| Expr::column_of(&rs, i)).collect(),
        group_names: key_names.to_vec(),
        aggs: bins,
    };
    let hs = histogram.schema();
    let col = |i: usize| Expr::column_of(&hs, i);
    let unset =
        Expr::Binary { op: BinaryOp::Sub, left: Box::new(int(M as i64)), right: Box::new(col(k)), ty: DataType::Int64 };
    let counts = std::iter::once(unset).chain((1..=Q).map(|v| col(k + v))).collect();
    let exprs = (0..k).map(col).chain([sketch(SketchOp::Estimate, counts)]).collect();
    let names = key_names.iter().cloned().chain([a.to_string()]).collect();
    Ok(LogicalPlan::Project { input: Box::new(histogram), exprs, names })
}
