//! Evaluates column-free subexpressions once at plan time (e.g. `date '1998-12-01' -
//! interval '90' day`, `0.06 + 0.01`). Folds maximal constant subtrees only, so a CASE
//! keeps its lazy branches. Subtrees over parameters become derived parameters.

use super::{map_node_exprs, map_plan, OptimizerRule};
use crate::eval::eval;
use crate::expr::Expr;
use crate::literal_set::LiteralSet;
use crate::logical::LogicalPlan;
use crate::parameters;
use gpusql_common::Result;
use std::sync::Arc;

pub struct ConstantFolding;

impl OptimizerRule for ConstantFolding {
    fn name(&self) -> &'static str {
        "constant_folding"
    }
    fn rewrite(&self, plan: LogicalPlan) -> Result<LogicalPlan> {
        // Constants move across comparisons first, as DuckDB's optimizer moves them
        // before it folds (`move_constants.rs`).
        map_plan(plan, &mut |node| map_node_exprs(node, &mut |e| fold(super::move_constants::move_constants(e))))
    }
}

fn has_columns(e: &Expr) -> bool {
    let mut cols = vec![];
    e.columns(&mut cols);
    !cols.is_empty()
}

pub fn fold(e: Expr) -> Result<Expr> {
    if matches!(e, Expr::Literal { .. } | Expr::Parameter { .. }) {
        return Ok(e);
    }
    if !has_columns(&e) {
        // Over parameters: a parameter computed per run, never a literal of this run's
        // values (`parameters.rs`).
        // A constant that fails (`61 // 0`) stays unfolded: its error is raised where a row
        // evaluates it, as in DuckDB (over no rows, none).
        if parameters::has_parameters(&e) {
            return Ok(parameters::derived(e.clone()).unwrap_or(e));
        }
        let ty = e.ty();
        return Ok(match eval(&e, &[]) {
            Ok(value) => Expr::Literal { value, ty },
            Err(_) => e,
        });
    }
    // Fold the children that are constant; keep this node.
    Ok(match e {
        Expr::Binary { op, left, right, ty } => {
            Expr::Binary { op, left: Box::new(fold(*left)?), right: Box::new(fold(*right)?), ty }
        }
        Expr::Not(x) => Expr::Not(Box::new(fold(*x)?)),
        Expr::Negate(x) => Expr::Negate(Box::new(fold(*x)?)),
        Expr::Abs(x) => Expr::Abs(Box::new(fold(*x)?)),
        Expr::IsNull { expr, negated } => Expr::IsNull { expr: Box::new(fold(*expr)?), negated },
        Expr::Cast { expr, ty } => Expr::Cast { expr: Box::new(fold(*expr)?), ty },
        Expr::TryCast { expr, ty } => Expr::TryCast { expr: Box::new(fold(*expr)?), ty },
        Expr::DateAdd { date, months, days } => Expr::DateAdd { date: Box::new(fold(*date)?), months, days },
        Expr::TimestampAdd { expr, months, days, micros } => {
            Expr::TimestampAdd { expr: Box::new(fold(*expr)?), months, days, micros }
        }
        Expr::DateTrunc { unit, expr } => Expr::DateTrunc { unit, expr: Box::new(fold(*expr)?) },
        Expr::Like { expr, pattern, negated } => Expr::Like { expr: Box::new(fold(*expr)?), pattern, negated },
        Expr::Regex { expr, dfa, negated } => Expr::Regex { expr: Box::new(fold(*expr)?), dfa, negated },
        Expr::RegexFind { expr, dfa, rewrite, global } => Expr::RegexFind {
            expr: Box::new(fold(*expr)?),
            dfa,
            rewrite: rewrite.map(|r| fold(*r).map(Box::new)).transpose()?,
            global,
        },
        Expr::Extract { field, expr } => Expr::Extract { field, expr: Box::new(fold(*expr)?) },
        Expr::Substring { expr, start, len } => Expr::Substring { expr: Box::new(fold(*expr)?), start, len },
        Expr::Length(expr) => Expr::Length(Box::new(fold(*expr)?)),
        Expr::RoundDouble { expr, digits } => Expr::RoundDouble { expr: Box::new(fold(*expr)?), digits },
        Expr::RoundTens { expr, tens, ty } => Expr::RoundTens { expr: Box::new(fold(*expr)?), tens, ty },
        Expr::Math { func, args } => Expr::Math { func, args: args.into_iter().map(fold).collect::<Result<_>>()? },
        Expr::StringFn { func, args } => {
            Expr::StringFn { func, args: args.into_iter().map(fold).collect::<Result<_>>()? }
        }
        Expr::InList { expr, list, negated } => {
            let expr = Box::new(fold(*expr)?);
            let list: Vec<Expr> = list.into_iter().map(fold).collect::<Result<_>>()?;
            // A long list of literals: one sorted set, searched instead of scanned per row.
            match LiteralSet::from_list(expr.ty(), &list) {
                Some(set) => Expr::InSet { expr, set: Arc::new(set), negated },
                None => Expr::InList { expr, list, negated },
            }
        }
        Expr::InSet { expr, set, negated } => Expr::InSet { expr: Box::new(fold(*expr)?), set, negated },
        // CASE branches stay as written: an untaken branch must not raise errors.
        other => other,
    })
}
