//! string_agg (group_concat, listagg): the call, and its plan. A group's values joined in
//! order need its rows in order: the (group keys, text of x, ORDER BY keys) rows are sorted
//! by the keys, then with NULL values last, then by the ORDER BY; each row is numbered
//! within its group (`LogicalPlan::Enumerate` over the sort's segments), and the numbered
//! rows' runs are concatenated (`LogicalPlan::ConcatRuns`), the separator before every
//! non-NULL value but a group's first. As DuckDB: the separator is a constant VARCHAR
//! (',' by default; NULL makes every result NULL), NULL values are skipped, a group with no
//! non-NULL value gives NULL, values of other types join as their text.

use crate::bind_aggregate::{group_order, plan_apart, same_expr};
use crate::bind_expr::{contains_aggregate, AtSpan, Context};
use gpusql_common::{DataType, Error, Result, ScalarValue};
use gpusql_plan::{AggExpr, AggFunc, Expr, LogicalPlan, SortKey};
use sqlparser::ast::{self, Spanned};

/// string_agg's names (group_concat and listagg are DuckDB's other names for it).
pub fn is_string_agg_name(name: &str) -> bool {
    matches!(name.to_ascii_lowercase().as_str(), "string_agg" | "group_concat" | "listagg")
}

impl Context<'_> {
    /// `string_agg(x [, sep] [ORDER BY …])`: `AggExpr` with x (FILTER folded in: NULL where
    /// the row is filtered out), the separator as `arg2` (a VARCHAR literal, maybe NULL)
    /// and the ORDER BY as `order`.
    pub(crate) fn bind_string_agg_call(&self, f: &ast::Function, list: &ast::FunctionArgumentList) -> Result<AggExpr> {
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
        let (x, sep) = match args.as_slice() {
            [x] => (*x, None),
            [x, sep] => (*x, Some(*sep)),
            _ => {
                return Err(
                    Error::bind(format!("{name} takes one or two arguments (the value and the separator)")).at_span(at)
                )
            }
        };
        let mut order_by: &[ast::OrderByExpr] = &[];
        for c in &list.clauses {
            match c {
                ast::FunctionArgumentClause::OrderBy(o) => order_by = o,
                other => return Err(Error::not_supported(format!("{other} in {name}'s arguments")).at_span(at)),
            }
        }
        if contains_aggregate(x)
            || sep.is_some_and(contains_aggregate)
            || order_by.iter().any(|o| contains_aggregate(&o.expr))
        {
            return Err(Error::bind("aggregate calls cannot be nested").at_span(at));
        }
        let distinct = matches!(list.duplicate_treatment, Some(ast::DuplicateTreatment::Distinct));
        let separator = match sep {
            Some(s) => self.separator(&name, s)?,
            None => ScalarValue::Utf8(",".into()),
        };
        let plain = self.bind(x)?;
        let arg = match &f.filter {
            Some(c) => self.bind(&crate::functions::filtered_argument(Some(x), c, f)?)?,
            None => plain.clone(),
        };
        // (Checked here, so that a type without text is refused where it is written.)
        crate::bind_string::as_text(arg.clone()).map_err(|e| e.at_span(x.span()))?;
        let mut order = vec![];
        for o in order_by {
            if o.with_fill.is_some() || matches!(o.options.sort, Some(ast::OrderBySort::Using(_))) {
                return Err(Error::not_supported(format!("{name}(… ORDER BY {o})")).at_span(o.expr.span()));
            }
            crate::bind_order::refuse_non_integer_literal(&o.expr)?;
            let expr = self.bind(&o.expr)?;
            if distinct && !same_expr(&expr, &plain) {
                return Err(Error::bind(
                    "In a DISTINCT aggregate, ORDER BY expressions must appear in the argument list",
                )
                .at_span(o.expr.span()));
            }
            // DuckDB's defaults: ascending, NULLs last.
            let asc = !matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            order.push(SortKey { expr, asc, nulls_first: o.options.nulls_first.unwrap_or(false) });
        }
        Ok(AggExpr {
            func: AggFunc::StringAgg,
            arg: Some(arg),
            arg2: Some(Expr::literal(separator, DataType::Utf8)),
            ty: DataType::Utf8,
            distinct,
            order,
        })
    }

    /// The separator: a constant VARCHAR (or NULL).
    fn separator(&self, name: &str, sep: &ast::Expr) -> Result<ScalarValue> {
        let at = sep.span();
        let e = self.bind(sep)?;
        let mut columns = vec![];
        e.columns(&mut columns);
        if !columns.is_empty() || e.any(&|x| matches!(x, Expr::Parameter { .. })) {
            return Err(Error::bind(format!(
                "The \"arg\" argument in function \"{name}\" must be a constant expression"
            ))
            .at_span(at));
        }
        let null = matches!(e, Expr::Literal { value: ScalarValue::Null, .. });
        if e.ty() != DataType::Utf8 && !null {
            return Err(Error::bind(format!("{name}'s separator must be VARCHAR, got {}", e.ty())).at_span(at));
        }
        gpusql_plan::eval::eval(&e, &[]).map_err(|err| err.at_span(at))
    }
}

/// The string_agg aggregates, each planned over its own sort (identical calls once); the
/// others planned as `aggregate_plan` plans them; all joined on the groups. The output:
/// keys, then one column per aggregate.
pub(crate) fn string_agg_plan(
    input: LogicalPlan,
    keys: &[Expr],
    key_names: &[String],
    aggs: Vec<AggExpr>,
) -> Result<LogicalPlan> {
    // One call (however often written) gives every group a row by itself: no join.
    if aggs.iter().all(|a| *a == aggs[0]) {
        return concatenated(input, keys, key_names, &aggs[0], aggs.len());
    }
    let mut batch = |batch: &[&AggExpr]| concatenated(input.clone(), keys, key_names, batch[0], batch.len());
    plan_apart(&input, keys, key_names, &aggs, &|a| a.func == AggFunc::StringAgg, &|a, b| a == b, &mut batch)
}

/// One string_agg `a`: the keys, then its value `copies` times.
fn concatenated(
    input: LogicalPlan,
    keys: &[Expr],
    key_names: &[String],
    a: &AggExpr,
    copies: usize,
) -> Result<LogicalPlan> {
    let k = keys.len();
    let x = a.arg.clone().ok_or_else(|| Error::plan("string_agg needs an argument"))?;
    let separator = match &a.arg2 {
        Some(Expr::Literal { value: ScalarValue::Utf8(s), .. }) => Some(s.clone()),
        _ => None,
    };
    let col = |s: &gpusql_common::Schema, i: usize| Expr::column_of(s, i);
    // The (keys, text of x, ORDER BY keys) rows; for DISTINCT, of the distinct (keys, x)
    // pairs, whose ORDER BY keys are x (the binder checked).
    let mut names: Vec<String> = key_names.to_vec();
    names.push("__string_agg_value".into());
    names.extend((0..a.order.len()).map(|i| format!("__string_agg_order{i}")));
    let values = if a.distinct {
        let pairs = LogicalPlan::Aggregate {
            input: Box::new(input),
            group_by: keys.iter().cloned().chain([x]).collect(),
            group_names: key_names.iter().cloned().chain(["__string_agg_value".to_string()]).collect(),
            aggs: vec![],
        };
        let ps = pairs.schema();
        let exprs = (0..k)
            .map(|i| col(&ps, i))
            .chain([crate::bind_string::as_text(col(&ps, k))?])
            .chain(a.order.iter().map(|_| col(&ps, k)))
            .collect();
        LogicalPlan::Project { input: Box::new(pairs), exprs, names }
    } else {
        let exprs = keys
            .iter()
            .cloned()
            .chain([crate::bind_string::as_text(x)?])
            .chain(a.order.iter().map(|o| o.expr.clone()))
            .collect();
        LogicalPlan::Project { input: Box::new(input), exprs, names }
    };
    let vs = values.schema();
    let mut order = group_order(&vs, k);
    let partition = order.len();
    let value = col(&vs, k);
    order.push(SortKey { expr: Expr::IsNull { expr: Box::new(value), negated: false }, asc: true, nulls_first: false });
    for (i, o) in a.order.iter().enumerate() {
        order.push(SortKey { expr: col(&vs, k + 1 + i), asc: o.asc, nulls_first: o.nulls_first });
    }
    let numbered = LogicalPlan::Enumerate {
        input: Box::new(LogicalPlan::Sort { input: Box::new(values), keys: order }),
        partition,
    };
    let position = numbered.schema().len() - 1;
    let runs = LogicalPlan::ConcatRuns {
        input: Box::new(numbered),
        keys: (0..k).collect(),
        value: k,
        position,
        separator: separator.clone().unwrap_or_default(),
    };
    // Without GROUP BY, one row even over no rows (NULL).
    let grouped = if k == 0 {
        let rs = runs.schema();
        let min = AggExpr {
            func: AggFunc::Min,
            arg: Some(col(&rs, 0)),
            ty: DataType::Utf8,
            arg2: None,
            distinct: false,
            order: vec![],
        };
        LogicalPlan::Aggregate { input: Box::new(runs), group_by: vec![], group_names: vec![], aggs: vec![min] }
    } else {
        runs
    };
    let gs = grouped.schema();
    let text = match separator {
        Some(_) => col(&gs, k),
        None => Expr::literal(ScalarValue::Null, DataType::Utf8),
    };
    let exprs = (0..k).map(|i| col(&gs, i)).chain(std::iter::repeat_n(text, copies)).collect();
    let names = key_names.iter().cloned().chain((0..copies).map(|_| a.to_string())).collect();
    Ok(LogicalPlan::Project { input: Box::new(grouped), exprs, names })
}
