//! JOIN … USING (c, …) and NATURAL JOIN, as DuckDB: the join condition is `l.c = r.c` for
//! each named column (NATURAL: every column name the two sides share; none is an error,
//! as in DuckDB), and the two columns become one. The merged column takes the left one's place in
//! `*` and answers to the unqualified name; `l.c` and `r.c` stay reachable by qualified
//! names (hidden from `*`). After an INNER or LEFT join the merged column is the left one;
//! after a RIGHT or FULL join it is COALESCE(l.c, r.c), a column of its own.

use crate::bind_expr::{AtSpan, Context, Scope, ScopeField};
use crate::bind_join::Preserved;
use gpusql_common::{Error, Result};
use gpusql_plan::{Expr, LogicalPlan};
use sqlparser::ast::{self, Spanned};
use sqlparser::tokenizer::Span;

/// The columns a USING / NATURAL join merges: (left index, right index) in the scope.
pub(crate) struct UsingColumns {
    pairs: Vec<(usize, usize)>,
}

/// The qualifier of merged columns (not a name users write), numbered by scope position.
const MERGED_QUALIFIER: &str = "__using";

/// The pairs of a join's USING list or NATURAL join, and its condition. Left columns are
/// `scope.fields[item_start..right_start]`.
pub(crate) fn using_columns(
    constraint: &ast::JoinConstraint,
    scope: &Scope,
    item_start: usize,
    right_start: usize,
    at: Span,
) -> Result<(UsingColumns, ast::Expr)> {
    let visible = |range: std::ops::Range<usize>, name: &str| -> Vec<usize> {
        range.filter(|i| !scope.fields[*i].hidden && scope.fields[*i].name.eq_ignore_ascii_case(name)).collect()
    };
    let names: Vec<(String, Span)> = match constraint {
        ast::JoinConstraint::Using(names) => names
            .iter()
            .map(|n| match n.0.as_slice() {
                [ast::ObjectNamePart::Identifier(id)] => Ok((id.value.clone(), id.span)),
                _ => Err(Error::bind(format!("USING takes column names, got {n}")).at_span(n.span())),
            })
            .collect::<Result<_>>()?,
        // NATURAL: the right side's names the left side has too, in the left side's order.
        _ => {
            let mut shared = vec![];
            for f in &scope.fields[item_start..right_start] {
                let known = shared.iter().any(|(n, _): &(String, Span)| n.eq_ignore_ascii_case(&f.name));
                if !f.hidden && !known && !visible(right_start..scope.fields.len(), &f.name).is_empty() {
                    shared.push((f.name.clone(), at));
                }
            }
            if shared.is_empty() {
                return Err(Error::bind("no columns found to join on in NATURAL JOIN").at_span(at));
            }
            shared
        }
    };
    let mut pairs = vec![];
    let mut terms = vec![];
    for (name, span) in names {
        let side = |range: std::ops::Range<usize>, which: &str| -> Result<usize> {
            match visible(range, &name).as_slice() {
                [i] => Ok(*i),
                [] => Err(Error::bind(format!("column \"{name}\" of USING is not in the {which} side of the join"))
                    .at_span(span)),
                _ => {
                    Err(Error::bind(format!("column \"{name}\" of USING is ambiguous on the {which} side"))
                        .at_span(span))
                }
            }
        };
        let (l, r) = (side(item_start..right_start, "left")?, side(right_start..scope.fields.len(), "right")?);
        if pairs.iter().any(|(pl, _)| *pl == l) {
            return Err(Error::bind(format!("column \"{name}\" appears twice in USING")).at_span(span));
        }
        pairs.push((l, r));
        terms.push(ast::Expr::BinaryOp {
            left: Box::new(reference(&scope.fields[l], span)?),
            op: ast::BinaryOperator::Eq,
            right: Box::new(reference(&scope.fields[r], span)?),
        });
    }
    let condition = terms
        .into_iter()
        .reduce(|a, b| ast::Expr::BinaryOp { left: Box::new(a), op: ast::BinaryOperator::And, right: Box::new(b) })
        .ok_or_else(|| Error::bind("USING names no column").at_span(at))?;
    Ok((UsingColumns { pairs }, condition))
}

/// `qualifier.name` of a scope column, as SQL.
fn reference(f: &ScopeField, span: Span) -> Result<ast::Expr> {
    if f.qualifier.is_empty() {
        return Err(Error::not_supported(format!("USING of column \"{}\" of a subquery without an alias", f.name))
            .at_span(span));
    }
    Ok(ast::Expr::CompoundIdentifier(vec![ast::Ident::new(&f.qualifier), ast::Ident::new(&f.name)]))
}

/// Merges each pair into one column over the joined plan (see the module comment).
pub(crate) fn merge_using_columns(
    plan: LogicalPlan,
    using: UsingColumns,
    preserved: Option<Preserved>,
    scope: &mut Scope,
) -> Result<LogicalPlan> {
    if using.pairs.is_empty() {
        return Ok(plan);
    }
    if matches!(preserved, None | Some(Preserved::Left)) {
        for (_, r) in &using.pairs {
            scope.fields[*r].hidden = true;
        }
        return Ok(plan);
    }
    // COALESCE(l, r) in l's place; l and r stay, hidden.
    let taken = scope.fields.iter().filter(|f| f.qualifier.starts_with(MERGED_QUALIFIER)).count();
    let mut merged = vec![];
    for (l, r) in &using.pairs {
        let ctx = Context::Plain(scope);
        let (lx, rx) = (
            ctx.bind(&reference(&scope.fields[*l], Span::empty())?)?,
            ctx.bind(&reference(&scope.fields[*r], Span::empty())?)?,
        );
        let ty = crate::coerce::result_type(&lx.ty(), &rx.ty()).ok_or_else(|| {
            Error::bind(format!(
                "USING column \"{}\" is {} on one side and {} on the other",
                scope.fields[*l].name,
                lx.ty(),
                rx.ty()
            ))
        })?;
        let (lx, rx) = (crate::coerce::cast(lx, ty), crate::coerce::cast(rx, ty));
        let e = Expr::Case {
            branches: vec![(Expr::IsNull { expr: Box::new(lx.clone()), negated: true }, lx)],
            else_expr: Some(Box::new(rx)),
            ty,
        };
        merged.push((*l, format!("{MERGED_QUALIFIER}{}", taken + merged.len()), e));
    }
    let schema = plan.schema();
    let (mut exprs, mut names, mut fields) = (vec![], vec![], vec![]);
    for (i, f) in scope.fields.iter().enumerate() {
        if let Some((_, qualifier, e)) = merged.iter().find(|(l, _, _)| *l == i) {
            fields.push(ScopeField {
                qualifier: qualifier.clone(),
                name: f.name.clone(),
                ty: e.ty(),
                nullable: e.nullable(),
                hidden: false,
            });
            exprs.push(e.clone());
            names.push(f.name.clone());
        }
        let mut f = f.clone();
        f.hidden |= using.pairs.iter().any(|(l, r)| *l == i || *r == i);
        exprs.push(Expr::Column { index: i, name: f.name.clone(), ty: f.ty, nullable: f.nullable });
        names.push(schema.fields[i].name.clone());
        fields.push(f);
    }
    scope.fields = fields;
    Ok(LogicalPlan::Project { input: Box::new(plan), exprs, names })
}
