//! The logical plan the binder produces and the optimizer rewrites.

use crate::expr::Expr;
use gpusql_common::{DataType, Field, Schema, TableSample, TableStatistics};
use std::fmt;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AggFunc {
    Sum,
    Count,
    Avg,
    Min,
    Max,
    /// The statistics aggregates: the binder plans them in two passes of the others
    /// (`sql/src/bind_aggregate.rs`), so no physical plan holds them.
    VarSamp,
    VarPop,
    StddevSamp,
    StddevPop,
    /// Of two arguments (y, x; `AggExpr::arg2` holds x), over the rows where both are not NULL.
    CovarPop,
    CovarSamp,
    Corr,
    /// arg_max / arg_min (arg, val; `AggExpr::arg2` holds val): arg of a row whose val is
    /// the group's largest (smallest), over the rows where both are not NULL; planned by
    /// the binder in two passes like the statistics.
    ArgMax,
    ArgMin,
    /// mode (x): the group's most frequent non-NULL x; planned by the binder as the
    /// arg_max of x over the counts of (group, x).
    Mode,
    /// quantile_cont / quantile_disc (x; `AggExpr::arg2` the fraction): planned by the
    /// binder over the group's sorted values (`sql/src/bind_quantile.rs`).
    QuantileCont,
    QuantileDisc,
    /// approx_count_distinct (x): DuckDB's HyperLogLog estimate, planned by the binder
    /// from the group's registers (`sql/src/bind_approx_count.rs`).
    ApproxCountDistinct,
    /// string_agg (x; `AggExpr::arg2` the separator, a VARCHAR literal; `AggExpr::order`
    /// its ORDER BY): the group's non-NULL x as text, joined by the separator in that
    /// order; planned by the binder over the group's sorted rows
    /// (`sql/src/bind_string_agg.rs`, `LogicalPlan::ConcatRuns`).
    StringAgg,
}

impl AggFunc {
    pub fn name(&self) -> &'static str {
        match self {
            AggFunc::Sum => "sum",
            AggFunc::Count => "count",
            AggFunc::Avg => "avg",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
            AggFunc::VarSamp => "var_samp",
            AggFunc::VarPop => "var_pop",
            AggFunc::StddevSamp => "stddev_samp",
            AggFunc::StddevPop => "stddev_pop",
            AggFunc::CovarPop => "covar_pop",
            AggFunc::CovarSamp => "covar_samp",
            AggFunc::Corr => "corr",
            AggFunc::ArgMax => "arg_max",
            AggFunc::ArgMin => "arg_min",
            AggFunc::Mode => "mode",
            AggFunc::QuantileCont => "quantile_cont",
            AggFunc::QuantileDisc => "quantile_disc",
            AggFunc::ApproxCountDistinct => "approx_count_distinct",
            AggFunc::StringAgg => "string_agg",
        }
    }

    pub fn is_statistic(&self) -> bool {
        matches!(self, AggFunc::VarSamp | AggFunc::VarPop | AggFunc::StddevSamp | AggFunc::StddevPop) || self.is_pair()
    }

    /// The statistics of two arguments.
    pub fn is_pair(&self) -> bool {
        matches!(self, AggFunc::CovarPop | AggFunc::CovarSamp | AggFunc::Corr)
    }

    pub fn is_arg_extreme(&self) -> bool {
        matches!(self, AggFunc::ArgMax | AggFunc::ArgMin)
    }

    /// The aggregates the binder plans from the others (`sql/src/bind_aggregate.rs`): no
    /// physical plan holds them.
    pub fn planned_by_binder(&self) -> bool {
        self.is_statistic()
            || self.is_arg_extreme()
            || self.is_quantile()
            || matches!(self, AggFunc::Mode | AggFunc::ApproxCountDistinct | AggFunc::StringAgg)
    }

    pub fn is_quantile(&self) -> bool {
        matches!(self, AggFunc::QuantileCont | AggFunc::QuantileDisc)
    }
}

/// An aggregate call as written in SQL. `arg` is None for COUNT(*).
#[derive(Debug, Clone, PartialEq)]
pub struct AggExpr {
    pub func: AggFunc,
    pub arg: Option<Expr>,
    /// The second argument of covar_pop / covar_samp / corr and arg_max / arg_min, and
    /// the fraction of quantile_cont / quantile_disc (a literal; negative: descending
    /// order); None for every other.
    pub arg2: Option<Expr>,
    pub ty: DataType,
    /// COUNT / SUM / AVG(DISTINCT arg): the binder plans it as two aggregations (distinct
    /// keys, then the aggregate), so the physical plan never sees it.
    pub distinct: bool,
    /// string_agg's ORDER BY (empty for every other aggregate).
    pub order: Vec<SortKey>,
}

impl AggExpr {
    /// Result type of an aggregate (DuckDB's rules, with SUM of integers as BIGINT).
    pub fn result_type(func: AggFunc, arg: Option<&DataType>) -> Option<DataType> {
        Some(match (func, arg) {
            (AggFunc::Count | AggFunc::ApproxCountDistinct, _) => DataType::Int64,
            (AggFunc::Sum, Some(DataType::Int32 | DataType::Int64)) => DataType::Int64,
            (AggFunc::Sum, Some(DataType::Decimal { scale, .. })) => DataType::decimal(38, *scale),
            (AggFunc::Sum, Some(DataType::Float64)) => DataType::Float64,
            (AggFunc::Avg, Some(t)) if t.is_numeric() => DataType::Float64,
            (f, Some(t)) if f.is_statistic() && t.is_numeric() => DataType::Float64,
            (AggFunc::Min | AggFunc::Max | AggFunc::ArgMax | AggFunc::ArgMin | AggFunc::Mode, Some(t)) => *t,
            _ => return None,
        })
    }
}

impl fmt::Display for AggExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.order.is_empty() {
            let keys: Vec<String> =
                self.order.iter().map(|k| format!("{}{}", k.expr, if k.asc { "" } else { " DESC" })).collect();
            let distinct = if self.distinct { "DISTINCT " } else { "" };
            let arg = self.arg.as_ref().map_or(String::new(), |a| a.to_string());
            let arg2 = self.arg2.as_ref().map_or(String::new(), |a| format!(", {a}"));
            return write!(f, "{}({distinct}{arg}{arg2} ORDER BY {})", self.func.name(), keys.join(", "));
        }
        match &self.arg {
            Some(a) if self.distinct => write!(f, "{}(DISTINCT {a})", self.func.name()),
            Some(a) if self.arg2.is_some() => {
                write!(f, "{}({a}, {})", self.func.name(), self.arg2.as_ref().map_or(String::new(), |x| x.to_string()))
            }
            Some(a) => write!(f, "{}({a})", self.func.name()),
            None => write!(f, "count(*)"),
        }
    }
}

/// The name of a mark join's BOOLEAN column.
pub const MARK_COLUMN: &str = "__mark";

/// What a join returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JoinKind {
    Inner,
    /// Probe rows with at least one match, once each (EXISTS, IN).
    Semi,
    /// Probe rows without a match; a NULL key matches nothing (NOT EXISTS; NOT IN over
    /// non-NULL columns).
    Anti,
    /// LEFT OUTER JOIN: every probe row; build columns NULL where there is no match.
    Left,
    /// Every probe row once, followed by one BOOLEAN column: whether it has a match (never
    /// NULL; the binder builds IN's three-valued answer from it). For IN / EXISTS under OR,
    /// NOT, CASE or in the select list.
    Mark,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SortKey {
    pub expr: Expr,
    pub asc: bool,
    pub nulls_first: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum LogicalPlan {
    /// Reads `projection` (indices into the table's columns) of a stored table; `rows` is
    /// the table's row count (for join ordering), `sample` some of its rows (selectivity),
    /// `statistics` its chunks' value ranges where its files have them, and `chunks` the
    /// chunks a filter can match (row-group pruning; None: all).
    Scan {
        table: String,
        table_schema: Schema,
        projection: Vec<usize>,
        rows: usize,
        sample: Option<TableSample>,
        statistics: Option<Arc<TableStatistics>>,
        chunks: Option<Arc<Vec<usize>>>,
    },
    /// Every row of `left` with every row of `right` (the binder's FROM list; the optimizer
    /// turns it into joins). Output: left columns, then right columns.
    CrossJoin {
        left: Box<LogicalPlan>,
        right: Box<LogicalPlan>,
    },
    /// Equi-join: `build` goes into a hash table, `probe` streams through it. Inner: probe
    /// columns, then build columns. Semi / anti: the probe rows with / without a match.
    /// `residual` (semi / anti only): a condition over the probe row followed by the build
    /// row that a key match must also satisfy to count (TPC-H Q21's `l2.l_suppkey <>
    /// l1.l_suppkey`).
    Join {
        probe: Box<LogicalPlan>,
        build: Box<LogicalPlan>,
        probe_keys: Vec<Expr>,
        build_keys: Vec<Expr>,
        kind: JoinKind,
        residual: Option<Expr>,
    },
    Filter {
        input: Box<LogicalPlan>,
        predicate: Expr,
    },
    Project {
        input: Box<LogicalPlan>,
        exprs: Vec<Expr>,
        names: Vec<String>,
    },
    /// Output: the group keys, then one column per aggregate.
    Aggregate {
        input: Box<LogicalPlan>,
        group_by: Vec<Expr>,
        group_names: Vec<String>,
        aggs: Vec<AggExpr>,
    },
    Sort {
        input: Box<LogicalPlan>,
        keys: Vec<SortKey>,
    },
    Limit {
        input: Box<LogicalPlan>,
        skip: usize,
        fetch: Option<usize>,
    },
    /// UNION ALL: the rows of every input, one after another. The inputs have the types
    /// of `schema` (the binder casts each arm to the set operation's column types);
    /// `schema` names the columns (after the first arm) and is nullable where any arm is.
    Union {
        inputs: Vec<LogicalPlan>,
        schema: Schema,
    },
    /// Each input row `times` times (a BIGINT expression; 0, negative or NULL: dropped):
    /// INTERSECT ALL and EXCEPT ALL repeat each distinct row by a count.
    Repeat {
        input: Box<LogicalPlan>,
        times: Expr,
    },
    /// The rows of `input` in its order (a Sort, possibly limited), each followed by its
    /// 0-based position in that order (BIGINT, `POSITION_COLUMN`); with `partition` k > 0
    /// (over an unlimited Sort) its position among the rows whose first k sort keys equal
    /// its own, so it restarts at 0 where they change: the binder's quantiles find a
    /// group's k-th value by it.
    Enumerate {
        input: Box<LogicalPlan>,
        partition: usize,
    },
    /// string_agg's concatenation. The rows of `input` (an Enumerate over a Sort with
    /// segments: in order, numbered within their groups) form runs, each from a row
    /// whose `position` is 0 to the next such row. Output, one row per run: the `keys`
    /// columns of its first row, then its `value` strings (VARCHAR) concatenated in order,
    /// `separator` before each non-NULL value whose position is not 0, NULLs adding
    /// nothing; NULL where the run's first value is NULL (the binder sorts a group's NULLs
    /// last, so that is where it has no non-NULL value).
    ConcatRuns {
        input: Box<LogicalPlan>,
        keys: Vec<usize>,
        value: usize,
        position: usize,
        separator: String,
    },
    /// Window functions (`crate::window`): every row of `input`, in no particular order,
    /// followed by one column per window expression.
    Window {
        input: Box<LogicalPlan>,
        windows: Vec<crate::window::WindowExpr>,
    },
}

/// The name of a ConcatRuns node's string column.
pub const CONCATENATED_COLUMN: &str = "__concatenated";

/// The name of an Enumerate node's position column.
pub const POSITION_COLUMN: &str = "__position";

impl LogicalPlan {
    /// A scan of every column of a catalog table.
    pub fn scan(info: gpusql_common::TableInfo) -> LogicalPlan {
        let n = info.schema.len();
        LogicalPlan::Scan {
            table: info.name,
            table_schema: info.schema,
            projection: (0..n).collect(),
            rows: info.row_count,
            sample: info.sample,
            statistics: info.statistics,
            chunks: None,
        }
    }

    pub fn schema(&self) -> Schema {
        match self {
            LogicalPlan::Scan { table_schema, projection, .. } => {
                Schema::new(projection.iter().map(|i| table_schema.fields[*i].clone()).collect())
            }
            LogicalPlan::Filter { input, .. }
            | LogicalPlan::Sort { input, .. }
            | LogicalPlan::Limit { input, .. }
            | LogicalPlan::Repeat { input, .. } => input.schema(),
            LogicalPlan::Union { schema, .. } => schema.clone(),
            LogicalPlan::Enumerate { input, .. } => {
                let mut f = input.schema().fields;
                f.push(Field::new(POSITION_COLUMN, DataType::Int64, false));
                Schema::new(f)
            }
            LogicalPlan::Window { input, windows } => {
                let mut f = input.schema().fields;
                f.extend(windows.iter().map(|w| Field::new(w.to_string(), w.ty, w.nullable())));
                Schema::new(f)
            }
            LogicalPlan::ConcatRuns { input, keys, .. } => {
                let s = input.schema();
                let mut f: Vec<Field> = keys.iter().map(|k| s.fields[*k].clone()).collect();
                f.push(Field::new(CONCATENATED_COLUMN, DataType::Utf8, true));
                Schema::new(f)
            }
            LogicalPlan::Join { probe, kind: JoinKind::Semi | JoinKind::Anti, .. } => probe.schema(),
            LogicalPlan::Join { probe, kind: JoinKind::Mark, .. } => {
                let mut f = probe.schema().fields;
                f.push(Field::new(MARK_COLUMN, DataType::Boolean, false));
                Schema::new(f)
            }
            LogicalPlan::CrossJoin { left: a, right: b } | LogicalPlan::Join { probe: a, build: b, .. } => {
                let left = matches!(self, LogicalPlan::Join { kind: JoinKind::Left, .. });
                let mut f = a.schema().fields;
                f.extend(b.schema().fields.into_iter().map(|mut x| {
                    x.nullable |= left;
                    x
                }));
                Schema::new(f)
            }
            LogicalPlan::Project { exprs, names, .. } => {
                Schema::new(exprs.iter().zip(names).map(|(e, n)| Field::new(n.clone(), e.ty(), e.nullable())).collect())
            }
            LogicalPlan::Aggregate { group_by, group_names, aggs, .. } => {
                let mut fields: Vec<Field> = group_by
                    .iter()
                    .zip(group_names)
                    .map(|(e, n)| Field::new(n.clone(), e.ty(), e.nullable()))
                    .collect();
                for a in aggs {
                    // COUNT is never NULL; the others are NULL over no (non-NULL) input.
                    fields.push(Field::new(a.to_string(), a.ty, a.func != AggFunc::Count));
                }
                Schema::new(fields)
            }
        }
    }

    /// Whether the plan yields exactly one row: an aggregate without GROUP BY (nor a
    /// HAVING filter, which could remove the row), under projections.
    pub fn yields_exactly_one_row(&self) -> bool {
        match self {
            LogicalPlan::Aggregate { group_by, .. } => group_by.is_empty(),
            // (SELECT without FROM.)
            LogicalPlan::Scan { table, .. } => table == gpusql_common::ONE_ROW_TABLE,
            LogicalPlan::CrossJoin { left, right } => left.yields_exactly_one_row() && right.yields_exactly_one_row(),
            LogicalPlan::Project { input, .. }
            | LogicalPlan::Sort { input, .. }
            | LogicalPlan::Enumerate { input, .. }
            | LogicalPlan::Window { input, .. } => input.yields_exactly_one_row(),
            LogicalPlan::Limit { input, skip: 0, fetch } => {
                fetch.is_none_or(|f| f > 0) && input.yields_exactly_one_row()
            }
            _ => false,
        }
    }

    /// The inputs of this node (two for joins).
    pub fn inputs(&self) -> Vec<&LogicalPlan> {
        match self {
            LogicalPlan::CrossJoin { left, right } => vec![left, right],
            LogicalPlan::Join { probe, build, .. } => vec![probe, build],
            LogicalPlan::Union { inputs, .. } => inputs.iter().collect(),
            other => other.input().into_iter().collect(),
        }
    }

    pub fn input(&self) -> Option<&LogicalPlan> {
        match self {
            LogicalPlan::Scan { .. }
            | LogicalPlan::CrossJoin { .. }
            | LogicalPlan::Join { .. }
            | LogicalPlan::Union { .. } => None,
            LogicalPlan::Filter { input, .. }
            | LogicalPlan::Repeat { input, .. }
            | LogicalPlan::Project { input, .. }
            | LogicalPlan::Aggregate { input, .. }
            | LogicalPlan::Sort { input, .. }
            | LogicalPlan::Enumerate { input, .. }
            | LogicalPlan::ConcatRuns { input, .. }
            | LogicalPlan::Window { input, .. }
            | LogicalPlan::Limit { input, .. } => Some(input),
        }
    }

    fn fmt_indent(&self, f: &mut fmt::Formatter<'_>, depth: usize) -> fmt::Result {
        let pad = "  ".repeat(depth);
        match self {
            LogicalPlan::CrossJoin { .. } => writeln!(f, "{pad}CrossJoin")?,
            LogicalPlan::Join { probe_keys, build_keys, kind, residual, .. } => {
                let k: Vec<String> = probe_keys.iter().zip(build_keys).map(|(p, b)| format!("{p} = {b}")).collect();
                let kind = match kind {
                    JoinKind::Inner => "",
                    JoinKind::Semi => " semi",
                    JoinKind::Anti => " anti",
                    JoinKind::Left => " left outer",
                    JoinKind::Mark => " mark",
                };
                let residual = residual.as_ref().map(|r| format!(" where {r}")).unwrap_or_default();
                writeln!(f, "{pad}HashJoin{kind} [{}]{residual} (probe, then build side)", k.join(", "))?
            }
            LogicalPlan::Scan { table, table_schema, projection, chunks, statistics, .. } => {
                let cols: Vec<&str> = projection.iter().map(|i| table_schema.fields[*i].name.as_str()).collect();
                let pruned = match (chunks, statistics) {
                    (Some(c), Some(s)) => format!(
                        " (row groups: {} of {} read, {} skipped by statistics)",
                        c.len(),
                        s.chunks.len(),
                        s.chunks.len() - c.len()
                    ),
                    _ => String::new(),
                };
                writeln!(f, "{pad}Scan {table} [{}]{pruned}", cols.join(", "))?
            }
            LogicalPlan::Filter { predicate, .. } => writeln!(f, "{pad}Filter {predicate}")?,
            LogicalPlan::Project { exprs, names, .. } => {
                let items: Vec<String> = exprs.iter().zip(names).map(|(e, n)| format!("{e} AS {n}")).collect();
                writeln!(f, "{pad}Project {}", items.join(", "))?
            }
            LogicalPlan::Aggregate { group_by, aggs, .. } => {
                let g: Vec<String> = group_by.iter().map(|e| e.to_string()).collect();
                let a: Vec<String> = aggs.iter().map(|e| e.to_string()).collect();
                writeln!(f, "{pad}Aggregate keys=[{}] aggs=[{}]", g.join(", "), a.join(", "))?
            }
            LogicalPlan::Sort { keys, .. } => {
                let k: Vec<String> =
                    keys.iter().map(|k| format!("{} {}", k.expr, if k.asc { "ASC" } else { "DESC" })).collect();
                writeln!(f, "{pad}Sort {}", k.join(", "))?
            }
            LogicalPlan::Limit { skip, fetch, .. } => writeln!(f, "{pad}Limit skip={skip} fetch={fetch:?}")?,
            LogicalPlan::Union { inputs, .. } => writeln!(f, "{pad}UnionAll ({} inputs)", inputs.len())?,
            LogicalPlan::Repeat { times, .. } => writeln!(f, "{pad}Repeat each row {times} times")?,
            LogicalPlan::Enumerate { partition: 0, .. } => writeln!(f, "{pad}Enumerate (each row's position)")?,
            LogicalPlan::Enumerate { partition, .. } => {
                writeln!(f, "{pad}Enumerate (each row's position among the rows of its first {partition} sort keys)")?
            }
            LogicalPlan::Window { windows, .. } => {
                let w: Vec<String> = windows.iter().map(|w| w.to_string()).collect();
                writeln!(f, "{pad}Window [{}]", w.join(", "))?
            }
            LogicalPlan::ConcatRuns { separator, .. } => writeln!(
                f,
                "{pad}ConcatRuns (each group's values in order, joined by '{}')",
                separator.replace('\'', "''")
            )?,
        }
        for i in self.inputs() {
            i.fmt_indent(f, depth + 1)?;
        }
        Ok(())
    }
}

impl fmt::Display for LogicalPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_indent(f, 0)
    }
}
