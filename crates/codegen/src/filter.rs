//! Filter: rows whose predicate is not TRUE become inactive lanes. A conjunction is
//! evaluated term by term, each in its own `if (active)` block, so a term's columns are
//! loaded only for rows that passed the terms before it (NULL and FALSE both drop a row,
//! so the split keeps SQL semantics).

use crate::expr::gen;
use crate::pipeline::PipelineGen;
use gpusql_common::Result;
use gpusql_plan::Expr;

pub fn consume(g: &mut PipelineGen, predicate: &Expr) -> Result<()> {
    g.body.line(format!("// ---- Filter {predicate} ----"));
    for term in predicate.clone().conjuncts() {
        g.body.open("if (active)");
        g.load_columns(&[&term]);
        let p = gen(&term, &g.row, &mut g.body)?;
        if p.is_never_null() {
            g.body.line(format!("active = {};", p.v));
        } else {
            g.body.line(format!("active = !{} && ({});", p.null, p.v));
        }
        g.body.close();
    }
    Ok(())
}
