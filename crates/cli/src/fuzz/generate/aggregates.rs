//! The generator's aggregate calls: COUNT / SUM / AVG / MIN / MAX, the quantiles,
//! approx_count_distinct and string_agg.

use super::{Generator, Scope, Ty};

impl Generator<'_> {
    /// An aggregate call; `want` restricts its result type (Int: counts).
    pub(super) fn aggregate(&mut self, scope: &Scope, want: Option<Ty>) -> String {
        let numeric = |g: &mut Generator| -> Option<String> {
            let ty = if !scope.of_type(Ty::Dec).is_empty() && g.rng.chance(0.6) { Ty::Dec } else { Ty::Int };
            (!scope.of_type(ty).is_empty()).then(|| g.expr(scope, ty, 1))
        };
        let choice = match want {
            Some(Ty::Int) => self.rng.below(3),
            Some(Ty::Dec) => 5,
            Some(Ty::Str) if self.rng.chance(0.3) => 9,
            Some(Ty::Date | Ty::Str) => 6,
            _ => self.rng.below(10),
        };
        match choice {
            8 => self.quantile(scope),
            9 => self.string_agg(scope),
            0 => "COUNT(*)".into(),
            1 => {
                let ty = self.any_type(scope);
                format!("COUNT({})", self.expr(scope, ty, 1))
            }
            2 => {
                let ty = self.any_type(scope);
                format!("COUNT(DISTINCT {})", self.expr(scope, ty, 0))
            }
            3 | 4 => {
                let f = if choice == 3 { "SUM" } else { "AVG" };
                let distinct = if self.rng.chance(0.2) { "DISTINCT " } else { "" };
                numeric(self).map(|e| format!("{f}({distinct}{e})")).unwrap_or_else(|| "COUNT(*)".into())
            }
            5 if !scope.of_type(Ty::Dec).is_empty() => format!("SUM({})", self.expr(scope, Ty::Dec, 1)),
            _ => {
                let ty = match want {
                    Some(t) if !scope.of_type(t).is_empty() => t,
                    _ => self.any_type(scope),
                };
                let f = if self.rng.chance(0.5) { "MIN" } else { "MAX" };
                format!("{f}({})", self.expr(scope, ty, 1))
            }
        }
    }

    /// string_agg of an expression in an order that decides it: by the value itself, or by
    /// another expression and then the value (rows that tie on both join the same text).
    /// No DOUBLEs: DuckDB may order -0.0 and 0.0 either way, and their texts differ.
    fn string_agg(&mut self, scope: &Scope) -> String {
        let types: Vec<Ty> =
            [Ty::Int, Ty::Dec, Ty::Str, Ty::Date].into_iter().filter(|t| !scope.of_type(*t).is_empty()).collect();
        let ty = self.rng.pick(&types).copied().unwrap_or(Ty::Int);
        let x = self.expr(scope, ty, 1);
        const SEPARATORS: [&str; 5] = ["', '", "''", "'|'", "'é→'", "''''"];
        let sep =
            self.rng.pick(&SEPARATORS).filter(|_| self.rng.chance(0.8)).map_or(String::new(), |s| format!(", {s}"));
        let dir = |g: &mut Generator| {
            let desc = if g.rng.chance(0.3) { " DESC" } else { "" };
            let nulls = match g.rng.below(5) {
                0 => " NULLS FIRST",
                1 => " NULLS LAST",
                _ => "",
            };
            format!("{desc}{nulls}")
        };
        let f = *self.rng.pick(&["string_agg", "string_agg", "group_concat", "listagg"]).unwrap_or(&"string_agg");
        let by_x = dir(self);
        match self.rng.below(5) {
            0 => format!("{f}(DISTINCT {x}{sep} ORDER BY {x}{by_x})"),
            1 | 2 => {
                let mut others = types.clone();
                if !scope.of_type(Ty::Bool).is_empty() {
                    others.push(Ty::Bool);
                }
                let yty = self.rng.pick(&others).copied().unwrap_or(Ty::Int);
                let y = self.expr(scope, yty, 1);
                let by_y = dir(self);
                format!("{f}({x}{sep} ORDER BY {y}{by_y}, {x}{by_x})")
            }
            _ => format!("{f}({x}{sep} ORDER BY {x}{by_x})"),
        }
    }

    /// median, quantile_cont / quantile_disc, percentile_cont / percentile_disc (continuous
    /// ones of numbers and dates only) or approx_count_distinct of an expression. DOUBLEs get `+ 0.0`: DuckDB
    /// picks either of -0.0 and 0.0, which sort as equals.
    fn quantile(&mut self, scope: &Scope) -> String {
        let ty = self.any_type(scope);
        let mut x = self.expr(scope, ty, 1);
        if ty == Ty::Float {
            x = format!("({x}) + 0.0");
        }
        let fractions = ["0", "0.1", "0.25", "0.3", "0.5", "0.75", "0.9", "1", "-0.3", "0.5::DOUBLE", "0.99"];
        let q = self.rng.pick(&fractions).copied().unwrap_or("0.5");
        let blends = matches!(ty, Ty::Int | Ty::Dec | Ty::Float | Ty::Date);
        let distinct = if self.rng.chance(0.15) { "DISTINCT " } else { "" };
        match self.rng.below(5) {
            0 => format!("median({distinct}{x})"),
            4 => format!("approx_count_distinct({distinct}{x})"),
            1 if blends => format!("quantile_cont({distinct}{x}, {q})"),
            2 => {
                let desc = if self.rng.chance(0.3) { " DESC" } else { "" };
                let f = if blends && self.rng.chance(0.5) { "percentile_cont" } else { "percentile_disc" };
                format!("{f}({}) WITHIN GROUP (ORDER BY {x}{desc})", q.trim_start_matches('-'))
            }
            _ => format!("quantile_disc({distinct}{x}, {q})"),
        }
    }
}
