//! Query bodies other than a plain SELECT: set operations (UNION [ALL], INTERSECT [ALL],
//! EXCEPT [ALL], nested and parenthesized) and VALUES lists, with the ORDER BY / LIMIT of
//! the query they make.
//!
//! UNION ALL is a `Union` of the arms, each cast to the column types the arms have in
//! common (DuckDB's rules: `coerce::result_type`; a NULL column takes the others' type).
//! The others are built from it: UNION groups the rows by every column (NULLs, -0.0 and
//! 0.0, NaNs each one group, as DuckDB compares them); INTERSECT and EXCEPT tag each arm's
//! rows, group by every column and count each side's rows, then keep the groups both sides
//! have (INTERSECT), or only the left (EXCEPT); the ALL forms repeat each group min(l, r)
//! or l − r times (`Repeat`). Column names come from the first arm.

use crate::bind_expr::{AtSpan, Context, Scope, ScopeField};
use crate::bind_order::{bind_order_by, project_sort_limit};
use crate::bind_select::{bind_query, bind_select};
use crate::coerce::{cast, result_type};
use gpusql_common::{Catalog, DataType, Error, Field, Result, ScalarValue, Schema};
use gpusql_plan::{AggExpr, AggFunc, BinaryOp, Expr, LogicalPlan};
use sqlparser::ast::{self, Spanned};

/// A query body as a plan (a SELECT's ORDER BY and LIMIT are its query's, bound by the
/// caller).
pub fn bind_set_expr(body: &ast::SetExpr, catalog: &dyn Catalog) -> Result<LogicalPlan> {
    match body {
        ast::SetExpr::Select(s) => bind_select(s, &[], 0, None, catalog),
        ast::SetExpr::Query(q) => bind_query(q, catalog),
        ast::SetExpr::Values(v) => bind_values(v, catalog),
        ast::SetExpr::SetOperation { op, set_quantifier, left, right } => {
            let name = match op {
                ast::SetOperator::Union => "UNION",
                ast::SetOperator::Intersect => "INTERSECT",
                ast::SetOperator::Except | ast::SetOperator::Minus => "EXCEPT",
            };
            let all = match set_quantifier {
                ast::SetQuantifier::All => true,
                ast::SetQuantifier::None | ast::SetQuantifier::Distinct => false,
                other => {
                    return Err(Error::not_supported(format!("{name} {other}")).at_span(body.span()));
                }
            };
            let l = bind_set_expr(left, catalog)?;
            let r = bind_set_expr(right, catalog)?;
            let arms = same_types(vec![l, r], name).map_err(|e| e.at_span(body.span()))?;
            Ok(match (op, all) {
                (ast::SetOperator::Union, true) => union_all(arms),
                (ast::SetOperator::Union, false) => distinct(union_all(arms)),
                (ast::SetOperator::Intersect, _) => counted(arms, Counted::Intersect, all),
                (_, _) => counted(arms, Counted::Except, all),
            })
        }
        other => {
            let what = other.to_string();
            let what = what.split_whitespace().next().unwrap_or("this query form");
            Err(Error::not_supported(format!("{what} as a query")).at_span(other.span()))
        }
    }
}

/// ORDER BY / LIMIT of a set operation or VALUES query: keys are output columns (by
/// position or name) or expressions over them.
pub fn order_limit(
    plan: LogicalPlan,
    order_by: &[ast::OrderByExpr],
    skip: usize,
    fetch: Option<usize>,
) -> Result<LogicalPlan> {
    if order_by.is_empty() && skip == 0 && fetch.is_none() {
        return Ok(plan);
    }
    let schema = plan.schema();
    let scope = Scope {
        fields: schema
            .fields
            .iter()
            .map(|f| ScopeField {
                hidden: false,
                qualifier: String::new(),
                name: f.name.clone(),
                ty: f.ty,
                nullable: f.nullable,
            })
            .collect(),
        unsupported: vec![],
    };
    let mut exprs = columns(&plan);
    let mut names: Vec<String> = schema.fields.iter().map(|f| f.name.clone()).collect();
    let visible = exprs.len();
    let keys = bind_order_by(&Context::Plain(&scope), order_by, false, &mut exprs, &mut names)?;
    Ok(project_sort_limit(plan, exprs, names, visible, keys, skip, fetch))
}

fn columns(plan: &LogicalPlan) -> Vec<Expr> {
    plan.schema()
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| Expr::Column { index: i, name: f.name.clone(), ty: f.ty, nullable: f.nullable })
        .collect()
}

/// Whether output column `i` of `plan` is a NULL literal (a column of no type of its own).
fn null_column(plan: &LogicalPlan, i: usize) -> bool {
    match plan {
        LogicalPlan::Project { exprs, .. } => matches!(exprs[i], Expr::Literal { value: ScalarValue::Null, .. }),
        LogicalPlan::Sort { input, .. } | LogicalPlan::Limit { input, .. } => null_column(input, i),
        _ => false,
    }
}

/// The arms cast to their common column types, with the same number of columns.
fn same_types(arms: Vec<LogicalPlan>, what: &str) -> Result<Vec<LogicalPlan>> {
    let schemas: Vec<Schema> = arms.iter().map(|a| a.schema()).collect();
    let width = schemas[0].len();
    if schemas.iter().any(|s| s.len() != width) {
        return Err(Error::bind(format!(
            "{what}: set operations can only apply to expressions with the same number of result columns ({} and {})",
            width,
            schemas.iter().map(|s| s.len()).find(|n| *n != width).unwrap_or(width)
        )));
    }
    let mut types = vec![];
    for c in 0..width {
        let mut ty: Option<DataType> = None;
        for (a, s) in arms.iter().zip(&schemas) {
            if null_column(a, c) {
                continue;
            }
            let t = s.fields[c].ty;
            ty = Some(match ty {
                None => t,
                Some(u) => result_type(&u, &t).or_else(|| text_beside(&u, &t)).ok_or_else(|| {
                    Error::not_supported(format!(
                        "{what} of {u} and {t} columns (column {} '{}')",
                        c + 1,
                        schemas[0].fields[c].name
                    ))
                })?,
            });
        }
        types.push(ty.unwrap_or(schemas[0].fields[c].ty));
    }
    Ok(arms
        .into_iter()
        .zip(&schemas)
        .map(|(arm, s)| {
            if s.fields.iter().zip(&types).all(|(f, t)| f.ty == *t) {
                return arm;
            }
            let exprs = columns(&arm).into_iter().zip(&types).map(|(e, t)| cast(e, *t)).collect();
            let names = s.fields.iter().map(|f| f.name.clone()).collect();
            LogicalPlan::Project { input: Box::new(arm), exprs, names }
        })
        .collect())
}

/// VARCHAR where one arm's column is text and the other's any other type: DuckDB
/// unions them as text (`SELECT 'x' UNION ALL SELECT 7` gives '7').
fn text_beside(a: &DataType, b: &DataType) -> Option<DataType> {
    match (a, b) {
        (DataType::Utf8, _) | (_, DataType::Utf8) => Some(DataType::Utf8),
        _ => None,
    }
}

/// UNION ALL of arms of one column type each (nested unions flattened): the first arm's
/// names, nullable where any arm is.
fn union_all(arms: Vec<LogicalPlan>) -> LogicalPlan {
    let mut inputs = vec![];
    for arm in arms {
        match arm {
            LogicalPlan::Union { inputs: inner, .. } => inputs.extend(inner),
            other => inputs.push(other),
        }
    }
    let mut fields = inputs[0].schema().fields;
    for arm in &inputs[1..] {
        for (f, g) in fields.iter_mut().zip(arm.schema().fields) {
            f.nullable |= g.nullable;
        }
    }
    LogicalPlan::Union { inputs, schema: Schema::new(fields) }
}

/// The distinct rows of `plan`: grouped by every column.
fn distinct(plan: LogicalPlan) -> LogicalPlan {
    let group_by = columns(&plan);
    let group_names = plan.schema().fields.iter().map(|f| f.name.clone()).collect();
    LogicalPlan::Aggregate { input: Box::new(plan), group_by, group_names, aggs: vec![] }
}

#[derive(Clone, Copy, PartialEq)]
enum Counted {
    Intersect,
    Except,
}

/// INTERSECT / EXCEPT [ALL] of two arms of one column type each: the rows of both, each
/// with its side's tag column set (the other NULL), grouped by every column with each
/// tag counted (the left's and the right's rows of each distinct row); then the groups
/// kept, or repeated.
fn counted(arms: Vec<LogicalPlan>, how: Counted, all: bool) -> LogicalPlan {
    let width = arms[0].schema().len();
    let one = |v: i64| Expr::literal(ScalarValue::Int64(v), DataType::Int64);
    let tagged: Vec<LogicalPlan> = arms
        .into_iter()
        .enumerate()
        .map(|(side, arm)| {
            let mut exprs = columns(&arm);
            let mut names: Vec<String> = arm.schema().fields.iter().map(|f| f.name.clone()).collect();
            let tag = |mine: bool| if mine { one(1) } else { Expr::literal(ScalarValue::Null, DataType::Int64) };
            exprs.extend([tag(side == 0), tag(side == 1)]);
            names.extend(["__left".to_string(), "__right".to_string()]);
            LogicalPlan::Project { input: Box::new(arm), exprs, names }
        })
        .collect();
    let union = union_all(tagged);
    let all_columns = columns(&union);
    let group_by = all_columns[..width].to_vec();
    let group_names = union.schema().fields[..width].iter().map(|f| f.name.clone()).collect();
    let count = |c: &Expr| AggExpr {
        func: AggFunc::Count,
        arg: Some(c.clone()),
        ty: DataType::Int64,
        arg2: None,
        distinct: false,
        order: vec![],
    };
    let aggs = vec![count(&all_columns[width]), count(&all_columns[width + 1])];
    let grouped = LogicalPlan::Aggregate { input: Box::new(union), group_by, group_names, aggs };
    let out = columns(&grouped);
    let (left, right) = (out[width].clone(), out[width + 1].clone());
    let bin =
        |op: BinaryOp, l: Expr, r: Expr, ty: DataType| Expr::Binary { op, left: Box::new(l), right: Box::new(r), ty };
    let kept = if all {
        let times = match how {
            // min(l, r)
            Counted::Intersect => Expr::Case {
                branches: vec![(bin(BinaryOp::Lt, left.clone(), right.clone(), DataType::Boolean), left.clone())],
                else_expr: Some(Box::new(right.clone())),
                ty: DataType::Int64,
            },
            Counted::Except => bin(BinaryOp::Sub, left, right, DataType::Int64),
        };
        LogicalPlan::Repeat { input: Box::new(grouped), times }
    } else {
        let on_right = match how {
            Counted::Intersect => BinaryOp::Gt,
            Counted::Except => BinaryOp::Eq,
        };
        let predicate = bin(
            BinaryOp::And,
            bin(BinaryOp::Gt, left, one(0), DataType::Boolean),
            bin(on_right, right, one(0), DataType::Boolean),
            DataType::Boolean,
        );
        LogicalPlan::Filter { input: Box::new(grouped), predicate }
    };
    let names = kept.schema().fields[..width].iter().map(|f| f.name.clone()).collect();
    LogicalPlan::Project { input: Box::new(kept), exprs: out[..width].to_vec(), names }
}

/// A VALUES list: its rows evaluated (constants only), each column of the type its values
/// have in common, held by a table of the catalog (`Catalog::values_table`) and scanned.
/// Columns are named col0, col1, … (DuckDB's names).
fn bind_values(v: &ast::Values, catalog: &dyn Catalog) -> Result<LogicalPlan> {
    let at = |e: Error, node: &dyn Spanned| e.at_span(node.span());
    let width = v.rows.first().map_or(0, |r| r.len());
    let scope = Scope::default();
    let ctx = Context::Plain(&scope);
    let mut bound: Vec<Vec<Expr>> = vec![];
    for row in &v.rows {
        if row.len() != width {
            return Err(at(Error::bind("VALUES lists must all be the same length"), row));
        }
        let exprs = row
            .iter()
            .map(|e| {
                if crate::bind_expr::contains_subquery(e) {
                    return Err(at(Error::not_supported("subqueries in VALUES"), e));
                }
                ctx.bind(e).map_err(|err| at(err, e))
            })
            .collect::<Result<Vec<_>>>()?;
        bound.push(exprs);
    }
    let mut fields = vec![];
    for c in 0..width {
        let mut ty: Option<DataType> = None;
        for row in &bound {
            if matches!(row[c], Expr::Literal { value: ScalarValue::Null, .. }) {
                continue;
            }
            let t = row[c].ty();
            ty = Some(match ty {
                None => t,
                Some(u) => result_type(&u, &t)
                    .ok_or_else(|| Error::not_supported(format!("VALUES column {} of {u} and {t} values", c + 1)))?,
            });
        }
        fields.push(Field::new(format!("col{c}"), ty.unwrap_or(DataType::Int32), false));
    }
    let mut rows = vec![];
    for row in bound {
        let values = row
            .into_iter()
            .zip(&fields)
            .map(|(e, f)| gpusql_plan::eval::eval(&cast(e, f.ty), &[]))
            .collect::<Result<Vec<_>>>()?;
        rows.push(values);
    }
    for (c, f) in fields.iter_mut().enumerate() {
        f.nullable = rows.iter().any(|r| r[c].is_null());
    }
    let schema = Schema::new(fields);
    Ok(LogicalPlan::scan(catalog.values_table(&schema, &rows)?))
}

/// `q` with its EXISTS over set operations rewritten for the subquery binder, which takes
/// a SELECT: EXISTS of a UNION [ALL] is the OR of EXISTS of its arms (exact: the union has
/// a row where an arm has one; correlated arms stay correlations); EXISTS of another body
/// (INTERSECT, EXCEPT, VALUES, an ordered union) reads it as `SELECT * FROM (…) __set`
/// (uncorrelated only). None where there is nothing to rewrite.
pub fn exists_over_set_operations(q: &ast::Query) -> Option<ast::Query> {
    use std::ops::ControlFlow;
    let found = ast::visit_expressions(q, |e| match e {
        ast::Expr::Exists { subquery, .. } if !matches!(*subquery.body, ast::SetExpr::Select(_)) => {
            ControlFlow::Break(())
        }
        _ => ControlFlow::Continue(()),
    });
    if found.is_continue() {
        return None;
    }
    let mut out = q.clone();
    let _ = ast::visit_expressions_mut(&mut out, |e| {
        if let ast::Expr::Exists { subquery, negated } = e {
            if !matches!(*subquery.body, ast::SetExpr::Select(_)) {
                let split = split_exists(subquery);
                *e = if *negated {
                    ast::Expr::UnaryOp { op: ast::UnaryOperator::Not, expr: Box::new(split) }
                } else {
                    split
                };
            }
        }
        ControlFlow::<()>::Continue(())
    });
    Some(out)
}

fn split_exists(q: &ast::Query) -> ast::Expr {
    let plain = q.with.is_none() && q.order_by.is_none() && q.limit_clause.is_none() && q.fetch.is_none();
    let exists = |q: ast::Query| ast::Expr::Exists { subquery: Box::new(q), negated: false };
    let with_body = |body: &ast::SetExpr| ast::Query { body: Box::new(body.clone()), ..q.clone() };
    match &*q.body {
        ast::SetExpr::SetOperation {
            op: ast::SetOperator::Union,
            set_quantifier: ast::SetQuantifier::All | ast::SetQuantifier::None | ast::SetQuantifier::Distinct,
            left,
            right,
        } if plain => ast::Expr::Nested(Box::new(ast::Expr::BinaryOp {
            left: Box::new(split_exists(&with_body(left))),
            op: ast::BinaryOperator::Or,
            right: Box::new(split_exists(&with_body(right))),
        })),
        ast::SetExpr::Select(_) => exists(q.clone()),
        ast::SetExpr::Query(inner) if plain => split_exists(inner),
        _ => {
            let mut wrapper = match crate::parse("SELECT * FROM (SELECT 1) AS __set").ok().and_then(|mut s| s.pop()) {
                Some(ast::Statement::Query(w)) => *w,
                _ => return exists(q.clone()),
            };
            if let ast::SetExpr::Select(s) = &mut *wrapper.body {
                if let Some(ast::TableFactor::Derived { subquery, .. }) = s.from.first_mut().map(|t| &mut t.relation) {
                    **subquery = q.clone();
                }
            }
            exists(wrapper)
        }
    }
}
