//! The generator's window functions. Rows that tie in a window's ORDER BY may come in any
//! order, so each call is one whose values ties cannot change: ranks, distributions and
//! aggregates over frames that hold a row's peers (RANGE, whole partitions); the row-order
//! ones (row_number, ntile, lag / lead, first / last / nth_value, with or without IGNORE
//! NULLS, ROWS frames) only where
//! the ORDER BY is every column in scope, and none of them DOUBLE (signed zeros tie but
//! print apart), so that rows that tie are the same row. No DOUBLE arguments either: a
//! running sum's rounding depends on the order the engine adds in.

use super::{Generator, Scope, Ty};

impl Generator<'_> {
    /// A window function call over `scope`'s rows, or over the groups of `groups` (their
    /// keys' SQL) where the SELECT aggregates.
    pub(super) fn window(&mut self, scope: &Scope, groups: Option<&[String]>) -> String {
        let exact = [Ty::Int, Ty::Dec, Ty::Str, Ty::Date];
        let present: Vec<Ty> = exact.into_iter().filter(|t| !scope.of_type(*t).is_empty()).collect();
        // A value the window may read: a group key or an aggregate where grouped.
        let value = |g: &mut Generator, ty: Ty| -> String {
            match groups {
                Some(keys) if !keys.is_empty() && g.rng.chance(0.5) => g.rng.pick(keys).cloned().unwrap_or_default(),
                Some(_) => g.aggregate(scope, Some(Ty::Int)),
                None => g.expr(scope, ty, 1),
            }
        };
        let pick = |g: &mut Generator| g.rng.pick(&present).copied().unwrap_or(Ty::Int);
        let partition: Vec<String> = (0..self.rng.below(3))
            .map(|_| {
                let ty = pick(self);
                value(self, ty)
            })
            .collect();
        // Every column in scope, none a DOUBLE: an order without ties between different rows.
        let total = groups.is_none() && scope.of_type(Ty::Float).is_empty() && self.rng.chance(0.4);
        let mut order: Vec<String> = vec![];
        if total {
            for c in scope.columns() {
                let dir = if self.rng.chance(0.3) { " DESC" } else { "" };
                order.push(format!("{}{dir}", c.sql));
            }
        } else {
            for _ in 0..self.rng.below(3) {
                let ty = pick(self);
                let dir = match self.rng.below(4) {
                    0 => " DESC",
                    1 => " NULLS FIRST",
                    2 => " DESC NULLS LAST",
                    _ => "",
                };
                order.push(format!("{}{dir}", value(self, ty)));
            }
        }
        let mut over = vec![];
        if !partition.is_empty() {
            over.push(format!("PARTITION BY {}", partition.join(", ")));
        }
        if !order.is_empty() {
            over.push(format!("ORDER BY {}", order.join(", ")));
        }
        let numeric = |g: &mut Generator| {
            let ty = if !scope.of_type(Ty::Dec).is_empty() && g.rng.chance(0.5) { Ty::Dec } else { Ty::Int };
            value(g, ty)
        };
        let call = match self.rng.below(if total { 14 } else { 9 }) {
            0 => "rank()".to_string(),
            1 => "dense_rank()".into(),
            2 => "percent_rank()".into(),
            3 => "cume_dist()".into(),
            4 => "count(*)".into(),
            5 => {
                let f = *self.rng.pick(&["sum", "avg"]).unwrap_or(&"sum");
                format!("{f}({})", numeric(self))
            }
            6 | 7 => {
                let f = *self.rng.pick(&["min", "max", "count"]).unwrap_or(&"max");
                let ty = pick(self);
                format!("{f}({})", value(self, ty))
            }
            8 => {
                // A RANGE frame with offsets: one integer ORDER BY key. (No offset 0:
                // DuckDB 2.0.1 ends `… AND 0 PRECEDING` at the row, not its last peer, where
                // the key is an aggregate or a constant BIGINT; this engine, as the standard
                // and DuckDB elsewhere, at the last peer.)
                // (Or a DATE key, moved by days: an integer or an INTERVAL of whole days.)
                let date = groups.is_none() && !scope.of_type(Ty::Date).is_empty() && self.rng.chance(0.3);
                let key = value(self, if date { Ty::Date } else { Ty::Int });
                let (a, b) = (1 + self.rng.below(3), 1 + self.rng.below(3));
                let (a, b) = match (date, self.rng.chance(0.5)) {
                    (true, true) => (format!("INTERVAL {a} DAY"), format!("INTERVAL {b} DAY")),
                    _ => (a.to_string(), b.to_string()),
                };
                over.retain(|o| o.starts_with("PARTITION"));
                let frame = match self.rng.below(3) {
                    0 => format!("RANGE BETWEEN {a} PRECEDING AND {b} FOLLOWING"),
                    1 => format!("RANGE BETWEEN UNBOUNDED PRECEDING AND {a} PRECEDING"),
                    _ => format!("RANGE BETWEEN {a} FOLLOWING AND UNBOUNDED FOLLOWING"),
                };
                let desc = if self.rng.chance(0.3) { " DESC" } else { "" };
                over.push(format!("ORDER BY {key}{desc} {frame}"));
                format!("sum({})", numeric(self))
            }
            // The row-order calls (the ORDER BY is total here).
            9 => "row_number()".into(),
            10 => format!("ntile({})", 1 + self.rng.below(5)),
            11 => {
                let f = *self.rng.pick(&["lag", "lead"]).unwrap_or(&"lag");
                let ty = pick(self);
                let v = value(self, ty);
                let nulls = self.null_treatment();
                match self.rng.below(3) {
                    0 => format!("{f}({v}{nulls})"),
                    1 => format!("{f}({v}, {}{nulls})", self.rng.below(4)),
                    _ => format!("{f}({v}, {}, {}{nulls})", self.rng.below(4), self.literal(scope, ty)),
                }
            }
            12 => {
                let f = *self.rng.pick(&["first_value", "last_value"]).unwrap_or(&"first_value");
                let ty = pick(self);
                let v = value(self, ty);
                format!("{f}({v}{})", self.null_treatment())
            }
            _ => {
                let (a, b) = (self.rng.below(4), self.rng.below(4));
                let frame = match self.rng.below(4) {
                    0 => format!("ROWS BETWEEN {a} PRECEDING AND {b} FOLLOWING"),
                    1 => format!("ROWS BETWEEN UNBOUNDED PRECEDING AND {a} FOLLOWING"),
                    2 => format!("ROWS BETWEEN {a} PRECEDING AND UNBOUNDED FOLLOWING"),
                    _ => format!("ROWS BETWEEN {a} FOLLOWING AND {} FOLLOWING", a + b),
                };
                if let Some(o) = over.last_mut() {
                    o.push_str(&format!(" {frame}"));
                }
                let f = *self.rng.pick(&["sum", "max", "min", "count", "nth_value"]).unwrap_or(&"sum");
                match f {
                    "sum" => format!("sum({})", numeric(self)),
                    "nth_value" => {
                        let ty = pick(self);
                        let v = value(self, ty);
                        format!("nth_value({v}, {}{})", 1 + self.rng.below(3), self.null_treatment())
                    }
                    _ => {
                        let ty = pick(self);
                        format!("{f}({})", value(self, ty))
                    }
                }
            }
        };
        format!("{call} OVER ({})", over.join(" "))
    }

    /// IGNORE NULLS (or RESPECT NULLS) at times, in DuckDB's spelling: in the arguments.
    fn null_treatment(&mut self) -> &'static str {
        match self.rng.below(6) {
            0 | 1 => " IGNORE NULLS",
            2 => " RESPECT NULLS",
            _ => "",
        }
    }
}
