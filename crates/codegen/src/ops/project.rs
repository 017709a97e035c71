//! Project: computes new row values; later operators see only these.

use super::Operator;
use crate::kernel_builder::KernelBuilder;
use crate::types::c_type;
use crate::value::Value;
use gpusql_common::Result;
use gpusql_plan::Expr;

pub struct Project<'a>(pub &'a [Expr]);

impl Operator for Project<'_> {
    fn consume(&self, k: &mut KernelBuilder) -> Result<()> {
        let exprs = self.0;
        let items: Vec<String> = exprs.iter().map(|e| k.show(e)).collect();
        k.body().line(format!("// ---- Project {} ----", items.join(", ")));
        let n = k.next_projection();
        let mut new_row = vec![];
        for (i, e) in exprs.iter().enumerate() {
            let v = format!("p{n}_{i}");
            let ct = c_type(&e.ty());
            k.body().line(format!("{ct} {v}{}; bool {v}_null = true;", crate::types::c_init(ct)));
            new_row.push(Value { v: v.clone(), null: format!("{v}_null") });
        }
        k.body().open("if (active)");
        let refs: Vec<&Expr> = exprs.iter().collect();
        k.load_columns(&refs);
        for (i, e) in exprs.iter().enumerate() {
            let x = k.eval(e)?;
            k.body().line(format!("{} = {}; {} = {};", new_row[i].v, x.v, new_row[i].null, x.null));
        }
        k.body().close();
        k.replace_row(new_row, exprs.iter().map(|e| e.ty()).collect());
        Ok(())
    }
}
