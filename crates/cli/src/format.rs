//! Writes query results (Arrow record batches) as a table, CSV or newline-delimited JSON.
//!
//! Every value is rendered by Arrow's display code, so decimals come out exactly at their
//! scale (`17.00`), dates as `YYYY-MM-DD` and doubles in shortest round-trip form; except
//! timestamps, printed as DuckDB prints them (`2024-01-05 10:30:00`, a fraction of a second
//! only where it is not zero: `10:30:00.5`).
//!
//! * `table`: a text table, NULL shown as `NULL`, numbers right-aligned, then `(N rows)`.
//! * `csv`: RFC 4180 quoting (a field is quoted when it holds a comma, quote, CR or LF;
//!   quotes are doubled) with a header row and `\n` line ends. NULL is an empty field;
//!   an empty string is written `""` so the two stay distinguishable.
//! * `json`: one object per row, one row per line. Integers and doubles are JSON numbers
//!   (non-finite doubles become the strings "NaN", "Infinity", "-Infinity"); decimals are
//!   strings at their exact scale, because a JSON number would be read back as a binary
//!   double and lose digits; dates and text are strings; NULL is `null`; booleans are
//!   `true`/`false`. A repeated column name gets a `_2`, `_3`, … suffix so no key repeats.

use arrow::array::{Array, ArrayRef, TimestampMicrosecondArray};
use arrow::datatypes::{DataType as ArrowType, Schema};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use comfy_table::{presets, CellAlignment, Table};
use std::io::{self, Write};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Csv,
    Json,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Csv => "csv",
            Format::Json => "json",
        }
    }

    /// Whether stdout carries only data (status lines such as "INSERT 3" then go to
    /// stderr so the output stays machine-readable).
    pub fn is_data_only(self) -> bool {
        self != Format::Table
    }
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "table" => Ok(Format::Table),
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            other => Err(format!("unknown format '{other}' (table, csv or json)")),
        }
    }
}

/// Writes one query's batches in `format`.
pub fn write_batches(out: &mut dyn Write, batches: &[RecordBatch], format: Format) -> io::Result<()> {
    let Some(first) = batches.first() else {
        // No schema to show; only the table format has something to say.
        if format == Format::Table {
            writeln!(out, "(0 rows)")?;
        }
        return Ok(());
    };
    let schema = first.schema();
    match format {
        Format::Table => write_table(out, &schema, batches),
        Format::Csv => write_csv(out, &schema, batches),
        Format::Json => write_json(out, &schema, batches),
    }
}

fn arrow_err(e: ArrowError) -> io::Error {
    io::Error::other(format!("formatting results: {e}"))
}

fn formatters<'a>(batch: &'a RecordBatch, options: &FormatOptions<'a>) -> io::Result<Vec<ArrayFormatter<'a>>> {
    batch.columns().iter().map(|c| ArrayFormatter::try_new(c.as_ref(), options).map_err(arrow_err)).collect()
}

/// Text of a non-NULL value of `col` (through its formatter, or DuckDB's timestamp text).
fn text(col: &ArrayRef, f: &ArrayFormatter<'_>, r: usize) -> String {
    match col.as_any().downcast_ref::<TimestampMicrosecondArray>() {
        Some(ts) => gpusql_common::date::format_timestamp(ts.value(r)),
        None => f.value(r).to_string(),
    }
}

fn is_numeric(t: &ArrowType) -> bool {
    t.is_numeric()
}

fn write_table(out: &mut dyn Write, schema: &Schema, batches: &[RecordBatch]) -> io::Result<()> {
    let options = FormatOptions::new().with_null("NULL");
    let mut table = Table::new();
    table.load_preset(presets::UTF8_FULL_CONDENSED);
    table.set_header(schema.fields().iter().map(|f| f.name().as_str()));
    let mut rows = 0;
    for batch in batches {
        let fmts = formatters(batch, &options)?;
        for r in 0..batch.num_rows() {
            table.add_row(batch.columns().iter().zip(&fmts).map(|(c, f)| {
                if c.is_null(r) {
                    "NULL".to_string()
                } else {
                    text(c, f, r)
                }
            }));
        }
        rows += batch.num_rows();
    }
    for (i, f) in schema.fields().iter().enumerate() {
        if is_numeric(f.data_type()) {
            if let Some(col) = table.column_mut(i) {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
    }
    writeln!(out, "{table}")?;
    writeln!(out, "({rows} row{})", if rows == 1 { "" } else { "s" })
}

/// RFC 4180 field quoting.
pub fn csv_field(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\"")).into()
    } else {
        s.into()
    }
}

fn write_csv(out: &mut dyn Write, schema: &Schema, batches: &[RecordBatch]) -> io::Result<()> {
    let header: Vec<_> = schema.fields().iter().map(|f| csv_field(f.name()).into_owned()).collect();
    writeln!(out, "{}", header.join(","))?;
    let options = FormatOptions::new();
    let mut line = String::new();
    for batch in batches {
        let fmts = formatters(batch, &options)?;
        for r in 0..batch.num_rows() {
            line.clear();
            for (c, (col, f)) in batch.columns().iter().zip(&fmts).enumerate() {
                if c > 0 {
                    line.push(',');
                }
                if col.is_null(r) {
                    continue;
                }
                let v = text(col, f, r);
                if v.is_empty() {
                    line.push_str("\"\"");
                } else {
                    line.push_str(&csv_field(&v));
                }
            }
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

/// Object keys: column names with repeats made unique.
fn json_keys(schema: &Schema) -> Vec<String> {
    let mut seen = std::collections::HashMap::<&str, usize>::new();
    schema
        .fields()
        .iter()
        .map(|f| {
            let n = seen.entry(f.name().as_str()).or_insert(0);
            *n += 1;
            let key = if *n == 1 { f.name().clone() } else { format!("{}_{}", f.name(), n) };
            json_string(&key)
        })
        .collect()
}

fn json_string(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

fn json_value(col: &ArrayRef, f: &ArrayFormatter<'_>, r: usize) -> String {
    if col.is_null(r) {
        return "null".into();
    }
    let text = text(col, f, r);
    match col.data_type() {
        t if t.is_integer() => text,
        ArrowType::Boolean => text,
        t if t.is_floating() => match text.parse::<f64>() {
            Ok(v) if v.is_finite() => text,
            Ok(v) if v.is_nan() => "\"NaN\"".into(),
            Ok(v) if v > 0.0 => "\"Infinity\"".into(),
            Ok(_) => "\"-Infinity\"".into(),
            Err(_) => json_string(&text),
        },
        // Decimals, dates, text and anything else: strings.
        _ => json_string(&text),
    }
}

fn write_json(out: &mut dyn Write, schema: &Schema, batches: &[RecordBatch]) -> io::Result<()> {
    let keys = json_keys(schema);
    let options = FormatOptions::new();
    let mut line = String::new();
    for batch in batches {
        let fmts = formatters(batch, &options)?;
        for r in 0..batch.num_rows() {
            line.clear();
            line.push('{');
            for (c, (col, f)) in batch.columns().iter().zip(&fmts).enumerate() {
                if c > 0 {
                    line.push(',');
                }
                line.push_str(&keys[c]);
                line.push(':');
                line.push_str(&json_value(col, f, r));
            }
            line.push('}');
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{BooleanArray, Date32Array, Decimal128Array, Float64Array, Int64Array, StringArray};
    use arrow::datatypes::Field;
    use std::sync::Arc;

    fn batch() -> RecordBatch {
        let schema = Schema::new(vec![
            Field::new("i", ArrowType::Int64, true),
            Field::new("d", ArrowType::Decimal128(15, 2), true),
            Field::new("s", ArrowType::Utf8, true),
            Field::new("dt", ArrowType::Date32, true),
            Field::new("f", ArrowType::Float64, true),
            Field::new("b", ArrowType::Boolean, true),
            Field::new("i", ArrowType::Int64, true),
            Field::new("ts", ArrowType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, None), true),
        ]);
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(vec![Some(1), None])),
            Arc::new(Decimal128Array::from(vec![Some(1700), Some(-5)]).with_precision_and_scale(15, 2).unwrap()),
            Arc::new(StringArray::from(vec![Some("a,\"b\""), Some("")])),
            Arc::new(Date32Array::from(vec![Some(9131), None])),
            Arc::new(Float64Array::from(vec![Some(0.5), Some(f64::NAN)])),
            Arc::new(BooleanArray::from(vec![Some(true), None])),
            Arc::new(Int64Array::from(vec![Some(7), Some(8)])),
            Arc::new(TimestampMicrosecondArray::from(vec![Some(1_704_450_600_500_000), None])),
        ];
        RecordBatch::try_new(Arc::new(schema), cols).unwrap()
    }

    fn render(format: Format) -> String {
        let mut out = vec![];
        write_batches(&mut out, &[batch()], format).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn csv() {
        assert_eq!(
            render(Format::Csv),
            "i,d,s,dt,f,b,i,ts\n1,17.00,\"a,\"\"b\"\"\",1995-01-01,0.5,true,7,2024-01-05 10:30:00.5\n,-0.05,\"\",,NaN,,8,\n"
        );
    }

    #[test]
    fn json() {
        assert_eq!(
            render(Format::Json),
            "{\"i\":1,\"d\":\"17.00\",\"s\":\"a,\\\"b\\\"\",\"dt\":\"1995-01-01\",\"f\":0.5,\"b\":true,\"i_2\":7,\"ts\":\"2024-01-05 10:30:00.5\"}\n\
             {\"i\":null,\"d\":\"-0.05\",\"s\":\"\",\"dt\":null,\"f\":\"NaN\",\"b\":null,\"i_2\":8,\"ts\":null}\n"
        );
    }

    #[test]
    fn table() {
        let t = render(Format::Table);
        assert!(
            t.contains("NULL")
                && t.contains("17.00")
                && t.contains("1995-01-01")
                && t.contains("2024-01-05 10:30:00.5"),
            "{t}"
        );
        assert!(t.ends_with("(2 rows)\n"));
    }
}
