//! Project: computes new row values; later operators see only these.

use super::Operator;
use crate::kernel_builder::{KernelBuilder, ProjectedColumn};
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
        let mut columns = vec![];
        for (i, e) in exprs.iter().enumerate() {
            let v = format!("p{n}_{i}");
            let ct = c_type(&e.ty());
            k.body().line(format!("{ct} {v}{}; bool {v}_null = true;", crate::types::c_init(ct)));
            // A copy of a dictionary-encoded column keeps its code (a HashAggregate keyed by
            // it takes the code index).
            let dictionary_code = match e {
                Expr::Column { index, .. } => k.dictionary_code(*index),
                _ => None,
            };
            columns.push(ProjectedColumn {
                value: Value { v: v.clone(), null: format!("{v}_null") },
                ty: e.ty(),
                dictionary_code,
            });
        }
        k.body().open("if (active)");
        let refs: Vec<&Expr> = exprs.iter().collect();
        k.load_columns(&refs);
        for (e, c) in exprs.iter().zip(&columns) {
            let x = k.eval(e)?;
            k.body().line(format!("{} = {}; {} = {};", c.value.v, x.v, c.value.null, x.null));
        }
        k.body().close();
        k.replace_row(columns);
        Ok(())
    }
}
