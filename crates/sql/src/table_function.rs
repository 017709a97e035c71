//! Files in FROM, with DuckDB's spellings: `'data/x.parquet'` (format by extension),
//! `read_parquet('dir/*.parquet')`, `read_parquet(['a.parquet', 'b.parquet'])`,
//! `read_csv('f.csv', header = true, delim = '|', columns = {'a': 'INTEGER'})`,
//! `read_csv_auto(…)`, `read_arrow('f.arrow')`. Options are `name = value` or
//! `name := value`; an unknown option is an error.

use crate::bind_cast::sql_type;
use crate::bind_expr::AtSpan;
use gpusql_common::{Compression, DataType, Error, FileFormat, FileScan, Result};
use sqlparser::ast::{self, Spanned};

/// The scan `FROM 'path'` asks for: the format by the file's extension.
pub fn path_scan(path: &str, span: sqlparser::tokenizer::Span) -> Result<FileScan> {
    let format = FileFormat::from_path(path).ok_or_else(|| {
        Error::bind(format!(
            "cannot tell the format of '{path}' from its extension (use read_parquet, read_csv or read_arrow)"
        ))
        .at_span(span)
    })?;
    Ok(FileScan::new(format, vec![path.to_string()]))
}

/// The scan a table function call asks for.
pub fn function_scan(name: &str, args: &[ast::FunctionArg], span: sqlparser::tokenizer::Span) -> Result<FileScan> {
    let lower = name.to_ascii_lowercase();
    let format = match lower.as_str() {
        "read_parquet" | "parquet_scan" => FileFormat::Parquet,
        "read_csv" | "read_csv_auto" => FileFormat::Csv,
        "read_arrow" | "read_feather" => FileFormat::Arrow,
        _ => return Err(Error::not_supported(format!("table function {name}")).at_span(span)),
    };
    let mut paths: Option<Vec<String>> = None;
    let mut scan = FileScan::new(format, vec![]);
    for a in args {
        match named(a) {
            Some((opt, value)) => set_option(&mut scan, &lower, &opt, value)?,
            None => {
                let value = match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => e,
                    other => return Err(Error::bind(format!("{name}: unexpected argument {other}")).at_span(span)),
                };
                if paths.is_some() {
                    return Err(Error::bind(format!(
                        "{name}: one file argument (a path, a glob or a list of paths) expected"
                    ))
                    .at_span(span));
                }
                paths = Some(path_list(value).ok_or_else(|| {
                    Error::bind(format!("{name}: the files must be a string or a list of strings, not {value}"))
                        .at_span(span)
                })?);
            }
        }
    }
    scan.paths = paths.ok_or_else(|| {
        Error::bind(format!("{name}: which files? (e.g. {name}('data/*.{}'))", extension(format))).at_span(span)
    })?;
    if scan.paths.is_empty() {
        return Err(Error::bind(format!("{name}: the list of files is empty")).at_span(span));
    }
    Ok(scan)
}

fn extension(f: FileFormat) -> &'static str {
    match f {
        FileFormat::Parquet => "parquet",
        FileFormat::Csv => "csv",
        FileFormat::Arrow => "arrow",
    }
}

/// `name = value` or `name := value`.
fn named(a: &ast::FunctionArg) -> Option<(String, &ast::Expr)> {
    match a {
        ast::FunctionArg::Named { name, arg: ast::FunctionArgExpr::Expr(e), .. } => {
            Some((name.value.to_ascii_lowercase(), e))
        }
        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::BinaryOp {
            left,
            op: ast::BinaryOperator::Eq,
            right,
        })) => match &**left {
            ast::Expr::Identifier(i) => Some((i.value.to_ascii_lowercase(), right)),
            _ => None,
        },
        _ => None,
    }
}

fn path_list(e: &ast::Expr) -> Option<Vec<String>> {
    match e {
        ast::Expr::Array(a) => a.elem.iter().map(string).collect(),
        other => Some(vec![string(other)?]),
    }
}

fn string(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => Some(s.clone()),
            _ => None,
        },
        _ => None,
    }
}

fn set_option(scan: &mut FileScan, function: &str, opt: &str, value: &ast::Expr) -> Result<()> {
    let bad = |what: &str| Error::bind(format!("{function}: option {opt} must be {what}, not {value}"));
    let csv = &mut scan.csv;
    match (scan.format, opt) {
        (FileFormat::Csv, "header") => csv.header = Some(boolean(value).ok_or_else(|| bad("true or false"))?),
        (FileFormat::Csv, "delim" | "sep" | "delimiter") => {
            csv.delimiter = Some(one_byte(value).ok_or_else(|| bad("one character"))?)
        }
        (FileFormat::Csv, "quote") => csv.quote = Some(one_byte(value).ok_or_else(|| bad("one character"))?),
        (FileFormat::Csv, "escape") => csv.escape = Some(one_byte(value).ok_or_else(|| bad("one character"))?),
        (FileFormat::Csv, "columns") => {
            csv.columns = Some(
                type_dict(value).ok_or_else(|| bad("a struct of column names and types, e.g. {'a': 'INTEGER'}"))??,
            )
        }
        (FileFormat::Csv, "types" | "dtypes" | "column_types") => {
            csv.types = type_dict(value).ok_or_else(|| bad("a struct of column names and types"))??
        }
        (FileFormat::Csv, "nullstr" | "null") => {
            csv.null_strings = Some(match value {
                ast::Expr::Array(a) => a
                    .elem
                    .iter()
                    .map(string)
                    .collect::<Option<_>>()
                    .ok_or_else(|| bad("a string or a list of strings"))?,
                v => vec![string(v).ok_or_else(|| bad("a string or a list of strings"))?],
            })
        }
        (FileFormat::Csv, "skip") => csv.skip = integer(value).ok_or_else(|| bad("a non-negative integer"))?,
        (FileFormat::Csv, "ignore_errors") => csv.ignore_errors = boolean(value).ok_or_else(|| bad("true or false"))?,
        (FileFormat::Csv, "sample_size") => {
            csv.sample_size = match value {
                ast::Expr::UnaryOp { op: ast::UnaryOperator::Minus, .. } => Some(usize::MAX),
                v => Some(integer(v).ok_or_else(|| bad("a positive integer or -1 (every row)"))?.max(1)),
            }
        }
        (FileFormat::Csv, "compression") => {
            csv.compression = match string(value)
                .ok_or_else(|| bad("'gzip', 'zstd', 'none' or 'auto'"))?
                .to_ascii_lowercase()
                .as_str()
            {
                "gzip" | "gz" => Some(Compression::Gzip),
                "zstd" | "zst" => Some(Compression::Zstd),
                "none" | "uncompressed" => Some(Compression::None),
                "auto" | "infer" => None,
                _ => return Err(bad("'gzip', 'zstd', 'none' or 'auto'")),
            }
        }
        (FileFormat::Csv, "auto_detect") => {
            if !boolean(value).ok_or_else(|| bad("true or false"))? && csv.columns.is_none() {
                return Err(Error::bind(format!("{function}: auto_detect = false needs columns = {{…}} before it")));
            }
        }
        (_, other) => {
            let known = match scan.format {
                FileFormat::Csv => "header, delim, quote, escape, columns, types, nullstr, skip, ignore_errors, sample_size, compression, auto_detect",
                _ => "none",
            };
            return Err(Error::not_supported(format!("option {other} of {function} (options read: {known})")));
        }
    }
    Ok(())
}

fn boolean(e: &ast::Expr) -> Option<bool> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Boolean(b) => Some(*b),
            ast::Value::Number(n, _) => Some(n != "0"),
            ast::Value::SingleQuotedString(s) => match s.to_ascii_lowercase().as_str() {
                "true" | "1" => Some(true),
                "false" | "0" => Some(false),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

fn integer(e: &ast::Expr) -> Option<usize> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        _ => None,
    }
}

/// One byte of a string option; `'\t'` is the tab.
fn one_byte(e: &ast::Expr) -> Option<u8> {
    let s = string(e)?;
    match s.as_str() {
        "\\t" => Some(b'\t'),
        s if s.len() == 1 => Some(s.as_bytes()[0]),
        _ => None,
    }
}

/// `{'name': 'TYPE', …}` as (name, type) pairs.
fn type_dict(e: &ast::Expr) -> Option<Result<Vec<(String, DataType)>>> {
    let ast::Expr::Dictionary(fields) = e else { return None };
    Some(
        fields
            .iter()
            .map(|f| {
                let ty = string(&f.value).ok_or_else(|| {
                    Error::bind(format!("the type of column {} must be a string such as 'INTEGER'", f.key.value))
                })?;
                Ok((f.key.value.clone(), parse_type(&ty, e.span())?))
            })
            .collect(),
    )
}

/// A type name as SQL spells it ('DECIMAL(15,2)', 'VARCHAR').
pub fn parse_type(text: &str, span: sqlparser::tokenizer::Span) -> Result<DataType> {
    let dialect = sqlparser::dialect::GenericDialect {};
    let mut p = sqlparser::parser::Parser::new(&dialect)
        .try_with_sql(text)
        .map_err(|e| Error::bind(format!("type '{text}': {e}")))?;
    let t = p.parse_data_type().map_err(|_| Error::bind(format!("unknown type '{text}'")).at_span(span))?;
    sql_type(&t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(sql: &str) -> (String, Vec<ast::FunctionArg>) {
        let stmts = crate::parse(&format!("SELECT * FROM {sql}")).unwrap();
        let ast::Statement::Query(q) = &stmts[0] else { panic!() };
        let ast::SetExpr::Select(s) = &*q.body else { panic!() };
        let ast::TableFactor::Table { name, args: Some(a), .. } = &s.from[0].relation else { panic!() };
        (name.to_string(), a.args.clone())
    }

    fn scan(sql: &str) -> Result<FileScan> {
        let (n, a) = args(sql);
        function_scan(&n, &a, sqlparser::tokenizer::Span::empty())
    }

    #[test]
    fn options_are_read() {
        let s = scan("read_csv('f.csv', header = true, delim = '|', columns = {'a': 'INTEGER', 'b': 'DECIMAL(15,2)'}, ignore_errors := true)").unwrap();
        assert_eq!(s.paths, ["f.csv"]);
        assert_eq!(s.csv.header, Some(true));
        assert_eq!(s.csv.delimiter, Some(b'|'));
        assert!(s.csv.ignore_errors);
        assert_eq!(s.csv.columns, Some(vec![("a".into(), DataType::Int32), ("b".into(), DataType::decimal(15, 2))]));
        let p = scan("read_parquet(['a.parquet', 'b.parquet'])").unwrap();
        assert_eq!(p.paths.len(), 2);
        assert_eq!(p.format, FileFormat::Parquet);
    }

    #[test]
    fn bad_options_are_errors() {
        assert!(scan("read_csv('f.csv', header = 'maybe')").unwrap_err().to_string().contains("true or false"));
        assert!(scan("read_parquet('f.parquet', hive_partitioning = true)")
            .unwrap_err()
            .to_string()
            .contains("not supported"));
        assert!(scan("read_csv(header = true)").unwrap_err().to_string().contains("which files"));
        assert!(scan("read_csv('f.csv', columns = {'a': 'NOTATYPE'})").is_err());
    }
}
