//! COPY t FROM 'file' [(FORMAT csv|parquet|arrow, HEADER, DELIMITER '|', QUOTE, ESCAPE,
//! NULL 'x')] and COPY t | (query) TO 'file' [(FORMAT …, HEADER false, DELIMITER …)]:
//! the format by the FORMAT option or else the file's extension.

use crate::bind_expr::AtSpan;
use crate::bind_select::bind_query;
use crate::BoundStatement;
use gpusql_common::{Catalog, Error, FileFormat, FileScan, Result, WriteOptions};
use sqlparser::ast::{self, CopyOption, CopySource, CopyTarget, Spanned};

pub fn bind_copy(
    source: &CopySource,
    to: bool,
    target: &CopyTarget,
    options: &[CopyOption],
    legacy: &[ast::CopyLegacyOption],
    catalog: &dyn Catalog,
) -> Result<BoundStatement> {
    if !legacy.is_empty() {
        return Err(Error::not_supported("COPY options without parentheses (write COPY … (FORMAT csv, HEADER))"));
    }
    let CopyTarget::File { filename } = target else {
        return Err(Error::not_supported(format!("COPY {} {target} (only files)", if to { "TO" } else { "FROM" })));
    };
    let mut format = None;
    let (mut header, mut delimiter, mut quote, mut escape, mut null) = (None, None, None, None, None);
    for o in options {
        match o {
            CopyOption::Format(f) => {
                format = Some(match f.value.to_ascii_lowercase().as_str() {
                    "csv" => FileFormat::Csv,
                    "parquet" => FileFormat::Parquet,
                    "arrow" | "feather" | "ipc" => FileFormat::Arrow,
                    other => return Err(Error::not_supported(format!("COPY format {other} (csv, parquet or arrow)"))),
                })
            }
            CopyOption::Header(h) => header = Some(*h),
            CopyOption::Delimiter(c) => delimiter = Some(ascii(*c, "DELIMITER")?),
            CopyOption::Quote(c) => quote = Some(ascii(*c, "QUOTE")?),
            CopyOption::Escape(c) => escape = Some(ascii(*c, "ESCAPE")?),
            CopyOption::Null(s) => null = Some(s.clone()),
            other => return Err(Error::not_supported(format!("COPY option {other}"))),
        }
    }
    let format = match format.or_else(|| FileFormat::from_path(filename)) {
        Some(f) => f,
        None => {
            return Err(Error::bind(format!(
                "COPY: cannot tell the format of '{filename}' from its extension (add FORMAT csv, parquet or arrow)"
            )))
        }
    };
    if format != FileFormat::Csv
        && (header.is_some() || delimiter.is_some() || quote.is_some() || escape.is_some() || null.is_some())
    {
        return Err(Error::bind("COPY: HEADER, DELIMITER, QUOTE, ESCAPE and NULL are options of the CSV format"));
    }
    if to {
        if quote.is_some() || escape.is_some() || null.is_some() {
            return Err(Error::not_supported("QUOTE, ESCAPE and NULL when writing CSV"));
        }
        let plan = match source {
            CopySource::Query(q) => bind_query(q, catalog)?,
            CopySource::Table { table_name, columns } => {
                let cols = if columns.is_empty() {
                    "*".to_string()
                } else {
                    columns.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(", ")
                };
                let stmts = crate::parse(&format!("SELECT {cols} FROM {table_name}"))?;
                let [ast::Statement::Query(q)] = stmts.as_slice() else {
                    return Err(Error::exec("COPY: query expected"));
                };
                bind_query(q, catalog)?
            }
        };
        let mut options = WriteOptions::new(format);
        options.header = header.unwrap_or(true);
        options.delimiter = delimiter.unwrap_or(b',');
        return Ok(BoundStatement::CopyTo { plan, path: filename.clone(), options });
    }
    let CopySource::Table { table_name, columns } = source else {
        return Err(Error::bind("COPY FROM needs a table to copy into"));
    };
    if !columns.is_empty() {
        return Err(Error::not_supported("COPY FROM into a list of columns"));
    }
    let name = table_name.to_string();
    let info = catalog
        .table(&name)
        .ok_or_else(|| Error::bind(format!("unknown table '{name}'")).at_span(table_name.span()))?;
    let mut scan = FileScan::new(format, vec![filename.clone()]);
    if format == FileFormat::Csv {
        // The table's columns: nothing to detect but the delimiter (PostgreSQL's and
        // DuckDB's COPY: no header unless HEADER is given).
        scan.csv.columns = Some(info.schema.fields.iter().map(|f| (f.name.clone(), f.ty)).collect());
        scan.csv.header = Some(header.unwrap_or(false));
        scan.csv.delimiter = Some(delimiter.unwrap_or(b','));
        scan.csv.quote = quote;
        scan.csv.escape = escape;
        scan.csv.null_strings = null.map(|n| vec![n]);
    }
    Ok(BoundStatement::CopyFrom { table: info.name, scan })
}

fn ascii(c: char, what: &str) -> Result<u8> {
    if c.is_ascii() {
        Ok(c as u8)
    } else {
        Err(Error::bind(format!("COPY: {what} must be one ASCII character")))
    }
}
