//! Chooses the string columns that scans read dictionary-encoded: those of the scanned
//! table with few distinct values for its rows (`gpusql_storage::string_dictionary`;
//! the catalog computes and keeps the dictionary on first use). A scan then loads a
//! 2-byte code per row and the value's `Str` record from the dictionary, whose equal
//! values share one pointer and carry their hash: grouping and joining on them never
//! reads their bytes.

use crate::physical::*;
use gpusql_common::{DataType, DictionaryCatalog};

/// Marks the dictionary-encoded string columns of every table scan (`on`: `SET
/// dictionary_strings`; off leaves every column in the offsets + bytes layout).
pub fn encode_string_columns(plan: &mut PhysicalPlan, catalog: &dyn DictionaryCatalog, on: bool) {
    for stage in &mut plan.stages {
        let Stage::Pipeline(p) = stage else { continue };
        p.dictionary_columns.clear();
        // (A scan of some row groups only reads plain columns: its encodings would be
        // built from every row group.)
        let Source::Table { table, columns, schema, kept: None } = &p.source else { continue };
        if !on {
            continue;
        }
        for (i, f) in schema.fields.iter().enumerate() {
            if f.ty != DataType::Utf8 {
                continue;
            }
            if let Some(values) = catalog.string_dictionary(table, columns[i]) {
                p.dictionary_columns.push(DictionaryColumn { source_column: i, values });
            }
        }
    }
}
