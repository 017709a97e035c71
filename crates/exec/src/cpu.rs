//! CPU reference backend: runs the physical plan's stages row at a time with the shared
//! expression semantics (`gpusql_plan::eval`). Built to be obviously correct, not fast.

use crate::stats::ExecStats;
use arrow::datatypes::{Field as ArrowField, Schema as ArrowSchema};
use arrow::record_batch::RecordBatch;
use gpusql_common::semantics::f64_key_bits;
use gpusql_common::{CancelToken, DataType, Error, Result, ScalarValue, Schema, Ticker};
use gpusql_plan::eval::eval;
use gpusql_plan::{
    AggState, BandSearch, Expr, JoinKind, PhysicalPlan, Pipeline, PipelineOp, Sink, SortColumn, Source, Stage,
    StateFunc,
};
use gpusql_storage::convert::{build_array, value_at};
use gpusql_storage::TableStore;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

mod window;

type Row = Vec<ScalarValue>;

struct Rows {
    schema: Schema,
    rows: Vec<Row>,
    /// For a hash build: key -> indices into `rows`.
    index: HashMap<Key, Vec<usize>>,
    /// For a band table: the running maximum of its `max` column (`Stage::BandTable`).
    running_max: Vec<ScalarValue>,
    /// For a Sort with `segments`: each row's position within its group.
    positions: Vec<i64>,
}

impl Rows {
    fn new(schema: &Schema, rows: Vec<Row>) -> Rows {
        Rows { schema: schema.clone(), rows, index: HashMap::new(), running_max: vec![], positions: vec![] }
    }
}

/// How much of an intermediate its readers use: a Materialize sink keeps no more.
#[derive(Clone, PartialEq)]
enum Needed {
    All,
    /// The first n rows (a LIMIT without ORDER BY).
    First(usize),
    /// The first n rows in the order of these keys (the input of a top-N sort).
    Smallest(usize, Vec<SortColumn>),
}

pub fn execute(plan: &PhysicalPlan, tables: &TableStore) -> Result<(Vec<RecordBatch>, ExecStats)> {
    execute_cancellable(plan, tables, &CancelToken::new())
}

/// [`execute`], ending with `Error::Cancelled` soon after `cancel` is set: it is checked
/// before each stage and every `CHECK_EVERY` rows a pipeline reads or a join hands on.
pub fn execute_cancellable(
    plan: &PhysicalPlan,
    tables: &TableStore,
    cancel: &CancelToken,
) -> Result<(Vec<RecordBatch>, ExecStats)> {
    let start = std::time::Instant::now();
    let needed = needed_rows(plan);
    let mut inter: HashMap<usize, Rows> = HashMap::new();
    let ticker = Ticker::new(cancel);
    for stage in &plan.stages {
        cancel.check()?;
        match stage {
            Stage::Pipeline(p) => {
                let needed = needed.get(&p.sink.id()).unwrap_or(&Needed::All);
                let out = run_pipeline(p, tables, &inter, needed, &ticker)?;
                inter.insert(p.sink.id(), out);
            }
            Stage::Sort { input, output, keys, schema, limit, segments } => {
                let mut rows = inter.get(input).map(|r| r.rows.clone()).unwrap_or_default();
                rows.sort_by(|a, b| compare_rows(a, b, keys));
                if let Some(n) = limit {
                    rows.truncate(*n);
                }
                let mut sorted = Rows::new(schema, rows);
                if let Some(k) = segments {
                    // A group of the first k keys starts where a row differs from the one before.
                    let mut at = 0i64;
                    for (i, r) in sorted.rows.iter().enumerate() {
                        let head = i == 0 || compare_rows(&sorted.rows[i - 1], r, &keys[..*k]) != Ordering::Equal;
                        at = if head { 0 } else { at + 1 };
                        sorted.positions.push(at);
                    }
                }
                inter.insert(*output, sorted);
            }
            Stage::Slice { input, output, columns, skip, fetch, position, schema } => {
                let all = inter.get(input).map(|r| r.rows.as_slice()).unwrap_or_default();
                let end = fetch.map_or(all.len(), |f| (skip + f).min(all.len()));
                let kept = inter.get(input).map(|r| r.positions.as_slice()).unwrap_or_default();
                let rows = all[(*skip).min(end)..end]
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        // (A Sort's positions within groups, or the row's among the sliced.)
                        let p = kept.get(skip + i).copied().unwrap_or(i as i64);
                        let at = position.then_some(ScalarValue::Int64(p));
                        columns.iter().map(|c| r[*c].clone()).chain(at).collect()
                    })
                    .collect();
                inter.insert(*output, Rows::new(schema, rows));
            }
            Stage::BandTable { input, output, max, schema, .. } => {
                let mut table = Rows::new(schema, inter.remove(input).map(|r| r.rows).unwrap_or_default());
                if let Some(m) = max {
                    let mut running: Option<ScalarValue> = None;
                    for r in &table.rows {
                        let v = &r[*m];
                        if running.as_ref().is_none_or(|x| v.compare(x) == Ordering::Greater) {
                            running = Some(v.clone());
                        }
                        table.running_max.extend(running.clone());
                    }
                }
                inter.insert(*output, table);
            }
            Stage::Concat { inputs, output, schema } => {
                let mut rows = vec![];
                for i in inputs {
                    rows.extend(inter.remove(i).ok_or_else(|| Error::exec("UNION ALL input missing"))?.rows);
                }
                inter.insert(*output, Rows::new(schema, rows));
            }
            Stage::Repeat { input, output, times, columns, schema } => {
                let mut rows = vec![];
                for r in inter.get(input).map(|r| r.rows.as_slice()).unwrap_or_default() {
                    let n = match r[*times] {
                        ScalarValue::Int64(n) => n.max(0) as usize,
                        _ => 0,
                    };
                    let row: Row = columns.iter().map(|c| r[*c].clone()).collect();
                    for _ in 0..n {
                        ticker.tick()?;
                        rows.push(row.clone());
                    }
                }
                inter.insert(*output, Rows::new(schema, rows));
            }
            Stage::Window { input, output, keys, partition, calls, columns, schema, .. } => {
                let data = inter.remove(input).ok_or_else(|| Error::exec("window input missing"))?;
                let rows = window::window(&data.rows, &data.schema, keys, *partition, calls, columns, &ticker)?;
                inter.insert(*output, Rows::new(schema, rows));
            }
            Stage::ConcatRuns { input, output, keys, value, position, separator, schema } => {
                let rows = concat_runs(
                    inter.get(input).map(|r| r.rows.as_slice()).unwrap_or_default(),
                    keys,
                    *value,
                    *position,
                    separator,
                    &ticker,
                )?;
                inter.insert(*output, Rows::new(schema, rows));
            }
        }
    }
    cancel.check()?;
    let result = inter.remove(&plan.result).ok_or_else(|| Error::exec("result intermediate missing"))?;
    let batches = to_batches(plan, &result)?;
    let stats =
        ExecStats { backend: "cpu".into(), total_ms: start.elapsed().as_secs_f64() * 1e3, ..Default::default() };
    Ok((batches, stats))
}

/// string_agg's runs (`Stage::ConcatRuns`): a run starts at each row whose `position` is
/// 0; its row is its first row's `keys`, then its values joined, the separator before each
/// non-NULL value at a position other than 0; NULL where the first value is.
fn concat_runs(
    input: &[Row],
    keys: &[usize],
    value: usize,
    position: usize,
    separator: &str,
    ticker: &Ticker<'_>,
) -> Result<Vec<Row>> {
    let mut out: Vec<Row> = vec![];
    // The current run's key values and its text so far (None: NULL).
    let mut run: Option<(Row, Option<String>)> = None;
    for r in input {
        ticker.tick()?;
        let text = match &r[value] {
            ScalarValue::Utf8(s) => Some(s.as_str()),
            _ => None,
        };
        if matches!(r[position], ScalarValue::Int64(0)) || run.is_none() {
            out.extend(run.take().map(|(mut row, s)| {
                row.push(s.map_or(ScalarValue::Null, ScalarValue::Utf8));
                row
            }));
            run = Some((keys.iter().map(|k| r[*k].clone()).collect(), text.map(str::to_string)));
        } else if let (Some((_, Some(s))), Some(t)) = (run.as_mut(), text) {
            s.push_str(separator);
            s.push_str(t);
        }
    }
    out.extend(run.map(|(mut row, s)| {
        row.push(s.map_or(ScalarValue::Null, ScalarValue::Utf8));
        row
    }));
    Ok(out)
}

/// What every intermediate's readers need of it (all rows unless each reader is a LIMIT
/// or a top-N sort).
fn needed_rows(plan: &PhysicalPlan) -> HashMap<usize, Needed> {
    let mut uses: Vec<(usize, Needed)> = vec![];
    let first =
        |skip: usize, fetch: Option<usize>| fetch.map_or(Needed::All, |f| Needed::First(skip.saturating_add(f)));
    uses.push((plan.result, first(plan.skip, plan.fetch)));
    for stage in &plan.stages {
        match stage {
            Stage::Pipeline(p) => {
                if let Source::Intermediate { id, .. } = &p.source {
                    uses.push((*id, Needed::All));
                }
                for op in &p.ops {
                    if let PipelineOp::HashProbe { build, .. } = op {
                        uses.push((*build, Needed::All));
                    }
                }
            }
            Stage::Sort { input, keys, limit, .. } => {
                uses.push((*input, limit.map_or(Needed::All, |n| Needed::Smallest(n, keys.clone()))))
            }
            Stage::Slice { input, skip, fetch, .. } => uses.push((*input, first(*skip, *fetch))),
            Stage::BandTable { input, .. } => uses.push((*input, Needed::All)),
            Stage::Concat { inputs, .. } => uses.extend(inputs.iter().map(|i| (*i, Needed::All))),
            Stage::Repeat { input, .. } | Stage::ConcatRuns { input, .. } | Stage::Window { input, .. } => {
                uses.push((*input, Needed::All))
            }
        }
    }
    let mut needed: HashMap<usize, Needed> = HashMap::new();
    for (id, n) in uses {
        needed
            .entry(id)
            .and_modify(|m| {
                if *m != n {
                    *m = Needed::All
                }
            })
            .or_insert(n);
    }
    needed
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

/// Calls `f` with each row of the source, in order, until it returns false.
fn for_each_source_row(
    source: &Source,
    tables: &TableStore,
    inter: &HashMap<usize, Rows>,
    f: &mut dyn FnMut(&[ScalarValue]) -> Result<bool>,
) -> Result<()> {
    match source {
        Source::Table { table, columns, schema, kept } => {
            let t = tables.get(table).ok_or_else(|| Error::plan(format!("unknown table '{table}'")))?;
            let chunks: Vec<usize> = match kept {
                Some(k) => k.chunks.to_vec(),
                None => (0..t.chunks()).collect(),
            };
            t.load(columns, Some(&chunks))?;
            let mut row = Vec::with_capacity(columns.len());
            for k in chunks {
                let arrays = columns.iter().map(|&c| t.chunk(c, k)).collect::<Result<Vec<_>>>()?;
                for r in 0..t.chunk_rows(k) {
                    row.clear();
                    row.extend(arrays.iter().zip(&schema.fields).map(|(a, f)| value_at(a.as_ref(), &f.ty, r)));
                    if !f(&row)? {
                        return Ok(());
                    }
                }
            }
            Ok(())
        }
        Source::Intermediate { id, .. } => {
            for r in inter.get(id).map(|r| r.rows.as_slice()).unwrap_or_default() {
                if !f(r)? {
                    break;
                }
            }
            Ok(())
        }
    }
}

/// A pipeline runs one source row at a time through its operators into the sink (as the
/// GPU's fused kernel does): a probe hands each joined row on before making the next, so
/// nothing between source and sink is held beyond the current row and memory is the
/// sink's (groups, a hash table, the materialized rows a reader needs).
fn run_pipeline(
    p: &Pipeline,
    tables: &TableStore,
    inter: &HashMap<usize, Rows>,
    needed: &Needed,
    ticker: &Ticker<'_>,
) -> Result<Rows> {
    let flow = Flow { ops: &p.ops, inter, unread_matches: unread_matches(p, inter), ticker };
    let mut sink = SinkState::new(&p.sink, needed);
    for_each_source_row(&p.source, tables, inter, &mut |row| {
        ticker.tick()?;
        push(&flow, 0, row, 1, &mut sink)
    })?;
    sink.finish(&p.sink)
}

/// What `push` needs of its pipeline.
struct Flow<'a> {
    ops: &'a [PipelineOp],
    inter: &'a HashMap<usize, Rows>,
    /// Per operator: an inner or left probe whose appended columns nothing after it reads.
    unread_matches: Vec<bool>,
    /// The statement's cancel flag, looked at now and then (one source row may join with
    /// millions of build rows).
    ticker: &'a Ticker<'a>,
}

/// For each operator, whether it is an inner or left join probe whose build columns no
/// later operator nor the sink reads: its matches then differ only in columns nobody
/// looks at, and it hands on one row weighing their count (a COUNT(*) over a join of
/// billions of matches takes as many steps as the probe has rows).
fn unread_matches(p: &Pipeline, inter: &HashMap<usize, Rows>) -> Vec<bool> {
    let mut width = p.source.schema().len();
    let mut out = vec![];
    for (i, op) in p.ops.iter().enumerate() {
        match op {
            PipelineOp::HashProbe { build, kind: JoinKind::Inner | JoinKind::Left, .. } => {
                let appended = inter.get(build).map_or(0, |b| b.schema.len());
                out.push(!reads_columns(&p.ops[i + 1..], &p.sink, width..width + appended));
                width += appended;
            }
            PipelineOp::Project { exprs, .. } => {
                out.push(false);
                width = exprs.len();
            }
            PipelineOp::HashProbe { kind: JoinKind::Mark, .. } => {
                out.push(false);
                width += 1;
            }
            _ => out.push(false),
        }
    }
    out
}

/// Whether `ops` or the sink read a column of `cols` of the row they are handed.
fn reads_columns(ops: &[PipelineOp], sink: &Sink, cols: std::ops::Range<usize>) -> bool {
    let reads = |e: &Expr| {
        let mut c = vec![];
        e.columns(&mut c);
        c.iter().any(|i| cols.contains(i))
    };
    for op in ops {
        match op {
            PipelineOp::Filter(plan) if plan.terms().any(reads) => return true,
            PipelineOp::Filter(_) | PipelineOp::LaneRefill { .. } => {}
            // (The projected row is all later operators see.)
            PipelineOp::Project { exprs, .. } => return exprs.iter().any(reads),
            PipelineOp::HashProbe { keys, residual, .. } if keys.iter().chain(residual).any(reads) => return true,
            PipelineOp::HashProbe { .. } => {}
        }
    }
    match sink {
        Sink::Aggregate { keys, states, .. } => {
            keys.iter().chain(states.iter().filter_map(|s| s.arg.as_ref())).any(reads)
        }
        Sink::Materialize { .. } | Sink::HashBuild { .. } => true,
    }
}

/// Runs `row`, standing for `weight` equal rows, through the operators from `at` on into
/// `sink`; false once the sink wants no more rows.
fn push(flow: &Flow, at: usize, row: &[ScalarValue], weight: u64, sink: &mut SinkState<'_>) -> Result<bool> {
    let Some(op) = flow.ops.get(at) else { return sink.add(row, weight) };
    match op {
        PipelineOp::Filter(plan) => {
            // The plan's order: a row leaves at its first term that is not TRUE (terms
            // after it, which the GPU may also skip, are not evaluated).
            for term in plan.terms() {
                if eval(term, row)? != ScalarValue::Boolean(true) {
                    return Ok(true);
                }
            }
            push(flow, at + 1, row, weight, sink)
        }
        // Only moves rows between GPU lanes.
        PipelineOp::LaneRefill { .. } => push(flow, at + 1, row, weight, sink),
        PipelineOp::Project { exprs, .. } => {
            let projected = exprs.iter().map(|e| eval(e, row)).collect::<Result<Row>>()?;
            push(flow, at + 1, &projected, weight, sink)
        }
        PipelineOp::HashProbe { build, keys, kind, residual, band, .. } => {
            let b = flow.inter.get(build).ok_or_else(|| Error::exec(format!("hash table #{build} missing")))?;
            let k = Key(keys.iter().map(|e| eval(e, row)).collect::<Result<Row>>()?);
            let band_rows: Vec<usize> = match band {
                Some(band) => band_range(band, row, b)?.collect(),
                None => vec![],
            };
            // NULL keys match nothing.
            let matches: &[usize] = if band.is_some() {
                &band_rows
            } else if k.0.iter().any(|v| v.is_null()) {
                &[]
            } else {
                b.index.get(&k).map_or(&[], |m| m.as_slice())
            };
            // The probe row followed by a build row (one buffer, refilled per match).
            let mut joined: Row = Vec::with_capacity(row.len() + b.schema.len());
            joined.extend_from_slice(row);
            let join = |joined: &mut Row, m: usize| {
                joined.truncate(row.len());
                joined.extend_from_slice(&b.rows[m]);
            };
            match kind {
                JoinKind::Semi | JoinKind::Anti | JoinKind::Mark => {
                    // A match counts only where the residual holds over both rows.
                    let mut found = false;
                    for &m in matches {
                        found = match residual {
                            None => true,
                            Some(cond) => {
                                join(&mut joined, m);
                                eval(cond, &joined)? == ScalarValue::Boolean(true)
                            }
                        };
                        if found {
                            break;
                        }
                    }
                    if *kind == JoinKind::Mark {
                        // Every row goes on, with whether it found a match.
                        let mut marked = row.to_vec();
                        marked.push(ScalarValue::Boolean(found));
                        push(flow, at + 1, &marked, weight, sink)
                    } else if found == (*kind == JoinKind::Semi) {
                        push(flow, at + 1, row, weight, sink)
                    } else {
                        Ok(true)
                    }
                }
                JoinKind::Inner | JoinKind::Left => {
                    if matches.is_empty() {
                        if *kind == JoinKind::Inner {
                            return Ok(true);
                        }
                        joined.extend(std::iter::repeat_n(ScalarValue::Null, b.schema.len()));
                        return push(flow, at + 1, &joined, weight, sink);
                    }
                    if flow.unread_matches[at] {
                        join(&mut joined, matches[0]);
                        return push(flow, at + 1, &joined, weight * matches.len() as u64, sink);
                    }
                    for &m in matches {
                        flow.ticker.tick()?;
                        join(&mut joined, m);
                        if !push(flow, at + 1, &joined, weight, sink)? {
                            return Ok(false);
                        }
                    }
                    Ok(true)
                }
            }
        }
    }
}

/// The band table rows probe row `row` can match (`gpusql_plan::band`): the prefix whose
/// key satisfies the lower bound, less the rows before the first whose running maximum
/// satisfies the upper bound. Binary searches, with each bound evaluated as SQL compares.
fn band_range(band: &BandSearch, row: &[ScalarValue], b: &Rows) -> Result<std::ops::Range<usize>> {
    let mut joined: Row = row.to_vec();
    joined.resize(row.len() + b.schema.len(), ScalarValue::Null);
    let mut holds = |cond: &Expr, column: usize, value: &ScalarValue| -> Result<bool> {
        joined[row.len() + column] = value.clone();
        Ok(eval(cond, &joined)? == ScalarValue::Boolean(true))
    };
    // The first index in [lo, hi) where `test` turns (false from there on, or true).
    let first = |lo: usize, hi: usize, test: &mut dyn FnMut(usize) -> Result<bool>| -> Result<usize> {
        let (mut lo, mut hi) = (lo, hi);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if test(mid)? {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    };
    let n = b.rows.len();
    let end = match &band.below {
        Some(c) => first(0, n, &mut |i| holds(c, band.key, &b.rows[i][band.key]))?,
        None => n,
    };
    let begin = match &band.above {
        Some((m, c)) if *m == band.key => first(0, end, &mut |i| Ok(!holds(c, *m, &b.rows[i][*m])?))?,
        Some((m, c)) => first(0, end, &mut |i| Ok(!holds(c, *m, &b.running_max[i])?))?,
        None => 0,
    };
    Ok(begin..end)
}

/// A sink's state while its pipeline runs.
enum SinkState<'a> {
    /// Rows in arrival order; `needed` says how many readers use (see `Needed`).
    Materialize {
        rows: Vec<Row>,
        needed: Needed,
    },
    Aggregate(Groups<'a>),
    HashBuild {
        keys: &'a [Expr],
        rows: Vec<Row>,
        index: HashMap<Key, Vec<usize>>,
    },
}

impl<'a> SinkState<'a> {
    fn new(sink: &'a Sink, needed: &Needed) -> SinkState<'a> {
        match sink {
            Sink::Materialize { .. } => SinkState::Materialize { rows: vec![], needed: needed.clone() },
            Sink::Aggregate { keys, states, .. } => SinkState::Aggregate(Groups::new(keys, states)),
            Sink::HashBuild { keys, .. } => SinkState::HashBuild { keys, rows: vec![], index: HashMap::new() },
        }
    }

    /// Takes `weight` copies of a row; false once no more rows are needed.
    fn add(&mut self, row: &[ScalarValue], weight: u64) -> Result<bool> {
        match self {
            SinkState::Materialize { rows, needed } => {
                for _ in 0..weight {
                    rows.push(row.to_vec());
                    match needed {
                        Needed::All => {}
                        Needed::First(n) if rows.len() >= *n => return Ok(false),
                        Needed::First(_) => {}
                        // A top-N keeps the n smallest rows so far, cut back whenever the
                        // rows reach twice that: a stable sort keeps earlier rows first
                        // among equal keys, so the n kept are those a sort of all would give.
                        Needed::Smallest(n, keys) => {
                            if rows.len() >= n.saturating_mul(2).max(1024) {
                                rows.sort_by(|a, b| compare_rows(a, b, keys));
                                rows.truncate(*n);
                            }
                        }
                    }
                }
                Ok(true)
            }
            SinkState::Aggregate(groups) => {
                groups.add(row, weight)?;
                Ok(true)
            }
            SinkState::HashBuild { keys, rows, index } => {
                let k = Key(keys.iter().map(|e| eval(e, row)).collect::<Result<Row>>()?);
                // NULL keys never match: leave the row out.
                if !k.0.iter().any(|v| v.is_null()) {
                    let positions = index.entry(k).or_default();
                    for _ in 0..weight {
                        positions.push(rows.len());
                        rows.push(row.to_vec());
                    }
                }
                Ok(true)
            }
        }
    }

    fn finish(self, sink: &Sink) -> Result<Rows> {
        Ok(match (self, sink) {
            (SinkState::Materialize { rows, .. }, Sink::Materialize { schema, .. }) => Rows::new(schema, rows),
            (SinkState::Aggregate(groups), Sink::Aggregate { schema, .. }) => Rows::new(schema, groups.finish()),
            (SinkState::HashBuild { rows, index, .. }, Sink::HashBuild { schema, .. }) => {
                Rows { index, ..Rows::new(schema, rows) }
            }
            _ => return Err(Error::exec("sink state of another kind")),
        })
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

/// Folds `weight` copies of the row's argument into `acc`.
fn update(acc: &mut Acc, s: &AggState, row: &[ScalarValue], weight: u64) -> Result<()> {
    let v = match &s.arg {
        None => ScalarValue::Int64(1),
        Some(e) => eval(e, row)?,
    };
    if v.is_null() {
        return Ok(());
    }
    match acc {
        Acc::SumInt(a) => {
            let add = v.as_i128().unwrap_or(0).checked_mul(weight as i128);
            *a = add.and_then(|x| a.checked_add(x)).ok_or_else(|| Error::exec("SUM out of range"))?
        }
        Acc::SumFloat(a) => {
            // One addition per copy: the same rounding as the rows one by one.
            let x = v.as_f64(&DataType::Float64).unwrap_or(0.0);
            for _ in 0..weight {
                *a += x;
            }
        }
        Acc::Count(c) => *c += weight as i64,
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

/// A group or join key, hashed and compared by value: DOUBLEs by bits with -0.0 folded
/// into 0.0 and every NaN one value (`semantics::f64_key_bits`, as the GPU), INTERVALs
/// by their normalized fields.
struct Key(Row);

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.0.len() == other.0.len()
            && self.0.iter().zip(&other.0).all(|(a, b)| match (a, b) {
                (ScalarValue::Float64(x), ScalarValue::Float64(y)) => f64_key_bits(*x) == f64_key_bits(*y),
                // (INTERVAL 1 DAY and INTERVAL 24 HOUR are one group.)
                (ScalarValue::Interval(x), ScalarValue::Interval(y)) => x.normalized() == y.normalized(),
                _ => a == b,
            })
    }
}

impl Eq for Key {}

impl Hash for Key {
    fn hash<H: Hasher>(&self, h: &mut H) {
        for v in &self.0 {
            std::mem::discriminant(v).hash(h);
            match v {
                ScalarValue::Null => {}
                ScalarValue::Boolean(b) => b.hash(h),
                ScalarValue::Int32(x) | ScalarValue::Date(x) => x.hash(h),
                ScalarValue::Int64(x) | ScalarValue::Timestamp(x) => x.hash(h),
                ScalarValue::Decimal(x) => x.hash(h),
                ScalarValue::Float64(f) => f64_key_bits(*f).hash(h),
                ScalarValue::Interval(iv) => iv.normalized().hash(h),
                ScalarValue::Utf8(s) => s.hash(h),
            }
        }
    }
}

/// A grouped (or global) aggregation's groups, folded in one row at a time.
struct Groups<'a> {
    keys: &'a [Expr],
    states: &'a [AggState],
    index: HashMap<Key, usize>,
    groups: Vec<(Row, Vec<Acc>)>,
}

impl<'a> Groups<'a> {
    fn new(keys: &'a [Expr], states: &'a [AggState]) -> Groups<'a> {
        let mut groups = vec![];
        if keys.is_empty() {
            // A global aggregate has its one group even over no rows.
            groups.push((vec![], states.iter().map(new_acc).collect()));
        }
        Groups { keys, states, index: HashMap::new(), groups }
    }

    /// Folds in `weight` copies of a row.
    fn add(&mut self, row: &[ScalarValue], weight: u64) -> Result<()> {
        let g = if self.keys.is_empty() {
            0
        } else {
            let k = Key(self.keys.iter().map(|e| eval(e, row)).collect::<Result<Row>>()?);
            match self.index.get(&k) {
                Some(g) => *g,
                None => {
                    self.groups.push((k.0.clone(), self.states.iter().map(new_acc).collect()));
                    self.index.insert(k, self.groups.len() - 1);
                    self.groups.len() - 1
                }
            }
        };
        for (acc, s) in self.groups[g].1.iter_mut().zip(self.states) {
            update(acc, s, row, weight)?;
        }
        Ok(())
    }

    /// The output rows: each group's key values, then its states.
    fn finish(self) -> Vec<Row> {
        self.groups
            .into_iter()
            .map(|(mut k, accs)| {
                k.extend(accs.into_iter().map(finish));
                k
            })
            .collect()
    }
}

/// The result rows as batches: one, or several where a string column's bytes would pass
/// an Arrow `Utf8` array's 2^31 (as the GPU backend cuts them).
fn to_batches(plan: &PhysicalPlan, result: &Rows) -> Result<Vec<RecordBatch>> {
    let end = plan.fetch.map_or(result.rows.len(), |f| (plan.skip + f).min(result.rows.len()));
    let rows = &result.rows[plan.skip.min(end)..end];
    let schema = Arc::new(ArrowSchema::new(
        plan.columns
            .iter()
            .zip(&plan.names)
            .map(|(c, name)| {
                ArrowField::new(name, result.schema.fields[*c].ty.to_arrow(), result.schema.fields[*c].nullable)
            })
            .collect::<Vec<_>>(),
    ));
    let string_bytes = |r: &Row| -> Vec<usize> {
        plan.columns.iter().map(|c| if let ScalarValue::Utf8(s) = &r[*c] { s.len() } else { 0 }).collect()
    };
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
        batches.push(RecordBatch::try_new_with_options(
            schema.clone(),
            arrays,
            &arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(part.len())),
        )?);
        start = end;
        if start >= rows.len() {
            return Ok(batches);
        }
    }
}
