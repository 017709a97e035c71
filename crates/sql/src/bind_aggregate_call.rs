//! Binding of aggregate calls: SUM / COUNT / AVG / MIN / MAX and the statistics, their
//! DISTINCT and FILTER forms, count_if, bool_and / bool_or (rewritten over MIN / MAX), and
//! the aggregates of two arguments (covar_pop / covar_samp / corr, arg_max / arg_min), mode.
//! `bind_aggregate.rs` plans the Aggregate node they make.

use crate::bind_expr::{contains_aggregate, AtSpan, Context};
use gpusql_common::{DataType, Error, Result, ScalarValue};
use gpusql_plan::{AggExpr, AggFunc, Expr};
use sqlparser::ast::{self, Spanned};

pub fn is_aggregate_name(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "sum"
            | "count"
            | "avg"
            | "min"
            | "max"
            | "count_if"
            | "var_samp"
            | "variance"
            | "var_pop"
            | "stddev_samp"
            | "stddev"
            | "stddev_pop"
            | "covar_pop"
            | "covar_samp"
            | "corr"
            | "bool_and"
            | "bool_or"
            | "arg_max"
            | "argmax"
            | "max_by"
            | "arg_min"
            | "argmin"
            | "min_by"
            | "mode"
            | "approx_count_distinct"
    ) || crate::bind_quantile::is_quantile_name(name)
        || crate::bind_string_agg::is_string_agg_name(name)
}

/// The aggregates whose result no order of their rows changes: an ORDER BY in their call
/// (`sum(x ORDER BY y)`) is checked as DuckDB checks it, and has nothing to do.
pub fn ignores_order(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    is_aggregate_name(&name)
        && !crate::bind_string_agg::is_string_agg_name(&name)
        && !matches!(name.as_str(), "arg_max" | "argmax" | "max_by" | "arg_min" | "argmin" | "min_by" | "mode")
}

impl Context<'_> {
    /// The ORDER BY in the call of an aggregate that ignores it (`ignores_order`): its keys
    /// must bind, and be the argument where the call is DISTINCT (DuckDB's rules).
    pub(crate) fn check_ignored_order(&self, f: &ast::Function) -> Result<()> {
        let ast::FunctionArguments::List(list) = &f.args else { return Ok(()) };
        let keys = list.clauses.iter().flat_map(|c| match c {
            ast::FunctionArgumentClause::OrderBy(keys) => keys.as_slice(),
            _ => &[],
        });
        let distinct = matches!(list.duplicate_treatment, Some(ast::DuplicateTreatment::Distinct));
        for o in keys {
            crate::bind_order::refuse_non_integer_literal(&o.expr)?;
            if contains_aggregate(&o.expr) {
                return Err(Error::bind("aggregate calls cannot be nested").at_span(o.expr.span()));
            }
            let key = self.bind(&o.expr)?;
            let argument = match list.args.as_slice() {
                [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))] => self.bind(x).ok(),
                _ => None,
            };
            if distinct && argument.is_none_or(|a| !crate::bind_aggregate::same_expr(&a, &key)) {
                return Err(Error::bind(
                    "In a DISTINCT aggregate, ORDER BY expressions must appear in the argument list",
                )
                .at_span(o.expr.span()));
            }
        }
        Ok(())
    }

    /// bool_and(x) / bool_or(x) of a BOOLEAN: `min` / `max` of 1 (TRUE) and 0 (FALSE),
    /// compared with 1 (NULL where the group has no non-NULL x). DISTINCT and FILTER are
    /// kept. None for another function.
    pub(crate) fn bool_aggregate(&self, f: &ast::Function) -> Option<Result<ast::Expr>> {
        let name = f.name.to_string().to_ascii_lowercase();
        let inner = match name.as_str() {
            "bool_and" => "min",
            "bool_or" => "max",
            _ => return None,
        };
        Some((|| {
            let at = f.name.span();
            crate::audit::function(f)?;
            let ast::FunctionArguments::List(list) = &f.args else {
                return Err(Error::bind(format!("{name} takes one argument")).at_span(at));
            };
            let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))] = list.args.as_slice() else {
                return Err(Error::bind(format!("{name} takes one argument")).at_span(at));
            };
            if contains_aggregate(x) {
                return Err(Error::bind("aggregate calls cannot be nested").at_span(at));
            }
            let v = Context::Plain(self.base()).bind(x)?;
            if v.ty() != DataType::Boolean && !matches!(v, Expr::Literal { value: ScalarValue::Null, .. }) {
                return Err(Error::bind(format!("{name} needs a BOOLEAN, got {}", v.ty())).at_span(at));
            }
            let distinct = if list.duplicate_treatment.is_some() { "DISTINCT " } else { "" };
            let filter = f.filter.as_ref().map_or(String::new(), |c| format!(" FILTER (WHERE {c})"));
            crate::functions::parse_expr(
                &format!("({inner}({distinct}CASE WHEN ({x}) THEN 1 WHEN NOT ({x}) THEN 0 END){filter} = 1)"),
                f,
            )
        })())
    }

    /// avg(x) of an INTERVAL, as DuckDB's `IntervalAverageOperation`: the sums of x's months,
    /// days and microseconds (read back exactly through EXTRACT) over its count, each
    /// field's remainder shifted into the next (a month as 30 days), and the microseconds'
    /// own remainder added as DuckDB adds it. FILTER is kept; DISTINCT is refused. None
    /// for another call.
    pub(crate) fn interval_average(&self, f: &ast::Function) -> Option<Result<ast::Expr>> {
        if !f.name.to_string().eq_ignore_ascii_case("avg") {
            return None;
        }
        let ast::FunctionArguments::List(list) = &f.args else { return None };
        let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))] = list.args.as_slice() else { return None };
        if contains_aggregate(x) {
            return None;
        }
        match Context::Plain(self.base()).bind(x) {
            Ok(v) if v.ty() == DataType::Interval => {}
            _ => return None,
        }
        Some((|| {
            if list.duplicate_treatment.is_some() {
                return Err(Error::not_supported("avg(DISTINCT …) of INTERVAL").at_span(f.name.span()));
            }
            let filter = f.filter.as_ref().map_or(String::new(), |c| format!(" FILTER (WHERE {c})"));
            let part = |p: &str| format!("EXTRACT({p} FROM ({x}))");
            let c = format!("count({x}){filter}");
            let sm = format!("sum(12 * {} + {}){filter}", part("year"), part("month"));
            let sd = format!("sum({}){filter}", part("day"));
            let su = format!(
                "sum({} * 3600000000 + {} * 60000000 + {}){filter}",
                part("hour"),
                part("minute"),
                part("microsecond")
            );
            let months_rest = format!("(({sm}) % ({c})) * 30");
            let days = format!("({sd}) // ({c}) + ({months_rest}) // ({c})");
            let days_rest = format!("(({sd}) % ({c}) + ({months_rest}) % ({c}))");
            let us = format!("(({su}) // ({c}) + ({su}) % ({c}) + ({days_rest} * 86400000000) // ({c}))");
            // (Nested about 15 levels deeper than x itself, once.)
            crate::functions::parse_expr_within(
                &format!(
                    "(CASE WHEN ({c}) = 0 THEN NULL ELSE to_months(({sm}) // ({c})) + to_days({days}) \
                     + INTERVAL 1 HOUR * ({us} // 3600000000) + INTERVAL 1 MINUTE * (({us} % 3600000000) // 60000000) \
                     + INTERVAL 1 MICROSECOND * ({us} % 60000000) END)"
                ),
                f,
                crate::depth::PARSER_RECURSION_LIMIT,
            )
        })())
    }

    /// Binds an aggregate call's argument in this (plain) context.
    pub fn bind_aggregate(&self, f: &ast::Function) -> Result<AggExpr> {
        let name = f.name.to_string().to_ascii_lowercase();
        let at = f.name.span();
        crate::audit::function(f)?;
        let ast::FunctionArguments::List(list) = &f.args else {
            return Err(Error::bind(format!("{name} needs an argument")).at_span(at));
        };
        if crate::bind_quantile::is_quantile_name(&name) {
            return self.bind_quantile_call(f, list);
        }
        if crate::bind_string_agg::is_string_agg_name(&name) {
            return self.bind_string_agg_call(f, list);
        }
        // (MIN and MAX of the distinct values are those of all values.)
        let distinct = matches!(list.duplicate_treatment, Some(ast::DuplicateTreatment::Distinct))
            && !matches!(name.as_str(), "min" | "max");
        // (mode of distinct values: all tie, and DuckDB's pick among ties follows its hash
        // table's order.)
        if distinct && name == "mode" {
            return Err(Error::not_supported(format!("{name}(DISTINCT …)")).at_span(at));
        }
        let func = match name.as_str() {
            "sum" => AggFunc::Sum,
            "count" | "count_if" => AggFunc::Count,
            "avg" => AggFunc::Avg,
            "min" => AggFunc::Min,
            "var_samp" | "variance" => AggFunc::VarSamp,
            "var_pop" => AggFunc::VarPop,
            "stddev_samp" | "stddev" => AggFunc::StddevSamp,
            "stddev_pop" => AggFunc::StddevPop,
            "covar_pop" => AggFunc::CovarPop,
            "covar_samp" => AggFunc::CovarSamp,
            "corr" => AggFunc::Corr,
            "arg_max" | "argmax" | "max_by" => AggFunc::ArgMax,
            "arg_min" | "argmin" | "min_by" => AggFunc::ArgMin,
            "mode" => AggFunc::Mode,
            "approx_count_distinct" => AggFunc::ApproxCountDistinct,
            _ => AggFunc::Max,
        };
        if func.is_pair() || func.is_arg_extreme() {
            return self.bind_pair_aggregate(func, f, &list.args, distinct);
        }
        let arg = match list.args.as_slice() {
            [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard)] if func == AggFunc::Count => None,
            [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))] => {
                if contains_aggregate(x) {
                    return Err(Error::bind("aggregate calls cannot be nested").at_span(at));
                }
                Some(x)
            }
            _ => return Err(Error::bind(format!("{name} takes exactly one argument")).at_span(at)),
        };
        // FILTER (WHERE c): the rows where c is not TRUE contribute NULL, which aggregates
        // skip (COUNT(*) counts a non-NULL 1 instead).
        let arg = match &f.filter {
            Some(c) => Some(self.bind(&crate::functions::filtered_argument(arg, c, f)?)?),
            None => arg.map(|x| self.bind(x)).transpose()?,
        };
        // count_if(c): the rows where c is TRUE, as COUNT(CASE WHEN c THEN 1 END).
        let arg = match arg {
            Some(c) if name == "count_if" => {
                if c.ty() != DataType::Boolean && !matches!(c, Expr::Literal { value: ScalarValue::Null, .. }) {
                    return Err(Error::bind(format!("count_if needs a BOOLEAN, got {}", c.ty())).at_span(at));
                }
                let one = Expr::literal(ScalarValue::Int32(1), DataType::Int32);
                Some(Expr::Case { branches: vec![(c, one)], else_expr: None, ty: DataType::Int32 })
            }
            None if name == "count_if" => return Err(Error::bind("count_if takes one argument").at_span(at)),
            other => other,
        };
        let arg_ty = arg.as_ref().map(|a| a.ty());
        if func == AggFunc::Avg && arg_ty == Some(DataType::Timestamp) {
            // DuckDB averages timestamps; here AVG is SUM / COUNT, and a SUM of timestamps
            // is not a value of any type.
            return Err(Error::not_supported("avg of TIMESTAMP").at_span(at));
        }
        let ty = AggExpr::result_type(func, arg_ty.as_ref()).ok_or_else(|| {
            Error::bind(format!("{name} is not defined for {}", arg_ty.map_or("*".into(), |t| t.to_string())))
                .at_span(at)
        })?;
        if distinct && arg.is_none() {
            return Err(Error::bind("count(DISTINCT *) is not valid SQL").at_span(at));
        }
        Ok(AggExpr { func, arg, ty, arg2: None, distinct, order: vec![] })
    }

    /// covar_pop / covar_samp / corr (y, x): both arguments numeric; arg_max / arg_min
    /// (arg, val): any types. FILTER applies to both.
    fn bind_pair_aggregate(
        &self,
        func: AggFunc,
        f: &ast::Function,
        args: &[ast::FunctionArg],
        distinct: bool,
    ) -> Result<AggExpr> {
        let at = f.name.span();
        let name = f.name.to_string().to_ascii_lowercase();
        if func.is_arg_extreme() && args.len() == 3 {
            return Err(Error::not_supported(format!("{name} of the top n rows (its LIST result)")).at_span(at));
        }
        let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(y)), ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x))] =
            args
        else {
            return Err(Error::bind(format!("{name} takes exactly two arguments")).at_span(at));
        };
        let mut bound = vec![];
        for a in [y, x] {
            if contains_aggregate(a) {
                return Err(Error::bind("aggregate calls cannot be nested").at_span(at));
            }
            let e = match &f.filter {
                Some(c) => self.bind(&crate::functions::filtered_argument(Some(a), c, f)?)?,
                None => self.bind(a)?,
            };
            let numeric = e.ty().is_numeric() || matches!(e, Expr::Literal { value: ScalarValue::Null, .. });
            if !numeric && !func.is_arg_extreme() {
                return Err(Error::bind(format!("{name} is not defined for {}", e.ty())).at_span(at));
            }
            bound.push(e);
        }
        let x = bound.pop();
        let y = bound.pop();
        let ty = if func.is_arg_extreme() { y.as_ref().map_or(DataType::Int32, |y| y.ty()) } else { DataType::Float64 };
        Ok(AggExpr { func, arg: y, arg2: x, ty, distinct, order: vec![] })
    }
}
