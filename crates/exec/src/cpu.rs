//! CPU reference backend: runs the physical plan's stages row at a time with the shared
//! expression semantics (`gpusql_plan::eval`). Built to be obviously correct, not fast.

use crate::stats::ExecStats;
use arrow::datatypes::{Field as ArrowField, Schema as ArrowSchema};
use arrow::record_batch::RecordBatch;
use gpusql_common::{DataType, Error, Result, ScalarValue, Schema};
use gpusql_plan::eval::eval;
use gpusql_plan::{AggState, JoinKind, PhysicalPlan, Pipeline, PipelineOp, Sink, SortColumn, Source, Stage, StateFunc};
use gpusql_storage::convert::{build_array, value_at};
use gpusql_storage::TableStore;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Arc;

type Row = Vec<ScalarValue>;

struct Rows {
    schema: Schema,
    rows: Vec<Row>,
    /// For a hash build: key -> indices into `rows`.
    index: HashMap<String, Vec<usize>>,
}

pub fn execute(plan: &PhysicalPlan, tables: &TableStore) -> Result<(Vec<RecordBatch>, ExecStats)> {
    let start = std::time::Instant::now();
    let mut inter: HashMap<usize, Rows> = HashMap::new();
    for stage in &plan.stages {
        match stage {
            Stage::Pipeline(p) => {
                let out = run_pipeline(p, tables, &inter)?;
                inter.insert(p.sink.id(), out);
            }
            Stage::Sort { input, output, keys, schema, limit } => {
                let mut rows = inter.get(input).map(|r| r.rows.clone()).unwrap_or_default();
                rows.sort_by(|a, b| compare_rows(a, b, keys));
                if let Some(n) = limit {
                    rows.truncate(*n);
                }
                inter.insert(*output, Rows { schema: schema.clone(), rows, index: HashMap::new() });
            }
            Stage::Slice { input, output, columns, skip, fetch, schema } => {
                let all = inter.get(input).map(|r| r.rows.as_slice()).unwrap_or_default();
                let end = fetch.map_or(all.len(), |f| (skip + f).min(all.len()));
                let rows = all[(*skip).min(end)..end].iter().map(|r| columns.iter().map(|c| r[*c].clone()).collect()).collect();
                inter.insert(*output, Rows { schema: schema.clone(), rows, index: HashMap::new() });
            }
        }
    }
    let result = inter.remove(&plan.result).ok_or_else(|| Error::exec("result intermediate missing"))?;
    let batches = to_batches(plan, &result)?;
    let stats = ExecStats { backend: "cpu".into(), total_ms: start.elapsed().as_secs_f64() * 1e3, ..Default::default() };
    Ok((batches, stats))
}

/// ORDER BY comparison; NULL placement per key.
fn compare_rows(a: &Row, b: &Row, keys: &[SortColumn]) -> Ordering {
    for k in keys {
        let (x, y) = (&a[k.column], &b[k.column]);
        let ord = match (x.is_null(), y.is_null()) {
            (true, true) => Ordering::Equal,
            (true, false) => return if k.nulls_first { Ordering::Less } else { Ordering::Greater },
            (false, true) => return if k.nulls_first { Ordering::Greater } else { Ordering::Less },
            _ => x.compare(y),
        };
        let ord = if k.asc { ord } else { ord.reverse() };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    Ordering::Equal
}

fn source_rows(source: &Source, tables: &TableStore, inter: &HashMap<usize, Rows>) -> Result<Vec<Row>> {
    match source {
        Source::Table { table, columns, schema, kept } => {
            let t = tables.get(table).ok_or_else(|| Error::plan(format!("unknown table '{table}'")))?;
            let chunks: Vec<usize> = match kept {
                Some(k) => k.chunks.to_vec(),
                None => (0..t.chunks()).collect(),
            };
            t.load(columns, Some(&chunks))?;
            let mut rows = Vec::with_capacity(chunks.iter().map(|&k| t.chunk_rows(k)).sum());
            for k in chunks {
                let arrays = columns.iter().map(|&c| t.chunk(c, k)).collect::<Result<Vec<_>>>()?;
                for r in 0..t.chunk_rows(k) {
                    rows.push(arrays.iter().zip(&schema.fields).map(|(a, f)| value_at(a.as_ref(), &f.ty, r)).collect());
                }
            }
            Ok(rows)
        }
        Source::Intermediate { id, .. } => Ok(inter.get(id).map(|r| r.rows.clone()).unwrap_or_default()),
    }
}

fn run_pipeline(p: &Pipeline, tables: &TableStore, inter: &HashMap<usize, Rows>) -> Result<Rows> {
    let mut rows = source_rows(&p.source, tables, inter)?;
    for op in &p.ops {
        rows = match op {
            PipelineOp::Filter(plan) => {
                // The plan's order: a row leaves at its first term that is not TRUE (terms
                // after it, which the GPU may also skip, are not evaluated).
                let mut kept = Vec::with_capacity(rows.len());
                'rows: for r in rows {
                    for term in plan.terms() {
                        if eval(term, &r)? != ScalarValue::Boolean(true) {
                            continue 'rows;
                        }
                    }
                    kept.push(r);
                }
                kept
            }
            // Only moves rows between GPU lanes.
            PipelineOp::LaneRefill { .. } => rows,
            PipelineOp::Project { exprs, .. } => {
                rows.iter().map(|r| exprs.iter().map(|e| eval(e, r)).collect::<Result<Row>>()).collect::<Result<Vec<_>>>()?
            }
            PipelineOp::HashProbe { build, keys, kind, residual, .. } => {
                let b = inter.get(build).ok_or_else(|| Error::exec(format!("hash table #{build} missing")))?;
                let mut out = vec![];
                for r in rows {
                    let k = keys.iter().map(|e| eval(e, &r)).collect::<Result<Row>>()?;
                    let null_key = k.iter().any(|v| v.is_null());
                    let matches = if null_key { None } else { b.index.get(&key_string(&k)) };
                    let found = match (matches, residual) {
                        (None, _) => false,
                        (Some(_), None) => true,
                        // A match counts only where the residual holds over both rows.
                        (Some(m), Some(cond)) => {
                            let mut any = false;
                            for i in m {
                                let mut joined = r.clone();
                                joined.extend(b.rows[*i].iter().cloned());
                                if eval(cond, &joined)? == ScalarValue::Boolean(true) {
                                    any = true;
                                    break;
                                }
                            }
                            any
                        }
                    };
                    match kind {
                        JoinKind::Semi => {
                            if found {
                                out.push(r);
                            }
                            continue;
                        }
                        JoinKind::Anti => {
                            if !found {
                                out.push(r);
                            }
                            continue;
                        }
                        JoinKind::Mark => {
                            let mut marked = r;
                            marked.push(ScalarValue::Boolean(found));
                            out.push(marked);
                            continue;
                        }
                        JoinKind::Left if !found => {
                            let mut joined = r.clone();
                            joined.extend(std::iter::repeat_n(ScalarValue::Null, b.schema.len()));
                            out.push(joined);
                            continue;
                        }
                        JoinKind::Inner | JoinKind::Left => {}
                    }
                    if null_key {
                        continue;
                    }
                    for m in b.index.get(&key_string(&k)).map(|v| v.as_slice()).unwrap_or(&[]) {
                        let mut joined = r.clone();
                        joined.extend(b.rows[*m].iter().cloned());
                        out.push(joined);
                    }
                }
                out
            }
        };
    }
    match &p.sink {
        Sink::Materialize { schema, .. } => Ok(Rows { schema: schema.clone(), rows, index: HashMap::new() }),
        Sink::Aggregate { keys, states, schema, .. } => aggregate(rows, keys, states, schema),
        Sink::HashBuild { keys, schema, .. } => {
            let mut index: HashMap<String, Vec<usize>> = HashMap::new();
            let mut kept = vec![];
            for r in rows {
                let k = keys.iter().map(|e| eval(e, &r)).collect::<Result<Row>>()?;
                // NULL keys never match: leave the row out.
                if k.iter().any(|v| v.is_null()) {
                    continue;
                }
                index.entry(key_string(&k)).or_default().push(kept.len());
                kept.push(r);
            }
            Ok(Rows { schema: schema.clone(), rows: kept, index })
        }
    }
}

/// Accumulator of one state.
#[derive(Clone)]
enum Acc {
    SumInt(i128),
    SumFloat(f64),
    Count(i64),
    Extreme(ScalarValue),
}

fn new_acc(s: &AggState) -> Acc {
    match (s.func, s.ty) {
        (StateFunc::Sum, DataType::Float64) => Acc::SumFloat(0.0),
        (StateFunc::Sum, _) => Acc::SumInt(0),
        (StateFunc::Count, _) => Acc::Count(0),
        _ => Acc::Extreme(ScalarValue::Null),
    }
}

fn update(acc: &mut Acc, s: &AggState, row: &Row) -> Result<()> {
    let v = match &s.arg {
        None => ScalarValue::Int64(1),
        Some(e) => eval(e, row)?,
    };
    if v.is_null() {
        return Ok(());
    }
    match acc {
        Acc::SumInt(a) => *a = a.checked_add(v.as_i128().unwrap_or(0)).ok_or_else(|| Error::exec("SUM out of range"))?,
        Acc::SumFloat(a) => *a += v.as_f64(&DataType::Float64).unwrap_or(0.0),
        Acc::Count(c) => *c += 1,
        Acc::Extreme(cur) => {
            let better = cur.is_null()
                || match s.func {
                    StateFunc::Min => v.compare(cur) == Ordering::Less,
                    _ => v.compare(cur) == Ordering::Greater,
                };
            if better {
                *cur = v;
            }
        }
    }
    Ok(())
}

fn finish(acc: Acc) -> ScalarValue {
    match acc {
        Acc::SumInt(a) => ScalarValue::Decimal(a),
        Acc::SumFloat(f) => ScalarValue::Float64(f),
        Acc::Count(c) => ScalarValue::Int64(c),
        Acc::Extreme(v) => v,
    }
}

/// Hashable form of a group key (floats by bits, -0.0 folded into 0.0 like the GPU).
fn key_string(k: &[ScalarValue]) -> String {
    k.iter()
        .map(|v| match v {
            ScalarValue::Float64(f) if *f == 0.0 => "F0".to_string(),
            other => format!("{other:?}"),
        })
        .collect::<Vec<_>>()
        .join("\u{1}")
}

fn aggregate(rows: Vec<Row>, keys: &[gpusql_plan::Expr], states: &[AggState], schema: &Schema) -> Result<Rows> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut groups: Vec<(Row, Vec<Acc>)> = vec![];
    if keys.is_empty() {
        groups.push((vec![], states.iter().map(new_acc).collect()));
    }
    for r in &rows {
        let k = keys.iter().map(|e| eval(e, r)).collect::<Result<Row>>()?;
        let g = if keys.is_empty() {
            0
        } else {
            *index.entry(key_string(&k)).or_insert_with(|| {
                groups.push((k.clone(), states.iter().map(new_acc).collect()));
                groups.len() - 1
            })
        };
        for (acc, s) in groups[g].1.iter_mut().zip(states) {
            update(acc, s, r)?;
        }
    }
    let rows = groups
        .into_iter()
        .map(|(mut k, accs)| {
            k.extend(accs.into_iter().map(finish));
            k
        })
        .collect();
    Ok(Rows { schema: schema.clone(), rows, index: HashMap::new() })
}

/// The result rows as batches: one, or several where a string column's bytes would pass
/// an Arrow `Utf8` array's 2^31 (as the GPU backend cuts them).
fn to_batches(plan: &PhysicalPlan, result: &Rows) -> Result<Vec<RecordBatch>> {
    let end = plan.fetch.map_or(result.rows.len(), |f| (plan.skip + f).min(result.rows.len()));
    let rows = &result.rows[plan.skip.min(end)..end];
    let schema = Arc::new(ArrowSchema::new(
        plan.columns.iter().zip(&plan.names).map(|(c, name)| ArrowField::new(name, result.schema.fields[*c].ty.to_arrow(), result.schema.fields[*c].nullable)).collect::<Vec<_>>(),
    ));
    let string_bytes = |r: &Row| -> Vec<usize> { plan.columns.iter().map(|c| if let ScalarValue::Utf8(s) = &r[*c] { s.len() } else { 0 }).collect() };
    let mut batches = vec![];
    let mut start = 0;
    loop {
        // As many rows as fit every string column's 2^31 - 1 bytes.
        let mut end = start;
        let mut bytes = vec![0usize; plan.columns.len()];
        while end < rows.len() {
            let add = string_bytes(&rows[end]);
            if end > start && bytes.iter().zip(&add).any(|(b, a)| b + a > i32::MAX as usize) {
                break;
            }
            bytes.iter_mut().zip(&add).for_each(|(b, a)| *b += a);
            end += 1;
        }
        let part = &rows[start..end];
        let mut arrays = vec![];
        for c in &plan.columns {
            let f = &result.schema.fields[*c];
            let values: Vec<ScalarValue> = part.iter().map(|r| r[*c].clone()).collect();
            arrays.push(build_array(&f.ty, &values)?);
        }
        batches.push(RecordBatch::try_new_with_options(schema.clone(), arrays, &arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(part.len())))?);
        start = end;
        if start >= rows.len() {
            return Ok(batches);
        }
    }
}
