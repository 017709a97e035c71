//! Files as tables through the API (the SQL spellings are `read_parquet(…)`,
//! `read_csv(…)`, `FROM 'file'` and COPY): registering files under a name, and opening a
//! folder as a database.

use crate::{Engine, IfExists};
use gpusql_common::{CsvOptions, Error, FileFormat, FileScan, Result};
use std::path::Path;

/// What opening a folder as a database did.
#[derive(Debug, Clone, Default)]
pub struct OpenedDirectory {
    /// The tables registered, by name.
    pub tables: Vec<String>,
    /// Files or folders that did not open (or whose name was taken), with the reason.
    pub errors: Vec<String>,
}

impl Engine {
    /// Registers Parquet files (a path, a glob such as `dir/*.parquet`, or a folder of
    /// parts) as table `name` (a taken name is an error: [`Engine::register_files`] can
    /// replace). Only the metadata is read now; a column's row groups are decoded when a
    /// query first needs them.
    pub fn register_parquet(&mut self, name: &str, path: &str) -> Result<()> {
        self.register_files(name, &FileScan::new(FileFormat::Parquet, vec![path.to_string()]), IfExists::Fail)
    }

    /// Registers CSV files as table `name`, with delimiter, header and types detected.
    pub fn register_csv(&mut self, name: &str, path: &str) -> Result<()> {
        self.register_csv_with(name, path, CsvOptions::default())
    }

    /// Registers CSV files as table `name` with `read_csv`'s options.
    pub fn register_csv_with(&mut self, name: &str, path: &str, options: CsvOptions) -> Result<()> {
        let mut scan = FileScan::new(FileFormat::Csv, vec![path.to_string()]);
        scan.csv = options;
        self.register_files(name, &scan, IfExists::Fail)
    }

    /// Registers Arrow IPC (Feather) files as table `name`.
    pub fn register_arrow(&mut self, name: &str, path: &str) -> Result<()> {
        self.register_files(name, &FileScan::new(FileFormat::Arrow, vec![path.to_string()]), IfExists::Fail)
    }

    /// Registers the files of `scan` as table `name`; a taken name is an error or
    /// replaced, as `if_exists` says (a view of that name is an error). Nothing changes
    /// where the files do not open.
    pub fn register_files(&mut self, name: &str, scan: &FileScan, if_exists: IfExists) -> Result<()> {
        self.tables.register_files(name, scan, if_exists)?;
        self.forget_gpu_copies(name);
        Ok(())
    }

    /// Opens folder `dir` as a database: each `*.parquet`, `*.csv` (also `.csv.gz`,
    /// `.csv.zst`, `.tsv`) or `*.arrow` / `*.feather` file, and each sub-folder of such
    /// parts, becomes a table named after it (`lineitem.parquet` → `lineitem`). Where
    /// tables of those names exist, nothing is opened and the error names them all
    /// ([`Engine::open_directory_with`] can replace them); what does not open is listed in
    /// `errors`, as are entries of the folder whose name an earlier entry took.
    pub fn open_directory(&mut self, dir: &Path) -> Result<OpenedDirectory> {
        self.open_directory_with(dir, IfExists::Fail)
    }

    pub fn open_directory_with(&mut self, dir: &Path, if_exists: IfExists) -> Result<OpenedDirectory> {
        let entries = std::fs::read_dir(dir).map_err(|e| Error::Io(format!("{}: {e}", dir.display())))?;
        let mut paths: Vec<std::path::PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        let mut out = OpenedDirectory::default();
        let mut tables: Vec<(String, FileScan)> = vec![];
        for p in paths {
            let Some((name, scan)) = table_of(&p) else { continue };
            if tables.iter().any(|(n, _)| n.eq_ignore_ascii_case(&name)) {
                out.errors
                    .push(format!("{}: another entry of the folder is table '{name}' already (left out)", p.display()));
                continue;
            }
            tables.push((name, scan));
        }
        let names: Vec<&str> = tables.iter().map(|(n, _)| n.as_str()).collect();
        self.tables
            .check_names(&names, if_exists)
            .map_err(|e| e.map_message(|m| format!("opening {}: {m}", dir.display())))?;
        for (name, scan) in tables {
            match self.register_files(&name, &scan, if_exists) {
                Ok(()) => out.tables.push(name),
                Err(e) => out.errors.push(e.to_string()),
            }
        }
        Ok(out)
    }
}

/// The table a folder entry makes: a data file by its extension, or a folder whose files
/// are all of one format.
fn table_of(p: &Path) -> Option<(String, FileScan)> {
    let file_name = p.file_name()?.to_str()?;
    if file_name.starts_with('.') {
        return None;
    }
    let path = p.to_str()?.to_string();
    if p.is_dir() {
        let formats: Vec<FileFormat> = std::fs::read_dir(p)
            .ok()?
            .filter_map(|e| e.ok()?.path().to_str().and_then(FileFormat::from_path))
            .collect();
        let first = *formats.first()?;
        if formats.iter().any(|f| *f != first) {
            return None;
        }
        return Some((file_name.to_string(), FileScan::new(first, vec![path])));
    }
    let format = FileFormat::from_path(file_name)?;
    let stem = file_name.split('.').next().filter(|s| !s.is_empty())?;
    Some((stem.to_string(), FileScan::new(format, vec![path])))
}
