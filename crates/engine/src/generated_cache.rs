//! Generated benchmark data kept on disk between runs. Generating TPC-H in-process costs a
//! fixed ~1 s whatever the scale factor (tpchgen first builds its 300 MB text pool, on
//! one core: SF 0.001 took as long as SF 0.1), which made `--tpch 0.1 -f q01.sql` wait a
//! second before its first query. Data sets up to `MAX_SF` are therefore written once as
//! Arrow IPC files (one per table) and read back on later runs (SF 0.1: ~100 MB).
//!
//! The folder is `$GPUSQL_DATA_CACHE_DIR` (empty or `none`: no cache), else
//! `$XDG_CACHE_HOME/gpusql/data`, else `~/.cache/gpusql/data`; a data set lives in
//! `<label>-sf<sf>-v<version>/`, so another version of gpusql generates its own.

use arrow::datatypes::SchemaRef;
use arrow::ipc::reader::FileReader;
use arrow::ipc::writer::FileWriter;
use arrow::record_batch::RecordBatch;
use std::path::{Path, PathBuf};

/// Largest scale factor kept (SF 1 is ~1 GB of files).
pub const MAX_SF: f64 = 1.0;

/// The default folder (see the module docs), or None.
pub fn default_dir() -> Option<PathBuf> {
    if let Some(v) = std::env::var_os("GPUSQL_DATA_CACHE_DIR") {
        return (!v.is_empty() && v != "none").then(|| PathBuf::from(v));
    }
    let abs = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    if let Some(xdg) = std::env::var_os("XDG_CACHE_HOME").and_then(abs) {
        return Some(xdg.join("gpusql/data"));
    }
    std::env::var_os("HOME").and_then(abs).map(|h| h.join(".cache/gpusql/data"))
}

/// The folder of data set `label` at `sf` under `root`, if such a data set is kept.
pub fn set_dir(root: Option<&Path>, label: &str, sf: f64) -> Option<PathBuf> {
    let root = root?;
    (sf > 0.0 && sf <= MAX_SF).then(|| root.join(format!("{label}-sf{sf}-v{}", env!("CARGO_PKG_VERSION"))))
}

/// The tables `names` read from `dir`, or None where any is missing or unreadable.
pub fn read(dir: &Path, names: &[&str]) -> Option<Vec<(String, Vec<RecordBatch>)>> {
    names
        .iter()
        .map(|n| {
            let file = std::fs::File::open(dir.join(format!("{n}.arrow"))).ok()?;
            let reader = FileReader::try_new(std::io::BufReader::new(file), None).ok()?;
            let batches = reader.collect::<Result<Vec<_>, _>>().ok()?;
            Some((n.to_string(), batches))
        })
        .collect()
}

/// Writes the tables into `dir` (through a temporary folder renamed at the end, so a
/// reader never sees half a data set). Failing is not an error: the next run generates.
pub fn write(dir: &Path, tables: &[(&str, SchemaRef, &[RecordBatch])]) {
    let tmp = dir.with_extension(format!("tmp{}", std::process::id()));
    let written = (|| -> Result<(), String> {
        std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
        for (name, schema, batches) in tables {
            let file = std::fs::File::create(tmp.join(format!("{name}.arrow"))).map_err(|e| e.to_string())?;
            let mut w = FileWriter::try_new(std::io::BufWriter::new(file), schema).map_err(|e| e.to_string())?;
            for b in *batches {
                w.write(b).map_err(|e| e.to_string())?;
            }
            w.finish().map_err(|e| e.to_string())?;
        }
        // (A set that could not be read, damaged or partly deleted, is replaced.)
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(|e| e.to_string())?;
        }
        std::fs::rename(&tmp, dir).map_err(|e| e.to_string())
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&tmp);
        tracing::warn!(dir = %dir.display(), error = %e, "could not keep the generated data");
    }
}
