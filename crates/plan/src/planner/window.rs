//! Planning window functions: per window (PARTITION BY and ORDER BY) in turn, the rows
//! with the keys and the calls' arguments as columns are materialized, sorted by the
//! partition keys and then the order keys, sliced dense, and a `Stage::Window` computes
//! the calls of that window over them (its output keeps the rows in that order). A last
//! projection puts the calls' columns back in the order they were written.

use super::{column_expr, push_project, row_schema, Built, Planner};
use crate::expr::Expr;
use crate::logical::LogicalPlan;
use crate::physical::{SortColumn, Source, Stage, WindowCall};
use crate::window::WindowExpr;
use gpusql_common::{Field, Result, Schema};

impl Planner {
    pub(super) fn build_window(&mut self, input: &LogicalPlan, windows: &[WindowExpr]) -> Result<Built> {
        let (mut source, mut ops) = self.open(input)?;
        let width = input.schema().len();
        // Where each call's column is once all windows are computed: the windows' calls
        // follow the input columns in the order their windows are computed.
        let mut placed = vec![0; windows.len()];
        let mut done = vec![false; windows.len()];
        let mut next = width;
        for first in 0..windows.len() {
            if done[first] {
                continue;
            }
            let group: Vec<usize> = (first..windows.len())
                .filter(|j| *j == first || (!done[*j] && windows[*j].same_window(&windows[first])))
                .collect();
            let in_schema = row_schema(&source, &ops).clone();
            let have = in_schema.len();
            // The rows: their columns so far, the partition and order keys, the arguments.
            let mut exprs: Vec<Expr> = (0..have).map(|i| column_expr(&in_schema, i)).collect();
            let mut fields = in_schema.fields.clone();
            let add = |e: &Expr, exprs: &mut Vec<Expr>, fields: &mut Vec<Field>| {
                fields.push(Field::new(format!("__window{}", fields.len()), e.ty(), e.nullable()));
                exprs.push(e.clone());
                exprs.len() - 1
            };
            let w = &windows[first];
            let mut keys = vec![];
            for p in &w.partition_by {
                keys.push(SortColumn { column: add(p, &mut exprs, &mut fields), asc: true, nulls_first: true });
            }
            for o in &w.order_by {
                let column = add(&o.expr, &mut exprs, &mut fields);
                keys.push(SortColumn { column, asc: o.asc, nulls_first: o.nulls_first });
            }
            let mut calls = vec![];
            for j in &group {
                let c = &windows[*j];
                let args = c.args.iter().map(|a| add(a, &mut exprs, &mut fields)).collect();
                calls.push(WindowCall {
                    func: c.func,
                    args,
                    frame: c.frame.clone(),
                    ty: c.ty,
                    ignore_nulls: c.ignore_nulls,
                });
            }
            push_project(&mut ops, exprs, Schema::new(fields));
            let (id, schema) = self.materialize(source, ops);
            let sorted = if keys.is_empty() {
                id
            } else {
                let output = self.intermediate();
                self.stages.push(Stage::Sort {
                    input: id,
                    output,
                    keys: keys.clone(),
                    schema: schema.clone(),
                    limit: None,
                    segments: None,
                });
                let all = (0..schema.len()).collect();
                match self.slice(output, &schema, all, 0, None) {
                    (Source::Intermediate { id, .. }, _) => id,
                    _ => unreachable!("a slice is an intermediate"),
                }
            };
            // Output: the columns so far, then this window's calls.
            let mut out_fields = in_schema.fields.clone();
            for (c, j) in calls.iter().zip(&group) {
                out_fields.push(Field::new(format!("__window_call{j}"), c.ty, windows[*j].nullable()));
                placed[*j] = next;
                done[*j] = true;
                next += 1;
            }
            let out_schema = Schema::new(out_fields);
            let output = self.intermediate();
            self.stages.push(Stage::Window {
                input: sorted,
                output,
                keys,
                partition: w.partition_by.len(),
                calls,
                columns: (0..have).collect(),
                input_schema: schema,
                schema: out_schema.clone(),
            });
            source = Source::Intermediate { id: output, schema: out_schema };
            ops = vec![];
        }
        let schema = row_schema(&source, &ops).clone();
        let out: Vec<Expr> = (0..width).chain(placed).map(|i| column_expr(&schema, i)).collect();
        let out_schema = Schema::new(out.iter().map(|e| Field::new(e.to_string(), e.ty(), e.nullable())).collect());
        push_project(&mut ops, out, out_schema);
        Ok(Built::Open { source, ops })
    }
}
