//! Writes query results (Arrow record batches) as a table, CSV or newline-delimited JSON.
//!
//! Every value is rendered by Arrow's display code, so decimals come out exactly at their
//! scale (`17.00`), dates as `YYYY-MM-DD` and doubles in shortest round-trip form; except
//! timestamps, printed as DuckDB prints them (`2024-01-05 10:30:00`, a fraction of a second
//! only where it is not zero: `10:30:00.5`).
//!
//! * `table`: a text table, NULL shown as `NULL`, numbers right-aligned, then `(N rows)`.
//!   A [`TableLayout`] may cut it down (the interactive shell's): beyond `max_rows` rows
//!   the first and last halves with a `…` row between, and columns fitted to a width
//!   (long values cut with `…`, then middle columns left out behind a `…` column); the
//!   footer then says what is shown: `(1500 rows, 40 shown; 12 columns, 7 shown)`.
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
use comfy_table::{presets, Cell, CellAlignment, Table};
use std::io::{self, Write};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

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

/// How much of a result the table format shows (other formats show everything).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableLayout {
    /// Rows beyond which only the first and last halves are shown; 0: every row.
    pub max_rows: usize,
    /// Terminal columns the table must fit in; None: as wide as it takes.
    pub width: Option<usize>,
}

impl TableLayout {
    /// Every row and value, whatever the width (`-c`, `-f`, piped input).
    #[cfg(test)]
    pub const ALL: TableLayout = TableLayout { max_rows: 0, width: None };
    /// The interactive shell's default row limit (DuckDB's).
    pub const SHELL_MAX_ROWS: usize = 40;
}

/// Writes one query's batches in `format` (a table laid out as `layout` says).
pub fn write_batches(
    out: &mut dyn Write,
    batches: &[RecordBatch],
    format: Format,
    layout: &TableLayout,
) -> io::Result<()> {
    let Some(first) = batches.first() else {
        // No schema to show; only the table format has something to say.
        if format == Format::Table {
            writeln!(out, "(0 rows)")?;
        }
        return Ok(());
    };
    let schema = first.schema();
    match format {
        Format::Table => write_table(out, &schema, batches, layout),
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

/// Text of a non-NULL value of `col` (through its formatter, or DuckDB's text of dates,
/// timestamps and intervals: `99999-12-31`, `0044-03-15 (BC)`, `1 day 02:00:00`).
fn text(col: &ArrayRef, f: &ArrayFormatter<'_>, r: usize) -> String {
    if let Some(ts) = col.as_any().downcast_ref::<TimestampMicrosecondArray>() {
        return gpusql_common::date::format_timestamp(ts.value(r));
    }
    if let Some(iv) = col.as_any().downcast_ref::<arrow::array::IntervalMonthDayNanoArray>() {
        return gpusql_common::interval::interval_of(iv.value(r)).to_text();
    }
    match col.as_any().downcast_ref::<arrow::array::Date32Array>() {
        Some(d) => gpusql_common::date::format_date(d.value(r) as i64),
        None => f.value(r).to_string(),
    }
}

fn is_numeric(t: &ArrowType) -> bool {
    t.is_numeric()
}

fn write_table(out: &mut dyn Write, schema: &Schema, batches: &[RecordBatch], layout: &TableLayout) -> io::Result<()> {
    let total: usize = batches.iter().map(|b| b.num_rows()).sum();
    // Rows [0, head) and [total - tail, total); a `…` row between where that leaves some out.
    let (head, tail) = if layout.max_rows > 0 && total > layout.max_rows {
        (layout.max_rows.div_ceil(2), layout.max_rows / 2)
    } else {
        (total, 0)
    };
    let options = FormatOptions::new().with_null("NULL");
    let mut rows: Vec<Vec<String>> = Vec::with_capacity(head + tail);
    let mut first_row = 0;
    for batch in batches {
        let n = batch.num_rows();
        let wanted = |r: usize| first_row + r < head || first_row + r >= total - tail;
        // (Only batches with rows shown are formatted: a result of millions of rows costs
        // the 40 shown.)
        if n > 0 && (first_row < head || first_row + n > total - tail) {
            let fmts = formatters(batch, &options)?;
            for r in (0..n).filter(|&r| wanted(r)) {
                rows.push(
                    batch
                        .columns()
                        .iter()
                        .zip(&fmts)
                        .map(|(c, f)| if c.is_null(r) { "NULL".to_string() } else { text(c, f, r) })
                        .collect(),
                );
            }
        }
        first_row += n;
    }
    let header: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let numeric: Vec<bool> = schema.fields().iter().map(|f| is_numeric(f.data_type())).collect();
    let natural: Vec<usize> = (0..header.len())
        .map(|c| rows.iter().map(|r| cell_width(&r[c])).chain([cell_width(&header[c])]).max().unwrap_or(0))
        .collect();
    let fit = fit_columns(&natural, layout.width);

    let mut table = Table::new();
    table.load_preset(presets::UTF8_FULL_CONDENSED);
    // Each shown column's cell from `cells`, with the `…` column where columns are left out.
    let layout_row = |cells: &[String], marker: &str| -> Vec<Cell> {
        let mut row = vec![];
        for (i, (&c, &cap)) in fit.columns.iter().zip(&fit.widths).enumerate() {
            if fit.gap_at == Some(i) {
                row.push(Cell::new(marker).set_alignment(CellAlignment::Center));
            }
            let cell = Cell::new(truncate(&cells[c], cap));
            row.push(if numeric[c] { cell.set_alignment(CellAlignment::Right) } else { cell });
        }
        if fit.gap_at == Some(fit.columns.len()) {
            row.push(Cell::new(marker).set_alignment(CellAlignment::Center));
        }
        row
    };
    table.set_header(layout_row(&header, "…"));
    let ellipsis = vec!["…".to_string(); header.len()];
    let elided = head + tail < total;
    for (i, r) in rows.iter().enumerate() {
        table.add_row(layout_row(r, "…"));
        if elided && i + 1 == head {
            let mut cells = layout_row(&ellipsis, "…");
            cells.iter_mut().for_each(|c| *c = c.clone().set_alignment(CellAlignment::Center));
            table.add_row(cells);
        }
    }
    writeln!(out, "{table}")?;
    writeln!(out, "{}", footer(total, head + tail, header.len(), fit.columns.len()))
}

/// `(N rows)`, and what is shown where that is less: `(1500 rows, 40 shown; 12 columns,
/// 7 shown)`.
fn footer(rows: usize, shown_rows: usize, columns: usize, shown_columns: usize) -> String {
    let mut s = format!("({rows} row{}", if rows == 1 { "" } else { "s" });
    if shown_rows < rows {
        s.push_str(&format!(", {shown_rows} shown"));
    }
    if shown_columns < columns {
        s.push_str(&format!("; {columns} columns, {shown_columns} shown"));
    }
    s.push(')');
    s
}

/// Display width of a cell: its widest line.
fn cell_width(s: &str) -> usize {
    s.lines().map(UnicodeWidthStr::width).max().unwrap_or(0)
}

/// `s` cut to `width` display columns per line, a cut line ending in `…`.
fn truncate(s: &str, width: usize) -> String {
    if cell_width(s) <= width {
        return s.to_string();
    }
    let cut = |line: &str| -> String {
        if line.width() <= width {
            return line.to_string();
        }
        let mut out = String::new();
        let mut w = 0;
        for ch in line.chars() {
            let cw = ch.width().unwrap_or(0);
            if w + cw + 1 > width {
                break;
            }
            out.push(ch);
            w += cw;
        }
        out.push('…');
        out
    };
    s.lines().map(cut).collect::<Vec<_>>().join("\n")
}

/// Columns no narrower than this are cut before any column is left out.
const MIN_COLUMN: usize = 8;
/// A column kept where columns are left out is cut to at most this (the table then
/// shows more of them, the water-filling below widening them again where room is left).
const KEPT_COLUMN: usize = 24;
/// Narrower terminals get the table as it is.
const MIN_TERMINAL: usize = 20;

/// Which columns a table shows and how wide each is.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fit {
    /// Indices of the shown columns, in order.
    columns: Vec<usize>,
    /// Display width each shown column's values are cut to.
    widths: Vec<usize>,
    /// Where among `columns` the `…` column of those left out goes.
    gap_at: Option<usize>,
}

/// Width of a table of columns `widths` wide (and a `…` column if `gap`): a border and
/// a space either side of each column (UTF8_FULL_CONDENSED).
fn table_width(widths: impl Iterator<Item = usize>, gap: bool) -> usize {
    let (n, sum) = widths.fold((0, 0), |(n, s), w| (n + 1, s + w));
    sum + 3 * (n + usize::from(gap)) + usize::from(gap) + 1
}

/// Fits columns of `natural` display widths into `width` terminal columns: as they are
/// where they fit; else the widest cut down to a common limit (no lower than
/// [`MIN_COLUMN`]); else the first and last columns kept (alternately, from the outside
/// in) and the middle ones left out.
fn fit_columns(natural: &[usize], width: Option<usize>) -> Fit {
    let all = Fit { columns: (0..natural.len()).collect(), widths: natural.to_vec(), gap_at: None };
    let Some(width) = width.filter(|&w| w >= MIN_TERMINAL) else { return all };
    if natural.is_empty() || table_width(natural.iter().copied(), false) <= width {
        return all;
    }
    if let Some(widths) = water_fill(natural, width, false) {
        return Fit { widths, ..all };
    }
    // Keep columns from both ends, alternately, while they fit at up to KEPT_COLUMN wide
    // (where the next one on one side does not, the other side may still take some).
    let n = natural.len();
    let (mut left, mut right) = (0, 0); // columns kept from the left and from the right
    while left + right < n {
        let fits = |next: usize| {
            let kept = (0..left).chain(n - right..n).chain([next]);
            table_width(kept.map(|c| natural[c].min(KEPT_COLUMN)), true) <= width
        };
        let sides = if left <= right { [true, false] } else { [false, true] };
        let Some(from_left) = sides.into_iter().find(|&l| fits(if l { left } else { n - 1 - right })) else { break };
        if from_left {
            left += 1;
        } else {
            right += 1;
        }
    }
    if left == 0 {
        // The first column does not fit at KEPT_COLUMN wide: it alone, however narrow.
        (left, right) = (1, 0);
    }
    let columns: Vec<usize> = (0..left).chain(n - right..n).collect();
    let kept: Vec<usize> = columns.iter().map(|&c| natural[c]).collect();
    let widths = water_fill(&kept, width, true).unwrap_or_else(|| {
        // One column and the gap on a narrow terminal: what is left of the width.
        let room = width.saturating_sub(table_width(std::iter::empty(), true) + 3).max(1);
        kept.iter().map(|&w| w.min(room)).collect()
    });
    let gap_at = Some(left);
    Fit { columns, widths, gap_at }
}

/// The widths of columns `natural` cut to the highest common limit (≥ MIN_COLUMN) at
/// which the table fits `width`, with what room is left given to the cut columns, left
/// to right; None where even MIN_COLUMN is too wide.
fn water_fill(natural: &[usize], width: usize, gap: bool) -> Option<Vec<usize>> {
    let fits = |limit: usize| table_width(natural.iter().map(|&w| w.min(limit)), gap) <= width;
    let max = natural.iter().copied().max().unwrap_or(0);
    if !fits(MIN_COLUMN.min(max)) {
        return None;
    }
    // The highest limit that fits (binary search: `fits` is monotone).
    let (mut lo, mut hi) = (MIN_COLUMN.min(max), max);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut widths: Vec<usize> = natural.iter().map(|&w| w.min(lo)).collect();
    let mut room = width - table_width(widths.iter().copied(), gap);
    for (w, &n) in widths.iter_mut().zip(natural) {
        if room == 0 {
            break;
        }
        if *w < n {
            *w += 1;
            room -= 1;
        }
    }
    Some(widths)
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
        write_batches(&mut out, &[batch()], format, &TableLayout::ALL).unwrap();
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

    /// A result of `n` rows (in batches of 30) of an integer `i` and a text column.
    fn numbers(n: i64) -> Vec<RecordBatch> {
        let schema = Arc::new(Schema::new(vec![
            Field::new("i", ArrowType::Int64, false),
            Field::new("s", ArrowType::Utf8, false),
        ]));
        (0..n)
            .step_by(30)
            .map(|start| {
                let ids: Vec<i64> = (start..(start + 30).min(n)).collect();
                let texts: Vec<String> = ids.iter().map(|i| format!("row{i}")).collect();
                let cols: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(ids)), Arc::new(StringArray::from(texts))];
                RecordBatch::try_new(schema.clone(), cols).unwrap()
            })
            .collect()
    }

    fn table_of(batches: &[RecordBatch], layout: TableLayout) -> String {
        let mut out = vec![];
        write_batches(&mut out, batches, Format::Table, &layout).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The values of column `i` shown, in order.
    fn shown_ids(table: &str) -> Vec<String> {
        table
            .lines()
            .filter_map(|l| l.strip_prefix('│')?.split(['│', '┆']).next().map(|c| c.trim().to_string()))
            .filter(|c| c != "i")
            .collect()
    }

    #[test]
    fn long_results_show_their_first_and_last_rows() {
        let t = table_of(&numbers(100), TableLayout { max_rows: 40, width: None });
        let ids = shown_ids(&t);
        let expected: Vec<String> =
            (0..20).map(|i| i.to_string()).chain(["…".to_string()]).chain((80..100).map(|i| i.to_string())).collect();
        assert_eq!(ids, expected, "{t}");
        assert!(t.contains("row19") && t.contains("row80") && !t.contains("row20 ") && !t.contains("row79"), "{t}");
        assert!(t.ends_with("(100 rows, 40 shown)\n"), "{t}");

        // An odd limit shows one more row before the gap than after it.
        let t = table_of(&numbers(100), TableLayout { max_rows: 5, width: None });
        assert_eq!(shown_ids(&t), ["0", "1", "2", "…", "98", "99"]);
        assert!(t.ends_with("(100 rows, 5 shown)\n"), "{t}");
        let t = table_of(&numbers(2), TableLayout { max_rows: 1, width: None });
        assert_eq!(shown_ids(&t), ["0", "…"]);
        assert!(t.ends_with("(2 rows, 1 shown)\n"), "{t}");
    }

    #[test]
    fn results_within_the_limit_or_without_one_are_whole() {
        let t = table_of(&numbers(40), TableLayout { max_rows: 40, width: None });
        assert_eq!(shown_ids(&t).len(), 40);
        assert!(t.ends_with("(40 rows)\n"), "{t}");
        let t = table_of(&numbers(100), TableLayout::ALL);
        assert_eq!(shown_ids(&t).len(), 100);
        assert!(t.ends_with("(100 rows)\n"), "{t}");
        assert!(table_of(&numbers(1), TableLayout::ALL).ends_with("(1 row)\n"));
    }

    #[test]
    fn other_formats_are_never_cut() {
        let layout = TableLayout { max_rows: 3, width: Some(20) };
        for format in [Format::Csv, Format::Json] {
            let mut out = vec![];
            write_batches(&mut out, &numbers(100), format, &layout).unwrap();
            let text = String::from_utf8(out).unwrap();
            assert!(text.lines().count() >= 100 && text.contains("row99") && !text.contains('…'), "{text}");
        }
    }

    /// Every line of `table` is at most `width` terminal columns wide.
    fn assert_fits(table: &str, width: usize) {
        for line in table.lines() {
            assert!(line.width() <= width, "{} > {width}: {line}\n{table}", line.width());
        }
    }

    #[test]
    fn long_values_are_cut_to_the_width() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", ArrowType::Int64, false),
            Field::new("comment", ArrowType::Utf8, false),
        ]));
        let long = "carefully final deposits detect slyly agai".repeat(5);
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(vec![1, 2])),
            Arc::new(StringArray::from(vec![long.as_str(), "short; 日本語のテキストです"])),
        ];
        let batch = RecordBatch::try_new(schema, cols).unwrap();
        let t = table_of(std::slice::from_ref(&batch), TableLayout { max_rows: 40, width: Some(60) });
        assert_fits(&t, 60);
        assert!(t.contains("carefully final") && t.contains('…'), "{t}");
        assert!(t.ends_with("(2 rows)\n"), "{t}");
        // Without a width, nothing is cut.
        let t = table_of(&[batch], TableLayout { max_rows: 40, width: None });
        assert!(t.contains(&long) && !t.contains('…'), "{t}");
    }

    #[test]
    fn wide_results_leave_out_middle_columns() {
        let n = 30;
        let fields: Vec<Field> =
            (0..n).map(|c| Field::new(format!("a_long_column_name_{c}"), ArrowType::Int64, false)).collect();
        let cols: Vec<ArrayRef> = (0..n).map(|c| Arc::new(Int64Array::from(vec![c as i64; 3])) as ArrayRef).collect();
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap();
        let t = table_of(&[batch], TableLayout { max_rows: 40, width: Some(100) });
        assert_fits(&t, 100);
        let footer = t.lines().last().unwrap();
        assert!(footer.starts_with("(3 rows; 30 columns, ") && footer.ends_with(" shown)"), "{t}");
        let header = t.lines().nth(1).unwrap();
        // The first and the last columns, and the marker of those left out.
        assert!(header.contains("a_long_") && header.contains('…'), "{t}");
        assert!(t.lines().nth(3).unwrap().trim_end_matches('│').trim_end().ends_with("29"), "{t}");
    }

    #[test]
    fn cutting_values() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abcd", 4), "abcd");
        assert_eq!(truncate("日本語テキスト", 5), "日本…");
        assert_eq!(truncate("line one\nline two is longer", 8), "line one\nline tw…");
    }

    #[test]
    fn fitted_tables_fit() {
        assert_eq!(fit_columns(&[3, 4], Some(80)), Fit { columns: vec![0, 1], widths: vec![3, 4], gap_at: None });
        assert_eq!(fit_columns(&[300, 4], None).widths, [300, 4]);
        // The widest column is cut first.
        assert_eq!(fit_columns(&[100, 10, 4], Some(40)).widths, [16, 10, 4]);
        // Small pseudo-random cases: whatever is shown fits and keeps the first column.
        let mut x: u64 = 42;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..2000 {
            let natural: Vec<usize> = (0..1 + next(40)).map(|_| 1 + next(60) as usize).collect();
            let width = MIN_TERMINAL + next(200) as usize;
            let fit = fit_columns(&natural, Some(width));
            assert_eq!(fit.columns[0], 0);
            assert!(fit.columns.windows(2).all(|w| w[0] < w[1]));
            let shown = table_width(fit.widths.iter().copied(), fit.gap_at.is_some());
            assert!(shown <= width, "{natural:?} in {width}: {fit:?}");
            assert!(fit.widths.iter().zip(&fit.columns).all(|(w, c)| *w >= 1 && *w <= natural[*c]));
            if fit.gap_at.is_none() {
                assert_eq!(fit.columns.len(), natural.len());
            }
        }
    }
}
