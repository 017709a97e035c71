//! The FROM clause into a logical plan: tables, views, files, derived tables and
//! VALUES, joins of every kind (inner ones as a cross join under their conditions), and
//! the scope of names the rest of the SELECT binds against.

use crate::bind_expr::{contains_aggregate, contains_subquery, is_unknown_column, AtSpan, Context, Scope, ScopeField};
use crate::bind_join::{bind_outer_join, Preserved};
use crate::bind_select::bind_query;
use crate::bind_using::{merge_using_columns, using_columns};
use crate::bind_where::require_bool;
use gpusql_common::{Catalog, DataType, Error, Result};
use gpusql_plan::{Expr, LogicalPlan};
use sqlparser::ast::{self, Spanned};
use std::cell::RefCell;

thread_local! {
    /// Views being bound, innermost last (a view that reads itself is an error, not an
    /// endless recursion).
    static VIEWS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// One table of the FROM clause as a scan, and its columns in scope: a table, a view
/// (its query, bound here), or files (`'x.parquet'`, `read_csv(…)`).
fn bind_table(factor: &ast::TableFactor, catalog: &dyn Catalog, scope: &mut Scope) -> Result<LogicalPlan> {
    if let ast::TableFactor::Derived { lateral, subquery, alias, .. } = factor {
        if *lateral {
            return Err(Error::not_supported("LATERAL subqueries").at_span(factor.span()));
        }
        return bind_derived(
            subquery,
            alias_name(alias.as_ref()),
            alias_columns(alias.as_ref()),
            catalog,
            scope,
            factor,
        );
    }
    if let ast::TableFactor::NestedJoin { table_with_joins, alias } = factor {
        let start = scope.fields.len();
        let plan = bind_nested_join(table_with_joins, catalog, scope, factor)?;
        if let Some(alias) = alias {
            rename_nested_join(alias, scope, start, factor)?;
        }
        return Ok(plan);
    }
    let ast::TableFactor::Table { name, alias, args, .. } = factor else {
        return Err(Error::not_supported("this kind of FROM item").at_span(factor.span()));
    };
    let span = name.span();
    let at = |e: Error| match e.kind() {
        Error::Io(_) => e.at_span(span),
        _ => e,
    };
    let (info, default_qualifier) = if let Some(args) = args {
        let function = name.to_string();
        let scan = crate::table_function::function_scan(&function, &args.args, span)?;
        (catalog.open_files(&scan).map_err(at)?, function.to_ascii_lowercase())
    } else if let Some(path) = quoted_path(name) {
        let scan = crate::table_function::path_scan(path, span)?;
        let stem = std::path::Path::new(path)
            .file_stem()
            .map_or("file".to_string(), |s| s.to_string_lossy().split('.').next().unwrap_or("file").to_string());
        (catalog.open_files(&scan).map_err(at)?, stem)
    } else {
        let table_name = name.to_string();
        match catalog.table(&table_name) {
            Some(info) => {
                let q = info.name.clone();
                (info, q)
            }
            None => match catalog.view(&table_name) {
                Some(view) => return bind_view(&view, alias.as_ref(), catalog, scope, factor),
                None => {
                    let names = catalog.relation_names();
                    let hint = gpusql_common::suggest::did_you_mean(&table_name, names.iter().map(String::as_str));
                    return Err(Error::bind(format!("unknown table '{table_name}'{hint}")).at_span(span));
                }
            },
        }
    };
    if alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
        return Err(Error::not_supported("column aliases on a table").at_span(span));
    }
    let qualifier = alias.as_ref().map(|a| a.name.value.clone()).unwrap_or(default_qualifier);
    if scope.fields.iter().any(|f| f.qualifier.eq_ignore_ascii_case(&qualifier)) {
        return Err(
            Error::bind(format!("table name '{qualifier}' specified more than once (use an alias)")).at_span(span)
        );
    }
    scope.fields.extend(info.schema.fields.iter().map(|f| ScopeField {
        hidden: false,
        qualifier: qualifier.clone(),
        name: f.name.clone(),
        ty: f.ty,
        nullable: f.nullable,
    }));
    scope.unsupported.extend(info.unsupported.iter().map(|(n, t)| (qualifier.clone(), n.clone(), t.clone())));
    Ok(LogicalPlan::scan(info))
}

/// `'path'` as a table name: a file.
fn quoted_path(name: &ast::ObjectName) -> Option<&str> {
    match name.0.as_slice() {
        [ast::ObjectNamePart::Identifier(id)] if id.quote_style == Some('\'') => Some(&id.value),
        _ => None,
    }
}

fn alias_name(alias: Option<&ast::TableAlias>) -> String {
    alias.map(|a| a.name.value.clone()).unwrap_or_default()
}

fn alias_columns(alias: Option<&ast::TableAlias>) -> Vec<String> {
    alias.map(|a| a.columns.iter().map(|c| c.name.value.clone()).collect()).unwrap_or_default()
}

/// A view in FROM: its query bound like a subquery named after the view (or the alias).
fn bind_view(
    view: &gpusql_common::ViewInfo,
    alias: Option<&ast::TableAlias>,
    catalog: &dyn Catalog,
    scope: &mut Scope,
    factor: &ast::TableFactor,
) -> Result<LogicalPlan> {
    let key = view.name.to_ascii_lowercase();
    if VIEWS.with(|v| v.borrow().contains(&key)) {
        return Err(Error::bind(format!("view '{}' refers to itself", view.name)).at_span(factor.span()));
    }
    let stmts = crate::parse(&view.sql).map_err(|e| in_view(e, view))?;
    let [ast::Statement::Query(q)] = stmts.as_slice() else {
        return Err(Error::exec(format!("view '{}' does not hold one query", view.name)));
    };
    VIEWS.with(|v| v.borrow_mut().push(key));
    let plan = bind_query(q, catalog).map_err(|e| in_view(e, view));
    VIEWS.with(|v| v.borrow_mut().pop());
    let qualifier = alias.map_or_else(|| view.name.clone(), |a| a.name.value.clone());
    add_derived(plan?, qualifier, alias_columns(alias), scope, factor)
}

/// An error in a view's query: its place is in the view's text, not the statement's, so
/// it goes into the message, which names the view.
fn in_view(e: Error, view: &gpusql_common::ViewInfo) -> Error {
    e.position_into_message().map_message(|m| format!("{m} (in view '{}')", view.name))
}

/// A subquery in FROM: its result is a relation named `qualifier` (columns renamed by
/// `AS t(a, b, …)`). It is planned like a table: an aggregate or filter inside it runs in
/// its own pipelines, and the outer query joins it like any other input.
fn bind_derived(
    subquery: &ast::Query,
    qualifier: String,
    renames: Vec<String>,
    catalog: &dyn Catalog,
    scope: &mut Scope,
    factor: &ast::TableFactor,
) -> Result<LogicalPlan> {
    let plan = bind_query(subquery, catalog).map_err(|e| {
        if is_unknown_column(&e) {
            Error::not_supported(format!("correlated subqueries in FROM ({})", e.kind())).at_span(factor.span())
        } else {
            e
        }
    })?;
    add_derived(plan, qualifier, renames, scope, factor)
}

/// A bound subquery or view as a relation of the FROM clause: its columns, named
/// `qualifier`.`name` (or renamed), join the scope.
fn add_derived(
    plan: LogicalPlan,
    qualifier: String,
    renames: Vec<String>,
    scope: &mut Scope,
    factor: &ast::TableFactor,
) -> Result<LogicalPlan> {
    if !qualifier.is_empty() && scope.fields.iter().any(|f| f.qualifier.eq_ignore_ascii_case(&qualifier)) {
        return Err(Error::bind(format!("table name '{qualifier}' specified more than once")).at_span(factor.span()));
    }
    let schema = plan.schema();
    if renames.len() > schema.len() {
        return Err(Error::bind(format!("{} column names for a subquery of {} columns", renames.len(), schema.len()))
            .at_span(factor.span()));
    }
    for (i, f) in schema.fields.iter().enumerate() {
        let name = renames.get(i).cloned().unwrap_or_else(|| f.name.clone());
        scope.fields.push(ScopeField {
            hidden: false,
            qualifier: qualifier.clone(),
            name,
            ty: f.ty,
            nullable: f.nullable,
        });
    }
    Ok(plan)
}

/// The FROM clause: tables (comma lists and INNER JOINs) combined as cross joins, plus
/// the ON conditions, which join the WHERE clause (the optimizer plans the joins).
pub(crate) fn bind_from(select: &ast::Select, catalog: &dyn Catalog) -> Result<(LogicalPlan, Scope, Vec<ast::Expr>)> {
    if select.from.is_empty() {
        // One row and no columns in scope: the select list is evaluated once.
        let one_row = LogicalPlan::Scan {
            table: gpusql_common::ONE_ROW_TABLE.to_string(),
            table_schema: gpusql_common::one_row_schema(),
            projection: vec![],
            rows: 1,
            sample: None,
            statistics: None,
            chunks: None,
        };
        return Ok((one_row, Scope::default(), vec![]));
    }
    let mut scope = Scope::default();
    let mut plan: Option<LogicalPlan> = None;
    let mut on = vec![];
    for twj in &select.from {
        let item = bind_item(twj, catalog, &mut scope, &mut on)?;
        plan = Some(match plan.take() {
            None => item,
            Some(l) => cross(l, item),
        });
    }
    let plan = plan.ok_or_else(|| Error::plan("empty FROM"))?;
    Ok((plan, scope, on))
}

fn cross(l: LogicalPlan, r: LogicalPlan) -> LogicalPlan {
    LogicalPlan::CrossJoin { left: Box::new(l), right: Box::new(r) }
}

/// A FROM item: a table and the joins attached to it (they bind tighter than commas).
/// Inner joins' ON conditions are added to `on`.
fn bind_item(
    twj: &ast::TableWithJoins,
    catalog: &dyn Catalog,
    scope: &mut Scope,
    on: &mut Vec<ast::Expr>,
) -> Result<LogicalPlan> {
    let item_start = scope.fields.len();
    let item_on = on.len();
    let mut item = bind_table(&twj.relation, catalog, scope)?;
    for j in &twj.joins {
        let (constraint, outer) = match &j.join_operator {
            // (DuckDB: a syntax error; only CROSS JOIN has no condition.)
            ast::JoinOperator::Join(ast::JoinConstraint::None)
            | ast::JoinOperator::Inner(ast::JoinConstraint::None)
            | ast::JoinOperator::Left(ast::JoinConstraint::None)
            | ast::JoinOperator::LeftOuter(ast::JoinConstraint::None)
            | ast::JoinOperator::Right(ast::JoinConstraint::None)
            | ast::JoinOperator::RightOuter(ast::JoinConstraint::None)
            | ast::JoinOperator::FullOuter(ast::JoinConstraint::None) => {
                return Err(
                    Error::Syntax("JOIN needs ON or USING (or write CROSS JOIN)".into()).at_span(j.relation.span())
                );
            }
            ast::JoinOperator::Join(c) | ast::JoinOperator::Inner(c) => (c, None),
            ast::JoinOperator::Left(c) | ast::JoinOperator::LeftOuter(c) => (c, Some(Preserved::Left)),
            ast::JoinOperator::Right(c) | ast::JoinOperator::RightOuter(c) => (c, Some(Preserved::Right)),
            ast::JoinOperator::FullOuter(c) => (c, Some(Preserved::Both)),
            ast::JoinOperator::CrossJoin(ast::JoinConstraint::None) => (&ast::JoinConstraint::None, None),
            other => {
                let kind = format!("{other:?}");
                let kind = kind.split('(').next().unwrap_or("this join");
                return Err(Error::not_supported(format!("{kind} joins")).at_span(j.relation.span()));
            }
        };
        let right_start = scope.fields.len();
        let t = bind_table(&j.relation, catalog, scope)?;
        if let ast::JoinConstraint::Using(_) | ast::JoinConstraint::Natural = constraint {
            let (using, on_using) = using_columns(constraint, scope, item_start, right_start, j.relation.span())?;
            item = match outer {
                Some(preserved) => {
                    item = filter_inner_joins(item, on, item_on, scope, item_start, right_start)?;
                    bind_outer_join(item, t, &on_using, preserved, scope, item_start, right_start)?
                }
                None => {
                    on.push(on_using);
                    cross(item, t)
                }
            };
            item = merge_using_columns(item, using, outer, scope)?;
            continue;
        }
        match (constraint, outer) {
            (ast::JoinConstraint::On(e), Some(preserved)) => {
                item = filter_inner_joins(item, on, item_on, scope, item_start, right_start)?;
                item = bind_outer_join(item, t, e, preserved, scope, item_start, right_start)?;
            }
            (ast::JoinConstraint::On(e), None) => {
                on.push(e.clone());
                item = cross(item, t);
            }
            (ast::JoinConstraint::None, None) => item = cross(item, t),
            _ => return Err(Error::not_supported("this join constraint").at_span(j.relation.span())),
        }
    }
    Ok(item)
}

/// `(a JOIN b …) AS j (x, y)`: its columns from `start` on are j's (a and b are no longer
/// names), the visible ones renamed in order, as DuckDB.
fn rename_nested_join(
    alias: &ast::TableAlias,
    scope: &mut Scope,
    start: usize,
    factor: &ast::TableFactor,
) -> Result<()> {
    let qualifier = alias.name.value.clone();
    if scope.fields[..start].iter().any(|f| f.qualifier.eq_ignore_ascii_case(&qualifier)) {
        return Err(Error::bind(format!("table name '{qualifier}' specified more than once")).at_span(factor.span()));
    }
    let renames = alias_columns(Some(alias));
    let visible = scope.fields[start..].iter().filter(|f| !f.hidden).count();
    if renames.len() > visible {
        return Err(Error::bind(format!("{} column names for a join of {visible} columns", renames.len()))
            .at_span(factor.span()));
    }
    let mut renames = renames.into_iter();
    for f in scope.fields[start..].iter_mut() {
        f.qualifier = qualifier.clone();
        if !f.hidden {
            if let Some(name) = renames.next() {
                f.name = name;
            }
        }
    }
    Ok(())
}

/// A parenthesized join, `(a JOIN b ON …)`: its tables join the scope under their own
/// names, and its ON conditions, which can name only them, filter it here (an outer join
/// around it must see it joined).
fn bind_nested_join(
    twj: &ast::TableWithJoins,
    catalog: &dyn Catalog,
    scope: &mut Scope,
    factor: &ast::TableFactor,
) -> Result<LogicalPlan> {
    let start = scope.fields.len();
    let mut on = vec![];
    let item = bind_item(twj, catalog, scope, &mut on)?;
    let item = filter_inner_joins(item, &mut on, 0, scope, start, scope.fields.len())?;
    if !on.is_empty() {
        return Err(Error::not_supported(
            "an ON condition in a parenthesized join that names a table outside it or holds a subquery",
        )
        .at_span(factor.span()));
    }
    Ok(item)
}

/// The INNER JOIN … ON conditions of the current FROM item (`on[item_on..]`) as a filter
/// on it, before an outer join takes it as one side: left for WHERE, they would sit above
/// the outer join (dropping a RIGHT JOIN's NULL-extended rows) and leave a cross join under
/// it that the join planner never sees. Conditions that reach outside the item's columns
/// [item_start, right_start) or hold subqueries stay for WHERE (and its errors).
fn filter_inner_joins(
    item: LogicalPlan,
    on: &mut Vec<ast::Expr>,
    item_on: usize,
    scope: &Scope,
    item_start: usize,
    right_start: usize,
) -> Result<LogicalPlan> {
    // Names bind as they did where the condition was written, before the next table.
    let before = Scope { fields: scope.fields[..right_start].to_vec(), unsupported: scope.unsupported.clone() };
    let mut terms = vec![];
    for e in on.drain(item_on..).collect::<Vec<_>>() {
        if contains_subquery(&e) || contains_aggregate(&e) {
            on.push(e);
            continue;
        }
        let bound = Context::Plain(&before).bind(&e)?;
        let mut cols = vec![];
        bound.columns(&mut cols);
        if cols.iter().any(|c| *c < item_start) {
            on.push(e);
            continue;
        }
        require_bool(&bound, "JOIN … ON")?;
        terms.push(bound.remap_columns(&|c| c - item_start));
    }
    Ok(
        match terms.into_iter().reduce(|a, b| Expr::Binary {
            op: gpusql_plan::BinaryOp::And,
            left: Box::new(a),
            right: Box::new(b),
            ty: DataType::Boolean,
        }) {
            Some(p) => LogicalPlan::Filter { input: Box::new(item), predicate: p },
            None => item,
        },
    )
}
