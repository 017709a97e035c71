//! A table's UNIQUE and PRIMARY KEY constraints (`UniqueKey`) enforced on the rows an
//! INSERT appends: each key's values of the table's rows are gathered (a scan per INSERT,
//! no index), then the new rows are checked in order against them and against the new
//! rows before them.

use crate::convert::value_at;
use crate::host::HostTable;
use arrow::array::{ArrayRef, BooleanArray};
use gpusql_common::semantics::f64_key_bits;
use gpusql_common::{Error, OnConflict, Result, ScalarValue, UniqueKey};
use std::collections::HashMap;

/// The new rows an INSERT keeps, and where it replaces rows of the table (`OR REPLACE`),
/// which of the table's rows stay, per chunk.
pub struct Checked {
    pub new: Vec<Vec<ArrayRef>>,
    pub kept_old: Option<Vec<BooleanArray>>,
}

/// Checks `new` (chunks of the table's columns) against `keys` of `table`.
pub fn check(table: &HostTable, keys: &[UniqueKey], new: Vec<Vec<ArrayRef>>, on: OnConflict) -> Result<Checked> {
    if keys.is_empty() {
        return Ok(Checked { new, kept_old: None });
    }
    if on != OnConflict::Error && keys.len() > 1 {
        return Err(Error::not_supported(format!(
            "INSERT OR {} into table {} of several UNIQUE / PRIMARY KEY constraints",
            if on == OnConflict::Replace { "REPLACE" } else { "IGNORE" },
            table.name
        )));
    }
    let mut keep_new: Vec<Vec<bool>> = new.iter().map(|c| vec![true; c.first().map_or(0, |a| a.len())]).collect();
    let mut keep_old: Vec<Vec<bool>> = (0..table.chunks()).map(|k| vec![true; table.chunk_rows(k)]).collect();
    for key in keys {
        let mut old: HashMap<Vec<u8>, (usize, usize)> = HashMap::new();
        for k in 0..table.chunks() {
            let columns = key.columns.iter().map(|&c| table.chunk(c, k).cloned()).collect::<Result<Vec<_>>>()?;
            for row in 0..table.chunk_rows(k) {
                if let Some(bytes) = key_bytes(table, key, &columns, row).0 {
                    old.insert(bytes, (k, row));
                }
            }
        }
        let mut seen = HashMap::new();
        for (k, chunk) in new.iter().enumerate() {
            let columns: Vec<ArrayRef> = key.columns.iter().map(|&c| chunk[c].clone()).collect();
            for row in 0..keep_new[k].len() {
                if !keep_new[k][row] {
                    continue;
                }
                let (Some(bytes), text) = key_bytes(table, key, &columns, row) else { continue };
                let clash = if seen.contains_key(&bytes) { Some(None) } else { old.get(&bytes).map(|at| Some(*at)) };
                match (clash, on) {
                    (None, _) => {}
                    (Some(_), OnConflict::Error) => {
                        let kind = if key.primary { "primary key" } else { "unique" };
                        return Err(Error::exec(format!(
                            "constraint error: duplicate key \"{text}\" violates {kind} constraint"
                        )));
                    }
                    (Some(Some((ok, orow))), OnConflict::Replace) => keep_old[ok][orow] = false,
                    (Some(_), _) => {
                        keep_new[k][row] = false;
                        continue;
                    }
                }
                seen.insert(bytes, ());
            }
        }
    }
    let new = new
        .into_iter()
        .zip(&keep_new)
        .map(|(chunk, keep)| {
            let mask = BooleanArray::from(keep.clone());
            chunk.iter().map(|a| Ok(arrow::compute::filter(a, &mask)?)).collect::<Result<Vec<_>>>()
        })
        .collect::<Result<_>>()?;
    let replaced = keep_old.iter().any(|c| c.contains(&false));
    Ok(Checked { new, kept_old: replaced.then(|| keep_old.into_iter().map(BooleanArray::from).collect()) })
}

/// A row's key as bytes (None where a key column is NULL: such rows never clash), and as
/// text for an error (`a: 1, b: 2`).
fn key_bytes(table: &HostTable, key: &UniqueKey, columns: &[ArrayRef], row: usize) -> (Option<Vec<u8>>, String) {
    let mut bytes = vec![];
    let mut text = vec![];
    for (&c, a) in key.columns.iter().zip(columns) {
        let field = &table.schema.fields[c];
        let v = value_at(a.as_ref(), &field.ty, row);
        match &v {
            ScalarValue::Null => return (None, String::new()),
            ScalarValue::Float64(f) => bytes.extend(f64_key_bits(*f).to_le_bytes()),
            ScalarValue::Utf8(s) => {
                bytes.extend((s.len() as u64).to_le_bytes());
                bytes.extend(s.as_bytes());
            }
            other => bytes.extend(other.as_i128().unwrap_or(0).to_le_bytes()),
        }
        text.push(format!("{}: {}", field.name, v.display(&field.ty)));
    }
    (Some(bytes), text.join(", "))
}
