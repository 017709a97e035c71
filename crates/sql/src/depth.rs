//! How deep a statement's syntax tree may be. Every pass over a query (binding,
//! optimization, evaluation, code generation, printing, cloning, dropping) recurses over
//! its expressions, so a tree of unbounded depth would overflow the stack somewhere.
//! The parser's own recursion limit bounds what it builds by recursion (parentheses,
//! function arguments, CASE, prefix operators, subqueries); operator chains
//! (`1+1+…+1`, `a OR b OR …`, `x::t::t`) and set-operation chains it builds in a loop,
//! of any depth. Right after parsing, [`check`] measures each statement, stopping at the
//! limit (so the measuring itself recurses at most that deep); a tree beyond it is
//! refused and taken apart by [`dispose`] without deep recursion.

use gpusql_common::{Error, Result};
use sqlparser::ast::{self, Visit, VisitMut, Visitor, VisitorMut};
use std::ops::ControlFlow;

/// The deepest nesting of operators, functions, CASEs and subqueries an expression may
/// have (as DuckDB's `max_expression_depth`), and of set operations in a query. Columns
/// and literals under them are no level; nor are parentheses (no node of their own once
/// bound: the parser's limit bounds them).
pub const MAX_EXPRESSION_DEPTH: usize = 1000;

/// The parser's recursion limit: one unit per nested parenthesis, function call, CASE,
/// prefix operator or subquery (and a few per statement), so that 1,000 levels of each
/// kind parse, with room for parentheses around them.
pub const PARSER_RECURSION_LIMIT: usize = 2 * MAX_EXPRESSION_DEPTH + 64;

/// The error for a statement nested beyond the limits, at `at` (line, column) where known.
pub fn too_deep(at: Option<(u64, u64)>) -> Error {
    let error = Error::Syntax(format!("expression nested too deeply (the limit is {MAX_EXPRESSION_DEPTH} levels)"));
    match at {
        Some((line, column)) if line > 0 => error.at(line, column),
        _ => error,
    }
}

/// Fails where `stmt` nests expressions or set operations more than
/// [`MAX_EXPRESSION_DEPTH`] deep.
pub fn check(stmt: &ast::Statement) -> Result<()> {
    let mut m = Measure { depth: 0, limit: MAX_EXPRESSION_DEPTH };
    match stmt.visit(&mut m) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(at) => Err(too_deep(at)),
    }
}

/// Whether `stmt` nests expressions and set operations at most `levels` deep (as
/// [`check`] counts them).
pub fn within(stmt: &ast::Statement, levels: usize) -> bool {
    stmt.visit(&mut Measure { depth: 0, limit: levels }).is_continue()
}

struct Measure {
    depth: usize,
    limit: usize,
}

impl Visitor for Measure {
    /// Where the limit was crossed (line, column), if known.
    type Break = Option<(u64, u64)>;

    fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<Self::Break> {
        // Set operations are visited by recursion through their left operands too.
        if set_operation_depth(&q.body) > self.limit {
            return ControlFlow::Break(None);
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<Self::Break> {
        if !matches!(e, ast::Expr::Nested(_)) {
            self.depth += 1;
            // (+ 1: the leaves below the deepest level.)
            if self.depth > self.limit + 1 {
                return ControlFlow::Break(first_position(e));
            }
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<Self::Break> {
        if !matches!(e, ast::Expr::Nested(_)) {
            self.depth -= 1;
        }
        ControlFlow::Continue(())
    }
}

/// How deeply set operations nest in `body`, counted without recursion.
fn set_operation_depth(body: &ast::SetExpr) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(body, 0usize)];
    while let Some((s, d)) = stack.pop() {
        deepest = deepest.max(d);
        if let ast::SetExpr::SetOperation { left, right, .. } = s {
            stack.push((left, d + 1));
            stack.push((right, d + 1));
        }
    }
    deepest
}

/// The line and column of the first token of `e`, found by walking down its first
/// operands (without recursion: `e` may be a chain of any length).
fn first_position(mut e: &ast::Expr) -> Option<(u64, u64)> {
    use ast::Expr as E;
    loop {
        let span = match e {
            E::Identifier(id) => id.span,
            E::CompoundIdentifier(ids) => ids.first()?.span,
            E::Value(v) => v.span,
            E::Function(f) => match f.name.0.first()? {
                ast::ObjectNamePart::Identifier(id) => id.span,
                _ => return None,
            },
            E::Case { case_token, .. } => case_token.0.span,
            E::BinaryOp { left: x, .. }
            | E::IsNull(x)
            | E::IsNotNull(x)
            | E::IsTrue(x)
            | E::IsNotTrue(x)
            | E::IsFalse(x)
            | E::IsNotFalse(x)
            | E::IsUnknown(x)
            | E::IsNotUnknown(x)
            | E::IsDistinctFrom(x, _)
            | E::IsNotDistinctFrom(x, _)
            | E::Like { expr: x, .. }
            | E::ILike { expr: x, .. }
            | E::SimilarTo { expr: x, .. }
            | E::Between { expr: x, .. }
            | E::InList { expr: x, .. }
            | E::InSubquery { expr: x, .. }
            | E::Cast { expr: x, .. }
            | E::Collate { expr: x, .. }
            | E::AtTimeZone { timestamp: x, .. }
            | E::Nested(x)
            | E::UnaryOp { expr: x, .. } => {
                e = x;
                continue;
            }
            _ => return None,
        };
        return (span.start.line > 0).then_some((span.start.line, span.start.column));
    }
}

/// Drops statements without recursing deeper than a fixed bound however deep they are
/// (the compiler's drop glue would recurse once per level): subtrees below that depth
/// are detached onto a work list, taken apart the same way, and dropped when shallow.
pub fn dispose(stmts: Vec<ast::Statement>) {
    let mut pieces: Vec<Piece> = vec![];
    for mut s in stmts {
        let _ = VisitMut::visit(&mut s, &mut Detach { depth: 0, pieces: &mut pieces });
    }
    while let Some(piece) = pieces.pop() {
        match piece {
            Piece::Expr(mut e) => {
                let _ = VisitMut::visit(&mut *e, &mut Detach { depth: 0, pieces: &mut pieces });
            }
            Piece::Set(s) => match *s {
                ast::SetExpr::SetOperation { left, right, .. } => {
                    pieces.push(Piece::Set(left));
                    pieces.push(Piece::Set(right));
                }
                mut s => {
                    let _ = VisitMut::visit(&mut s, &mut Detach { depth: 0, pieces: &mut pieces });
                }
            },
        }
    }
}

/// A part of a syntax tree waiting to be taken apart.
enum Piece {
    Expr(Box<ast::Expr>),
    Set(Box<ast::SetExpr>),
}

/// Depth below which [`Detach`] moves subtrees out.
const DETACH_DEPTH: usize = 64;

struct Detach<'a> {
    depth: usize,
    pieces: &'a mut Vec<Piece>,
}

impl VisitorMut for Detach<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &mut ast::Query) -> ControlFlow<()> {
        if matches!(*q.body, ast::SetExpr::SetOperation { .. }) {
            let empty = ast::SetExpr::Values(ast::Values { explicit_row: false, value_keyword: false, rows: vec![] });
            self.pieces.push(Piece::Set(Box::new(std::mem::replace(&mut *q.body, empty))));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
        self.depth += 1;
        if self.depth > DETACH_DEPTH {
            self.pieces.push(Piece::Expr(Box::new(std::mem::replace(e, ast::Expr::value(ast::Value::Null)))));
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, _e: &mut ast::Expr) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` on a thread with a small stack (what the passes above may rely on is the
    /// big stack the engine gives them; measuring and disposing must not need it).
    fn on_small_stack(f: impl FnOnce() + Send + 'static) {
        std::thread::Builder::new().stack_size(1 << 20).spawn(f).unwrap().join().unwrap();
    }

    fn chain(op: &str, n: usize) -> String {
        let terms: Vec<String> = (0..n).map(|i| format!("x = {i}")).collect();
        format!("select 1 from t where {}", terms.join(&format!(" {op} ")))
    }

    #[test]
    fn long_chains_are_refused_without_deep_recursion() {
        on_small_stack(|| {
            for sql in
                [chain("or", 100_000), chain("and", 7_000), format!("select {} from t", vec!["1"; 100_000].join("+"))]
            {
                let err = crate::parse(&sql).unwrap_err().to_string();
                assert!(err.contains("nested too deeply"), "{err}");
            }
            let unions = vec!["select 1 from t"; 20_000].join(" union all ");
            assert!(crate::parse(&unions).unwrap_err().to_string().contains("nested too deeply"));
        });
    }

    #[test]
    fn the_limit_itself_parses() {
        on_small_stack(|| {
            let ok = format!("select {} from t", vec!["1"; MAX_EXPRESSION_DEPTH + 1].join("+"));
            // (Dropped by dispose: the test thread's stack is small.)
            dispose(crate::parse(&ok).unwrap());
            let over = format!("select {} from t", vec!["1"; MAX_EXPRESSION_DEPTH + 2].join("+"));
            assert!(crate::parse(&over).is_err());
        });
    }

    #[test]
    fn the_error_points_at_the_deep_expression() {
        let sql = format!("select 1\nfrom t where {}", vec!["a"; 3000].join(" or "));
        let e = crate::parse(&sql).unwrap_err();
        assert!(matches!(e.kind(), Error::Syntax(_)), "{e:?}");
        assert_eq!(e.position(), Some((2, 14)));
    }

    #[test]
    fn within_counts_as_check_does() {
        let sum = |n| crate::parse(&format!("select {} from t", vec!["1"; n].join("+"))).unwrap().remove(0);
        assert!(within(&sum(33), 32));
        assert!(!within(&sum(34), 32));
        // Subqueries' expressions count below the expression holding them.
        let sql = "select (select max(a) from t where a in (select b from u where b > 1)) from t";
        let nested = crate::parse(sql).unwrap().remove(0);
        assert!(within(&nested, 3) && !within(&nested, 2));
    }
}
