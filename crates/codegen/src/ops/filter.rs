//! Filter: rows whose conjunction is not TRUE become inactive lanes (NULL and FALSE both
//! drop a row, so splitting the conjunction keeps SQL semantics). The filter plan's
//! groups run one after another, each in its own `if (active)` block, so a group's columns
//! are loaded only for rows that passed the groups before it (`&&`); inside a group all
//! columns are loaded and all terms evaluated without branches, combined with `&`.

use super::like_kmp;
use super::Operator;
use crate::kernel_builder::KernelBuilder;
use gpusql_common::Result;
use gpusql_plan::filter_plan::FilterPlan;
use gpusql_plan::Expr;

pub struct Filter<'a>(pub &'a FilterPlan);

impl Operator for Filter<'_> {
    fn consume(&self, k: &mut KernelBuilder) -> Result<()> {
        let plan = self.0;
        let text = k.show_filter(plan);
        k.body().line(format!("// ---- Filter {text} ----"));
        for group in &plan.groups {
            k.body().open("if (active)");
            let refs: Vec<&Expr> = group.iter().collect();
            k.load_columns(&refs);
            let mut parts = vec![];
            for term in group {
                let p = match like_kmp::try_gen(k, term) {
                    Some(p) => p,
                    None => k.eval(term)?,
                };
                parts.push(if p.is_never_null() { format!("({})", p.v) } else { format!("(!{} & ({}))", p.null, p.v) });
            }
            k.body().line(format!("active = {};", parts.join(" & ")));
            k.body().close();
        }
        Ok(())
    }
}
