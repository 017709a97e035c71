//! What a query asks of files: `read_parquet('dir/*.parquet')`, `read_csv('f.csv',
//! header = true)`, `FROM 'file.arrow'`. The binder fills a `FileScan`; the catalog opens
//! the files (crates/storage/src/files).

use crate::DataType;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileFormat {
    Parquet,
    Csv,
    /// Arrow IPC files (Feather version 2).
    Arrow,
}

impl FileFormat {
    /// The format a file name's extension names (a compressed CSV's `.gz` / `.zst` is
    /// looked through), or None.
    pub fn from_path(path: &str) -> Option<FileFormat> {
        let lower = path.to_ascii_lowercase();
        let base = lower.strip_suffix(".gz").or_else(|| lower.strip_suffix(".zst")).unwrap_or(&lower);
        let ext = base.rsplit_once('.').map(|(_, e)| e)?;
        Some(match ext {
            "parquet" | "pq" => FileFormat::Parquet,
            "csv" | "tsv" | "tbl" | "txt" => FileFormat::Csv,
            "arrow" | "feather" | "ipc" => FileFormat::Arrow,
            _ => return None,
        })
    }

    /// The table function that reads the format.
    pub fn function(&self) -> &'static str {
        match self {
            FileFormat::Parquet => "read_parquet",
            FileFormat::Csv => "read_csv",
            FileFormat::Arrow => "read_arrow",
        }
    }
}

/// How a CSV file is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// By the file name's last extension.
    pub fn from_path(path: &str) -> Compression {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".gz") {
            Compression::Gzip
        } else if lower.ends_with(".zst") {
            Compression::Zstd
        } else {
            Compression::None
        }
    }
}

/// The options of `read_csv` (DuckDB's names). `None` means "detect it".
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CsvOptions {
    pub header: Option<bool>,
    pub delimiter: Option<u8>,
    pub quote: Option<u8>,
    pub escape: Option<u8>,
    /// Every column's name and type, in file order: nothing is inferred.
    pub columns: Option<Vec<(String, DataType)>>,
    /// Types of some columns by name; the others are inferred.
    pub types: Vec<(String, DataType)>,
    /// Field texts read as NULL (default: the empty field).
    pub null_strings: Option<Vec<String>>,
    /// Lines skipped at the start of each file, before the header.
    pub skip: usize,
    /// Rows that do not parse are left out (counted in the log) instead of failing the
    /// query.
    pub ignore_errors: bool,
    /// None: by each file's extension.
    pub compression: Option<Compression>,
    /// Rows read to infer the columns' types (default 20,480).
    pub sample_size: Option<usize>,
}

/// Files read as one table.
#[derive(Debug, Clone, PartialEq)]
pub struct FileScan {
    pub format: FileFormat,
    /// Paths or glob patterns, as written.
    pub paths: Vec<String>,
    pub csv: CsvOptions,
}

impl FileScan {
    pub fn new(format: FileFormat, paths: Vec<String>) -> FileScan {
        FileScan { format, paths, csv: CsvOptions::default() }
    }

    /// The scan as SQL (`read_csv('a.csv', header = true)`): the name plans and messages
    /// show, and under which the catalog keeps the opened table.
    pub fn display(&self) -> String {
        let quote = |s: &str| format!("'{}'", s.replace('\'', "''"));
        let paths = match self.paths.as_slice() {
            [one] => quote(one),
            many => format!("[{}]", many.iter().map(|p| quote(p)).collect::<Vec<_>>().join(", ")),
        };
        let mut args = vec![paths];
        let c = &self.csv;
        let ch = |b: u8| quote(&(b as char).to_string());
        if let Some(h) = c.header {
            args.push(format!("header = {h}"));
        }
        if let Some(d) = c.delimiter {
            args.push(format!("delim = {}", ch(d)));
        }
        if let Some(q) = c.quote {
            args.push(format!("quote = {}", ch(q)));
        }
        if let Some(e) = c.escape {
            args.push(format!("escape = {}", ch(e)));
        }
        if let Some(cols) = &c.columns {
            let list: Vec<String> =
                cols.iter().map(|(n, t)| format!("{}: {}", quote(n), quote(&t.to_string()))).collect();
            args.push(format!("columns = {{{}}}", list.join(", ")));
        }
        if !c.types.is_empty() {
            let list: Vec<String> =
                c.types.iter().map(|(n, t)| format!("{}: {}", quote(n), quote(&t.to_string()))).collect();
            args.push(format!("types = {{{}}}", list.join(", ")));
        }
        if let Some(n) = &c.null_strings {
            args.push(format!("nullstr = [{}]", n.iter().map(|s| quote(s)).collect::<Vec<_>>().join(", ")));
        }
        if c.skip > 0 {
            args.push(format!("skip = {}", c.skip));
        }
        if c.ignore_errors {
            args.push("ignore_errors = true".into());
        }
        if let Some(comp) = c.compression {
            args.push(format!("compression = '{}'", format!("{comp:?}").to_ascii_lowercase()));
        }
        if let Some(n) = c.sample_size {
            args.push(format!("sample_size = {n}"));
        }
        format!("{}({})", self.format.function(), args.join(", "))
    }
}

/// How query results are written to a file (COPY … TO).
#[derive(Debug, Clone, PartialEq)]
pub struct WriteOptions {
    pub format: FileFormat,
    /// CSV: a header line (default true) and the delimiter (default ',').
    pub header: bool,
    pub delimiter: u8,
}

impl WriteOptions {
    pub fn new(format: FileFormat) -> WriteOptions {
        WriteOptions { format, header: true, delimiter: b',' }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_extension() {
        assert_eq!(FileFormat::from_path("a/b.PARQUET"), Some(FileFormat::Parquet));
        assert_eq!(FileFormat::from_path("x.csv.gz"), Some(FileFormat::Csv));
        assert_eq!(FileFormat::from_path("x.tbl"), Some(FileFormat::Csv));
        assert_eq!(FileFormat::from_path("x.feather"), Some(FileFormat::Arrow));
        assert_eq!(FileFormat::from_path("x.json"), None);
        assert_eq!(FileFormat::from_path("noext"), None);
        assert_eq!(Compression::from_path("x.csv.zst"), Compression::Zstd);
    }

    #[test]
    fn display_is_sql() {
        let mut s = FileScan::new(FileFormat::Csv, vec!["it's.csv".into()]);
        s.csv.header = Some(true);
        s.csv.delimiter = Some(b'|');
        assert_eq!(s.display(), "read_csv('it''s.csv', header = true, delim = '|')");
        let p = FileScan::new(FileFormat::Parquet, vec!["a.parquet".into(), "b.parquet".into()]);
        assert_eq!(p.display(), "read_parquet(['a.parquet', 'b.parquet'])");
    }
}
