//! The Aggregate node of a grouped SELECT: plain aggregates in one aggregation; DISTINCT
//! aggregates as two (the distinct values per group, then the aggregate); the statistics
//! aggregates (variance, standard deviation, covariance, correlation) as two passes over
//! the input (the group means, then the products of deviations from them); arg_max and
//! arg_min as two (the group's extreme value, then the argument of the rows that have it);
//! mode as arg_max over the counts of each (group, value); the quantiles over each group's
//! sorted values (`bind_quantile.rs`); approx_count_distinct from HyperLogLog registers
//! (`bind_approx_count.rs`).

use gpusql_common::{DataType, Error, Result, ScalarValue};
use gpusql_plan::{AggExpr, AggFunc, Expr, LogicalPlan};

/// The Aggregate node. COUNT / SUM / AVG(DISTINCT x) becomes two: the distinct (keys, x) groups, with
/// partial states of the other aggregates (SUM, COUNT, MIN, MAX; AVG as SUM and COUNT),
/// then per key the count (sum, average) of x and the partials combined (SUM of sums and counts, MIN of
/// minimums, …), finished by a projection (COUNT over no rows is 0, AVG = SUM / COUNT).
/// The output has the same shape: keys, then one column per aggregate.
/// DISTINCT aggregates of several arguments: one such plan per argument (the first also
/// computing the other aggregates), joined on the group keys.
pub(crate) fn aggregate_plan(
    input: LogicalPlan,
    keys: &[Expr],
    key_names: &[String],
    aggs: Vec<AggExpr>,
) -> Result<LogicalPlan> {
    if aggs.iter().any(|a| a.func.is_quantile()) {
        return crate::bind_quantile::quantile_plan(input, keys, key_names, aggs);
    }
    if aggs.iter().any(|a| a.func == AggFunc::StringAgg) {
        return crate::bind_string_agg::string_agg_plan(input, keys, key_names, aggs);
    }
    if aggs.iter().any(|a| a.func == AggFunc::ApproxCountDistinct) {
        return crate::bind_approx_count::approx_count_plan(input, keys, key_names, aggs);
    }
    if aggs.iter().any(distinct_apart) {
        return distinct_rows_plan(input, keys, key_names, aggs);
    }
    if aggs.iter().any(|a| a.func == AggFunc::Mode) {
        return mode_plan(input, keys, key_names, aggs);
    }
    if aggs.iter().any(|a| a.func.is_arg_extreme()) {
        return arg_extreme_plan(input, keys, key_names, aggs);
    }
    if aggs.iter().any(|a| a.func.is_statistic()) {
        return statistics_plan(input, keys, key_names, aggs);
    }
    // Each DISTINCT aggregate's argument, by its index in `args` (`same_expr`).
    let mut args: Vec<&Expr> = vec![];
    let mut arg_of = vec![usize::MAX; aggs.len()];
    for (i, a) in aggs.iter().enumerate().filter(|(_, a)| a.distinct) {
        let arg = a.arg.as_ref().ok_or_else(|| Error::plan("a DISTINCT aggregate needs an argument"))?;
        arg_of[i] = match args.iter().position(|x| same_expr(x, arg)) {
            Some(p) => p,
            None => {
                args.push(arg);
                args.len() - 1
            }
        };
    }
    if args.len() <= 1 {
        return distinct_aggregate_plan(input, keys, key_names, aggs);
    }
    let k = keys.len();
    let mut plan: Option<LogicalPlan> = None;
    // Where each aggregate lands in the joined branches' columns.
    let mut slot = vec![0; aggs.len()];
    let mut width = 0;
    for b in 0..args.len() {
        let mine: Vec<usize> =
            (0..aggs.len()).filter(|i| if aggs[*i].distinct { arg_of[*i] == b } else { b == 0 }).collect();
        for (j, i) in mine.iter().enumerate() {
            slot[*i] = width + k + j;
        }
        let branch =
            distinct_aggregate_plan(input.clone(), keys, key_names, mine.iter().map(|i| aggs[*i].clone()).collect())?;
        let branch_width = branch.schema().len();
        plan = Some(match plan {
            None => branch,
            // Global aggregates are one row each: the join planner joins them on a constant key.
            Some(p) => join_aggregations(p, branch, k),
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

/// `probe` joined with `build` where the group keys `probe_keys` and `build_keys` (over
/// each side) are the same group, NULL included (`group_join_keys`); without keys, a
/// cross join (global aggregates are one row: the join planner joins them on a constant key).
pub(crate) fn join_on_groups(
    probe: LogicalPlan,
    probe_keys: Vec<Expr>,
    build: LogicalPlan,
    build_keys: Vec<Expr>,
) -> LogicalPlan {
    if probe_keys.is_empty() {
        return LogicalPlan::CrossJoin { left: Box::new(probe), right: Box::new(build) };
    }
    LogicalPlan::Join {
        probe: Box::new(probe),
        build: Box::new(build),
        probe_keys: probe_keys.into_iter().flat_map(group_join_keys).collect(),
        build_keys: build_keys.into_iter().flat_map(group_join_keys).collect(),
        kind: gpusql_plan::JoinKind::Inner,
        residual: None,
    }
}

/// The sort keys that keep each group of rows together, for plans over a group's rows in
/// order (quantiles, string_agg): the first `k` columns of `schema`, NULLs first; where
/// comparing them costs (strings, intervals, several keys), a hash of them sorts first:
/// most comparisons end there, and a group's rows stay together.
pub(crate) fn group_order(schema: &gpusql_common::Schema, k: usize) -> Vec<gpusql_plan::SortKey> {
    use gpusql_plan::SortKey;
    let col = |i: usize| Expr::column_of(schema, i);
    let mut order: Vec<SortKey> = (0..k).map(|i| SortKey { expr: col(i), asc: true, nulls_first: true }).collect();
    let costly = k > 1 || (0..k).any(|i| matches!(schema.fields[i].ty, DataType::Utf8 | DataType::Interval));
    if costly {
        let hash = Expr::Sketch { op: gpusql_plan::hyperloglog::SketchOp::GroupHash, args: (0..k).map(col).collect() };
        order.insert(0, SortKey { expr: hash, asc: true, nulls_first: true });
    }
    order
}

/// `e` as MIN / MAX take it: a BOOLEAN as 1 (TRUE) / 0 (FALSE), NULL kept; others as
/// they are.
pub(crate) fn orderable(e: Expr) -> Expr {
    let int = |v: i32| Expr::literal(ScalarValue::Int32(v), DataType::Int32);
    match e.ty() {
        DataType::Boolean => Expr::Case {
            branches: vec![(e.clone(), int(1)), (Expr::Not(Box::new(e)), int(0))],
            else_expr: None,
            ty: DataType::Int32,
        },
        _ => e,
    }
}

/// Two aggregations of the same input whose first `k` columns are its group keys, joined
/// on them (`join_on_groups`).
pub(crate) fn join_aggregations(left: LogicalPlan, right: LogicalPlan, k: usize) -> LogicalPlan {
    let keys = |p: &LogicalPlan| (0..k).map(|i| Expr::column_of(&p.schema(), i)).collect();
    let (left_keys, right_keys) = (keys(&left), keys(&right));
    join_on_groups(left, left_keys, right, right_keys)
}

/// The statistics aggregates in two passes per argument (as DOUBLE): the group means, then
/// the input joined with its group's means and the sums of products of deviations per group
/// (exact where a one-pass Σx² - (Σx)²/n would cancel digits away). var_samp, var_pop,
/// stddev_samp and stddev_pop of x take Σ(x - mean)² and COUNT(x); covar_pop, covar_samp
/// and corr of (y, x) take, over the rows where both are not NULL, Σ(y - my)(x - mx),
/// Σ(y - my)², Σ(x - mx)² and their count. The other aggregates are planned as
/// `aggregate_plan` plans them and joined on the groups; the output has the same shape:
/// keys, then one column per aggregate.
fn statistics_plan(input: LogicalPlan, keys: &[Expr], key_names: &[String], aggs: Vec<AggExpr>) -> Result<LogicalPlan> {
    let same_moments = |a: &AggExpr, b: &AggExpr| match (moment_arguments(a), moment_arguments(b)) {
        (Ok(p), Ok(q)) => same_pair(&p, &q),
        _ => false,
    };
    let mut batch = |batch: &[&AggExpr]| moments_plan(&input, keys, key_names, batch);
    plan_apart(&input, keys, key_names, &aggs, &|a| a.func.is_statistic(), &same_moments, &mut batch)
}

/// The statistics `aggs` of one argument pair (y, x): keys, then one column per aggregate.
fn moments_plan(input: &LogicalPlan, keys: &[Expr], key_names: &[String], aggs: &[&AggExpr]) -> Result<LogicalPlan> {
    use gpusql_plan::BinaryOp;
    let k = keys.len();
    let agg = |func: AggFunc, arg: Expr, ty: DataType| AggExpr {
        func,
        arg: Some(arg),
        ty,
        arg2: None,
        distinct: false,
        order: vec![],
    };
    let binary =
        |op: BinaryOp, l: Expr, r: Expr, ty: DataType| Expr::Binary { op, left: Box::new(l), right: Box::new(r), ty };
    let (y, x) = moment_arguments(aggs[0])?;
    let input_width = input.schema().len();
    let same = y == x;
    let mut mean_aggs = vec![agg(AggFunc::Avg, y.clone(), DataType::Float64)];
    if !same {
        mean_aggs.push(agg(AggFunc::Avg, x.clone(), DataType::Float64));
    }
    let means = LogicalPlan::Aggregate {
        input: Box::new(input.clone()),
        group_by: keys.to_vec(),
        group_names: key_names.to_vec(),
        aggs: mean_aggs,
    };
    let mean = |i: usize| Expr::column_of(&means.schema(), k + i).remap_columns(&|c| c + input_width);
    let (my, mx) = (mean(0), mean(if same { 0 } else { 1 }));
    let means_keys = (0..k).map(|i| Expr::column_of(&means.schema(), i)).collect();
    let with_means = join_on_groups(input.clone(), keys.to_vec(), means, means_keys);
    let dy = binary(BinaryOp::Sub, y.clone(), my, DataType::Float64);
    let dx = binary(BinaryOp::Sub, x.clone(), mx, DataType::Float64);
    let product = |a: &Expr, b: &Expr| binary(BinaryOp::Mul, a.clone(), b.clone(), DataType::Float64);
    // Σ dy·dx, COUNT, and (x ≠ y) Σ dy², Σ dx².
    let mut sum_aggs =
        vec![agg(AggFunc::Sum, product(&dy, &dx), DataType::Float64), agg(AggFunc::Count, y.clone(), DataType::Int64)];
    if !same {
        sum_aggs.push(agg(AggFunc::Sum, product(&dy, &dy), DataType::Float64));
        sum_aggs.push(agg(AggFunc::Sum, product(&dx, &dx), DataType::Float64));
    }
    let sums = LogicalPlan::Aggregate {
        input: Box::new(with_means),
        group_by: keys.to_vec(),
        group_names: key_names.to_vec(),
        aggs: sum_aggs,
    };
    // Keys, each statistic from the moments.
    let schema = sums.schema();
    let col = |i: usize| Expr::column_of(&schema, i);
    let mut exprs: Vec<Expr> = (0..k).map(col).collect();
    let (sxy, n) = (col(k), col(k + 1));
    for a in aggs {
        let sample = matches!(a.func, AggFunc::VarSamp | AggFunc::StddevSamp | AggFunc::CovarSamp);
        let int = |v: i64| Expr::literal(ScalarValue::Int64(v), DataType::Int64);
        let double = |e: Expr| crate::coerce::cast(e, DataType::Float64);
        let divisor = if sample { binary(BinaryOp::Sub, n.clone(), int(1), DataType::Int64) } else { n.clone() };
        let enough = binary(BinaryOp::Gt, n.clone(), int(if sample { 1 } else { 0 }), DataType::Boolean);
        let sqrt = |e: Expr| Expr::Math { func: gpusql_plan::MathFunc::Sqrt, args: vec![e] };
        let moment = binary(BinaryOp::Div, sxy.clone(), double(divisor), DataType::Float64);
        let value = match a.func {
            AggFunc::StddevSamp | AggFunc::StddevPop => sqrt(moment),
            // Σ dy·dx / (√Σ dy² · √Σ dx²): NaN where either does not vary (0 / 0), as DuckDB.
            AggFunc::Corr => {
                let (syy, sxx) = if same { (sxy.clone(), sxy.clone()) } else { (col(k + 2), col(k + 3)) };
                let spread = binary(BinaryOp::Mul, sqrt(syy), sqrt(sxx), DataType::Float64);
                binary(BinaryOp::Div, sxy.clone(), spread, DataType::Float64)
            }
            _ => moment,
        };
        exprs.push(Expr::Case { branches: vec![(enough, value)], else_expr: None, ty: DataType::Float64 });
    }
    let names = key_names.iter().cloned().chain(aggs.iter().map(|a| a.to_string())).collect();
    Ok(LogicalPlan::Project { input: Box::new(sums), exprs, names })
}

/// arg_max (arg_min) of (arg, val) in two passes: the group's MAX (MIN) of val over the
/// rows where arg is not NULL either, then the input joined with it on the group and
/// the MIN of arg over the rows whose val equals it (`=`: -0.0 is 0.0, NaN is NaN, as
/// DuckDB compares): of tied rows the smallest arg, where DuckDB takes the first it
/// meets. The other aggregates are planned as `aggregate_plan` plans them and joined on
/// the groups; the output has the same shape: keys, then one column per aggregate.
fn arg_extreme_plan(
    input: LogicalPlan,
    keys: &[Expr],
    key_names: &[String],
    aggs: Vec<AggExpr>,
) -> Result<LogicalPlan> {
    let mut batch = |batch: &[&AggExpr]| arg_extreme_pick(&input, keys, key_names, batch[0]);
    plan_apart(&input, keys, key_names, &aggs, &|a| a.func.is_arg_extreme(), &|_, _| false, &mut batch)
}

/// One arg_max / arg_min: keys, then its value.
fn arg_extreme_pick(input: &LogicalPlan, keys: &[Expr], key_names: &[String], a: &AggExpr) -> Result<LogicalPlan> {
    use gpusql_plan::BinaryOp;
    let k = keys.len();
    let int = |v: i32| Expr::literal(ScalarValue::Int32(v), DataType::Int32);
    let input_width = input.schema().len();
    let missing = || Error::plan("arg_max / arg_min needs two arguments");
    let arg = a.arg.clone().ok_or_else(missing)?;
    let val = orderable(a.arg2.clone().ok_or_else(missing)?);
    let val = if arg.nullable() {
        let null = Expr::IsNull { expr: Box::new(arg.clone()), negated: false };
        let ty = val.ty();
        Expr::Case { branches: vec![(null, Expr::literal(ScalarValue::Null, ty))], else_expr: Some(Box::new(val)), ty }
    } else {
        val
    };
    let extreme_func = if a.func == AggFunc::ArgMax { AggFunc::Max } else { AggFunc::Min };
    let extreme = LogicalPlan::Aggregate {
        input: Box::new(input.clone()),
        group_by: keys.to_vec(),
        group_names: key_names.to_vec(),
        aggs: vec![AggExpr {
            func: extreme_func,
            arg: Some(val.clone()),
            ty: val.ty(),
            arg2: None,
            distinct: false,
            order: vec![],
        }],
    };
    let best = Expr::column_of(&extreme.schema(), k).remap_columns(&|c| c + input_width);
    let extreme_keys = (0..k).map(|i| Expr::column_of(&extreme.schema(), i)).collect();
    let with_extreme = join_on_groups(input.clone(), keys.to_vec(), extreme, extreme_keys);
    let hit = Expr::Binary { op: BinaryOp::Eq, left: Box::new(val), right: Box::new(best), ty: DataType::Boolean };
    let arg = orderable(arg);
    let pick = Expr::Case { branches: vec![(hit, arg.clone())], else_expr: None, ty: arg.ty() };
    let picked = LogicalPlan::Aggregate {
        input: Box::new(with_extreme),
        group_by: keys.to_vec(),
        group_names: key_names.to_vec(),
        aggs: vec![AggExpr {
            func: AggFunc::Min,
            arg: Some(pick),
            ty: arg.ty(),
            arg2: None,
            distinct: false,
            order: vec![],
        }],
    };
    // (BOOLEAN ones back from 1 / 0.)
    let schema = picked.schema();
    let mut exprs: Vec<Expr> = (0..=k).map(|i| Expr::column_of(&schema, i)).collect();
    if a.ty == DataType::Boolean {
        let v = exprs.pop().ok_or_else(missing)?;
        exprs.push(Expr::Binary {
            op: BinaryOp::Eq,
            left: Box::new(v),
            right: Box::new(int(1)),
            ty: DataType::Boolean,
        });
    }
    let names = key_names.iter().cloned().chain([a.to_string()]).collect();
    Ok(LogicalPlan::Project { input: Box::new(picked), exprs, names })
}

/// mode(x): the rows counted per (group, x), NULL x included so every group keeps a row,
/// then the arg_max of x over those counts (`arg_extreme_pick`, which skips the NULL x):
/// of values tied for the most rows, the smallest (DuckDB's pick among ties follows its
/// hash table's order). The other aggregates are planned as `aggregate_plan` plans them
/// and joined on the groups; the output has the same shape: keys, then one column per
/// aggregate.
fn mode_plan(input: LogicalPlan, keys: &[Expr], key_names: &[String], aggs: Vec<AggExpr>) -> Result<LogicalPlan> {
    let k = keys.len();
    let mut batch = |batch: &[&AggExpr]| {
        let a = batch[0];
        let x = a.arg.clone().ok_or_else(|| Error::plan("mode needs an argument"))?;
        let counted = LogicalPlan::Aggregate {
            input: Box::new(input.clone()),
            group_by: keys.iter().cloned().chain([x]).collect(),
            group_names: key_names.iter().cloned().chain(["mode_value".to_string()]).collect(),
            aggs: vec![AggExpr {
                func: AggFunc::Count,
                arg: None,
                ty: DataType::Int64,
                arg2: None,
                distinct: false,
                order: vec![],
            }],
        };
        let schema = counted.schema();
        let col = |i: usize| Expr::column_of(&schema, i);
        let arg_max = AggExpr {
            func: AggFunc::ArgMax,
            arg: Some(col(k)),
            arg2: Some(col(k + 1)),
            ty: a.ty,
            distinct: false,
            order: vec![],
        };
        let counted_keys: Vec<Expr> = (0..k).map(col).collect();
        arg_extreme_pick(&counted, &counted_keys, key_names, &arg_max)
    };
    plan_apart(&input, keys, key_names, &aggs, &|a| a.func == AggFunc::Mode, &|_, _| false, &mut batch)
}

/// DISTINCT statistics and arg_max / arg_min (which the two-aggregation plan does not
/// cover): each over the distinct (group keys, arguments) rows of the input (a group whose
/// arguments are all NULL keeps its row), as the plain aggregate. The others are planned
/// as `aggregate_plan` plans them, all joined on the groups.
fn distinct_rows_plan(
    input: LogicalPlan,
    keys: &[Expr],
    key_names: &[String],
    aggs: Vec<AggExpr>,
) -> Result<LogicalPlan> {
    let k = keys.len();
    let mut batch = |batch: &[&AggExpr]| {
        let a = batch[0];
        let args: Vec<Expr> = a.arg.iter().chain(a.arg2.iter()).cloned().collect();
        let names = key_names.iter().cloned().chain((0..args.len()).map(|i| format!("__distinct{i}"))).collect();
        let rows = LogicalPlan::Aggregate {
            input: Box::new(input.clone()),
            group_by: keys.iter().cloned().chain(args.iter().cloned()).collect(),
            group_names: names,
            aggs: vec![],
        };
        let schema = rows.schema();
        let col = |i: usize| Expr::column_of(&schema, i);
        let plain = AggExpr {
            func: a.func,
            arg: a.arg.as_ref().map(|_| col(k)),
            arg2: a.arg2.as_ref().map(|_| col(k + 1)),
            ty: a.ty,
            distinct: false,
            order: vec![],
        };
        let row_keys: Vec<Expr> = (0..k).map(col).collect();
        aggregate_plan(rows, &row_keys, key_names, vec![plain])
    };
    plan_apart(&input, keys, key_names, &aggs, &|a| distinct_apart(a), &|_, _| false, &mut batch)
}

/// A DISTINCT aggregate that `distinct_rows_plan` plans.
fn distinct_apart(a: &AggExpr) -> bool {
    a.distinct && (a.func.is_statistic() || a.func.is_arg_extreme())
}

/// Plans the aggregates `apart` selects in batches (those `together` relates to a batch's
/// first join it), each batch by `plan_batch` (its output: the keys, then one column per
/// aggregate of the batch), and the others as `aggregate_plan` plans them; all joined on
/// the groups and projected into the usual shape: keys, then one column per aggregate.
pub(crate) fn plan_apart(
    input: &LogicalPlan,
    keys: &[Expr],
    key_names: &[String],
    aggs: &[AggExpr],
    apart: &dyn Fn(&AggExpr) -> bool,
    together: &dyn Fn(&AggExpr, &AggExpr) -> bool,
    plan_batch: &mut dyn FnMut(&[&AggExpr]) -> Result<LogicalPlan>,
) -> Result<LogicalPlan> {
    let k = keys.len();
    let others: Vec<AggExpr> = aggs.iter().filter(|a| !apart(a)).cloned().collect();
    let mut plan = aggregate_plan(input.clone(), keys, key_names, others)?;
    // Per aggregate, the column of the joined plan holding it.
    let mut at = vec![usize::MAX; aggs.len()];
    for (column, (i, _)) in (k..).zip(aggs.iter().enumerate().filter(|(_, a)| !apart(a))) {
        at[i] = column;
    }
    for i in 0..aggs.len() {
        if !apart(&aggs[i]) || at[i] != usize::MAX {
            continue;
        }
        let batch: Vec<usize> = (i..aggs.len())
            .filter(|j| at[*j] == usize::MAX && apart(&aggs[*j]) && (*j == i || together(&aggs[i], &aggs[*j])))
            .collect();
        let planned = plan_batch(&batch.iter().map(|j| &aggs[*j]).collect::<Vec<_>>())?;
        let width = plan.schema().len();
        for (n, j) in batch.iter().enumerate() {
            at[*j] = width + k + n;
        }
        plan = join_aggregations(plan, planned, k);
    }
    let schema = plan.schema();
    let exprs = (0..k).chain(at).map(|i| Expr::column_of(&schema, i)).collect();
    let names = key_names.iter().cloned().chain(aggs.iter().map(|a| a.to_string())).collect();
    Ok(LogicalPlan::Project { input: Box::new(plan), exprs, names })
}

/// Whether two aggregate arguments are the same expression: `==`, or the same printed form
/// (a NaN literal is not `==` to itself).
pub(crate) fn same_expr(x: &Expr, y: &Expr) -> bool {
    x == y || format!("{x:?}") == format!("{y:?}")
}

fn same_pair(p: &(Expr, Expr), q: &(Expr, Expr)) -> bool {
    same_expr(&p.0, &q.0) && same_expr(&p.1, &q.1)
}

/// The two DOUBLE arguments whose moments a statistics aggregate reads: (x, x) for the
/// variances, (y, x) for the others with each NULL where the other is (pairs of values only).
fn moment_arguments(a: &AggExpr) -> Result<(Expr, Expr)> {
    let double = |e: Expr| crate::coerce::cast(e, DataType::Float64);
    let y = double(a.arg.clone().ok_or_else(|| Error::plan("a statistics aggregate needs an argument"))?);
    let Some(x) = a.arg2.clone().map(double) else { return Ok((y.clone(), y)) };
    let only_with = |v: Expr, other: &Expr| {
        if !other.nullable() {
            return v;
        }
        let null = Expr::IsNull { expr: Box::new(other.clone()), negated: false };
        Expr::Case {
            branches: vec![(null, Expr::literal(ScalarValue::Null, DataType::Float64))],
            else_expr: Some(Box::new(v)),
            ty: DataType::Float64,
        }
    };
    Ok((only_with(y.clone(), &x), only_with(x, &y)))
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
        DataType::Interval => ScalarValue::Interval(Default::default()),
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
        Ok(AggExpr { func, arg: Some(arg), ty, arg2: None, distinct: false, order: vec![] })
    };
    // Partial states over the (keys, x) groups.
    let mut partials: Vec<AggExpr> = vec![];
    for a in aggs.iter().filter(|a| !a.distinct) {
        match a.func {
            AggFunc::Avg => {
                let arg = a.arg.clone().ok_or_else(|| Error::plan("avg needs an argument"))?;
                partials.push(agg(AggFunc::Sum, arg.clone())?);
                partials.push(AggExpr {
                    func: AggFunc::Count,
                    arg: Some(arg),
                    ty: DataType::Int64,
                    arg2: None,
                    distinct: false,
                    order: vec![],
                });
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
