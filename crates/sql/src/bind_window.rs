//! Window functions: `f(args) OVER (PARTITION BY … ORDER BY … frame)` and `OVER w` with a
//! WINDOW clause. The calls are cut out of the select list, QUALIFY and ORDER BY (as
//! placeholder names, like scalar subqueries) before the SELECT is bound; each is bound
//! in the SELECT's context (over the aggregation's groups where it aggregates, so
//! `sum(count(*)) OVER ()` works) into a `WindowExpr`, and the placeholders then name the
//! columns a `LogicalPlan::Window` adds after WHERE, GROUP BY and HAVING, before
//! QUALIFY, DISTINCT, ORDER BY and LIMIT (`crate::bind_select`).

use crate::bind_expr::{contains_aggregate, AtSpan, Context};
use crate::coerce::cast;
use gpusql_common::{DataType, Error, Result, ScalarValue};
use gpusql_plan::window::{Frame, FrameBound, FrameUnits, WindowExpr, WindowFunc};
use gpusql_plan::{AggExpr, AggFunc, Expr, SortKey};
use sqlparser::ast::{self, Spanned};

/// The first characters of a window call's placeholder name.
pub const PLACEHOLDER: &str = "__window";

/// A window call cut out of a clause: its placeholder's name and the call.
pub type CutWindow = (String, ast::Function);

/// Replaces the window calls in `e` by placeholder names (numbered on from `out`'s
/// length) and adds them to `out`.
pub fn extract(e: &mut ast::Expr, out: &mut Vec<CutWindow>) -> Result<()> {
    crate::outside_subqueries::rewrite(e, |x| {
        let ast::Expr::Function(f) = x else { return Ok(None) };
        if f.over.is_none() {
            return Ok(None);
        }
        // (Calls inside it were cut out first: bottom-up.)
        if names_window(&ast::Expr::Function(ast::Function { over: None, ..f.clone() })) {
            return Err(Error::bind("window function calls cannot be nested").at_span(f.name.span()));
        }
        let name = format!("{PLACEHOLDER}{}", out.len());
        let placeholder = ast::Expr::Identifier(ast::Ident::with_span(f.name.span(), name.clone()));
        // bool_and / bool_or: MIN / MAX of the truth values as 1 and 0, compared with 1
        // (as the grouped aggregates are bound).
        let extreme = match f.name.to_string().to_ascii_lowercase().as_str() {
            "bool_and" => Some("min"),
            "bool_or" => Some("max"),
            _ => None,
        };
        if let (Some(extreme), Some([x])) = (extreme, crate::functions::plain_arguments(f).as_deref()) {
            let truth = crate::functions::parse_expr(&format!("CASE WHEN ({x}) THEN 1 WHEN NOT ({x}) THEN 0 END"), f)?;
            let mut inner = f.clone();
            inner.name = ast::ObjectName::from(vec![ast::Ident::with_span(f.name.span(), extreme)]);
            if let ast::FunctionArguments::List(list) = &mut inner.args {
                list.args = vec![ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(truth))];
            }
            out.push((name, inner));
            let one = ast::Expr::value(ast::Value::Number("1".into(), false));
            return Ok(Some(ast::Expr::Nested(Box::new(ast::Expr::BinaryOp {
                left: Box::new(placeholder),
                op: ast::BinaryOperator::Eq,
                right: Box::new(one),
            }))));
        }
        out.push((name, f.clone()));
        Ok(Some(placeholder))
    })
}

/// Whether `e` holds a window call or a placeholder of one (outside the subqueries in it:
/// theirs are their own).
pub fn names_window(e: &ast::Expr) -> bool {
    let mut found = false;
    let mut copy = e.clone();
    let _ = crate::outside_subqueries::rewrite(&mut copy, |x| {
        found |= match x {
            ast::Expr::Function(f) => f.over.is_some(),
            ast::Expr::Identifier(id) => id.value.starts_with(PLACEHOLDER),
            _ => false,
        };
        Ok(None)
    });
    found
}

/// DuckDB's error for a window call inside an aggregate call's arguments.
pub fn refuse_in_aggregates(e: &ast::Expr) -> Result<()> {
    let mut error = None;
    let _ = ast::visit_expressions(e, |x| {
        if let ast::Expr::Function(f) = x {
            let inside = ast::Expr::Function(ast::Function { over: None, ..f.clone() });
            if f.over.is_none()
                && crate::bind_aggregate_call::is_aggregate_name(&f.name.to_string())
                && names_window(&inside)
            {
                error = Some(
                    Error::bind("aggregate function calls cannot contain window function calls").at_span(f.name.span()),
                );
                return std::ops::ControlFlow::Break(());
            }
        }
        std::ops::ControlFlow::Continue(())
    });
    error.map_or(Ok(()), Err)
}

/// DuckDB's error for a window call where none may stand (WHERE, GROUP BY, HAVING, …).
pub fn refuse_in(e: &ast::Expr, clause: &str) -> Result<()> {
    if names_window(e) {
        return Err(Error::bind(format!("{clause} clause cannot contain window functions!")).at_span(e.span()));
    }
    Ok(())
}

/// The window specification of `over`, a WINDOW clause's named ones resolved.
fn spec_of(over: &ast::WindowType, named: &[ast::NamedWindowDefinition]) -> Result<ast::WindowSpec> {
    let lookup = |name: &ast::Ident| -> Result<ast::WindowSpec> {
        let found = named.iter().find(|d| d.0.value.eq_ignore_ascii_case(&name.value));
        match found.map(|d| &d.1) {
            Some(ast::NamedWindowExpr::WindowSpec(s)) => spec_of(&ast::WindowType::WindowSpec(s.clone()), named),
            Some(ast::NamedWindowExpr::NamedWindow(other)) => {
                spec_of(&ast::WindowType::NamedWindow(other.clone()), named)
            }
            None => Err(Error::bind(format!("window \"{}\" does not exist", name.value)).at_span(name.span)),
        }
    };
    match over {
        ast::WindowType::NamedWindow(name) => lookup(name),
        ast::WindowType::WindowSpec(s) => match &s.window_name {
            // `OVER (w ORDER BY …)`: w's partitioning, with this order and frame.
            Some(base) => {
                let mut b = lookup(base)?;
                if !s.partition_by.is_empty() {
                    return Err(Error::bind("cannot override PARTITION BY clause of window").at_span(base.span));
                }
                if !s.order_by.is_empty() {
                    if !b.order_by.is_empty() {
                        return Err(Error::bind("cannot override ORDER BY clause of window").at_span(base.span));
                    }
                    b.order_by = s.order_by.clone();
                }
                if s.window_frame.is_some() {
                    b.window_frame = s.window_frame.clone();
                }
                Ok(b)
            }
            None => Ok(s.clone()),
        },
    }
}

/// The window function of `name` with `n` arguments, its result type from the first
/// argument's.
fn function_of(
    name: &str,
    n: usize,
    first: Option<DataType>,
    at: sqlparser::tokenizer::Span,
) -> Result<(WindowFunc, DataType)> {
    let wrong = || Error::bind(format!("{name}: wrong number of arguments ({n})")).at_span(at);
    let value = || first.ok_or_else(wrong);
    Ok(match (name, n) {
        ("row_number", 0) => (WindowFunc::RowNumber, DataType::Int64),
        ("rank", 0) => (WindowFunc::Rank, DataType::Int64),
        ("dense_rank", 0) => (WindowFunc::DenseRank, DataType::Int64),
        ("percent_rank", 0) => (WindowFunc::PercentRank, DataType::Float64),
        ("cume_dist", 0) => (WindowFunc::CumeDist, DataType::Float64),
        ("ntile", 1) => (WindowFunc::Ntile, DataType::Int64),
        ("lag", 1..=3) => (WindowFunc::Lag, value()?),
        ("lead", 1..=3) => (WindowFunc::Lead, value()?),
        ("first_value" | "first", 1) => (WindowFunc::FirstValue, value()?),
        ("last_value" | "last", 1) => (WindowFunc::LastValue, value()?),
        ("nth_value", 2) => (WindowFunc::NthValue, value()?),
        ("count", 0 | 1) => (WindowFunc::Aggregate(AggFunc::Count), DataType::Int64),
        ("sum" | "avg" | "mean" | "min" | "max", 1) => {
            let func = match name {
                "sum" => AggFunc::Sum,
                "avg" | "mean" => AggFunc::Avg,
                "min" => AggFunc::Min,
                _ => AggFunc::Max,
            };
            let arg = value()?;
            let ty = AggExpr::result_type(func, Some(&arg))
                .ok_or_else(|| Error::bind(format!("{name} is not defined for {arg}")).at_span(at))?;
            (WindowFunc::Aggregate(func), ty)
        }
        // (The argument as a DOUBLE: `bind_window` casts it.)
        ("stddev" | "stddev_samp" | "stddev_pop" | "variance" | "var_samp" | "var_pop", 1) => {
            let func = match name {
                "stddev" | "stddev_samp" => AggFunc::StddevSamp,
                "stddev_pop" => AggFunc::StddevPop,
                "variance" | "var_samp" => AggFunc::VarSamp,
                _ => AggFunc::VarPop,
            };
            let arg = value()?;
            if !arg.is_numeric() {
                return Err(Error::bind(format!("{name} is not defined for {arg}")).at_span(at));
            }
            (WindowFunc::Aggregate(func), DataType::Float64)
        }
        (
            "row_number" | "rank" | "dense_rank" | "percent_rank" | "cume_dist" | "ntile" | "lag" | "lead"
            | "first_value" | "first" | "last_value" | "last" | "nth_value" | "count" | "sum" | "avg" | "mean" | "min"
            | "max" | "stddev" | "stddev_samp" | "stddev_pop" | "variance" | "var_samp" | "var_pop",
            _,
        ) => return Err(wrong()),
        _ => return Err(Error::not_supported(format!("{name} as a window function")).at_span(at)),
    })
}

/// `lag(max(x) IGNORE NULLS)`: sqlparser gives the IGNORE NULLS after the last argument's
/// own call to that call; it is the window call's (DuckDB's reading). None where there is
/// no such call.
fn lift_null_treatment(f: &ast::Function) -> Option<ast::Function> {
    let ast::FunctionArguments::List(list) = &f.args else { return None };
    let Some(ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Function(inner)))) = list.args.last()
    else {
        return None;
    };
    let treatment = inner.null_treatment.filter(|_| inner.over.is_none())?;
    let mut lifted = f.clone();
    if let ast::FunctionArguments::List(list) = &mut lifted.args {
        if let Some(ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Function(inner)))) =
            list.args.last_mut()
        {
            inner.null_treatment = None;
        }
        list.clauses.push(ast::FunctionArgumentClause::IgnoreOrRespectNulls(treatment));
    }
    Some(lifted)
}

/// A constant of a frame bound or argument, evaluated.
fn constant(e: &Expr, what: &str, at: sqlparser::tokenizer::Span) -> Result<ScalarValue> {
    let mut columns = vec![];
    e.columns(&mut columns);
    if !columns.is_empty() || e.any(&|x| matches!(x, Expr::Parameter { .. })) {
        return Err(Error::not_supported(format!("{what} that is not a constant")).at_span(at));
    }
    gpusql_plan::eval::eval(e, &[]).map_err(|err| err.at_span(at))
}

impl Context<'_> {
    /// One window call, over this context's columns.
    pub(crate) fn bind_window(&self, f: &ast::Function, named: &[ast::NamedWindowDefinition]) -> Result<WindowExpr> {
        let lifted = lift_null_treatment(f);
        let f = lifted.as_ref().unwrap_or(f);
        let name = f.name.to_string().to_ascii_lowercase();
        let at = f.name.span();
        let refuse = |what: &str| Err(Error::not_supported(what.to_string()).at_span(at));
        // IGNORE / RESPECT NULLS: DuckDB's spelling is in the arguments (`lag(x IGNORE
        // NULLS)`); the standard's after them (`lag(x) IGNORE NULLS`) is read the same.
        let in_arguments = match &f.args {
            ast::FunctionArguments::List(list) => list.clauses.iter().find_map(|c| match c {
                ast::FunctionArgumentClause::IgnoreOrRespectNulls(t) => Some(*t),
                _ => None,
            }),
            _ => None,
        };
        let ignore_nulls = match in_arguments.or(f.null_treatment) {
            Some(ast::NullTreatment::IgnoreNulls) => true,
            Some(ast::NullTreatment::RespectNulls) | None => false,
        };
        if !f.within_group.is_empty() || !matches!(f.parameters, ast::FunctionArguments::None) {
            return refuse(&format!("{name}(…) WITHIN GROUP / parameters as a window function"));
        }
        let args: Vec<&ast::Expr> = match &f.args {
            ast::FunctionArguments::None => vec![],
            ast::FunctionArguments::List(list) => {
                if list.duplicate_treatment.is_some() {
                    return refuse(&format!("{name}(DISTINCT …) as a window function"));
                }
                let other_clause =
                    list.clauses.iter().find(|c| !matches!(c, ast::FunctionArgumentClause::IgnoreOrRespectNulls(_)));
                if let Some(c) = other_clause {
                    return refuse(&format!("{c} in a window function's arguments"));
                }
                let mut args = vec![];
                for a in &list.args {
                    match a {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => args.push(x),
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) if name == "count" => {}
                        _ => return Err(Error::bind(format!("{name}: arguments must be expressions")).at_span(at)),
                    }
                }
                args
            }
            ast::FunctionArguments::Subquery(_) => return refuse("a subquery as a window function's argument"),
        };
        if args.iter().any(|a| contains_aggregate(a) && matches!(self, Context::Plain(_))) {
            return Err(Error::bind(
                "aggregate calls in a window function's arguments need GROUP BY or an aggregate query",
            )
            .at_span(at));
        }
        let mut bound = args.iter().map(|a| self.bind(a)).collect::<Result<Vec<_>>>()?;
        let (func, ty) = function_of(&name, bound.len(), bound.first().map(|b| b.ty()), at)?;
        let takes_nulls = matches!(
            func,
            WindowFunc::Lag | WindowFunc::Lead | WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue
        );
        if (in_arguments.is_some() || f.null_treatment.is_some()) && !takes_nulls {
            return Err(Error::bind(format!("RESPECT/IGNORE NULLS is not supported for {name}")).at_span(at));
        }
        if let Some(c) = &f.filter {
            if !matches!(func, WindowFunc::Aggregate(_)) {
                return refuse(&format!("FILTER of {name}"));
            }
            let x = crate::functions::filtered_argument(args.first().copied(), c, f)?;
            bound = vec![self.bind(&x)?];
        }
        match func {
            WindowFunc::Ntile => bound[0] = cast(bound[0].clone(), DataType::Int64),
            WindowFunc::Aggregate(a) if a.is_statistic() => bound[0] = cast(bound[0].clone(), DataType::Float64),
            WindowFunc::NthValue => bound[1] = cast(bound[1].clone(), DataType::Int64),
            WindowFunc::Lag | WindowFunc::Lead => {
                if bound.len() > 1 {
                    bound[1] = cast(bound[1].clone(), DataType::Int64);
                }
                if bound.len() > 2 {
                    bound[2] = cast(bound[2].clone(), ty);
                }
            }
            _ => {}
        }
        let Some(over) = &f.over else { return Err(Error::plan("a window call without OVER")) };
        let spec = spec_of(over, named)?;
        for e in spec.partition_by.iter().chain(spec.order_by.iter().map(|o| &o.expr)) {
            if names_window(e) {
                return Err(Error::bind("window functions are not allowed in window definitions").at_span(e.span()));
            }
        }
        let partition_by = spec.partition_by.iter().map(|e| self.bind(e)).collect::<Result<Vec<_>>>()?;
        let mut order_by = vec![];
        for o in &spec.order_by {
            if o.with_fill.is_some() || matches!(o.options.sort, Some(ast::OrderBySort::Using(_))) {
                return refuse(&format!("ORDER BY {o} in a window"));
            }
            let asc = !matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            order_by.push(SortKey {
                expr: self.bind(&o.expr)?,
                asc,
                nulls_first: o.options.nulls_first.unwrap_or(false),
            });
        }
        let frame = match &spec.window_frame {
            None => Frame::default_for(!order_by.is_empty()),
            Some(fr) => self.frame(fr, &order_by)?,
        };
        Ok(WindowExpr { func, args: bound, partition_by, order_by, frame, ty, ignore_nulls })
    }

    fn frame(&self, fr: &ast::WindowFrame, order_by: &[SortKey]) -> Result<Frame> {
        let units = match fr.units {
            ast::WindowFrameUnits::Rows => FrameUnits::Rows,
            ast::WindowFrameUnits::Range => FrameUnits::Range,
            ast::WindowFrameUnits::Groups => return Err(Error::not_supported("GROUPS frames")),
        };
        let end = fr.end_bound.clone().unwrap_or(ast::WindowFrameBound::CurrentRow);
        if matches!(fr.start_bound, ast::WindowFrameBound::Following(None)) {
            return Err(Error::bind("Frame start cannot be UNBOUNDED FOLLOWING"));
        }
        if matches!(end, ast::WindowFrameBound::Preceding(None)) {
            return Err(Error::bind("Frame end cannot be UNBOUNDED PRECEDING"));
        }
        let offsets =
            matches!(
                fr.start_bound,
                ast::WindowFrameBound::Preceding(Some(_)) | ast::WindowFrameBound::Following(Some(_))
            ) || matches!(end, ast::WindowFrameBound::Preceding(Some(_)) | ast::WindowFrameBound::Following(Some(_)));
        if units == FrameUnits::Range && offsets && order_by.len() != 1 {
            return Err(Error::bind("RANGE frames must have only one ORDER BY expression"));
        }
        let bound = |b: &ast::WindowFrameBound| -> Result<FrameBound> {
            let (e, preceding) = match b {
                ast::WindowFrameBound::CurrentRow => return Ok(FrameBound::CurrentRow),
                ast::WindowFrameBound::Preceding(None) => return Ok(FrameBound::UnboundedPreceding),
                ast::WindowFrameBound::Following(None) => return Ok(FrameBound::UnboundedFollowing),
                ast::WindowFrameBound::Preceding(Some(e)) => (e, true),
                ast::WindowFrameBound::Following(Some(e)) => (e, false),
            };
            let side = if preceding { "PRECEDING" } else { "FOLLOWING" };
            let at = e.span();
            let value = self.bind(e)?;
            let offset = match units {
                FrameUnits::Rows => {
                    if !value.ty().is_integer() && !matches!(value, Expr::Literal { value: ScalarValue::Null, .. }) {
                        return Err(Error::bind(format!(
                            "a ROWS {side} offset must be an integer, got {}",
                            value.ty()
                        ))
                        .at_span(at));
                    }
                    constant(&cast(value, DataType::Int64), "a frame offset", at)?
                }
                FrameUnits::Range => range_offset(value, order_by[0].expr.ty(), side, at)?,
            };
            let negative = match &offset {
                ScalarValue::Float64(x) => *x < 0.0,
                ScalarValue::Null => {
                    return Err(Error::bind(format!("Window {side} expression cannot be NULL")).at_span(at));
                }
                other => other.as_i128().is_some_and(|x| x < 0),
            };
            if negative {
                let units = if units == FrameUnits::Rows { "ROWS" } else { "RANGE" };
                return Err(
                    Error::InvalidInput(format!("Window {units} {side} expression cannot be negative")).at_span(at)
                );
            }
            Ok(if preceding { FrameBound::Preceding(offset) } else { FrameBound::Following(offset) })
        };
        Ok(Frame { units, start: bound(&fr.start_bound)?, end: bound(&end)? })
    }
}

/// A RANGE offset as a value of the ORDER BY key's type, exactly: integers for integer
/// keys, decimals of at most the key's scale for DECIMAL keys, any number for DOUBLE
/// keys; for DATE keys days (an integer, or an INTERVAL of whole days), for TIMESTAMP
/// keys microseconds (an INTERVAL without months). (DuckDB also moves them by months.)
fn range_offset(value: Expr, key: DataType, side: &str, at: sqlparser::tokenizer::Span) -> Result<ScalarValue> {
    let ty = value.ty();
    let refuse = |what: String| Err(Error::not_supported(what).at_span(at));
    if let (DataType::Date | DataType::Timestamp, DataType::Interval) = (key, ty) {
        let iv = match constant(&value, "a frame offset", at)? {
            ScalarValue::Interval(iv) => iv,
            other => return Ok(other),
        };
        let micros = iv.days as i128 * gpusql_common::date::MICROS_PER_DAY as i128 + iv.micros as i128;
        return match key {
            DataType::Date if iv.months != 0 || iv.micros != 0 => {
                refuse(format!("a RANGE {side} offset of an INTERVAL of months or parts of days over {key}"))
            }
            DataType::Date => Ok(ScalarValue::Int64(iv.days as i64)),
            _ if iv.months != 0 => refuse(format!("a RANGE {side} offset of an INTERVAL of months over {key}")),
            _ => i64::try_from(micros)
                .map(ScalarValue::Int64)
                .map_err(|_| Error::bind(format!("RANGE {side} offset out of range")).at_span(at)),
        };
    }
    let fits = match (key, ty) {
        (DataType::Float64, t) => t.is_numeric(),
        (DataType::Int32 | DataType::Int64 | DataType::Date, t) => t.is_integer(),
        (DataType::Decimal { scale, .. }, DataType::Decimal { scale: s, .. }) => s <= scale,
        (DataType::Decimal { .. }, t) => t.is_integer(),
        _ => false,
    };
    if !fits {
        return refuse(format!("a RANGE {side} offset of {ty} for an ORDER BY key of {key}"));
    }
    let target = match key {
        DataType::Int32 | DataType::Date => DataType::Int64,
        DataType::Decimal { scale, .. } => DataType::decimal(38, scale),
        other => other,
    };
    constant(&cast(value, target), "a frame offset", at)
}
