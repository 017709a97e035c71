//! GROUP BY ROLLUP (…), CUBE (…) and GROUPING SETS (…) (also beside plain keys: the cross
//! product of the items' sets), and GROUPING (…) / grouping_id (…). The aggregation's rows
//! are those of each grouping set in turn, the keys outside the set NULL, followed by a
//! grouping id: a bit per key, 1 where the key is not in the row's set (DuckDB's
//! GROUPING). Decomposable aggregates (SUM, COUNT, MIN, MAX, AVG) aggregate the input once,
//! by every key, and each set's rows combine those groups' partial states; the others
//! aggregate the input per set.

use crate::bind_aggregate::aggregate_plan;
use crate::bind_expr::{AtSpan, Context, POST_AGGREGATE};
use gpusql_common::{DataType, Error, Result, ScalarValue, Schema};
use gpusql_plan::{AggExpr, AggFunc, BinaryOp, Expr, LogicalPlan};
use sqlparser::ast::{self, Spanned};

/// The name of the grouping id among the values that follow an aggregation's columns.
pub const GROUPING_ID: &str = "__grouping_id";

/// Most grouping sets a GROUP BY may make (CUBE of 12 keys).
const MAX_SETS: usize = 4096;

/// The keys of a GROUP BY with grouping sets, each once, and its sets (indices into the
/// keys); None where it has no ROLLUP, CUBE or GROUPING SETS.
pub fn grouping_sets(items: &[ast::Expr]) -> Result<Option<(Vec<ast::Expr>, Vec<Vec<usize>>)>> {
    let is_set = |e: &ast::Expr| matches!(e, ast::Expr::Rollup(_) | ast::Expr::Cube(_) | ast::Expr::GroupingSets(_));
    if !items.iter().any(is_set) {
        return Ok(None);
    }
    let mut keys: Vec<ast::Expr> = vec![];
    let mut key = |e: &ast::Expr| -> usize {
        keys.iter().position(|k| k == e).unwrap_or_else(|| {
            keys.push(e.clone());
            keys.len() - 1
        })
    };
    let mut sets: Vec<Vec<usize>> = vec![vec![]];
    for item in items {
        // This item's sets, as lists of key indices.
        let own: Vec<Vec<usize>> = match item {
            ast::Expr::Rollup(parts) => {
                let parts: Vec<Vec<usize>> = parts.iter().map(|p| p.iter().map(&mut key).collect()).collect();
                (0..=parts.len()).rev().map(|n| parts[..n].concat()).collect()
            }
            ast::Expr::Cube(parts) => {
                if parts.len() > 12 {
                    return Err(Error::not_supported("CUBE of more than 12 elements"));
                }
                let parts: Vec<Vec<usize>> = parts.iter().map(|p| p.iter().map(&mut key).collect()).collect();
                (0..1usize << parts.len())
                    .rev()
                    .map(|mask| {
                        (0..parts.len())
                            .filter(|i| mask & (1 << (parts.len() - 1 - i)) != 0)
                            .flat_map(|i| parts[i].clone())
                            .collect()
                    })
                    .collect()
            }
            ast::Expr::GroupingSets(list) => list.iter().map(|s| s.iter().map(&mut key).collect()).collect(),
            plain => vec![vec![key(plain)]],
        };
        let mut crossed = vec![];
        for s in &sets {
            for o in &own {
                let mut c = s.clone();
                c.extend(o.iter().filter(|k| !s.contains(k)));
                crossed.push(c);
            }
        }
        if crossed.len() > MAX_SETS {
            return Err(Error::not_supported(format!("GROUP BY of more than {MAX_SETS} grouping sets")));
        }
        sets = crossed;
    }
    Ok(Some((keys, sets)))
}

impl Context<'_> {
    /// GROUPING (…) / grouping_id (…) in a grouped context: the bits of its arguments (group
    /// keys) in the rows' grouping id, or 0 where the GROUP BY has no grouping sets. None
    /// for another function.
    pub(crate) fn grouping_call(&self, f: &ast::Function) -> Option<Result<Expr>> {
        let name = f.name.to_string().to_ascii_lowercase();
        if !matches!(name.as_str(), "grouping" | "grouping_id") {
            return None;
        }
        let Context::Grouped(g) = self else { return None };
        Some((|| {
            let at = f.name.span();
            let Some(args) = crate::functions::plain_arguments(f) else {
                return Err(Error::bind(format!("{name} takes the grouping columns")).at_span(at));
            };
            if args.is_empty() {
                return Err(Error::bind(format!("{name} takes at least one grouping column")).at_span(at));
            }
            let mut keys = vec![];
            for a in args {
                let k = Context::Plain(g.base).bind(a)?;
                keys.push(g.keys.iter().position(|x| *x == k).ok_or_else(|| {
                    Error::bind(format!("GROUPING child \"{a}\" must be a grouping column")).at_span(a.span())
                })?);
            }
            Ok(match g.post.iter().position(|(n, _, _)| n == GROUPING_ID) {
                Some(p) => {
                    let gid = Expr::Column {
                        index: POST_AGGREGATE + p,
                        name: GROUPING_ID.into(),
                        ty: DataType::Int64,
                        nullable: false,
                    };
                    grouping_value(gid, &keys, g.keys.len())
                }
                None => Expr::literal(ScalarValue::Int64(0), DataType::Int64),
            })
        })())
    }
}

/// GROUPING(args) over the grouping id `gid` of `keys` keys: per argument (its key's index
/// in `at`), the key's bit, the first argument's highest.
pub fn grouping_value(gid: Expr, at: &[usize], keys: usize) -> Expr {
    let int = |v: i64| Expr::literal(ScalarValue::Int64(v), DataType::Int64);
    let bin = |op: BinaryOp, l: Expr, r: Expr| Expr::Binary {
        op,
        left: Box::new(l),
        right: Box::new(r),
        ty: DataType::Int64,
    };
    let mut value = int(0);
    for (j, k) in at.iter().enumerate() {
        let shift = (keys - 1 - k) as u32;
        let bit = bin(BinaryOp::Mod, bin(BinaryOp::Div, gid.clone(), int(1i64 << shift)), int(2));
        let placed = bin(BinaryOp::Mul, bit, int(1i64 << (at.len() - 1 - j)));
        value = bin(BinaryOp::Add, value, placed);
    }
    value
}

/// The aggregation over grouping `sets` of `keys`: per set, its groups with the other keys
/// NULL, all sets' rows together; the output is keys, then one column per aggregate, then
/// the grouping id (BIGINT).
pub(crate) fn grouping_sets_plan(
    input: LogicalPlan,
    keys: &[Expr],
    key_names: &[String],
    aggs: Vec<AggExpr>,
    sets: &[Vec<usize>],
) -> Result<LogicalPlan> {
    let k = keys.len();
    if k >= 63 {
        return Err(Error::not_supported("grouping sets over more than 62 keys"));
    }
    let decomposable = aggs.iter().all(|a| {
        !a.distinct
            && a.order.is_empty()
            && matches!(a.func, AggFunc::Sum | AggFunc::Count | AggFunc::Min | AggFunc::Max | AggFunc::Avg)
    });
    let col = |s: &Schema, i: usize| Expr::column_of(s, i);
    // Where decomposable, the finest groups' partial states: SUM, COUNT, MIN, MAX (AVG as
    // SUM and COUNT), each combined per set by SUM (counts too), MIN or MAX.
    let mut partial: Vec<AggExpr> = vec![];
    let mut uses: Vec<Vec<usize>> = vec![];
    if decomposable {
        for a in &aggs {
            let arg_ty = a.arg.as_ref().map(|e| e.ty());
            let mut add = |func: AggFunc| {
                let p = AggExpr {
                    func,
                    arg: a.arg.clone(),
                    arg2: None,
                    ty: AggExpr::result_type(func, arg_ty.as_ref()).unwrap_or(a.ty),
                    distinct: false,
                    order: vec![],
                };
                partial.iter().position(|x| *x == p).unwrap_or_else(|| {
                    partial.push(p);
                    partial.len() - 1
                })
            };
            uses.push(match a.func {
                AggFunc::Avg => vec![add(AggFunc::Sum), add(AggFunc::Count)],
                f => vec![add(f)],
            });
        }
    }
    let finest = decomposable.then(|| LogicalPlan::Aggregate {
        input: Box::new(input.clone()),
        group_by: keys.to_vec(),
        group_names: key_names.to_vec(),
        aggs: partial.clone(),
    });
    let mut levels = vec![];
    for set in sets {
        let gid = (0..k).filter(|i| !set.contains(i)).fold(0i64, |acc, i| acc | 1 << (k - 1 - i));
        let level = match &finest {
            Some(f) => {
                let fs = f.schema();
                let combined = partial
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        let func = if matches!(p.func, AggFunc::Count | AggFunc::Sum) { AggFunc::Sum } else { p.func };
                        let arg = col(&fs, k + i);
                        let ty = AggExpr::result_type(func, Some(&arg.ty())).unwrap_or(p.ty);
                        AggExpr { func, arg: Some(arg), ty, arg2: None, distinct: false, order: vec![] }
                    })
                    .collect();
                let grouped = LogicalPlan::Aggregate {
                    input: Box::new(f.clone()),
                    group_by: set.iter().map(|i| col(&fs, *i)).collect(),
                    group_names: set.iter().map(|i| key_names[*i].clone()).collect(),
                    aggs: combined,
                };
                let gs = grouped.schema();
                let state = |i: usize| col(&gs, set.len() + i);
                let values = aggs.iter().zip(&uses).map(|(a, u)| finish(a, u, &state)).collect::<Result<Vec<_>>>()?;
                (grouped, values)
            }
            None => {
                let keys_in: Vec<Expr> = set.iter().map(|i| keys[*i].clone()).collect();
                let names_in: Vec<String> = set.iter().map(|i| key_names[*i].clone()).collect();
                let grouped = aggregate_plan(input.clone(), &keys_in, &names_in, aggs.clone())?;
                let gs = grouped.schema();
                let values = (0..aggs.len()).map(|i| col(&gs, set.len() + i)).collect();
                (grouped, values)
            }
        };
        let (grouped, values) = level;
        let gs = grouped.schema();
        let mut exprs: Vec<Expr> = (0..k)
            .map(|i| match set.iter().position(|s| *s == i) {
                Some(p) => col(&gs, p),
                None => Expr::literal(ScalarValue::Null, keys[i].ty()),
            })
            .collect();
        exprs.extend(values);
        exprs.push(Expr::literal(ScalarValue::Int64(gid), DataType::Int64));
        let names = key_names
            .iter()
            .cloned()
            .chain(aggs.iter().map(|a| a.to_string()))
            .chain([GROUPING_ID.to_string()])
            .collect();
        levels.push(LogicalPlan::Project { input: Box::new(grouped), exprs, names });
    }
    // The union's columns: the keys nullable (a set without one has NULL there).
    let mut fields = levels[0].schema().fields;
    for (i, f) in fields.iter_mut().enumerate() {
        f.nullable = i < k || levels.iter().any(|l| l.schema().fields[i].nullable);
    }
    Ok(LogicalPlan::Union { inputs: levels, schema: Schema::new(fields) })
}

/// Aggregate `a` from its combined partial states (`u`: their indices; `state(i)`: the
/// column of state i): COUNT is a sum of counts (never NULL), AVG the sum over the count.
fn finish(a: &AggExpr, u: &[usize], state: &dyn Fn(usize) -> Expr) -> Result<Expr> {
    let cast = |e: Expr, ty: DataType| crate::coerce::cast(e, ty);
    Ok(match a.func {
        AggFunc::Count => {
            // (The set of no keys over no rows sums no counts: 0.)
            let sum = cast(state(u[0]), DataType::Int64);
            Expr::Case {
                branches: vec![(
                    Expr::IsNull { expr: Box::new(sum.clone()), negated: false },
                    Expr::literal(ScalarValue::Int64(0), DataType::Int64),
                )],
                else_expr: Some(Box::new(sum)),
                ty: DataType::Int64,
            }
        }
        AggFunc::Avg => Expr::Binary {
            op: BinaryOp::Div,
            left: Box::new(cast(state(u[0]), DataType::Float64)),
            right: Box::new(cast(state(u[1]), DataType::Float64)),
            ty: DataType::Float64,
        },
        _ => cast(state(u[0]), a.ty),
    })
}
