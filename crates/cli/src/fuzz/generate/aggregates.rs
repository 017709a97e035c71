//! The generator's aggregate calls: COUNT / SUM / AVG / MIN / MAX, the quantiles and
//! approx_count_distinct.

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
            Some(Ty::Date | Ty::Str) => 6,
            _ => self.rng.below(9),
        };
        match choice {
            8 => self.quantile(scope),
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
