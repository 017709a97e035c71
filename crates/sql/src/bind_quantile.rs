//! median, quantile_cont, quantile_disc (quantile), percentile_cont and percentile_disc
//! (… WITHIN GROUP (ORDER BY x [DESC])): their calls, and their plan. A group's k-th value
//! needs its values in order: the (group keys, x) rows are sorted by the keys and x, each
//! row numbered by its position in its group (`LogicalPlan::Enumerate` over the sort's
//! segments), and each group's count of non-NULL x found by an aggregation of the rows
//! joined back; the rows at the quantile's positions (`gpusql_plan::quantile`: DuckDB's rules) are then picked by a
//! second aggregation, and a continuous quantile blends the two around it. Every step is
//! an operator both backends have (sort, gather, hash aggregation, hash join).

use crate::bind_aggregate::{group_order, join_on_groups, orderable, plan_apart};
use crate::bind_expr::{contains_aggregate, AtSpan, Context};
use gpusql_common::{DataType, Error, Result, ScalarValue};
use gpusql_plan::quantile::{QuantileFraction, QuantileOp, MAX_EXACT_SCALE};
use gpusql_plan::{AggExpr, AggFunc, BinaryOp, Expr, LogicalPlan, SortKey};
use sqlparser::ast::{self, Spanned};

/// The quantile aggregates' names.
pub fn is_quantile_name(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "median" | "quantile" | "quantile_cont" | "quantile_disc" | "percentile_cont" | "percentile_disc"
    )
}

/// Whether values of `ty` are blended by a continuous quantile (DuckDB's `CanInterpolate`);
/// median of the others is the discrete one.
fn interpolates(ty: DataType) -> bool {
    matches!(
        ty,
        DataType::Int32
            | DataType::Int64
            | DataType::Float64
            | DataType::Decimal { .. }
            | DataType::Date
            | DataType::Timestamp
    )
}

/// A continuous quantile's result type: DOUBLE for integers, TIMESTAMP for dates, else
/// the argument's.
fn continuous_type(ty: DataType) -> DataType {
    match ty {
        DataType::Int32 | DataType::Int64 => DataType::Float64,
        DataType::Date => DataType::Timestamp,
        other => other,
    }
}

impl Context<'_> {
    /// A quantile aggregate's call: `AggExpr` with the fraction as `arg2` (a literal, its
    /// sign the order: negative is descending, as DuckDB encodes WITHIN GROUP's DESC).
    pub(crate) fn bind_quantile_call(&self, f: &ast::Function, list: &ast::FunctionArgumentList) -> Result<AggExpr> {
        let name = f.name.to_string().to_ascii_lowercase();
        let at = f.name.span();
        let args: Vec<&ast::Expr> = list
            .args
            .iter()
            .map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => Ok(x),
                _ => Err(Error::bind(format!("{name}: arguments must be expressions")).at_span(at)),
            })
            .collect::<Result<_>>()?;
        let within = &f.within_group;
        // (x, the fraction's expression, descending)
        let (x, q, desc): (&ast::Expr, Option<&ast::Expr>, bool) = match (name.as_str(), args.as_slice()) {
            ("percentile_cont" | "percentile_disc", [q]) => {
                let [order] = within.as_slice() else {
                    return Err(match within.len() {
                        0 => Error::bind(format!("{name} needs WITHIN GROUP (ORDER BY …)")),
                        _ => Error::bind("Cannot use multiple ORDER BY clauses with WITHIN GROUP"),
                    }
                    .at_span(at));
                };
                if order.with_fill.is_some() || matches!(order.options.sort, Some(ast::OrderBySort::Using(_))) {
                    return Err(
                        Error::not_supported(format!("{name} WITHIN GROUP (ORDER BY … {})", order.options)).at_span(at)
                    );
                }
                (&order.expr, Some(*q), matches!(order.options.sort, Some(ast::OrderBySort::Desc)))
            }
            ("median", [x]) => (*x, None, false),
            ("quantile" | "quantile_cont" | "quantile_disc", [x, q]) => (*x, Some(*q), false),
            _ => {
                let wanted = match name.as_str() {
                    "median" => "one argument",
                    "percentile_cont" | "percentile_disc" => {
                        "one argument (the fraction) and WITHIN GROUP (ORDER BY x)"
                    }
                    _ => "two arguments (the value and the fraction)",
                };
                return Err(Error::bind(format!("{name} takes {wanted}")).at_span(at));
            }
        };
        if !name.starts_with("percentile") && !within.is_empty() {
            return Err(Error::not_supported(format!("{name} … WITHIN GROUP")).at_span(at));
        }
        if contains_aggregate(x) || q.is_some_and(contains_aggregate) {
            return Err(Error::bind("aggregate calls cannot be nested").at_span(at));
        }
        let distinct = matches!(list.duplicate_treatment, Some(ast::DuplicateTreatment::Distinct));
        let arg = match &f.filter {
            Some(c) => self.bind(&crate::functions::filtered_argument(Some(x), c, f)?)?,
            None => self.bind(x)?,
        };
        let ty = arg.ty();
        let (fraction, fraction_ty) = match q {
            Some(q) => self.quantile_fraction(&name, q, desc)?,
            None => (ScalarValue::Decimal(5), DataType::decimal(2, 1)),
        };
        let discrete = match name.as_str() {
            // (DuckDB blends intervals in median only.)
            "median" => !interpolates(ty) && ty != DataType::Interval,
            "quantile_cont" | "percentile_cont" => false,
            _ => true,
        };
        let (func, result) = if discrete {
            (AggFunc::QuantileDisc, ty)
        } else if interpolates(ty) || name == "median" || matches!(arg, Expr::Literal { value: ScalarValue::Null, .. })
        {
            (AggFunc::QuantileCont, continuous_type(ty))
        } else {
            return Err(Error::bind(format!(
                "{name} is not defined for {ty} (it interpolates: numbers, dates and timestamps)"
            ))
            .at_span(at));
        };
        Ok(AggExpr {
            func,
            arg: Some(arg),
            arg2: Some(Expr::literal(fraction, fraction_ty)),
            ty: result,
            distinct,
            order: vec![],
        })
    }

    /// The fraction: a constant in [-1, 1] (negated where `desc`), a DECIMAL of at most
    /// `MAX_EXACT_SCALE` places or a number.
    fn quantile_fraction(&self, name: &str, q: &ast::Expr, desc: bool) -> Result<(ScalarValue, DataType)> {
        let at = q.span();
        if matches!(q, ast::Expr::Array(_)) {
            return Err(Error::not_supported(format!("{name} of a list of fractions (its LIST result)")).at_span(at));
        }
        let e = self.bind(q)?;
        let mut columns = vec![];
        e.columns(&mut columns);
        let parameter = e.any(&|x| matches!(x, Expr::Parameter { .. }));
        if !columns.is_empty() || parameter {
            return Err(Error::bind(format!(
                "The \"quantile\" argument in function \"{name}\" must be a constant expression"
            ))
            .at_span(at));
        }
        let ty = e.ty();
        let value = gpusql_plan::eval::eval(&e, &[]).map_err(|err| err.at_span(at))?;
        let out_of_range = || Error::bind("QUANTILE can only take parameters in the range [-1, 1]").at_span(at);
        let (value, ty) = match (value, ty) {
            (ScalarValue::Null, _) => {
                return Err(Error::bind(format!("The \"quantile\" argument in function \"{name}\" must not be NULL"))
                    .at_span(at))
            }
            (ScalarValue::Decimal(v), DataType::Decimal { precision, scale }) => {
                if scale > MAX_EXACT_SCALE {
                    return Err(Error::not_supported(format!(
                        "a quantile fraction of more than {MAX_EXACT_SCALE} decimal places"
                    ))
                    .at_span(at));
                }
                if v.unsigned_abs() > 10u128.pow(scale as u32) {
                    return Err(out_of_range());
                }
                (ScalarValue::Decimal(if desc { -v } else { v }), DataType::decimal(precision, scale))
            }
            (v @ (ScalarValue::Int32(_) | ScalarValue::Int64(_) | ScalarValue::Float64(_)), t) => {
                let x = v.as_f64(&t).unwrap_or(f64::NAN);
                if x.is_nan() {
                    return Err(Error::bind("QUANTILE parameter cannot be NaN").at_span(at));
                }
                if !(-1.0..=1.0).contains(&x) {
                    return Err(out_of_range());
                }
                (ScalarValue::Float64(if desc { -x } else { x }), DataType::Float64)
            }
            (_, t) => {
                return Err(Error::bind(format!("{name}'s fraction must be a number, got {t}")).at_span(at));
            }
        };
        Ok((value, ty))
    }
}

/// The fraction of a quantile aggregate (`AggExpr::arg2`) and whether it is descending.
fn fraction_of(a: &AggExpr) -> Result<(QuantileFraction, bool)> {
    match &a.arg2 {
        Some(Expr::Literal { value: ScalarValue::Decimal(v), ty: DataType::Decimal { scale, .. } }) => {
            let value = gpusql_common::semantics::decimal_to_f64(v.abs(), *scale);
            Ok((QuantileFraction { value, decimal: Some((v.abs(), 10i128.pow(*scale as u32))) }, *v < 0))
        }
        Some(Expr::Literal { value: ScalarValue::Float64(x), .. }) => {
            Ok((QuantileFraction { value: x.abs(), decimal: None }, x.is_sign_negative()))
        }
        _ => Err(Error::plan(format!("{}: no fraction", a.func.name()))),
    }
}

/// The quantile aggregates, each group of those over one argument in one order (and
/// DISTINCT or not) from one sort; the others planned as `aggregate_plan` plans them; all
/// joined on the groups. The output has the same shape: keys, then one column per
/// aggregate.
pub(crate) fn quantile_plan(
    input: LogicalPlan,
    keys: &[Expr],
    key_names: &[String],
    aggs: Vec<AggExpr>,
) -> Result<LogicalPlan> {
    let order = |a: &AggExpr| fraction_of(a).map(|(_, desc)| desc).ok();
    let together = |a: &AggExpr, b: &AggExpr| a.arg == b.arg && a.distinct == b.distinct && order(a) == order(b);
    let mut batch = |batch: &[&AggExpr]| sorted_picks(input.clone(), keys, key_names, batch);
    plan_apart(&input, keys, key_names, &aggs, &|a| a.func.is_quantile(), &together, &mut batch)
}

/// Quantiles `aggs` of one argument x in one order: keys, then one column per aggregate.
fn sorted_picks(input: LogicalPlan, keys: &[Expr], key_names: &[String], aggs: &[&AggExpr]) -> Result<LogicalPlan> {
    let k = keys.len();
    let first = aggs[0];
    let x = first.arg.clone().ok_or_else(|| Error::plan("a quantile needs an argument"))?;
    let (_, desc) = fraction_of(first)?;
    let int = |v: i64| Expr::literal(ScalarValue::Int64(v), DataType::Int64);
    let binary =
        |op: BinaryOp, l: Expr, r: Expr, ty: DataType| Expr::Binary { op, left: Box::new(l), right: Box::new(r), ty };
    // The (keys, x) rows: every row of the input, or its distinct pairs. A row with a NULL x
    // stays (sorted last in its group), so every group keeps a row.
    let mut names = key_names.to_vec();
    names.push("__quantile_value".into());
    let values = if first.distinct {
        LogicalPlan::Aggregate {
            input: Box::new(input),
            group_by: keys.iter().cloned().chain([x]).collect(),
            group_names: names,
            aggs: vec![],
        }
    } else {
        LogicalPlan::Project { input: Box::new(input), exprs: keys.iter().cloned().chain([x]).collect(), names }
    };
    let vs = values.schema();
    let col = |s: &gpusql_common::Schema, i: usize| Expr::column_of(s, i);
    let mut order = group_order(&vs, k);
    let partition = order.len();
    order.push(SortKey { expr: orderable(col(&vs, k)), asc: !desc, nulls_first: false });
    // Each row's position in its group (the sort's segments), and the group's count of
    // non-NULL x from an aggregation of the unsorted rows.
    let numbered = LogicalPlan::Enumerate {
        input: Box::new(LogicalPlan::Sort { input: Box::new(values.clone()), keys: order }),
        partition,
    };
    let ns = numbered.schema();
    let agg = |func: AggFunc, arg: Option<Expr>, ty: DataType| AggExpr {
        func,
        arg,
        ty,
        arg2: None,
        distinct: false,
        order: vec![],
    };
    let counts = LogicalPlan::Aggregate {
        input: Box::new(values),
        group_by: (0..k).map(|i| col(&vs, i)).collect(),
        group_names: key_names.to_vec(),
        aggs: vec![agg(AggFunc::Count, Some(col(&vs, k)), DataType::Int64)],
    };
    let cs = counts.schema();
    let joined =
        join_on_groups(numbered, (0..k).map(|i| col(&ns, i)).collect(), counts, (0..k).map(|i| col(&cs, i)).collect());
    let js = joined.schema();
    let (value, rank) = (col(&js, k), col(&js, k + 1));
    let count = col(&js, k + 2 + k);
    let at = |op: QuantileOp, q: QuantileFraction| Expr::Quantile { op, q, args: vec![count.clone()] };
    // Each aggregate's lower and upper position (the same for a discrete one).
    let mut places = vec![];
    for a in aggs {
        let (q, _) = fraction_of(a)?;
        places.push(match a.func {
            AggFunc::QuantileCont => (at(QuantileOp::ContLower, q), Some(at(QuantileOp::ContUpper, q)), q),
            _ => (at(QuantileOp::Disc, q), None, q),
        });
    }
    // The rows at those positions, and each group's first (so no group is lost).
    let is_at = |p: &Expr| binary(BinaryOp::Eq, rank.clone(), p.clone(), DataType::Boolean);
    let wanted = places
        .iter()
        .flat_map(|(lo, hi, _)| std::iter::once(lo).chain(hi.as_ref()))
        .map(is_at)
        .fold(is_at(&int(0)), |a, b| binary(BinaryOp::Or, a, b, DataType::Boolean));
    let kept = LogicalPlan::Filter { input: Box::new(joined), predicate: wanted };
    let picked_value = orderable(value);
    let pick = |p: &Expr| {
        let v = Expr::Case { branches: vec![(is_at(p), picked_value.clone())], else_expr: None, ty: picked_value.ty() };
        agg(AggFunc::Min, Some(v), picked_value.ty())
    };
    let mut picks = vec![agg(AggFunc::Min, Some(count.clone()), DataType::Int64)];
    for (lo, hi, _) in &places {
        picks.push(pick(lo));
        picks.extend(hi.as_ref().map(pick));
    }
    let picked = LogicalPlan::Aggregate {
        input: Box::new(kept),
        group_by: (0..k).map(|i| col(&js, i)).collect(),
        group_names: key_names.to_vec(),
        aggs: picks,
    };
    // Keys, then each quantile: the value at its position, or the blend of the two.
    let ps = picked.schema();
    let n = col(&ps, k);
    let mut exprs: Vec<Expr> = (0..k).map(|i| col(&ps, i)).collect();
    let mut next = k + 1;
    for ((_, hi, q), a) in places.iter().zip(aggs) {
        let lo = col(&ps, next);
        next += 1;
        exprs.push(match hi {
            None if a.ty == DataType::Boolean => {
                binary(BinaryOp::Eq, lo, Expr::literal(ScalarValue::Int32(1), DataType::Int32), DataType::Boolean)
            }
            None => lo,
            Some(_) => {
                let hi = col(&ps, next);
                next += 1;
                let cast = |e: Expr| if e.ty() == a.ty { e } else { crate::coerce::cast(e, a.ty) };
                Expr::Quantile { op: QuantileOp::Interpolate, q: *q, args: vec![cast(lo), cast(hi), n.clone()] }
            }
        });
    }
    let names = key_names.iter().cloned().chain(aggs.iter().map(|a| a.to_string())).collect();
    Ok(LogicalPlan::Project { input: Box::new(picked), exprs, names })
}
