//! `WITH name [(columns)] AS (query) …`: common table expressions are inlined, each
//! reference to a CTE becomes a subquery in FROM (so a CTE used twice, like TPC-H Q15's
//! `revenue0`, is computed twice). Later CTEs may use earlier ones.

use gpusql_common::{Error, Result};
use sqlparser::ast::{self, VisitMut, VisitorMut};
use std::ops::ControlFlow;

/// The query with its WITH clause removed and every reference to one of its CTEs
/// (in FROM, also inside nested subqueries) replaced by the CTE's body.
pub fn inline_ctes(q: &ast::Query) -> Result<ast::Query> {
    let Some(with) = &q.with else { return Ok(q.clone()) };
    if with.recursive {
        return Err(Error::not_supported("WITH RECURSIVE"));
    }
    let mut ctes: Vec<(ast::TableAlias, ast::Query)> = vec![];
    for cte in &with.cte_tables {
        if ctes.iter().any(|(a, _)| a.name.value.eq_ignore_ascii_case(&cte.alias.name.value)) {
            return Err(Error::bind(format!("WITH name '{}' specified more than once", cte.alias.name.value)));
        }
        let mut body = (*cte.query).clone();
        substitute(&mut body, &ctes);
        ctes.push((cte.alias.clone(), body));
    }
    let mut out = q.clone();
    out.with = None;
    substitute(&mut out, &ctes);
    Ok(out)
}

struct Substitute<'a> {
    ctes: &'a [(ast::TableAlias, ast::Query)],
}

impl VisitorMut for Substitute<'_> {
    type Break = ();

    // After the children: the inserted body is not visited again, so a CTE that reads a
    // table of its own name (`WITH t AS (SELECT … FROM t)`) reads the stored table.
    fn post_visit_table_factor(&mut self, factor: &mut ast::TableFactor) -> ControlFlow<()> {
        let ast::TableFactor::Table { name, alias, args: None, .. } = factor else { return ControlFlow::Continue(()) };
        let [ast::ObjectNamePart::Identifier(id)] = name.0.as_slice() else { return ControlFlow::Continue(()) };
        let Some((cte_alias, body)) = self.ctes.iter().find(|(a, _)| a.name.value.eq_ignore_ascii_case(&id.value))
        else {
            return ControlFlow::Continue(());
        };
        // `FROM cte AS x` renames the relation; the CTE's column list still names its columns.
        let mut a = cte_alias.clone();
        if let Some(given) = alias {
            a.name = given.name.clone();
            if !given.columns.is_empty() {
                a.columns = given.columns.clone();
            }
        }
        *factor = ast::TableFactor::Derived {
            lateral: false,
            subquery: Box::new(body.clone()),
            alias: Some(a),
            sample: None,
        };
        ControlFlow::Continue(())
    }
}

fn substitute(q: &mut ast::Query, ctes: &[(ast::TableAlias, ast::Query)]) {
    if ctes.is_empty() {
        return;
    }
    let _ = q.visit(&mut Substitute { ctes });
}
