//! The CPU twin of `Stage::Window`: each row's partition and peers found by comparing
//! neighbouring rows, then every call's value from its frame. Aggregates read their frame
//! as DuckDB's running and sliding frames do: exact sums of integers and decimals through
//! prefix sums, DOUBLE sums and MIN / MAX added in order over the frame (from the
//! partition's start where the frame starts there, which is DuckDB's running order).

use super::{compare_rows, Row};
use gpusql_common::{cancel::Ticker, DataType, Error, Result, ScalarValue, Schema};
use gpusql_plan::eval::eval;
use gpusql_plan::physical::{SortColumn, WindowCall};
use gpusql_plan::window::{frame_bounds, ntile, FrameBound, RowPlace, WindowFunc};
use gpusql_plan::{AggFunc, BinaryOp, Expr};
use std::cmp::Ordering;

/// The rows of `input` (sorted by `keys`), `columns` of each, then each call's value.
pub(super) fn window(
    input: &[Row],
    schema: &Schema,
    keys: &[SortColumn],
    partition: usize,
    calls: &[WindowCall],
    columns: &[usize],
    ticker: &Ticker<'_>,
) -> Result<Vec<Row>> {
    let places = places(input, keys, partition);
    let mut values: Vec<Vec<ScalarValue>> = Vec::with_capacity(calls.len());
    for call in calls {
        let arg_ty = call.args.first().map(|c| schema.fields[*c].ty);
        values.push(call_values(input, keys, partition, call, arg_ty, &places, ticker)?);
    }
    Ok(input
        .iter()
        .enumerate()
        .map(|(i, r)| columns.iter().map(|c| r[*c].clone()).chain(values.iter().map(|v| v[i].clone())).collect())
        .collect())
}

/// Each row's partition and peer group: a partition starts where the first `partition`
/// keys change, a peer group where any key does.
fn places(input: &[Row], keys: &[SortColumn], partition: usize) -> Vec<RowPlace> {
    let n = input.len();
    let mut part_start = vec![0; n];
    let mut peer_start = vec![0; n];
    for i in 0..n {
        let new_part = i == 0 || compare_rows(&input[i - 1], &input[i], &keys[..partition]) != Ordering::Equal;
        let new_peer = new_part || compare_rows(&input[i - 1], &input[i], keys) != Ordering::Equal;
        part_start[i] = if new_part { i } else { part_start[i - 1] };
        peer_start[i] = if new_peer { i } else { peer_start[i - 1] };
    }
    let mut places = vec![RowPlace { row: 0, partition: (0, 0), peers: (0, 0) }; n];
    let (mut part_end, mut peer_end) = (n, n);
    for i in (0..n).rev() {
        places[i] = RowPlace { row: i, partition: (part_start[i], part_end), peers: (peer_start[i], peer_end) };
        if part_start[i] == i {
            part_end = i;
        }
        if peer_start[i] == i {
            peer_end = i;
        }
    }
    places
}

fn int(v: &ScalarValue) -> Option<i64> {
    v.as_i128().and_then(|x| i64::try_from(x).ok())
}

fn call_values(
    input: &[Row],
    keys: &[SortColumn],
    partition: usize,
    call: &WindowCall,
    arg_ty: Option<DataType>,
    places: &[RowPlace],
    ticker: &Ticker<'_>,
) -> Result<Vec<ScalarValue>> {
    let arg = |k: usize, i: usize| call.args.get(k).map_or(ScalarValue::Null, |c| input[i][*c].clone());
    let frame_of = |p: &RowPlace| {
        let range = |b: &FrameBound, is_start: bool| range_bound(input, keys, partition, p, b, is_start);
        let (s, e) = frame_bounds(&call.frame, p, &range);
        (s, e.max(s))
    };
    // IGNORE NULLS: the non-NULL values before each row (the sorted rows' prefix count);
    // positions count those rows (`nth_non_null`).
    let non_null: Vec<usize> = match (call.ignore_nulls, call.args.first()) {
        (true, Some(&x)) => std::iter::once(0)
            .chain(input.iter().scan(0, |c, r| {
                *c += usize::from(!r[x].is_null());
                Some(*c)
            }))
            .collect(),
        _ => vec![],
    };
    let nth = |lo: usize, hi: usize, n: usize| nth_non_null(&non_null, lo, hi, n);
    let value_at = |j: Option<usize>| j.map_or(ScalarValue::Null, |j| input[j][call.args[0]].clone());
    let mut out = Vec::with_capacity(input.len());
    // (Running frames: the aggregate of the partition's rows so far, added in order.)
    let mut running: Option<(usize, usize, Accumulator)> = None;
    // The peer groups so far in the row's partition (dense_rank).
    let mut dense = 0i64;
    for p in places {
        ticker.tick()?;
        let (ps, pe) = p.partition;
        let rows = (pe - ps) as i64;
        let i = p.row;
        let v = match call.func {
            WindowFunc::RowNumber => ScalarValue::Int64((i - ps + 1) as i64),
            WindowFunc::Rank => ScalarValue::Int64((p.peers.0 - ps + 1) as i64),
            WindowFunc::DenseRank => {
                dense = if i == ps { 1 } else { dense + i64::from(p.peers.0 == i) };
                ScalarValue::Int64(dense)
            }
            WindowFunc::PercentRank => {
                let rank = (p.peers.0 - ps) as f64;
                ScalarValue::Float64(if rows > 1 { rank / (rows - 1) as f64 } else { 0.0 })
            }
            WindowFunc::CumeDist => ScalarValue::Float64((p.peers.1 - ps) as f64 / rows as f64),
            WindowFunc::Ntile => match int(&arg(0, i)) {
                None => ScalarValue::Null,
                Some(n) if n <= 0 => return Err(Error::exec(gpusql_plan::window::NTILE_ARGUMENT_ERROR)),
                Some(n) => ScalarValue::Int64(ntile(n, (i - ps) as i64, rows)),
            },
            WindowFunc::Lag | WindowFunc::Lead => {
                let offset = if call.args.len() > 1 { int(&arg(1, i)) } else { Some(1) };
                match offset {
                    None => ScalarValue::Null,
                    // The |o|-th non-NULL value before (lag) or after (lead) the row; at
                    // offset 0 the row's own.
                    Some(0) if call.ignore_nulls => arg(0, i),
                    Some(o) if call.ignore_nulls => {
                        let back = (call.func == WindowFunc::Lag) == (o > 0);
                        let k = o.unsigned_abs() as usize;
                        let found = if back {
                            let before = non_null[i] - non_null[ps];
                            (k <= before).then(|| nth(ps, i, before + 1 - k)).flatten()
                        } else {
                            nth(i + 1, pe, k)
                        };
                        match found {
                            Some(j) => value_at(Some(j)),
                            None => arg(2, i),
                        }
                    }
                    Some(o) => {
                        let j =
                            if call.func == WindowFunc::Lag { i as i128 - o as i128 } else { i as i128 + o as i128 };
                        if j >= ps as i128 && j < pe as i128 {
                            input[j as usize][call.args[0]].clone()
                        } else {
                            arg(2, i)
                        }
                    }
                }
            }
            WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue if call.ignore_nulls => {
                let (s, e) = frame_of(p);
                let n = match call.func {
                    WindowFunc::FirstValue => Some(1),
                    WindowFunc::LastValue => Some(non_null[e] - non_null[s]),
                    _ => int(&arg(1, i)).filter(|n| *n >= 1).map(|n| n as usize),
                };
                value_at(n.and_then(|n| nth(s, e, n)))
            }
            WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue => {
                let (s, e) = frame_of(p);
                let at = match call.func {
                    WindowFunc::FirstValue => Some(s),
                    WindowFunc::LastValue => e.checked_sub(1),
                    _ => int(&arg(1, i)).filter(|n| *n >= 1).map(|n| s.saturating_add(n as usize - 1)),
                };
                match at.filter(|j| *j >= s && *j < e) {
                    Some(j) => input[j][call.args[0]].clone(),
                    None => ScalarValue::Null,
                }
            }
            WindowFunc::Aggregate(f) => {
                let (s, e) = frame_of(p);
                let column = call.args.first().copied();
                let acc = if s == ps && e > s {
                    // Running from the partition's start: go on from the last row's sum.
                    let resume = matches!(&running, Some((rs, re, _)) if *rs == ps && *re <= e);
                    if !resume {
                        running = Some((ps, ps, Accumulator::new(f, call.ty, arg_ty)));
                    }
                    let (_, re, acc) = running.as_mut().expect("a running aggregate");
                    for row in &input[*re..e] {
                        acc.add(column.map_or(&ScalarValue::Int32(1), |c| &row[c]));
                    }
                    *re = e;
                    acc.clone()
                } else {
                    let mut acc = Accumulator::new(f, call.ty, arg_ty);
                    for row in input.get(s..e).unwrap_or_default() {
                        ticker.tick()?;
                        acc.add(column.map_or(&ScalarValue::Int32(1), |c| &row[c]));
                    }
                    acc
                };
                acc.finish()?
            }
        };
        out.push(v);
    }
    Ok(out)
}

/// The row of the `n`-th (from 1) non-NULL value among rows [lo, hi), given their prefix
/// count (`non_null[r]`: the non-NULL values before row r); None where there are fewer.
fn nth_non_null(non_null: &[usize], lo: usize, hi: usize, n: usize) -> Option<usize> {
    if n == 0 || hi <= lo || non_null[hi] - non_null[lo] < n {
        return None;
    }
    // The first row r whose count through it (non_null[r + 1]) reaches the target.
    let target = non_null[lo] + n;
    Some(lo + non_null[lo + 1..=hi].partition_point(|c| *c < target))
}

/// A RANGE frame's end at `bound` (`a PRECEDING` / `a FOLLOWING`) for the row at `p`: the
/// first row of the partition whose ORDER BY key is past the bound's value (for the start:
/// at or past it). A NULL key's frame is its peers (the NULLs).
fn range_bound(
    input: &[Row],
    keys: &[SortColumn],
    partition: usize,
    p: &RowPlace,
    bound: &FrameBound,
    is_start: bool,
) -> usize {
    let key = keys[partition];
    let value = &input[p.row][key.column];
    if value.is_null() {
        return if is_start { p.peers.0 } else { p.peers.1 };
    }
    let (offset, preceding) = match bound {
        FrameBound::Preceding(a) => (a, true),
        FrameBound::Following(a) => (a, false),
        _ => return if is_start { p.partition.0 } else { p.partition.1 },
    };
    // The bound's value: preceding is toward the start of the order (smaller ascending,
    // larger descending).
    let toward_smaller = preceding == key.asc;
    let Some(target) = shifted(value, offset, toward_smaller) else {
        // (Past the type's range: every non-NULL row or none.)
        return if toward_smaller == key.asc { non_null(input, key, p).0 } else { non_null(input, key, p).1 };
    };
    let (ns, ne) = non_null(input, key, p);
    // In the order's direction: rows before the target, then at it, then past it.
    let before = |j: usize| {
        let c = input[j][key.column].compare(&target);
        let c = if key.asc { c } else { c.reverse() };
        if is_start {
            c == Ordering::Less
        } else {
            c != Ordering::Greater
        }
    };
    ns + (ns..ne).collect::<Vec<_>>().partition_point(|j| before(*j))
}

/// The rows of `p`'s partition whose key is not NULL: [start, end).
fn non_null(input: &[Row], key: SortColumn, p: &RowPlace) -> (usize, usize) {
    let (ps, pe) = p.partition;
    let nulls = input[ps..pe].iter().filter(|r| r[key.column].is_null()).count();
    if key.nulls_first {
        (ps + nulls, pe)
    } else {
        (ps, pe - nulls)
    }
}

/// `v` moved by the non-negative `offset` down (`smaller`) or up; None past the type.
fn shifted(v: &ScalarValue, offset: &ScalarValue, smaller: bool) -> Option<ScalarValue> {
    use ScalarValue::*;
    match (v, offset) {
        (Float64(x), o) => {
            let o = o.as_f64(&DataType::Float64)?;
            Some(Float64(if smaller { x - o } else { x + o }))
        }
        (x, o) => {
            let (x, o) = (x.as_i128()?, o.as_i128()?);
            let y = if smaller { x.checked_sub(o)? } else { x.checked_add(o)? };
            Some(match v {
                Int32(_) => Int32(i32::try_from(y).ok()?),
                Int64(_) => Int64(i64::try_from(y).ok()?),
                Decimal(_) => Decimal(y),
                Date(_) => Date(i32::try_from(y).ok()?),
                Timestamp(_) => Timestamp(i64::try_from(y).ok()?),
                _ => return None,
            })
        }
    }
}

/// An aggregate over a frame's values, added in order.
#[derive(Clone)]
struct Accumulator {
    func: AggFunc,
    /// The result's type, and the argument's (None: COUNT(*)).
    ty: DataType,
    arg_ty: Option<DataType>,
    count: i64,
    /// SUM / AVG of integers and decimals, exact.
    exact: i128,
    double: f64,
    /// The variances' mean and sum of squared differences from it (Welford's update, as
    /// DuckDB adds a value; the GPU combines chunks' states as DuckDB combines states).
    mean: f64,
    m2: f64,
    /// MIN / MAX so far.
    best: Option<ScalarValue>,
}

impl Accumulator {
    fn new(func: AggFunc, ty: DataType, arg_ty: Option<DataType>) -> Accumulator {
        Accumulator { func, ty, arg_ty, count: 0, exact: 0, double: 0.0, mean: 0.0, m2: 0.0, best: None }
    }

    fn add(&mut self, v: &ScalarValue) {
        if v.is_null() {
            return;
        }
        self.count += 1;
        match v {
            ScalarValue::Float64(x) if self.func.is_statistic() => {
                let step = (x - self.mean) / self.count as f64;
                let mean = self.mean + step;
                self.m2 += (x - mean) * (x - self.mean);
                self.mean = mean;
            }
            ScalarValue::Float64(x) => self.double += x,
            other => {
                if let Some(x) = other.as_i128() {
                    self.exact = self.exact.wrapping_add(x);
                }
            }
        }
        let better = match (&self.best, self.func) {
            (None, _) => true,
            (Some(b), AggFunc::Min) => v.compare(b) == Ordering::Less,
            (Some(b), AggFunc::Max) => v.compare(b) == Ordering::Greater,
            _ => false,
        };
        if better && matches!(self.func, AggFunc::Min | AggFunc::Max) {
            self.best = Some(v.clone());
        }
    }

    /// The aggregate's value; NULL over no non-NULL value (COUNT: 0). SUM and AVG finish
    /// as the grouped aggregation's finalize step does (planner.rs: a DECIMAL(38) sum,
    /// cast to the result type; AVG as that sum over the count, in DOUBLE).
    fn finish(&self) -> Result<ScalarValue> {
        if self.func == AggFunc::Count {
            return Ok(ScalarValue::Int64(self.count));
        }
        if self.count == 0 {
            return Ok(ScalarValue::Null);
        }
        let lit = |v: ScalarValue, ty: DataType| Expr::literal(v, ty);
        let cast = |e: Expr, ty: DataType| Expr::Cast { expr: Box::new(e), ty };
        match self.func {
            AggFunc::Min | AggFunc::Max => Ok(self.best.clone().unwrap_or(ScalarValue::Null)),
            // (The samples: NULL over one value, as DuckDB.)
            AggFunc::VarSamp | AggFunc::StddevSamp if self.count < 2 => Ok(ScalarValue::Null),
            AggFunc::VarPop | AggFunc::VarSamp | AggFunc::StddevPop | AggFunc::StddevSamp => {
                let sample = matches!(self.func, AggFunc::VarSamp | AggFunc::StddevSamp);
                let moment = self.m2 / (self.count - i64::from(sample)) as f64;
                let sqrt = matches!(self.func, AggFunc::StddevPop | AggFunc::StddevSamp);
                Ok(ScalarValue::Float64(if sqrt { moment.sqrt() } else { moment }))
            }
            AggFunc::Sum if self.ty == DataType::Float64 => Ok(ScalarValue::Float64(self.double)),
            AggFunc::Sum => {
                let sum = lit(ScalarValue::Decimal(self.exact), DataType::decimal(38, self.ty.scale()));
                eval(&cast(sum, self.ty), &[])
            }
            AggFunc::Avg => {
                let count = cast(lit(ScalarValue::Int64(self.count), DataType::Int64), DataType::Float64);
                let sum = match self.arg_ty {
                    Some(DataType::Float64) => lit(ScalarValue::Float64(self.double), DataType::Float64),
                    t => {
                        let scale = t.map_or(0, |t| t.scale());
                        cast(lit(ScalarValue::Decimal(self.exact), DataType::decimal(38, scale)), DataType::Float64)
                    }
                };
                let div = Expr::Binary {
                    op: BinaryOp::Div,
                    left: Box::new(sum),
                    right: Box::new(count),
                    ty: DataType::Float64,
                };
                eval(&div, &[])
            }
            _ => Err(Error::plan(format!("{} as a window function", self.func.name()))),
        }
    }
}
