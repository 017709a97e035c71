//! `gpusql datagen tpch|ssb --sf SF --out DIR --format csv|parquet|arrow`: benchmark data
//! as files, laid out the way `gpusql DIR` opens a folder as a database (one file per
//! table, or a folder of parts for a large table).

use gpusql::{FileFormat, FileWriter, WriteOptions, ROW_GROUP_ROWS};
use gpusql_datagen::GeneratedTable;
use rayon::prelude::*;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Clone, Copy, PartialEq)]
pub enum Suite {
    Tpch,
    Ssb,
}

#[derive(Clone, Copy, PartialEq, clap::ValueEnum)]
pub enum OutFormat {
    Csv,
    Parquet,
    Arrow,
}

/// Rows of one part file: tables larger than this are written as a folder of parts, in
/// parallel (a Parquet file is written by one thread).
const PART_ROWS: usize = 4 * ROW_GROUP_ROWS;

pub fn run(suite: Suite, sf: f64, out: &Path, format: OutFormat) -> ExitCode {
    let start = Instant::now();
    let label = if suite == Suite::Tpch { "TPC-H" } else { "SSB" };
    let result = match format {
        OutFormat::Csv => {
            generate_all(suite, sf).and_then(|t| gpusql_datagen::write_csv_dir(&t, out).map_err(|e| e.to_string()))
        }
        OutFormat::Parquet | OutFormat::Arrow => {
            let f = if format == OutFormat::Parquet { FileFormat::Parquet } else { FileFormat::Arrow };
            write_tables(suite, sf, out, f)
        }
    };
    match result {
        Ok(()) => {
            eprintln!("{label} SF {sf} written to {} in {:.1} s", out.display(), start.elapsed().as_secs_f64());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("Error: {e}");
            ExitCode::from(2)
        }
    }
}

fn generate_all(suite: Suite, sf: f64) -> Result<Vec<GeneratedTable>, String> {
    match suite {
        Suite::Tpch => gpusql_datagen::tpch(sf),
        Suite::Ssb => gpusql_datagen::ssb(sf),
    }
    .map_err(|e| e.to_string())
}

/// TPC-H table by table (so only one is held in memory at a time); SSB at once.
fn write_tables(suite: Suite, sf: f64, out: &Path, format: FileFormat) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    match suite {
        Suite::Tpch => {
            for name in gpusql_datagen::TPCH_TABLES {
                let t = gpusql_datagen::tpch_table(name, sf).map_err(|e| e.to_string())?;
                write_table(&t, out, format)?;
            }
        }
        Suite::Ssb => {
            for t in generate_all(suite, sf)? {
                write_table(&t, out, format)?;
            }
        }
    }
    Ok(())
}

/// `<out>/<name>.<ext>`, or `<out>/<name>/part-NNNNN.<ext>` parts of PART_ROWS rows
/// written in parallel.
fn write_table(t: &GeneratedTable, out: &Path, format: FileFormat) -> Result<(), String> {
    let ext = if format == FileFormat::Parquet { "parquet" } else { "arrow" };
    let opts = WriteOptions::new(format);
    // Consecutive batches of about PART_ROWS rows each.
    let mut parts: Vec<Vec<&arrow::record_batch::RecordBatch>> = vec![vec![]];
    let mut rows = 0;
    for b in &t.batches {
        if rows >= PART_ROWS {
            parts.push(vec![]);
            rows = 0;
        }
        parts.last_mut().expect("one part").push(b);
        rows += b.num_rows();
    }
    let write = |path: &Path, batches: &[&arrow::record_batch::RecordBatch]| -> Result<(), String> {
        let mut w = FileWriter::create(path, &opts, t.schema.clone()).map_err(|e| e.to_string())?;
        for b in batches {
            w.write(b).map_err(|e| e.to_string())?;
        }
        w.finish().map(|_| ()).map_err(|e| e.to_string())
    };
    let single = out.join(format!("{}.{ext}", t.name));
    let folder = out.join(&t.name);
    // A previous run's layout of this table goes first (a stale part would add rows).
    let _ = std::fs::remove_file(&single);
    if folder.is_dir() {
        std::fs::remove_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    }
    if parts.len() == 1 {
        return write(&single, &parts[0]);
    }
    std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    parts.par_iter().enumerate().try_for_each(|(i, p)| write(&folder.join(format!("part-{i:05}.{ext}")), p))
}
