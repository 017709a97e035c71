//! A query's shape: its text with its literal values replaced by parameters `$1`, `$2`, …
//! Queries of one shape (and parameter types) share one plan, made once with parameters
//! (`gpusql_plan::parameters`) and run with each query's values.
//!
//! Only literals whose value the binder never decides on become parameters: numbers,
//! strings and `DATE '…'` as an operand of arithmetic or a comparison, a `BETWEEN`
//! bound, an item of a short `IN` list (long lists become sorted sets at plan time), a
//! `CASE` part, or a LIKE pattern without ESCAPE (a template compiles each run's pattern
//! and refuses one of another form). The others stay in the shape, so a query that
//! changes them is a new shape: function arguments, intervals, casts, signed numbers,
//! LIMIT and OFFSET, GROUP BY and ORDER BY (ordinals), select items without an alias
//! (their text names the column), and literals of the select list and HAVING equal to
//! one of GROUP BY's (the binder matches them with the group keys).

use crate::literal;
use crate::BoundStatement;
use gpusql_common::{Catalog, DataType, Result, ScalarValue};
use gpusql_plan::literal_set::IN_SET_MIN_ITEMS;
use gpusql_plan::parameters::literal_parameter;
use gpusql_plan::Expr;
use sqlparser::ast::{self, BinaryOperator as Op, Statement, Visit, VisitMut, Visitor, VisitorMut};
use std::collections::HashSet;
use std::ops::ControlFlow;

/// A query with its literals as parameters.
pub struct Parameterized {
    /// The statement's text with parameters, and their types: the key of its plan.
    pub shape: String,
    /// The literals' values, parameter `$k`'s at `k - 1`.
    pub values: Vec<ScalarValue>,
    types: Vec<DataType>,
    statement: Statement,
}

/// `stmt` (a query) with its literals as parameters; None where it has none, or holds
/// parameters already.
pub fn parameterize(stmt: &Statement) -> Option<Parameterized> {
    if !matches!(stmt, Statement::Query(_)) {
        return None;
    }
    let mut found = Candidates::default();
    if stmt.visit(&mut found).is_break() || !found.decisions.contains(&true) {
        return None;
    }
    // The clone has the same literals in the same visiting order.
    let mut statement = stmt.clone();
    let mut replace =
        Replace { decisions: &found.decisions, next: 0, values: vec![], types: vec![], texts: vec![], failed: false };
    let _ = VisitMut::visit(&mut statement, &mut replace);
    if replace.failed || replace.values.is_empty() {
        return None;
    }
    let types: Vec<String> = replace.types.iter().map(|t| t.to_string()).collect();
    let shape = format!("{statement}\n-- parameters: {}", types.join(", "));
    Some(Parameterized { shape, values: replace.values, types: replace.types, statement })
}

impl Parameterized {
    /// Binds the statement with `Expr::Parameter`s for its parameters, valued as its
    /// literals were.
    pub fn bind(&self, catalog: &dyn Catalog) -> Result<BoundStatement> {
        let params = self
            .values
            .iter()
            .zip(&self.types)
            .enumerate()
            .map(|(i, (v, t))| literal_parameter(i, v.clone(), *t))
            .collect();
        literal::with_parameters(params, || crate::bind_statement(&self.statement, catalog))
    }
}

/// Which literals become parameters: per literal node, in visiting order.
#[derive(Default)]
struct Candidates {
    decisions: Vec<bool>,
    /// Literal nodes (by address) in a place a parameter may take, and in a place it
    /// may not.
    allowed: HashSet<usize>,
    excluded: HashSet<usize>,
}

fn address(e: &ast::Expr) -> usize {
    e as *const ast::Expr as usize
}

/// Whether `e` is a literal that can be a parameter.
fn is_literal(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Value(v) => matches!(v.value, ast::Value::Number(..) | ast::Value::SingleQuotedString(_)),
        ast::Expr::TypedString(ts) => matches!(ts.data_type, ast::DataType::Date),
        _ => false,
    }
}

fn exclude_all(node: &impl Visit, excluded: &mut HashSet<usize>) {
    let _ = ast::visit_expressions(node, |e| {
        excluded.insert(address(e));
        ControlFlow::<()>::Continue(())
    });
}

impl Visitor for Candidates {
    type Break = ();

    fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
        // (ORDER BY and GROUP BY: a number there may be an ordinal.)
        exclude_all(&q.order_by, &mut self.excluded);
        exclude_all(&q.limit_clause, &mut self.excluded);
        exclude_all(&q.fetch, &mut self.excluded);
        exclude_values(&q.body, &mut self.excluded);
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, s: &ast::Select) -> ControlFlow<()> {
        exclude_all(&s.group_by, &mut self.excluded);
        for item in &s.projection {
            if let ast::SelectItem::UnnamedExpr(e) = item {
                exclude_all(e, &mut self.excluded);
            }
        }
        // The select list and HAVING match group keys by value (a constant key of a
        // grouping set is NULL in the sets without it, and so is the same constant in
        // the select list): their literals equal to one of GROUP BY's stay literals.
        let mut group_literals = HashSet::new();
        let _ = ast::visit_expressions(&s.group_by, |e| {
            if is_literal(e) {
                group_literals.insert(e.to_string());
            }
            ControlFlow::<()>::Continue(())
        });
        if !group_literals.is_empty() {
            let mut keep = |e: &ast::Expr| {
                if is_literal(e) && group_literals.contains(&e.to_string()) {
                    self.excluded.insert(address(e));
                }
                ControlFlow::<()>::Continue(())
            };
            let _ = ast::visit_expressions(&s.projection, &mut keep);
            let _ = ast::visit_expressions(&s.having, &mut keep);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_value(&mut self, v: &ast::ValueWithSpan) -> ControlFlow<()> {
        // A statement with parameters of its own is not ours to number.
        match v.value {
            ast::Value::Placeholder(_) => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        }
    }

    fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
        if is_literal(e) {
            let a = address(e);
            self.decisions.push(self.allowed.contains(&a) && !self.excluded.contains(&a));
        }
        keep_moved_constants(e, &mut self.excluded);
        keep_merged_patterns(e, &mut self.excluded);
        // A quantile's fraction decides its plan (`bind_quantile.rs`), string_agg's
        // separator its concatenation.
        if let ast::Expr::Function(f) = e {
            let name = f.name.to_string();
            if crate::bind_quantile::is_quantile_name(&name) || crate::bind_string_agg::is_string_agg_name(&name) {
                exclude_all(f, &mut self.excluded);
            }
        }
        let operands: Vec<&ast::Expr> = match e {
            ast::Expr::BinaryOp {
                left,
                op:
                    Op::Plus
                    | Op::Minus
                    | Op::Multiply
                    | Op::Divide
                    | Op::Modulo
                    | Op::Eq
                    | Op::NotEq
                    | Op::Lt
                    | Op::LtEq
                    | Op::Gt
                    | Op::GtEq,
                right,
            } => vec![left, right],
            ast::Expr::Between { expr, low, high, .. } => vec![expr, low, high],
            // A pattern (the binder compiles it; a template compiles each run's again).
            ast::Expr::Like { any: false, pattern, escape_char: None, .. } => vec![pattern],
            ast::Expr::InList { expr, list, .. } if list.len() <= IN_SET_MIN_ITEMS => {
                std::iter::once(&**expr).chain(list).collect()
            }
            ast::Expr::Case { operand, conditions, else_result, .. } => operand
                .iter()
                .map(|o| &**o)
                .chain(conditions.iter().flat_map(|c| [&c.condition, &c.result]))
                .chain(else_result.iter().map(|o| &**o))
                .collect(),
            _ => vec![],
        };
        for o in operands {
            if is_literal(o) {
                self.allowed.insert(address(o));
            }
        }
        ControlFlow::Continue(())
    }
}

/// The rows of VALUES lists in a query body (outside set operations' nested queries,
/// which are queries of their own): the binder evaluates them into a table of their
/// values, so a template would keep its first run's rows.
fn exclude_values(body: &ast::SetExpr, excluded: &mut HashSet<usize>) {
    match body {
        ast::SetExpr::Values(v) => exclude_all(v, excluded),
        ast::SetExpr::SetOperation { left, right, .. } => {
            exclude_values(left, excluded);
            exclude_values(right, excluded);
        }
        _ => {}
    }
}

/// Pattern tests of one string joined by OR: the planner merges them into one DFA
/// (`gpusql_plan::merged_patterns`), which a template could not redo with each run's
/// patterns, so their LIKE patterns stay literals (a query that changes one is a new shape).
fn keep_merged_patterns(e: &ast::Expr, excluded: &mut HashSet<usize>) {
    fn flatten<'a>(e: &'a ast::Expr, out: &mut Vec<&'a ast::Expr>) {
        match e {
            ast::Expr::BinaryOp { left, op: Op::Or, right } => {
                flatten(left, out);
                flatten(right, out);
            }
            ast::Expr::Nested(inner) => flatten(inner, out),
            other => out.push(other),
        }
    }
    if !matches!(e, ast::Expr::BinaryOp { op: Op::Or, .. }) {
        return;
    }
    let mut terms = vec![];
    flatten(e, &mut terms);
    // Per tested string (by its text): the addresses of its LIKE patterns (None: a regex).
    let mut tests: Vec<(String, Vec<Option<usize>>)> = vec![];
    for t in terms {
        let (tested, like) = match t {
            ast::Expr::Like { negated: false, any: false, expr, pattern, .. } => {
                (expr.to_string(), Some(address(pattern)))
            }
            ast::Expr::BinaryOp { left, op: Op::PGRegexMatch | Op::PGRegexIMatch, .. } => (left.to_string(), None),
            ast::Expr::SimilarTo { negated: false, expr, .. } => (expr.to_string(), None),
            ast::Expr::Function(f)
                if matches!(
                    f.name.to_string().to_ascii_lowercase().as_str(),
                    "regexp_matches" | "regexp_full_match"
                ) =>
            {
                match crate::functions::plain_arguments(f).as_deref() {
                    Some([s, ..]) => (s.to_string(), None),
                    _ => continue,
                }
            }
            _ => continue,
        };
        match tests.iter_mut().find(|(s, _)| *s == tested) {
            Some((_, v)) => v.push(like),
            None => tests.push((tested, vec![like])),
        }
    }
    for (_, v) in tests.iter().filter(|(_, v)| v.len() > 1) {
        excluded.extend(v.iter().flatten());
    }
}

/// A comparison with a number on one side and integer arithmetic with a number on the
/// other (`x + 1 > 10`): the optimizer moves such constants across it by their values
/// (`move_constants.rs`, as DuckDB does), so they stay literals.
fn keep_moved_constants(e: &ast::Expr, excluded: &mut HashSet<usize>) {
    let ast::Expr::BinaryOp { left, op: Op::Eq | Op::NotEq | Op::Lt | Op::LtEq | Op::Gt | Op::GtEq, right } = e else {
        return;
    };
    let number = |e: &ast::Expr| matches!(e, ast::Expr::Value(v) if matches!(v.value, ast::Value::Number(..)));
    let arithmetic = |e: &ast::Expr| {
        matches!(unnest(e), ast::Expr::BinaryOp { op: Op::Plus | Op::Minus | Op::Multiply, left, right }
            if number(unnest(left)) || number(unnest(right)))
    };
    let (chain, constant) = match (&**left, &**right) {
        (l, r) if arithmetic(l) && number(unnest(r)) => (l, unnest(r)),
        (l, r) if arithmetic(r) && number(unnest(l)) => (r, unnest(l)),
        _ => return,
    };
    excluded.insert(address(constant));
    // Down the chain of + - * (`x + 1 + 2 > 5` moves both).
    let mut at = unnest(chain);
    while let ast::Expr::BinaryOp { op: Op::Plus | Op::Minus | Op::Multiply, left, right } = at {
        let (l, r) = (unnest(left), unnest(right));
        for side in [l, r] {
            if number(side) {
                excluded.insert(address(side));
            }
        }
        at = if number(r) { l } else { r };
    }
}

/// `e` without the parentheses around it.
fn unnest(e: &ast::Expr) -> &ast::Expr {
    match e {
        ast::Expr::Nested(inner) => unnest(inner),
        other => other,
    }
}

/// Replaces the literals `decisions` marks by `$1`, `$2`, … and notes their values.
struct Replace<'a> {
    decisions: &'a [bool],
    next: usize,
    values: Vec<ScalarValue>,
    types: Vec<DataType>,
    /// Each parameter's literal as written.
    texts: Vec<String>,
    failed: bool,
}

impl VisitorMut for Replace<'_> {
    type Break = ();

    fn pre_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
        if !is_literal(e) {
            return ControlFlow::Continue(());
        }
        let i = self.next;
        self.next += 1;
        if !self.decisions.get(i).copied().unwrap_or(false) {
            return ControlFlow::Continue(());
        }
        // The same literal written again is the same parameter: terms that repeat it stay
        // equal, so the optimizer still factors `(a AND x >= 1) OR (b AND x >= 1)` (TPC-H
        // Q19: 3x slower kernels without). A query that changes one of the places only
        // (Q19's variant: a quantity of 1 becomes 4, a size of 1 stays) is a new shape.
        let text = e.to_string();
        if let Some(k) = self.texts.iter().position(|t| *t == text) {
            *e = ast::Expr::value(ast::Value::Placeholder(format!("${}", k + 1)));
            return ControlFlow::Continue(());
        }
        // The literal as the binder reads it (its value and narrowest type).
        let bound = match &*e {
            ast::Expr::Value(v) => literal::value(&v.value),
            ast::Expr::TypedString(ts) => crate::bind_cast::typed_string(ts),
            _ => unreachable!("is_literal"),
        };
        match bound {
            Ok(Expr::Literal { value, ty }) if !value.is_null() => {
                self.values.push(value);
                self.types.push(ty);
                self.texts.push(text);
                *e = ast::Expr::value(ast::Value::Placeholder(format!("${}", self.values.len())));
                ControlFlow::Continue(())
            }
            _ => {
                self.failed = true;
                ControlFlow::Break(())
            }
        }
    }
}
