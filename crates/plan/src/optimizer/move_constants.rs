//! Moves an integer constant across a comparison, as DuckDB's optimizer does before it
//! evaluates anything (its `MoveConstantsRule`): `x + 1 > 10` is `x > 9`, `4 - x < 2` is
//! `x > 2`, `x * 2 = 10` is `x = 5`. Part of DuckDB's semantics, not only a speed-up: the
//! arithmetic that could overflow is gone, so `k + 2147483647 > 0` answers where the sum
//! would raise `INTEGER out of range`. Applied where DuckDB applies it: the arithmetic
//! (+, -, * of INTEGER or BIGINT) right under the comparison, one operand and the other
//! side of the comparison constants; where the moved constant does not fit the type, an
//! `=` (or, for `*`, `<>`) is decided outright, other comparisons stay as written.

use crate::eval::eval;
use crate::expr::{BinaryOp, Expr};
use crate::parameters;
use gpusql_common::{DataType, ScalarValue};

/// `e` with every comparison of its tree rewritten (bottom-up, to a fixpoint per node).
pub fn move_constants(e: Expr) -> Expr {
    e.transform(&mut |node| {
        let mut node = node;
        while let Some(next) = rewrite(&node) {
            node = next;
        }
        node
    })
}

/// The integer value of a constant operand (no columns, no parameters, evaluates to a
/// non-NULL integer).
fn constant(e: &Expr) -> Option<i128> {
    let mut cols = vec![];
    e.columns(&mut cols);
    if !cols.is_empty() || parameters::has_parameters(e) {
        return None;
    }
    match eval(e, &[]).ok()? {
        ScalarValue::Int32(v) => Some(v as i128),
        ScalarValue::Int64(v) => Some(v as i128),
        _ => None,
    }
}

fn literal(v: i128, ty: DataType) -> Option<Expr> {
    let value = match ty {
        DataType::Int32 => ScalarValue::Int32(i32::try_from(v).ok()?),
        DataType::Int64 => ScalarValue::Int64(i64::try_from(v).ok()?),
        _ => return None,
    };
    Some(Expr::literal(value, ty))
}

/// TRUE or FALSE, or NULL where `x` is NULL (DuckDB's `ConstantOrNull`).
fn constant_or_null(x: &Expr, value: bool) -> Expr {
    let is_null = Expr::IsNull { expr: Box::new(x.clone()), negated: false };
    Expr::Case {
        branches: vec![(is_null, Expr::literal(ScalarValue::Null, DataType::Boolean))],
        else_expr: Some(Box::new(Expr::literal(ScalarValue::Boolean(value), DataType::Boolean))),
        ty: DataType::Boolean,
    }
}

fn rewrite(e: &Expr) -> Option<Expr> {
    let Expr::Binary { op, left, right, ty } = e else { return None };
    if !op.is_comparison() {
        return None;
    }
    // `arith op outer`, the constant side on the right.
    let (arith, outer, op) = match (constant(right), constant(left)) {
        (Some(c), _) => (&**left, c, *op),
        (None, Some(c)) => (&**right, c, op.mirrored()),
        _ => return None,
    };
    let Expr::Binary { op: aop, left: a, right: b, ty: aty } = arith else { return None };
    if !matches!(aty, DataType::Int32 | DataType::Int64) {
        return None;
    }
    // `x aop inner` (x on the left) or `inner aop x`.
    let (x, inner, x_left) = match (constant(b), constant(a)) {
        (Some(c), _) => (&**a, c, true),
        (None, Some(c)) => (&**b, c, false),
        _ => return None,
    };
    let comparison =
        |op: BinaryOp, value: Expr| Expr::Binary { op, left: Box::new(x.clone()), right: Box::new(value), ty: *ty };
    match aop {
        BinaryOp::Add | BinaryOp::Sub => {
            // x + c op d: x op d - c; x - c op d: x op d + c; c - x op d: x op' c - d.
            let (moved, op) = match (aop, x_left) {
                (BinaryOp::Add, _) => (outer - inner, op),
                (_, true) => (outer + inner, op),
                (_, false) => (inner - outer, op.mirrored()),
            };
            match literal(moved, *aty) {
                Some(v) => Some(comparison(op, v)),
                None if op == BinaryOp::Eq => Some(constant_or_null(x, false)),
                None => None,
            }
        }
        BinaryOp::Mul => {
            if inner == 0 {
                return None;
            }
            let decided = |op: BinaryOp| match op {
                BinaryOp::Eq => Some(constant_or_null(x, false)),
                BinaryOp::NotEq => Some(constant_or_null(x, true)),
                _ => None,
            };
            if outer % inner != 0 {
                return decided(op);
            }
            let op = if inner < 0 { op.mirrored() } else { op };
            match literal(outer / inner, *aty) {
                Some(v) => Some(comparison(op, v)),
                None => decided(op),
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: i32) -> Expr {
        Expr::literal(ScalarValue::Int32(v), DataType::Int32)
    }
    fn x() -> Expr {
        Expr::Column { index: 0, name: "x".into(), ty: DataType::Int32, nullable: false }
    }
    fn bin(op: BinaryOp, l: Expr, r: Expr, ty: DataType) -> Expr {
        Expr::Binary { op, left: Box::new(l), right: Box::new(r), ty }
    }

    #[test]
    fn constants_move_across_comparisons() {
        let add = bin(BinaryOp::Add, x(), int(1), DataType::Int32);
        let e = move_constants(bin(BinaryOp::Gt, add, int(10), DataType::Boolean));
        assert_eq!(e, bin(BinaryOp::Gt, x(), int(9), DataType::Boolean));
        // 4 - x < 2: x > 2.
        let sub = bin(BinaryOp::Sub, int(4), x(), DataType::Int32);
        let e = move_constants(bin(BinaryOp::Lt, sub, int(2), DataType::Boolean));
        assert_eq!(e, bin(BinaryOp::Gt, x(), int(2), DataType::Boolean));
        // x * -2 < 10: x > -5.
        let mul = bin(BinaryOp::Mul, x(), int(-2), DataType::Int32);
        let e = move_constants(bin(BinaryOp::Lt, mul, int(10), DataType::Boolean));
        assert_eq!(e, bin(BinaryOp::Gt, x(), int(-5), DataType::Boolean));
        // (2147483647 + 234) <= 224 needs no sum that overflows: 2147483647 <= -10.
        let sum = bin(BinaryOp::Add, int(i32::MAX), int(234), DataType::Int32);
        let e = move_constants(bin(BinaryOp::LtEq, sum, int(224), DataType::Boolean));
        assert_eq!(eval(&e, &[]).unwrap(), ScalarValue::Boolean(false));
        // A moved constant out of range: = is decided, < stays.
        let add = bin(BinaryOp::Add, x(), int(-10), DataType::Int32);
        let lt = bin(BinaryOp::Lt, add.clone(), int(i32::MAX), DataType::Boolean);
        assert_eq!(move_constants(lt.clone()), lt);
        let eq = move_constants(bin(BinaryOp::Eq, add, int(i32::MAX), DataType::Boolean));
        assert_eq!(eval(&eq, &[ScalarValue::Int32(3)]).unwrap(), ScalarValue::Boolean(false));
    }
}
