//! Rewriting an expression's own subexpressions, leaving nested subqueries alone: how the
//! binder cuts scalar and IN / EXISTS subqueries out of the expression they stand in
//! (those inside another subquery belong to that subquery's binding).

use gpusql_common::{Error, Result};
use sqlparser::ast::{self, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// Visits the subexpressions of `e` bottom-up, skipping everything inside a nested query;
/// where `f` returns a replacement, it takes the subexpression's place. The first error
/// stops the walk.
pub fn rewrite(e: &mut ast::Expr, f: impl FnMut(&ast::Expr) -> Result<Option<ast::Expr>>) -> Result<()> {
    struct Walk<F> {
        depth: usize,
        f: F,
        error: Option<Error>,
    }
    impl<F: FnMut(&ast::Expr) -> Result<Option<ast::Expr>>> VisitorMut for Walk<F> {
        type Break = ();
        fn pre_visit_query(&mut self, _q: &mut ast::Query) -> ControlFlow<()> {
            self.depth += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _q: &mut ast::Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        fn post_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
            if self.depth > 0 {
                return ControlFlow::Continue(());
            }
            match (self.f)(e) {
                Ok(Some(r)) => *e = r,
                Ok(None) => {}
                Err(err) => {
                    self.error = Some(err);
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut walk = Walk { depth: 0, f, error: None };
    let _ = e.visit(&mut walk);
    walk.error.map_or(Ok(()), Err)
}
