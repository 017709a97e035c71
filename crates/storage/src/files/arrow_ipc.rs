//! Arrow IPC files (Feather version 2), and Arrow IPC streams: each record batch a
//! chunk, read when the file is opened (the format is the engine's own in-memory one:
//! decoding is a copy).

use super::{check_same_columns, file_columns, io_error, FileColumns};
use crate::convert::normalize_array;
use crate::host::HostTable;
use arrow::array::ArrayRef;
use arrow::record_batch::RecordBatch;
use gpusql_common::{Error, Field, Result, Schema};
use std::io::{Read, Seek};
use std::path::PathBuf;

pub fn open(paths: &[PathBuf], name: String, version: u64) -> Result<HostTable> {
    let mut first: Option<FileColumns> = None;
    let mut chunks: Vec<Vec<ArrayRef>> = vec![];
    for p in paths {
        let size = std::fs::metadata(p).map_err(|e| io_error(p, e))?.len();
        crate::host::check_memory(size, &p.display().to_string())?;
        let (schema, batches) = read(p)?;
        let cols = file_columns(&schema);
        if let Some(f) = &first {
            check_same_columns(&paths[0], f, p, &cols)?;
        }
        for b in batches.iter().filter(|b| b.num_rows() > 0) {
            chunks.push(cols.read.iter().map(|(i, f)| normalize_array(b.column(*i), &f.ty)).collect::<Result<_>>()?);
        }
        first.get_or_insert(cols);
    }
    let cols = first.ok_or_else(|| Error::Io("no files given".into()))?;
    let fields: Vec<Field> = cols
        .read
        .iter()
        .enumerate()
        .map(|(c, (_, f))| Field {
            nullable: f.nullable || chunks.iter().any(|ch| ch[c].null_count() > 0),
            ..f.clone()
        })
        .collect();
    let mut t = HostTable::in_memory(name, Schema::new(fields), chunks, version)?;
    t.unsupported = cols.unsupported;
    Ok(t)
}

/// The batches of an IPC file, or of an IPC stream where the file has no file footer.
fn read(p: &PathBuf) -> Result<(arrow::datatypes::Schema, Vec<RecordBatch>)> {
    let mut file = std::fs::File::open(p).map_err(|e| io_error(p, e))?;
    let mut magic = [0u8; 6];
    let is_file = file.read_exact(&mut magic).is_ok() && &magic == b"ARROW1";
    file.rewind().map_err(|e| io_error(p, e))?;
    let fail = |e: arrow::error::ArrowError| io_error(p, format!("not a readable Arrow IPC file ({e})"));
    if is_file {
        let r = arrow::ipc::reader::FileReader::try_new(std::io::BufReader::new(file), None).map_err(fail)?;
        let schema = r.schema().as_ref().clone();
        let batches = r.collect::<std::result::Result<Vec<_>, _>>().map_err(fail)?;
        Ok((schema, batches))
    } else {
        let r = arrow::ipc::reader::StreamReader::try_new(std::io::BufReader::new(file), None).map_err(fail)?;
        let schema = r.schema().as_ref().clone();
        let batches = r.collect::<std::result::Result<Vec<_>, _>>().map_err(fail)?;
        Ok((schema, batches))
    }
}
