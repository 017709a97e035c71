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
        // Columns the projection reads, with repeats (a column read twice is loaded here).
        let mut reads = vec![];
        for e in exprs {
            e.columns(&mut reads);
        }
        let mut columns = vec![];
        for (i, e) in exprs.iter().enumerate() {
            let v = format!("p{n}_{i}");
            let ct = c_type(&e.ty());
            k.body().line(format!("{ct} {v}{}; bool {v}_null = true;", crate::types::c_init(ct)));
            let value = Value { v: v.clone(), null: format!("{v}_null") };
            // A dictionary-encoded column not loaded yet is copied by its first reader: a
            // HashAggregate keyed by it reads its code, and its value only for a new group.
            let (dictionary_code, deferred_load) = match e {
                Expr::Column { index, .. } => match k.dictionary_code(*index) {
                    Some(code) if k.is_pending(*index) && reads.iter().filter(|&&c| c == *index).count() == 1 => {
                        let load = k.take_load(*index).unwrap_or_default();
                        let src = &k.row()[*index];
                        let copy = format!("{load} {v} = {}; {v}_null = {};", src.v, src.null);
                        (Some(code), Some(copy))
                    }
                    code => (code, None),
                },
                _ => (None, None),
            };
            columns.push(ProjectedColumn { value, ty: e.ty(), deferred_load, dictionary_code });
        }
        k.body().open("if (active)");
        let computed: Vec<&Expr> =
            exprs.iter().zip(&columns).filter(|(_, c)| c.deferred_load.is_none()).map(|(e, _)| e).collect();
        k.load_columns(&computed);
        for (e, c) in exprs.iter().zip(&columns) {
            if c.deferred_load.is_none() {
                let x = k.eval(e)?;
                k.body().line(format!("{} = {}; {} = {};", c.value.v, x.v, c.value.null, x.null));
            }
        }
        k.body().close();
        k.replace_row(columns);
        Ok(())
    }
}
