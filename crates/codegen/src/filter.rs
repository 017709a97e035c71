//! Filter: rows whose conjunction is not TRUE become inactive lanes (NULL and FALSE both
//! drop a row, so splitting the conjunction keeps SQL semantics). The filter plan's
//! groups run one after another, each in its own `if (active)` block, so a group's columns
//! are loaded only for rows that passed the groups before it (`&&`); inside a group all
//! columns are loaded and all terms evaluated without branches, combined with `&`.

use crate::expr::gen;
use crate::pipeline::PipelineGen;
use gpusql_common::Result;
use gpusql_plan::filter_plan::FilterPlan;

pub fn consume(g: &mut PipelineGen, plan: &FilterPlan) -> Result<()> {
    g.body.line(format!("// ---- Filter {plan} ----"));
    for group in &plan.groups {
        g.body.open("if (active)");
        let refs: Vec<&gpusql_plan::Expr> = group.iter().collect();
        g.load_columns(&refs);
        let mut parts = vec![];
        for term in group {
            let p = match crate::like_kmp::try_gen(g, term) {
                Some(p) => p,
                None => gen(term, &g.row, &mut g.body)?,
            };
            parts.push(if p.is_never_null() { format!("({})", p.v) } else { format!("(!{} & ({}))", p.null, p.v) });
        }
        g.body.line(format!("active = {};", parts.join(" & ")));
        g.body.close();
    }
    Ok(())
}
