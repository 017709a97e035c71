//! Filter: rows whose predicate is not TRUE become inactive lanes.

use crate::expr::gen;
use crate::pipeline::PipelineGen;
use gpusql_common::Result;
use gpusql_plan::Expr;

pub fn consume(g: &mut PipelineGen, predicate: &Expr) -> Result<()> {
    g.body.line(format!("// ---- Filter {predicate} ----"));
    g.body.open("if (active)");
    g.load_columns(&[predicate]);
    let p = gen(predicate, &g.row, &mut g.body)?;
    g.body.line(format!("active = !{} && ({});", p.null, p.v));
    g.body.close();
    Ok(())
}
