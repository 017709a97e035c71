//! Reduces a failing query to a small one that fails the same way (delta debugging over
//! the SQL syntax tree, as C-Reduce and SQLancer's reducer do): repeatedly try one edit —
//! drop an ORDER BY, LIMIT, DISTINCT, WHERE, HAVING, output column or join, replace an
//! expression by one of its operands or a condition by TRUE, drop an IN-list element —
//! and keep it when the query still fails in the same way.

use sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Query, Select, Value, VisitMut, VisitorMut,
};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

/// Shrinks `sql` while `still_fails` holds, for at most `budget` of time.
pub fn reduce(sql: &str, budget: Duration, still_fails: &mut dyn FnMut(&str) -> bool) -> String {
    let start = Instant::now();
    let mut best = sql.to_string();
    'outer: loop {
        for candidate in candidates(&best) {
            if start.elapsed() > budget {
                break 'outer;
            }
            if candidate.len() < best.len() && still_fails(&candidate) {
                best = candidate;
                continue 'outer;
            }
        }
        break;
    }
    best
}

/// Every one-edit variant of `sql`, shortest first.
pub fn candidates(sql: &str) -> Vec<String> {
    let Ok(stmts) = Parser::parse_sql(&GenericDialect {}, sql) else { return vec![] };
    let [stmt] = stmts.as_slice() else { return vec![] };
    let mut counter = Edits { target: None, site: 0, variants: vec![] };
    let _ = stmt.clone().visit(&mut counter);
    let mut out = vec![];
    for (site, &n) in counter.variants.iter().enumerate() {
        for variant in 0..n {
            let mut s = stmt.clone();
            let mut edit = Edits { target: Some((site, variant)), site: 0, variants: vec![] };
            let _ = s.visit(&mut edit);
            let text = s.to_string();
            if text != sql && !out.contains(&text) {
                out.push(text);
            }
        }
    }
    out.sort_by_key(|s| s.len());
    out
}

/// Numbers the places an edit can go (sites) in visiting order; with a target, makes
/// that edit.
struct Edits {
    target: Option<(usize, usize)>,
    site: usize,
    /// (enumerating) how many variants each site has
    variants: Vec<usize>,
}

impl Edits {
    /// A site with `n` variants: the variant to apply there, if it is the target.
    fn site(&mut self, n: usize) -> Option<usize> {
        let id = self.site;
        self.site += 1;
        match self.target {
            None => {
                self.variants.push(n);
                None
            }
            Some((t, v)) if t == id && v < n => Some(v),
            _ => None,
        }
    }
}

impl VisitorMut for Edits {
    type Break = ();

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        // (ORDER BY goes only with no LIMIT: it decides which rows a LIMIT keeps.)
        let orderless = q.limit_clause.is_none() && q.order_by.is_some();
        if self.site(orderless as usize).is_some() {
            q.order_by = None;
        }
        if self.site(1).is_some() {
            q.limit_clause = None;
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, s: &mut Select) -> ControlFlow<()> {
        if self.site(1).is_some() {
            s.distinct = None;
        }
        if self.site(1).is_some() {
            s.selection = None;
        }
        if self.site(1).is_some() {
            s.having = None;
        }
        let n = if s.projection.len() > 1 { s.projection.len() } else { 0 };
        if let Some(i) = self.site(n) {
            s.projection.remove(i);
        }
        let joins = s.from.first().map_or(0, |f| f.joins.len());
        if let Some(j) = self.site(joins) {
            s.from[0].joins.remove(j);
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        let mut options = operands(e);
        options.push(Expr::Value(Value::Boolean(true).into()));
        let list = if let Expr::InList { list, .. } = e { list.len() } else { 0 };
        let lists = if list > 1 { list } else { 0 };
        if let Some(v) = self.site(options.len() + lists) {
            if v < options.len() {
                *e = options.swap_remove(v);
            } else if let Expr::InList { list, .. } = e {
                list.remove(v - options.len());
            }
        }
        ControlFlow::Continue(())
    }
}

/// The expressions an expression is made of, which may stand in for it.
fn operands(e: &Expr) -> Vec<Expr> {
    match e {
        Expr::BinaryOp { left, right, .. } => vec![(**left).clone(), (**right).clone()],
        Expr::Nested(x) | Expr::UnaryOp { expr: x, .. } | Expr::IsNull(x) | Expr::IsNotNull(x) => vec![(**x).clone()],
        Expr::Cast { expr, .. } | Expr::Extract { expr, .. } | Expr::Substring { expr, .. } => vec![(**expr).clone()],
        Expr::Between { expr, .. }
        | Expr::InList { expr, .. }
        | Expr::InSubquery { expr, .. }
        | Expr::Like { expr, .. } => vec![(**expr).clone()],
        Expr::Case { conditions, else_result, .. } => {
            let mut v: Vec<Expr> = conditions.iter().map(|c| c.result.clone()).collect();
            v.extend(else_result.iter().map(|x| (**x).clone()));
            v
        }
        Expr::Function(f) => match &f.args {
            FunctionArguments::List(l) => l
                .args
                .iter()
                .filter_map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) => Some(x.clone()),
                    _ => None,
                })
                .collect(),
            _ => vec![],
        },
        _ => vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduces_to_the_failing_part() {
        // "Fails" while the query mentions l_tax: everything else goes.
        let sql =
            "SELECT a.l_orderkey, a.l_tax + 1 AS x FROM lineitem AS a JOIN orders AS o ON a.l_orderkey = o.o_orderkey \
                   WHERE a.l_quantity > 3 AND o.o_orderdate < DATE '1995-01-01' ORDER BY 1, 2 LIMIT 5";
        let small = reduce(sql, Duration::from_secs(30), &mut |q| q.contains("l_tax"));
        assert_eq!(small, "SELECT a.l_tax AS x FROM lineitem AS a");
    }

    #[test]
    fn every_candidate_parses() {
        let sql = "SELECT CASE WHEN x IN (1, 2, 3) THEN SUBSTRING(s FROM 1 FOR 2) ELSE 'a' END FROM t WHERE NOT EXISTS (SELECT * FROM u WHERE u.k = t.k)";
        let c = candidates(sql);
        assert!(c.len() > 10, "{c:?}");
        for q in c {
            Parser::parse_sql(&GenericDialect {}, &q).unwrap();
        }
    }
}
