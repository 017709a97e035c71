//! The probe of a band join (`gpusql_plan::band`): a HashProbe whose table is a sorted band
//! table. Two binary searches find the row's candidate range, a prefix of the rows sorted by
//! the lower bound's column and, within it, the rows from the first whose running maximum
//! of the upper bound's column reaches the row; the range is then walked as a key's
//! matches (the filter above an inner join, or the residual, decides each pair).

use super::hash_probe::HashProbe;
use crate::expr::gen;
use crate::kernel_builder::KernelBuilder;
use crate::spec::{BuildPart, Param, Part};
use crate::types::c_type;
use crate::value::Value;
use gpusql_common::{Error, Result};
use gpusql_plan::{BandSearch, Expr, JoinKind};

impl HashProbe<'_> {
    /// A band join's probe: binary searches leave the row's candidate range
    /// [`hp<b>_bb`, `hp<b>_be`) of the sorted band table; the rows visit it as a key's
    /// matches (the filter above or the residual decides each pair).
    pub(super) fn consume_band(&self, k: &mut KernelBuilder, band: &BandSearch) -> Result<()> {
        let (b, kind) = (self.build, self.kind);
        let bounds: Vec<&Expr> = band.conditions().collect();
        let shown: Vec<String> = bounds.iter().map(|c| k.show(c)).collect();
        let key = &self.build_schema.fields[band.key].name;
        k.body().line(format!(
            "// ---- BandProbe #{b} [{}]: binary searches of the rows sorted by {key} ----",
            shown.join(", ")
        ));
        let mut cols = vec![];
        bounds.iter().for_each(|c| c.columns(&mut cols));
        if cols.iter().any(|c| *c < k.width() && k.is_pending(*c)) {
            k.body().open("if (active)");
            k.load_columns(&bounds);
            k.body().close();
        }
        let counts = k.param(Param::Build { id: b, part: BuildPart::Counts }, "const uint32_t* __restrict__");
        let (beg, end) = (format!("hp{b}_bb"), format!("hp{b}_be"));
        k.body().line(format!("uint32_t {beg} = 0, {end} = 0;"));
        k.body().open("if (active)");
        k.body().line(format!("{end} = {counts}[0];"));
        if let Some(cond) = &band.below {
            k.body().line("// the rows whose lower bound the row reaches: a prefix");
            let column = BuildPart::Payload { column: band.key, part: Part::Values };
            self.binary_search(k, cond, band.key, column, [&beg, &end], true)?;
        }
        if let Some((m, cond)) = &band.above {
            let column = if *m == band.key {
                k.body().line("// the rows whose upper bound reaches the row: a suffix of the sorted rows");
                BuildPart::Payload { column: *m, part: Part::Values }
            } else {
                k.body().line(format!(
                    "// from the first row whose running maximum of {} reaches the row (none before it can)",
                    self.build_schema.fields[*m].name
                ));
                BuildPart::BandMax
            };
            self.binary_search(k, cond, *m, column, [&beg, &end], false)?;
        }
        k.body().close();
        let gid = format!("hp{b}_gid");
        k.body().line(format!("const int {gid} = {beg} < {end} ? 0 : -1;"));
        match kind {
            JoinKind::Inner | JoinKind::Left => {
                k.body().line(format!("active = active && {gid} >= 0;"));
                let (pos, matched) = self.expand(k, true);
                self.append_build_columns(k, &pos, &matched);
            }
            JoinKind::Semi | JoinKind::Anti | JoinKind::Mark => {}
        }
        let residual = self
            .residual
            .ok_or_else(|| Error::exec(format!("band probe #{b} of a {kind:?} join without its condition")));
        match kind {
            JoinKind::Semi | JoinKind::Anti | JoinKind::Mark => self.test_residual(k, residual?),
            _ => Ok(()),
        }
    }

    /// Narrows [`range[0]`, `range[1]`) to where `cond` (over the row and build column
    /// `column`, read from `part`) turns: with `prefix`, the end of the rows where it
    /// holds; else the first row where it holds (it holds from there on).
    fn binary_search(
        &self,
        k: &mut KernelBuilder,
        cond: &Expr,
        column: usize,
        part: BuildPart,
        range: [&str; 2],
        prefix: bool,
    ) -> Result<()> {
        let b = self.build;
        let [beg, end] = range;
        let ct = c_type(&self.build_schema.fields[column].ty);
        let values = k.param(Param::Build { id: b, part }, &format!("const {ct}* __restrict__"));
        let width = k.width();
        let mut row = k.row().to_vec();
        row.extend(self.build_schema.fields.iter().map(|_| Value::not_null("0")));
        row[width + column] = Value::not_null("v_");
        k.body().open("");
        k.body().line(format!("uint32_t lo_ = {beg}, hi_ = {end};"));
        k.body().open("while (lo_ < hi_)");
        k.body().line("const uint32_t mid_ = lo_ + ((hi_ - lo_) >> 1);");
        k.body().line(format!("const {ct} v_ = {values}[mid_];"));
        let r = gen(cond, &row, k.body())?;
        let holds = format!("!({}) && ({})", r.null, r.v);
        let go_right = if prefix { holds } else { format!("!({holds})") };
        k.body().line(format!("if ({go_right}) lo_ = mid_ + 1; else hi_ = mid_;"));
        k.body().close();
        k.body().line(format!("{} = lo_;", if prefix { end } else { beg }));
        k.body().close();
        Ok(())
    }
}
