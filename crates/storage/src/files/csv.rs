//! CSV files (optionally gzip- or zstd-compressed), decoded with arrow-csv when they are
//! opened: the delimiter, header and column types are detected from a sample unless
//! given; a file without quoted fields is cut at line ends and its parts decoded in
//! parallel. A value or row that does not parse is an error naming the file, line and
//! column, or (`ignore_errors = true`) a row left out.

use super::io_error;
use crate::host::{check_memory, HostTable};
use arrow::array::{Array, ArrayRef, BooleanArray, StringBuilder};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{Field as ArrowField, Schema as ArrowSchema, SchemaRef};
use arrow::record_batch::RecordBatch;
use arrow_csv_reexport::reader::Format;
use gpusql_common::{Compression, CsvOptions, DataType, Error, Field, Result, Schema};
use rayon::prelude::*;
use regex::Regex;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows per chunk of a CSV table.
const CHUNK_ROWS: usize = 1 << 17;
/// Files smaller than this are decoded in one piece.
const PARALLEL_BYTES: usize = 4 << 20;
/// Rows type inference reads by default (DuckDB's sample size).
const SAMPLE_ROWS: usize = 20_480;

mod arrow_csv_reexport {
    pub use arrow::csv::*;
}

/// How one table's files are read: settled from the options and the first file.
struct Dialect {
    delimiter: u8,
    quote: u8,
    escape: Option<u8>,
    header: bool,
    /// Null field texts, as the regex arrow-csv takes (None: the empty field).
    nulls: Option<Regex>,
    null_strings: Vec<String>,
}

pub fn open(paths: &[PathBuf], opts: &CsvOptions, name: String, version: u64) -> Result<HostTable> {
    let mut fields: Option<Vec<Field>> = None;
    let mut dialect: Option<Dialect> = None;
    let mut chunks: Vec<Vec<ArrayRef>> = vec![];
    for path in paths {
        let data = read_file(path, opts)?;
        let (skipped, body) = skip_lines(&data, opts.skip);
        let d = match &dialect {
            Some(d) => d,
            None => dialect.insert(settle_dialect(body, opts)?),
        };
        let (header_line, rows) = if d.header { split_first_line(body) } else { (None, body) };
        let f = match &fields {
            Some(f) => {
                check_header(path, header_line, d, f)?;
                f
            }
            None => fields.insert(infer_fields(path, header_line, rows, d, opts)?),
        };
        // Lines before the first row: for messages.
        let first_line = skipped + d.header as usize + 1;
        chunks.extend(decode(path, rows, first_line, f, d, opts.ignore_errors)?);
    }
    let fields = fields.ok_or_else(|| Error::Io("no files given".into()))?;
    let fields = fields
        .into_iter()
        .enumerate()
        .map(|(i, f)| Field { nullable: f.nullable || chunks.iter().any(|c| c[i].null_count() > 0), ..f })
        .collect();
    HostTable::in_memory(name, Schema::new(fields), chunks, version)
}

/// The file's bytes, decompressed.
fn read_file(path: &Path, opts: &CsvOptions) -> Result<Vec<u8>> {
    let size = std::fs::metadata(path).map_err(|e| io_error(path, e))?.len();
    let compression = opts.compression.unwrap_or_else(|| Compression::from_path(&path.to_string_lossy()));
    // The text and its decoded columns; compressed text expands (about 4x assumed).
    let text = if compression == Compression::None { size } else { size * 4 };
    check_memory(text * 2, &path.display().to_string())?;
    let file = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
    let mut out = Vec::with_capacity(text as usize);
    let read = match compression {
        Compression::None => std::io::BufReader::new(file).read_to_end(&mut out),
        Compression::Gzip => flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file)).read_to_end(&mut out),
        Compression::Zstd => zstd::stream::read::Decoder::new(file).and_then(|mut d| d.read_to_end(&mut out)),
    };
    read.map_err(|e| io_error(path, format!("cannot read ({e})")))?;
    Ok(out)
}

/// Skips `n` lines; returns how many there were and the rest.
fn skip_lines(data: &[u8], n: usize) -> (usize, &[u8]) {
    let mut rest = data;
    let mut skipped = 0;
    while skipped < n && !rest.is_empty() {
        rest = split_first_line(rest).1;
        skipped += 1;
    }
    (skipped, rest)
}

/// The first line (without its end) and what follows it.
fn split_first_line(data: &[u8]) -> (Option<&[u8]>, &[u8]) {
    match data.iter().position(|&b| b == b'\n') {
        Some(i) => (Some(trim_cr(&data[..i])), &data[i + 1..]),
        None if data.is_empty() => (None, data),
        None => (Some(trim_cr(data)), &data[data.len()..]),
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The delimiter (given, or the candidate that splits the first lines into the same
/// number of fields most often), quote, escape, NULL texts, and whether there is a header.
fn settle_dialect(data: &[u8], opts: &CsvOptions) -> Result<Dialect> {
    let delimiter = opts.delimiter.unwrap_or_else(|| sniff_delimiter(data));
    let quote = opts.quote.unwrap_or(b'"');
    let null_strings = opts.null_strings.clone().unwrap_or_else(|| vec![String::new()]);
    let nulls = if null_strings == [String::new()] {
        None
    } else {
        let alts: Vec<String> = null_strings.iter().map(|s| regex::escape(s)).collect();
        Some(Regex::new(&format!("^(?:{})$", alts.join("|"))).map_err(|e| Error::bind(format!("nullstr: {e}")))?)
    };
    let mut d = Dialect { delimiter, quote, escape: opts.escape, header: false, nulls, null_strings };
    d.header = match (opts.header, &opts.columns) {
        (Some(h), _) => h,
        // Given columns: nothing is detected, DuckDB reads no header then.
        (None, Some(_)) => false,
        (None, None) => detect_header(data, &d, opts.sample_size.unwrap_or(SAMPLE_ROWS)),
    };
    Ok(d)
}

/// Whether the first line is a header: a field of it is text where the rows below hold
/// numbers, dates or booleans; or, where every column is text (or there are no rows
/// below: a file of its header alone), it has no empty field.
fn detect_header(data: &[u8], d: &Dialect, sample: usize) -> bool {
    let (Some(first), rest) = split_first_line(data) else { return false };
    let infer = |text: &[u8], n: usize| {
        format(d).infer_schema(text, Some(n)).ok().filter(|(_, rows)| *rows > 0).map(|(s, _)| s)
    };
    let text = |t: &arrow::datatypes::DataType| {
        matches!(t, arrow::datatypes::DataType::Utf8 | arrow::datatypes::DataType::Null)
    };
    let no_empty_field = || !first.is_empty() && first.split(|&b| b == d.delimiter).all(|v| !v.is_empty());
    if rest.iter().all(|b| b.is_ascii_whitespace()) {
        return infer(first, 1).is_some_and(|h| h.fields().iter().all(|f| text(f.data_type()))) && no_empty_field();
    }
    let (Some(head), Some(body)) = (infer(first, 1), infer(sample_prefix(rest, sample), sample)) else { return false };
    let typed_below = head
        .fields()
        .iter()
        .zip(body.fields())
        .any(|(h, b)| h.data_type() == &arrow::datatypes::DataType::Utf8 && !text(b.data_type()));
    let all_text = body.fields().iter().all(|f| text(f.data_type()));
    typed_below || (all_text && no_empty_field())
}

/// The start of `data`: about `rows` lines (a sample to infer from).
fn sample_prefix(data: &[u8], rows: usize) -> &[u8] {
    let mut end = 0;
    for _ in 0..rows.saturating_add(1) {
        match data[end..].iter().position(|&b| b == b'\n') {
            Some(i) => end += i + 1,
            None => return data,
        }
    }
    &data[..end]
}

fn sniff_delimiter(data: &[u8]) -> u8 {
    let lines: Vec<&[u8]> = data.split(|&b| b == b'\n').take(20).filter(|l| !l.is_empty()).collect();
    let mut best = (b',', 0usize, 0usize);
    for c in [b',', b'|', b';', b'\t'] {
        let counts: Vec<usize> = lines.iter().map(|l| l.iter().filter(|&&b| b == c).count()).collect();
        let Some(&first) = counts.first() else { continue };
        let consistent = counts.iter().filter(|&&n| n == first).count();
        if first > 0 && (consistent, first) > (best.1, best.2) {
            best = (c, consistent, first);
        }
    }
    best.0
}

fn format(d: &Dialect) -> Format {
    let mut f = Format::default().with_header(false).with_delimiter(d.delimiter).with_quote(d.quote);
    if let Some(e) = d.escape {
        f = f.with_escape(e);
    }
    if let Some(r) = &d.nulls {
        f = f.with_null_regex(r.clone());
    }
    f
}

/// The columns: given (`columns`), or named by the header (column0, column1, … without
/// one) with types inferred from a sample, then overridden by `types`.
fn infer_fields(path: &Path, header: Option<&[u8]>, rows: &[u8], d: &Dialect, opts: &CsvOptions) -> Result<Vec<Field>> {
    if let Some(cols) = &opts.columns {
        return Ok(cols.iter().map(|(n, t)| Field::new(n.clone(), *t, true)).collect());
    }
    let n = opts.sample_size.unwrap_or(SAMPLE_ROWS);
    let (schema, _) =
        format(d).infer_schema(sample_prefix(rows, n), Some(n)).map_err(|e| io_error(path, format!("CSV: {e}")))?;
    let names: Vec<String> = match header {
        Some(h) => header_names(h, d),
        None => (0..schema.fields().len()).map(|i| format!("column{i}")).collect(),
    };
    let width = names.len().max(schema.fields().len());
    let mut fields = vec![];
    let mut seen = std::collections::HashSet::new();
    for i in 0..width {
        let mut name = names.get(i).cloned().filter(|n| !n.is_empty()).unwrap_or_else(|| format!("column{i}"));
        // Repeated names get a suffix, as in DuckDB (a, a_1).
        let base = name.clone();
        let mut k = 0;
        while !seen.insert(name.to_ascii_lowercase()) {
            k += 1;
            name = format!("{base}_{k}");
        }
        let inferred =
            schema.fields().get(i).map(|f| f.data_type().clone()).unwrap_or(arrow::datatypes::DataType::Utf8);
        let ty = match &inferred {
            arrow::datatypes::DataType::Int64 => DataType::Int64,
            arrow::datatypes::DataType::Float64 => DataType::Float64,
            arrow::datatypes::DataType::Boolean => DataType::Boolean,
            arrow::datatypes::DataType::Date32 => DataType::Date,
            // `YYYY-MM-DD HH:MM:SS[.f]` (any precision: the column is read as microseconds).
            arrow::datatypes::DataType::Timestamp(_, None) => DataType::Timestamp,
            _ => DataType::Utf8,
        };
        let ty = opts.types.iter().find(|(n, _)| n.eq_ignore_ascii_case(&name)).map_or(ty, |(_, t)| *t);
        fields.push(Field::new(name, ty, true));
    }
    for (n, _) in &opts.types {
        if !fields.iter().any(|f| f.name.eq_ignore_ascii_case(n)) {
            return Err(Error::bind(format!("types: {} has no column '{n}'", path.display())));
        }
    }
    Ok(fields)
}

/// The header line's fields (quotes removed).
fn header_names(line: &[u8], d: &Dialect) -> Vec<String> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .delimiter(d.delimiter)
        .quote(d.quote)
        .escape(d.escape)
        .flexible(true)
        .from_reader(line);
    let mut rec = csv::StringRecord::new();
    match r.read_record(&mut rec) {
        Ok(true) => rec.iter().map(|s| s.trim().to_string()).collect(),
        _ => vec![],
    }
}

/// A later file of the table must have the first one's header.
fn check_header(path: &Path, header: Option<&[u8]>, d: &Dialect, fields: &[Field]) -> Result<()> {
    let Some(h) = header else { return Ok(()) };
    let names = header_names(h, d);
    if names.len() != fields.len() {
        return Err(Error::Io(format!(
            "{}: the header has {} columns, the table's first file {}",
            path.display(),
            names.len(),
            fields.len()
        )));
    }
    Ok(())
}

fn arrow_schema(fields: &[Field]) -> SchemaRef {
    Arc::new(ArrowSchema::new(
        fields.iter().map(|f| ArrowField::new(&f.name, f.ty.to_arrow(), true)).collect::<Vec<_>>(),
    ))
}

/// The rows of one file as chunks of the table's types.
fn decode(
    path: &Path,
    rows: &[u8],
    first_line: usize,
    fields: &[Field],
    d: &Dialect,
    ignore_errors: bool,
) -> Result<Vec<Vec<ArrayRef>>> {
    if ignore_errors {
        return records(path, rows, first_line, fields, d, true);
    }
    let schema = arrow_schema(fields);
    // Cut at line ends only where no field is quoted (a quoted field may hold one).
    let parts: Vec<&[u8]> = if rows.len() >= PARALLEL_BYTES && !rows.contains(&d.quote) {
        split_at_lines(rows, rayon::current_num_threads() * 4)
    } else {
        vec![rows]
    };
    let decoded: std::result::Result<Vec<Vec<RecordBatch>>, arrow::error::ArrowError> = parts
        .par_iter()
        .map(|part| {
            let mut b = arrow::csv::ReaderBuilder::new(schema.clone())
                .with_header(false)
                .with_format(format(d))
                .with_batch_size(CHUNK_ROWS);
            if let Some(e) = d.escape {
                b = b.with_escape(e);
            }
            b.build(*part)?.collect()
        })
        .collect();
    match decoded {
        Ok(parts) => {
            Ok(parts.into_iter().flatten().filter(|b| b.num_rows() > 0).map(|b| b.columns().to_vec()).collect())
        }
        // Find the row and field at fault for a precise message (or, where the records
        // pass reads everything, report arrow-csv's own).
        Err(e) => match records(path, rows, first_line, fields, d, false) {
            Err(precise) => Err(precise),
            Ok(_) => Err(io_error(path, format!("CSV: {e}"))),
        },
    }
}

/// About `n` parts of `data`, each ending at a line end.
fn split_at_lines(data: &[u8], n: usize) -> Vec<&[u8]> {
    let target = data.len() / n.max(1) + 1;
    let mut out = vec![];
    let mut start = 0;
    while start < data.len() {
        let mut end = (start + target).min(data.len());
        match data[end..].iter().position(|&b| b == b'\n') {
            Some(i) if end < data.len() => end += i + 1,
            _ => end = data.len(),
        }
        out.push(&data[start..end]);
        start = end;
    }
    out
}

/// The rows read record by record (the `csv` crate) and converted column by column with
/// arrow's casts: rows with the wrong number of fields or a value that does not convert
/// are skipped (`skip`) or are the error.
fn records(
    path: &Path,
    rows: &[u8],
    first_line: usize,
    fields: &[Field],
    d: &Dialect,
    skip: bool,
) -> Result<Vec<Vec<ArrayRef>>> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .delimiter(d.delimiter)
        .quote(d.quote)
        .escape(d.escape)
        .flexible(true)
        .from_reader(rows);
    let mut out = vec![];
    let mut skipped = 0usize;
    let mut builders: Vec<StringBuilder> = fields.iter().map(|_| StringBuilder::new()).collect();
    let mut lines: Vec<usize> = vec![];
    let mut rec = csv::StringRecord::new();
    loop {
        let more = reader.read_record(&mut rec).map_err(|e| io_error(path, format!("CSV: {e}")))?;
        if more {
            let line = first_line + rec.position().map_or(0, |p| p.line() as usize) - 1;
            if rec.len() == 1 && rec.get(0) == Some("") && fields.len() > 1 {
                continue; // an empty line
            }
            if rec.len() != fields.len() {
                if skip {
                    skipped += 1;
                    continue;
                }
                return Err(io_error(
                    path,
                    format!(
                        "line {line}: {} fields, expected {} (ignore_errors = true skips such rows)",
                        rec.len(),
                        fields.len()
                    ),
                ));
            }
            for (b, v) in builders.iter_mut().zip(rec.iter()) {
                if d.null_strings.iter().any(|n| n == v) {
                    b.append_null();
                } else {
                    b.append_value(v);
                }
            }
            lines.push(line);
        }
        if (!more && !lines.is_empty()) || lines.len() == CHUNK_ROWS {
            let texts: Vec<ArrayRef> = builders.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef).collect();
            let (chunk, bad) = convert(path, &texts, &lines, fields, skip)?;
            skipped += bad;
            if chunk.first().is_some_and(|a| !a.is_empty()) {
                out.push(chunk);
            }
            lines.clear();
        }
        if !more {
            break;
        }
    }
    if skipped > 0 {
        tracing::warn!("{}: {skipped} rows that do not parse were skipped (ignore_errors)", path.display());
    }
    Ok(out)
}

/// Text columns to the table's types; rows where a value does not convert are dropped
/// (`skip`, returning how many) or the error.
fn convert(
    path: &Path,
    texts: &[ArrayRef],
    lines: &[usize],
    fields: &[Field],
    skip: bool,
) -> Result<(Vec<ArrayRef>, usize)> {
    let opts = CastOptions { safe: true, ..Default::default() };
    let mut typed = vec![];
    let mut ok = vec![true; lines.len()];
    for (c, (t, f)) in texts.iter().zip(fields).enumerate() {
        let trimmed: ArrayRef = if f.ty == DataType::Utf8 { t.clone() } else { trim(t) };
        let a = cast_with_options(&trimmed, &f.ty.to_arrow(), &opts)?;
        for (r, good) in ok.iter_mut().enumerate() {
            if t.is_valid(r) && a.is_null(r) {
                if !skip {
                    let v = t
                        .as_any()
                        .downcast_ref::<arrow::array::StringArray>()
                        .map_or(String::new(), |s| s.value(r).to_string());
                    return Err(io_error(
                        path,
                        format!(
                            "line {}, column {} ({}): cannot read '{v}' as {} (ignore_errors = true skips such rows)",
                            lines[r],
                            c + 1,
                            f.name,
                            f.ty
                        ),
                    ));
                }
                *good = false;
            }
        }
        typed.push(a);
    }
    let bad = ok.iter().filter(|g| !**g).count();
    if bad == 0 {
        return Ok((typed, 0));
    }
    let keep = BooleanArray::from(ok);
    let kept =
        typed.iter().map(|a| arrow::compute::filter(a.as_ref(), &keep)).collect::<std::result::Result<Vec<_>, _>>()?;
    Ok((kept, bad))
}

/// Strings without surrounding blanks (numbers and dates may be padded).
fn trim(a: &ArrayRef) -> ArrayRef {
    let s = a.as_any().downcast_ref::<arrow::array::StringArray>();
    match s {
        Some(s) => Arc::new(s.iter().map(|v| v.map(|v| v.trim())).collect::<arrow::array::StringArray>()),
        None => a.clone(),
    }
}
