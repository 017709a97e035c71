//! Scan: the source of a pipeline. Declares one variable pair per source column; a column
//! is loaded by the first operator that reads it, so filtered-out rows skip later loads.

use crate::kernel_builder::KernelBuilder;
use crate::spec::{Param, Part};
use crate::types::c_type;
use crate::value::Value;
use gpusql_plan::{Pipeline, Source};

/// How a source column is stored on the GPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StringLayout {
    /// Table string column: offsets + bytes.
    OffsetsBytes,
    /// Table string column, dictionary-encoded: codes + the dictionary's `Str` records.
    Dictionary,
    /// Intermediate: `Str` records.
    Records,
}

/// The source of pipeline `p`.
pub struct Scan<'a>(pub &'a Pipeline);

impl Scan<'_> {
    /// Declares the row: a variable (and NULL flag) per source column, each with the load
    /// its first reader emits.
    pub fn produce(&self, k: &mut KernelBuilder) {
        let p = self.0;
        let source = &p.source;
        let what = match source {
            // (A file scan's name is SQL text: keep it on the comment's one line.)
            Source::Table { table, .. } => format!("Scan {}", table.replace(['\n', '\r'], " ")),
            Source::Intermediate { id, .. } => format!("Scan intermediate #{id}"),
        };
        k.body().line(format!("// ---- {what} ----"));
        for (i, f) in source.schema().fields.iter().enumerate() {
            let layout = match source {
                Source::Table { .. } if p.dictionary_encoded(i) => StringLayout::Dictionary,
                Source::Table { .. } => StringLayout::OffsetsBytes,
                Source::Intermediate { .. } => StringLayout::Records,
            };
            let ct = c_type(&f.ty);
            let v = format!("c{i}");
            let null = if f.nullable { format!("c{i}_null") } else { "false".to_string() };
            k.body().line(format!("{ct} {v}{}; ", crate::types::c_init(ct)));
            if f.nullable {
                k.body().line(format!("bool {null} = true;"));
            }
            let mut prefetchable = None;
            let mut dictionary = None;
            let load = if ct == "Str" && layout == StringLayout::OffsetsBytes {
                let off = k.param(Param::Input { column: i, part: Part::Offsets }, "const int64_t* __restrict__");
                let bytes = k.param(Param::Input { column: i, part: Part::Bytes }, "const uint8_t* __restrict__");
                format!("{v} = load_str({off}, {bytes}, row);")
            } else if ct == "Str" && layout == StringLayout::Dictionary {
                let codes = k.param(Param::Input { column: i, part: Part::DictCodes }, "const uint16_t* __restrict__");
                let dict = k.param(Param::Input { column: i, part: Part::DictValues }, "const Str* __restrict__");
                let values = p.dictionary_columns.iter().find(|d| d.source_column == i).map_or(0, |d| d.values);
                dictionary = Some((format!("{codes}[row]"), values));
                format!("{v} = {dict}[{codes}[row]];  /* dictionary-encoded */")
            } else {
                let p = k.param(Param::Input { column: i, part: Part::Values }, &format!("const {ct}* __restrict__"));
                if !f.nullable && ct != "Str" {
                    prefetchable = Some((v.clone(), p.clone(), ct));
                }
                format!("{v} = {p}[row];")
            };
            let load = if f.nullable {
                let valid = k.param(Param::Input { column: i, part: Part::Validity }, "const uint8_t* __restrict__");
                format!("{null} = {valid}[row] == 0; if (!{null}) {{ {load} }}")
            } else {
                load
            };
            let pivot = (ct == "Str" && layout == StringLayout::OffsetsBytes).then_some(i);
            k.push_loaded_column(Value { v, null }, f.ty, load, pivot, prefetchable);
            if let Some((code, values)) = dictionary {
                k.set_dictionary_code(code, values);
            }
        }
    }
}
