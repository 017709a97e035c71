//! Project: computes new row values; later operators see only these.

use crate::expr::{gen, Value};
use crate::pipeline::PipelineGen;
use crate::types::c_type;
use gpusql_common::Result;
use gpusql_plan::Expr;

pub fn consume(g: &mut PipelineGen, exprs: &[Expr]) -> Result<()> {
    let items: Vec<String> = exprs.iter().map(|e| e.to_string()).collect();
    g.body.line(format!("// ---- Project {} ----", items.join(", ")));
    let n = g.next_project;
    g.next_project += 1;
    let mut new_row = vec![];
    for (i, e) in exprs.iter().enumerate() {
        let v = format!("p{n}_{i}");
        let ct = c_type(&e.ty());
        g.body.line(format!(
            "{ct} {v}{}; bool {v}_null = true;",
            if ct == "Str" { " = make_str(\"\", 0)" } else { " = 0" }
        ));
        new_row.push(Value { v: v.clone(), null: format!("{v}_null") });
    }
    g.body.open("if (active)");
    let refs: Vec<&Expr> = exprs.iter().collect();
    g.load_columns(&refs);
    for (i, e) in exprs.iter().enumerate() {
        let x = gen(e, &g.row, &mut g.body)?;
        g.body.line(format!("{} = {}; {} = {};", new_row[i].v, x.v, new_row[i].null, x.null));
    }
    g.body.close();
    g.replace_row(new_row, exprs.iter().map(|e| e.ty()).collect());
    Ok(())
}
