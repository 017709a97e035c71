//! Writing tables and query results to files (COPY … TO, `gpusql datagen --format`):
//! the arrow-rs writers, into a temporary file renamed into place once complete (a
//! failed write leaves no half-written file under the name).

use super::io_error;
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use gpusql_common::{Error, FileFormat, Result, WriteOptions};
use std::path::Path;

/// Rows per Parquet row group (parquet's default: 1M rows).
pub const ROW_GROUP_ROWS: usize = 1 << 20;

/// `b` with its INTERVAL columns as DuckDB's text of them (`1 day 02:00:00`), which CSV
/// holds (arrow's CSV writer spells them its own way).
fn intervals_as_text(b: &RecordBatch) -> Result<RecordBatch> {
    use arrow::array::{Array, IntervalMonthDayNanoArray, StringArray};
    if !b.columns().iter().any(|c| c.as_any().is::<IntervalMonthDayNanoArray>()) {
        return Ok(b.clone());
    }
    let mut fields = vec![];
    let mut columns: Vec<arrow::array::ArrayRef> = vec![];
    for (f, c) in b.schema().fields().iter().zip(b.columns()) {
        match c.as_any().downcast_ref::<IntervalMonthDayNanoArray>() {
            Some(iv) => {
                let text: StringArray = (0..iv.len())
                    .map(|i| iv.is_valid(i).then(|| gpusql_common::interval::interval_of(iv.value(i)).to_text()))
                    .collect();
                fields.push(arrow::datatypes::Field::new(f.name(), arrow::datatypes::DataType::Utf8, f.is_nullable()));
                columns.push(std::sync::Arc::new(text));
            }
            None => {
                fields.push(f.as_ref().clone());
                columns.push(c.clone());
            }
        }
    }
    let schema = std::sync::Arc::new(arrow::datatypes::Schema::new(fields));
    RecordBatch::try_new(schema, columns).map_err(|e| Error::exec(e.to_string()))
}

/// Writes `batches` (of `schema`) to `path`; returns the rows written.
pub fn write_batches(path: &Path, opts: &WriteOptions, schema: SchemaRef, batches: &[RecordBatch]) -> Result<usize> {
    let mut w = FileWriter::create(path, opts, schema)?;
    for b in batches {
        w.write(b)?;
    }
    w.finish()
}

/// A file being written batch by batch (large data need not be held at once).
pub struct FileWriter {
    /// None once finished.
    inner: Option<Inner>,
    tmp: std::path::PathBuf,
    path: std::path::PathBuf,
    rows: usize,
}

enum Inner {
    Parquet(parquet::arrow::ArrowWriter<std::fs::File>),
    Csv(arrow::csv::Writer<std::io::BufWriter<std::fs::File>>),
    Arrow(arrow::ipc::writer::FileWriter<std::io::BufWriter<std::fs::File>>),
}

impl FileWriter {
    pub fn create(path: &Path, opts: &WriteOptions, schema: SchemaRef) -> Result<FileWriter> {
        let name = path.file_name().ok_or_else(|| Error::Io(format!("'{}' is not a file name", path.display())))?;
        let interval = |f: &arrow::datatypes::Field| matches!(f.data_type(), arrow::datatypes::DataType::Interval(_));
        if opts.format == FileFormat::Parquet {
            if let Some(f) = schema.fields().iter().find(|f| interval(f)) {
                return Err(Error::not_supported(format!(
                    "writing INTERVAL column {} to Parquet (CAST it to VARCHAR, or write CSV or Arrow)",
                    f.name()
                )));
            }
        }
        let tmp = path.with_file_name(format!(".{}.tmp", name.to_string_lossy()));
        let file = std::fs::File::create(&tmp).map_err(|e| io_error(path, e))?;
        let fail = |e: &dyn std::fmt::Display| io_error(path, e);
        let inner = match opts.format {
            FileFormat::Parquet => {
                let props = parquet::file::properties::WriterProperties::builder()
                    .set_compression(parquet::basic::Compression::SNAPPY)
                    .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
                    .build();
                Inner::Parquet(parquet::arrow::ArrowWriter::try_new(file, schema, Some(props)).map_err(|e| fail(&e))?)
            }
            // Timestamps as DuckDB writes them: a space, not `T`; a fraction (of 3, 6 or 9
            // digits, chrono's `%.f`) only where it is not zero.
            FileFormat::Csv => Inner::Csv(
                arrow::csv::WriterBuilder::new()
                    .with_header(opts.header)
                    .with_delimiter(opts.delimiter)
                    .with_timestamp_format("%Y-%m-%d %H:%M:%S%.f".into())
                    .build(std::io::BufWriter::new(file)),
            ),
            FileFormat::Arrow => Inner::Arrow(
                arrow::ipc::writer::FileWriter::try_new(std::io::BufWriter::new(file), &schema)
                    .map_err(|e| fail(&e))?,
            ),
        };
        Ok(FileWriter { inner: Some(inner), tmp, path: path.to_path_buf(), rows: 0 })
    }

    pub fn write(&mut self, b: &RecordBatch) -> Result<()> {
        let fail = |e: &dyn std::fmt::Display| io_error(&self.path, e);
        match self.inner.as_mut().ok_or_else(|| Error::exec("file already finished"))? {
            Inner::Parquet(w) => w.write(b).map_err(|e| fail(&e))?,
            Inner::Csv(w) => w.write(&intervals_as_text(b)?).map_err(|e| fail(&e))?,
            Inner::Arrow(w) => w.write(b).map_err(|e| fail(&e))?,
        }
        self.rows += b.num_rows();
        Ok(())
    }

    /// Completes the file and moves it into place; returns the rows written.
    pub fn finish(mut self) -> Result<usize> {
        let path = self.path.clone();
        let fail = |e: &dyn std::fmt::Display| io_error(&path, e);
        match self.inner.take().ok_or_else(|| Error::exec("file already finished"))? {
            Inner::Parquet(w) => {
                w.close().map_err(|e| fail(&e))?;
            }
            Inner::Csv(w) => {
                let mut f = w.into_inner();
                std::io::Write::flush(&mut f).map_err(|e| fail(&e))?;
            }
            Inner::Arrow(mut w) => w.finish().map_err(|e| fail(&e))?,
        }
        std::fs::rename(&self.tmp, &self.path).map_err(|e| fail(&e))?;
        Ok(self.rows)
    }
}

impl Drop for FileWriter {
    fn drop(&mut self) {
        // Unfinished (an error on the way): no partial file stays behind.
        let _ = std::fs::remove_file(&self.tmp);
    }
}
