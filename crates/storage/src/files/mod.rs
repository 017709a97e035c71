//! Files as tables: Parquet (decoded lazily, column chunk by column chunk, with row-group
//! statistics), CSV (arrow-csv, decoded when opened, in parallel where the file has no
//! quoted fields) and Arrow IPC / Feather. Decoding is the arrow-rs crates' work; this
//! module finds the files, checks that the parts of a glob agree, and maps their types
//! to the engine's.

mod arrow_ipc;
mod csv;
mod parquet;
pub mod write;

use crate::host::HostTable;
use gpusql_common::{DataType, Error, Field, FileFormat, FileScan, Result};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The files a scan reads, each with its size and modification time when it was opened:
/// a table opened from files is opened anew once they change.
#[derive(Debug, Clone, PartialEq)]
pub struct FileStamp(Vec<(PathBuf, u64, Option<SystemTime>)>);

/// The files of `scan`, as they are now.
pub fn stamp(scan: &FileScan) -> Result<FileStamp> {
    let paths = resolve(scan)?;
    let mut out = vec![];
    for p in paths {
        let m = std::fs::metadata(&p).map_err(|e| io_error(&p, e))?;
        out.push((p, m.len(), m.modified().ok()));
    }
    Ok(FileStamp(out))
}

/// Opens the files of `scan` as table `name`.
pub fn open(scan: &FileScan, name: String, version: u64) -> Result<(FileStamp, HostTable)> {
    let stamp = stamp(scan)?;
    let paths: Vec<PathBuf> = stamp.0.iter().map(|(p, _, _)| p.clone()).collect();
    let start = std::time::Instant::now();
    let table = match scan.format {
        FileFormat::Parquet => parquet::open(&paths, name, version)?,
        FileFormat::Csv => csv::open(&paths, &scan.csv, name, version)?,
        FileFormat::Arrow => arrow_ipc::open(&paths, name, version)?,
    };
    tracing::info!(
        "opened {} ({} files, {} rows) in {:.0} ms",
        table.name,
        paths.len(),
        table.rows,
        start.elapsed().as_secs_f64() * 1e3
    );
    Ok((stamp, table))
}

/// The files a scan's paths name: globs expanded (sorted), a directory read as the
/// files in it of the scan's format. Missing files and patterns that match nothing are
/// errors.
pub fn resolve(scan: &FileScan) -> Result<Vec<PathBuf>> {
    let mut out = vec![];
    for pattern in &scan.paths {
        if pattern.contains(['*', '?', '[']) {
            let matches = glob::glob(pattern).map_err(|e| Error::Io(format!("bad file pattern '{pattern}': {e}")))?;
            let mut found: Vec<PathBuf> = matches.filter_map(|m| m.ok()).filter(|p| p.is_file()).collect();
            found.sort();
            if found.is_empty() {
                return Err(Error::Io(format!("no files match '{pattern}'")));
            }
            out.extend(found);
        } else {
            let p = PathBuf::from(pattern);
            if p.is_dir() {
                let mut found: Vec<PathBuf> = std::fs::read_dir(&p)
                    .map_err(|e| io_error(&p, e))?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|f| f.is_file() && f.to_str().and_then(FileFormat::from_path) == Some(scan.format))
                    .collect();
                found.sort();
                if found.is_empty() {
                    return Err(Error::Io(format!(
                        "directory '{pattern}' holds no {} files",
                        format_name(scan.format)
                    )));
                }
                out.extend(found);
            } else if !p.exists() {
                return Err(Error::Io(format!("file '{pattern}' does not exist")));
            } else {
                out.push(p);
            }
        }
    }
    if out.is_empty() {
        return Err(Error::Io("no files given".into()));
    }
    Ok(out)
}

pub fn format_name(f: FileFormat) -> &'static str {
    match f {
        FileFormat::Parquet => "Parquet",
        FileFormat::Csv => "CSV",
        FileFormat::Arrow => "Arrow IPC",
    }
}

pub(crate) fn io_error(p: &Path, e: impl std::fmt::Display) -> Error {
    Error::Io(format!("{}: {e}", p.display()))
}

/// How a file column's Arrow type maps to the engine's: the engine type, or None where
/// the engine cannot read it (the column is then left out, see `TableInfo::unsupported`).
pub(crate) fn engine_type(t: &arrow::datatypes::DataType) -> Option<DataType> {
    use arrow::datatypes::DataType as A;
    match t {
        A::Dictionary(_, v) => engine_type(v),
        A::Date64 => Some(DataType::Date),
        A::Decimal32(p, s) | A::Decimal64(p, s) if *s >= 0 => Some(DataType::decimal(*p, *s as u8)),
        A::Null => Some(DataType::Utf8),
        other => DataType::from_arrow(other),
    }
}

/// The columns of a file's Arrow schema the engine reads (index in the file, field) and
/// those it cannot (name, type).
pub(crate) struct FileColumns {
    pub read: Vec<(usize, Field)>,
    pub unsupported: Vec<(String, String)>,
}

pub(crate) fn file_columns(schema: &arrow::datatypes::Schema) -> FileColumns {
    let mut read = vec![];
    let mut unsupported = vec![];
    for (i, f) in schema.fields().iter().enumerate() {
        match engine_type(f.data_type()) {
            Some(ty) => read.push((i, Field::new(f.name().clone(), ty, f.is_nullable()))),
            None => unsupported.push((f.name().clone(), f.data_type().to_string())),
        }
    }
    FileColumns { read, unsupported }
}

/// Fails where file `path`'s columns differ from the first file's (the parts of one
/// table must agree on names and types).
pub(crate) fn check_same_columns(first: &Path, a: &FileColumns, path: &Path, b: &FileColumns) -> Result<()> {
    let names = |c: &FileColumns| {
        c.read
            .iter()
            .map(|(_, f)| f.name.to_ascii_lowercase())
            .chain(c.unsupported.iter().map(|(n, _)| n.to_ascii_lowercase()))
            .collect::<Vec<_>>()
    };
    if names(a) != names(b) {
        return Err(Error::Io(format!(
            "files of one table must have the same columns: '{}' has ({}), '{}' has ({})",
            first.display(),
            names(a).join(", "),
            path.display(),
            names(b).join(", ")
        )));
    }
    for ((_, x), (_, y)) in a.read.iter().zip(&b.read) {
        if x.ty != y.ty {
            return Err(Error::Io(format!(
                "files of one table must have the same column types: column {} is {} in '{}' and {} in '{}'",
                x.name,
                x.ty,
                first.display(),
                y.ty,
                path.display()
            )));
        }
    }
    Ok(())
}
