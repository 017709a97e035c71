//! The select list's items: expressions with their output names, and `*` / `t.*` with
//! EXCLUDE, REPLACE and RENAME expanded against the FROM clause's scope.

use crate::bind_expr::{AtSpan, Scope, ScopeField};
use crate::bind_select::item_name;
use gpusql_common::{Error, Result};
use sqlparser::ast::{self, Spanned};

/// The select list, `*` expanded to the FROM clause's columns (`scope`). A FROM-first
/// query without SELECT (`FROM t LIMIT 2`) selects `*`.
pub(crate) fn select_items(select: &ast::Select, scope: &Scope) -> Result<Vec<(ast::Expr, String)>> {
    if select.projection.is_empty() && select.flavor == ast::SelectFlavor::FromFirstNoSelect {
        return wildcard(None, &ast::WildcardAdditionalOptions::default(), scope);
    }
    let mut items = vec![];
    for item in &select.projection {
        match item {
            ast::SelectItem::UnnamedExpr(e) => items.push((e.clone(), item_name(e))),
            ast::SelectItem::ExprWithAlias { expr, alias } => items.push((expr.clone(), alias.value.clone())),
            ast::SelectItem::Wildcard(options) => items.extend(wildcard(None, options, scope)?),
            ast::SelectItem::QualifiedWildcard(ast::SelectItemQualifiedWildcardKind::ObjectName(name), options) => {
                let qualifier = match name.0.as_slice() {
                    [ast::ObjectNamePart::Identifier(id)] => id,
                    _ => return Err(Error::not_supported(format!("{name}.*")).at_span(name.span())),
                };
                items.extend(wildcard(Some(qualifier), options, scope)?)
            }
            other => return Err(Error::not_supported(format!("select item {other}")).at_span(other.span())),
        }
    }
    Ok(items)
}

/// `*` or `t.*` with DuckDB's options: `ILIKE`/`LIKE` 'pattern' keeps the columns whose
/// names match; `EXCLUDE` (or `EXCEPT`) leaves columns out; `REPLACE (expr AS name)`
/// puts an expression in a column's place; `RENAME (name AS new)` renames one.
fn wildcard(
    qualifier: Option<&ast::Ident>,
    options: &ast::WildcardAdditionalOptions,
    scope: &Scope,
) -> Result<Vec<(ast::Expr, String)>> {
    let ast::WildcardAdditionalOptions {
        wildcard_token: _,
        opt_ilike,
        opt_exclude,
        opt_except,
        opt_replace,
        opt_rename,
        opt_alias,
    } = options;
    if let Some(alias) = opt_alias {
        return Err(Error::not_supported("an alias of *").at_span(alias.span));
    }
    let in_scope = |f: &&ScopeField| match qualifier {
        Some(q) => f.qualifier.eq_ignore_ascii_case(&q.value),
        None => !f.hidden,
    };
    let mut fields: Vec<&ScopeField> = scope.fields.iter().filter(in_scope).collect();
    if let Some(q) = qualifier.filter(|_| fields.is_empty()) {
        return Err(Error::bind(format!("unknown table '{}' in {}.*", q.value, q.value)).at_span(q.span));
    }
    if let Some(ilike) = opt_ilike {
        let pattern = gpusql_plan::LikePattern::new(&ilike.pattern.to_lowercase(), None).map_err(Error::bind)?;
        fields.retain(|f| pattern.matches(f.name.to_lowercase().as_bytes()));
    }
    // Names: `a` or `t.a`.
    let names_of = |names: Vec<&ast::ObjectName>,
                    what: &str|
     -> Result<Vec<(Option<String>, String, sqlparser::tokenizer::Span)>> {
        names
            .into_iter()
            .map(|n| match n.0.as_slice() {
                [ast::ObjectNamePart::Identifier(c)] => Ok((None, c.value.clone(), c.span)),
                [ast::ObjectNamePart::Identifier(t), ast::ObjectNamePart::Identifier(c)] => {
                    Ok((Some(t.value.clone()), c.value.clone(), c.span))
                }
                _ => Err(Error::not_supported(format!("{what} of {n}")).at_span(n.span())),
            })
            .collect()
    };
    let mut excluded = vec![];
    if let Some(e) = opt_exclude {
        excluded.extend(names_of(
            match e {
                ast::ExcludeSelectItem::Single(n) => vec![n],
                ast::ExcludeSelectItem::Multiple(v) => v.iter().collect(),
            },
            "EXCLUDE",
        )?);
    }
    if let Some(e) = opt_except {
        let idents = std::iter::once(&e.first_element).chain(&e.additional_elements);
        excluded.extend(idents.map(|c| (None, c.value.clone(), c.span)));
    }
    for (t, c, span) in &excluded {
        let matches = |f: &&ScopeField| {
            f.name.eq_ignore_ascii_case(c) && t.as_ref().is_none_or(|t| f.qualifier.eq_ignore_ascii_case(t))
        };
        if !fields.iter().any(matches) {
            return Err(Error::bind(format!("column \"{c}\" in EXCLUDE list not found in FROM clause")).at_span(*span));
        }
        fields.retain(|f| !matches(f));
    }
    if let Some((q, n, t)) = scope.unsupported.iter().find(|(q, n, _)| {
        qualifier.is_none_or(|x| q.eq_ignore_ascii_case(&x.value))
            && !excluded.iter().any(|(_, c, _)| c.eq_ignore_ascii_case(n))
    }) {
        return Err(Error::not_supported(format!("column {q}.{n} of type {t} (select the other columns by name)")));
    }
    let mut items: Vec<(ast::Expr, String)> = fields
        .iter()
        .map(|f| {
            let id = ast::Expr::CompoundIdentifier(vec![
                ast::Ident::new(f.qualifier.clone()),
                ast::Ident::new(f.name.clone()),
            ]);
            (id, f.name.clone())
        })
        .collect();
    if let Some(r) = opt_replace {
        for element in &r.items {
            let column = &element.column_name;
            let slot = items.iter_mut().find(|(_, n)| n.eq_ignore_ascii_case(&column.value)).ok_or_else(|| {
                Error::bind(format!("column \"{}\" in REPLACE list not found in FROM clause", column.value))
                    .at_span(column.span)
            })?;
            *slot = (element.expr.clone(), slot.1.clone());
        }
    }
    if let Some(r) = opt_rename {
        let renames = match r {
            ast::RenameSelectItem::Single(one) => vec![one],
            ast::RenameSelectItem::Multiple(v) => v.iter().collect(),
        };
        for one in renames {
            let slot = items.iter_mut().find(|(_, n)| n.eq_ignore_ascii_case(&one.ident.value)).ok_or_else(|| {
                Error::bind(format!("column \"{}\" in RENAME list not found in FROM clause", one.ident.value))
                    .at_span(one.ident.span)
            })?;
            slot.1 = one.alias.value.clone();
        }
    }
    Ok(items)
}
