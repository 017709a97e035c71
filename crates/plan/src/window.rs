//! Window functions: what a `LogicalPlan::Window` computes, and the frame rules both
//! backends follow (`frame_bounds`, `Frame`). A window's rows are its input's, sorted by
//! its PARTITION BY keys and then its ORDER BY keys; each function's value at a row reads
//! the row's partition, its peers (the rows whose ORDER BY keys equal its own) and its
//! frame, as DuckDB defines them.

use crate::expr::Expr;
use crate::logical::{AggFunc, SortKey};
use gpusql_common::{DataType, ScalarValue};
use std::fmt;

/// A window function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WindowFunc {
    RowNumber,
    Rank,
    DenseRank,
    /// (rank - 1) / (partition rows - 1), 0 for a partition of one row (DOUBLE).
    PercentRank,
    /// Rows up to the current row's last peer / partition rows (DOUBLE).
    CumeDist,
    /// ntile(n): the bucket of n, earlier buckets one row larger where rows are left over.
    Ntile,
    /// lag / lead (x [, offset [, default]]): x of the row `offset` before / after, within
    /// the partition, else `default` (NULL).
    Lag,
    Lead,
    /// x of the frame's first / last / n-th row (NULL where the frame has none).
    FirstValue,
    LastValue,
    NthValue,
    /// An aggregate (SUM, COUNT, AVG, MIN, MAX; COUNT(*) without an argument) of the frame.
    Aggregate(AggFunc),
}

impl WindowFunc {
    pub fn name(&self) -> &'static str {
        match self {
            WindowFunc::RowNumber => "row_number",
            WindowFunc::Rank => "rank",
            WindowFunc::DenseRank => "dense_rank",
            WindowFunc::PercentRank => "percent_rank",
            WindowFunc::CumeDist => "cume_dist",
            WindowFunc::Ntile => "ntile",
            WindowFunc::Lag => "lag",
            WindowFunc::Lead => "lead",
            WindowFunc::FirstValue => "first_value",
            WindowFunc::LastValue => "last_value",
            WindowFunc::NthValue => "nth_value",
            WindowFunc::Aggregate(a) => a.name(),
        }
    }

    /// Whether the frame decides the value (the others read the partition and peers only).
    pub fn uses_frame(&self) -> bool {
        matches!(self, WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue | WindowFunc::Aggregate(_))
    }
}

/// The unit of a frame's offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameUnits {
    /// Rows before / after the current one.
    Rows,
    /// Values of the (one) ORDER BY key below / above the current row's; CURRENT ROW
    /// includes the row's peers.
    Range,
}

/// One end of a frame. Offsets are constants the binder checked: non-negative, of the
/// ORDER BY key's type for RANGE (BIGINT row counts for ROWS).
#[derive(Debug, Clone, PartialEq)]
pub enum FrameBound {
    UnboundedPreceding,
    Preceding(ScalarValue),
    CurrentRow,
    Following(ScalarValue),
    UnboundedFollowing,
}

impl fmt::Display for FrameBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameBound::UnboundedPreceding => write!(f, "UNBOUNDED PRECEDING"),
            FrameBound::Preceding(v) => write!(f, "{v} PRECEDING"),
            FrameBound::CurrentRow => write!(f, "CURRENT ROW"),
            FrameBound::Following(v) => write!(f, "{v} FOLLOWING"),
            FrameBound::UnboundedFollowing => write!(f, "UNBOUNDED FOLLOWING"),
        }
    }
}

/// A window frame: `units BETWEEN start AND end`.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub units: FrameUnits,
    pub start: FrameBound,
    pub end: FrameBound,
}

impl Frame {
    /// The frame of a window without a frame clause: with ORDER BY, the partition's rows
    /// up to the current row's last peer; without, the whole partition.
    pub fn default_for(ordered: bool) -> Frame {
        Frame {
            units: FrameUnits::Range,
            start: FrameBound::UnboundedPreceding,
            end: if ordered { FrameBound::CurrentRow } else { FrameBound::UnboundedFollowing },
        }
    }
}

impl fmt::Display for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let units = match self.units {
            FrameUnits::Rows => "ROWS",
            FrameUnits::Range => "RANGE",
        };
        write!(f, "{units} BETWEEN {} AND {}", self.start, self.end)
    }
}

/// One window function call: `func(args) OVER (PARTITION BY partition ORDER BY order
/// frame)`, over the window node's input columns.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowExpr {
    pub func: WindowFunc,
    /// The value (and, for lag / lead, the offset and default; ntile's and nth_value's
    /// count): expressions of the input row.
    pub args: Vec<Expr>,
    pub partition_by: Vec<Expr>,
    pub order_by: Vec<SortKey>,
    pub frame: Frame,
    pub ty: DataType,
    /// IGNORE NULLS (lag, lead, first_value, last_value, nth_value): the offsets and
    /// positions count the rows whose value is not NULL.
    pub ignore_nulls: bool,
}

impl WindowExpr {
    /// Whether two calls can share one sort: the same partition and order (compared as
    /// printed: a NaN literal is not `==` to itself).
    pub fn same_window(&self, other: &WindowExpr) -> bool {
        format!("{:?}{:?}", self.partition_by, self.order_by) == format!("{:?}{:?}", other.partition_by, other.order_by)
    }

    /// The call with `f` applied to each of its expressions.
    pub fn map_exprs(self, f: &dyn Fn(Expr) -> Expr) -> WindowExpr {
        WindowExpr {
            args: self.args.into_iter().map(f).collect(),
            partition_by: self.partition_by.into_iter().map(f).collect(),
            order_by: self.order_by.into_iter().map(|k| SortKey { expr: f(k.expr), ..k }).collect(),
            ..self
        }
    }

    pub fn nullable(&self) -> bool {
        !matches!(
            self.func,
            WindowFunc::RowNumber
                | WindowFunc::Rank
                | WindowFunc::DenseRank
                | WindowFunc::PercentRank
                | WindowFunc::CumeDist
                | WindowFunc::Aggregate(AggFunc::Count)
        )
    }
}

impl fmt::Display for WindowExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let args: Vec<String> = self.args.iter().map(|a| a.to_string()).collect();
        let args = if args.is_empty() && self.func == WindowFunc::Aggregate(AggFunc::Count) {
            "*".to_string()
        } else {
            args.join(", ")
        };
        let ignore = if self.ignore_nulls { " IGNORE NULLS" } else { "" };
        write!(f, "{}({args}{ignore}) OVER (", self.func.name())?;
        let mut parts = vec![];
        if !self.partition_by.is_empty() {
            let p: Vec<String> = self.partition_by.iter().map(|e| e.to_string()).collect();
            parts.push(format!("PARTITION BY {}", p.join(", ")));
        }
        if !self.order_by.is_empty() {
            let o: Vec<String> =
                self.order_by.iter().map(|k| format!("{}{}", k.expr, if k.asc { "" } else { " DESC" })).collect();
            parts.push(format!("ORDER BY {}", o.join(", ")));
        }
        if self.func.uses_frame() && self.frame != Frame::default_for(!self.order_by.is_empty()) {
            parts.push(self.frame.to_string());
        }
        write!(f, "{})", parts.join(" "))
    }
}

/// Where a row's partition and peers lie among the sorted rows: [start, end) each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowPlace {
    pub row: usize,
    pub partition: (usize, usize),
    pub peers: (usize, usize),
}

/// The frame [start, end) of the row at `place` (an empty frame has start >= end) for
/// ROWS frames and RANGE frames without offsets; RANGE offsets need the ORDER BY key's
/// values: `range_bound` finds those ends.
pub fn frame_bounds(
    frame: &Frame,
    place: &RowPlace,
    range_bound: &dyn Fn(&FrameBound, bool) -> usize,
) -> (usize, usize) {
    let (ps, pe) = place.partition;
    let i = place.row;
    let offset = |v: &ScalarValue| v.as_i128().unwrap_or(0).clamp(0, i64::MAX as i128) as usize;
    let start = match (&frame.start, frame.units) {
        (FrameBound::UnboundedPreceding, _) => ps,
        (FrameBound::CurrentRow, FrameUnits::Rows) => i,
        (FrameBound::CurrentRow, FrameUnits::Range) => place.peers.0,
        (FrameBound::Preceding(v), FrameUnits::Rows) => i.saturating_sub(offset(v)).max(ps),
        (FrameBound::Following(v), FrameUnits::Rows) => i.saturating_add(offset(v)).min(pe),
        (b @ (FrameBound::Preceding(_) | FrameBound::Following(_)), FrameUnits::Range) => range_bound(b, true),
        (FrameBound::UnboundedFollowing, _) => pe,
    };
    let end = match (&frame.end, frame.units) {
        (FrameBound::UnboundedFollowing, _) => pe,
        (FrameBound::CurrentRow, FrameUnits::Rows) => i + 1,
        (FrameBound::CurrentRow, FrameUnits::Range) => place.peers.1,
        (FrameBound::Preceding(v), FrameUnits::Rows) => (i + 1).saturating_sub(offset(v)).max(ps),
        (FrameBound::Following(v), FrameUnits::Rows) => i.saturating_add(offset(v)).saturating_add(1).min(pe),
        (b @ (FrameBound::Preceding(_) | FrameBound::Following(_)), FrameUnits::Range) => range_bound(b, false),
        (FrameBound::UnboundedPreceding, _) => ps,
    };
    (start, end)
}

/// DuckDB's error for ntile(n) with n below 1.
pub const NTILE_ARGUMENT_ERROR: &str = "Argument for ntile must be greater than zero";

/// ntile(n)'s bucket (1-based) of the row at 0-based `index` of a partition of `rows`
/// rows: rows / n to a bucket, the first rows % n buckets one more (DuckDB's).
pub fn ntile(n: i64, index: i64, rows: i64) -> i64 {
    let n = n.min(rows).max(1);
    let size = rows / n;
    let larger = rows % n;
    let in_larger = larger * (size + 1);
    if index < in_larger {
        index / (size + 1) + 1
    } else {
        larger + (index - in_larger) / size + 1
    }
}
