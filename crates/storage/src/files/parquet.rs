//! Parquet files: a chunk per row group, decoded on first use for just the columns asked
//! (projection), with the row groups' min/max statistics for pruning.

use super::{check_same_columns, file_columns, io_error, FileColumns};
use crate::convert::{normalize_array, value_at};
use crate::host::{ChunkSource, FilesInfo, HostTable};
use arrow::array::{Array, ArrayRef};
use gpusql_common::{ColumnStatistics, DataType, Error, Result, Schema, TableStatistics};
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use std::path::PathBuf;
use std::sync::Arc;

struct ParquetFile {
    path: PathBuf,
    meta: ArrowReaderMetadata,
}

struct ParquetSource {
    files: Vec<ParquetFile>,
    /// Per chunk: (file, row group).
    chunks: Vec<(usize, usize)>,
    /// Per engine column: its root index in the files' schema, its leaf columns, its type.
    columns: Vec<(usize, Vec<usize>, DataType)>,
    bytes: u64,
}

pub fn open(paths: &[PathBuf], name: String, version: u64) -> Result<HostTable> {
    let mut files = vec![];
    let mut first: Option<FileColumns> = None;
    let mut bytes = 0;
    for p in paths {
        let file = std::fs::File::open(p).map_err(|e| io_error(p, e))?;
        bytes += file.metadata().map_or(0, |m| m.len());
        let meta = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
            .map_err(|e| io_error(p, format!("not a readable Parquet file ({e})")))?;
        let cols = file_columns(meta.schema());
        match &first {
            None => first = Some(cols),
            Some(f) => check_same_columns(&paths[0], f, p, &cols)?,
        }
        files.push(ParquetFile { path: p.clone(), meta });
    }
    let cols = first.ok_or_else(|| Error::Io("no files given".into()))?;
    let descr = files[0].meta.parquet_schema();
    let columns: Vec<(usize, Vec<usize>, DataType)> = cols
        .read
        .iter()
        .map(|(root, f)| {
            (*root, (0..descr.num_columns()).filter(|&l| descr.get_column_root_idx(l) == *root).collect(), f.ty)
        })
        .collect();
    let mut chunks = vec![];
    let mut chunk_rows = vec![];
    for (i, f) in files.iter().enumerate() {
        for (g, rg) in f.meta.metadata().row_groups().iter().enumerate() {
            chunks.push((i, g));
            chunk_rows.push(rg.num_rows().max(0) as usize);
        }
    }
    // Nullable where any file says so.
    let fields = cols
        .read
        .iter()
        .map(|(root, f)| {
            let nullable = files.iter().any(|pf| pf.meta.schema().field(*root).is_nullable());
            gpusql_common::Field::new(f.name.clone(), f.ty, nullable)
        })
        .collect();
    let statistics = statistics(&files, &cols)?;
    let source = Arc::new(ParquetSource { files, chunks, columns, bytes });
    let mut t = HostTable::from_source(name, Schema::new(fields), &chunk_rows, source, version);
    t.statistics = Some(Arc::new(statistics));
    t.unsupported = cols.unsupported;
    Ok(t)
}

/// Every row group's min, max and NULL count of every column, where the file has them
/// (not for DOUBLE columns: NaN orders differently in writers and in SQL).
fn statistics(files: &[ParquetFile], cols: &FileColumns) -> Result<TableStatistics> {
    let mut chunks = vec![];
    for f in files {
        let groups = f.meta.metadata().row_groups();
        let mut per_group: Vec<Vec<ColumnStatistics>> = groups
            .iter()
            .map(|rg| {
                vec![ColumnStatistics { rows: rg.num_rows().max(0) as usize, ..Default::default() }; cols.read.len()]
            })
            .collect();
        for (c, (_, field)) in cols.read.iter().enumerate() {
            if field.ty == DataType::Float64 {
                continue;
            }
            let Ok(conv) = StatisticsConverter::try_new(&field.name, f.meta.schema(), f.meta.parquet_schema()) else {
                continue;
            };
            let bounds =
                |a: parquet::errors::Result<ArrayRef>| a.ok().and_then(|a| normalize_array(&a, &field.ty).ok());
            let mins = bounds(conv.row_group_mins(groups.iter()));
            let maxes = bounds(conv.row_group_maxes(groups.iter()));
            let nulls = conv.row_group_null_counts(groups.iter()).ok();
            for (g, s) in per_group.iter_mut().enumerate() {
                let s = &mut s[c];
                let at = |a: &Option<ArrayRef>| {
                    a.as_ref()
                        .filter(|a| a.len() == groups.len() && a.is_valid(g))
                        .map(|a| value_at(a.as_ref(), &field.ty, g))
                };
                s.min = at(&mins);
                s.max = at(&maxes);
                s.nulls =
                    nulls.as_ref().filter(|n| n.len() == groups.len() && n.is_valid(g)).map(|n| n.value(g) as usize);
            }
        }
        chunks.extend(per_group);
    }
    Ok(TableStatistics { chunks })
}

/// Whether every data page of a column chunk is dictionary-encoded (the test the
/// parquet crate documents for its page-encoding mask).
fn all_dictionary_encoded(c: &parquet::file::metadata::ColumnChunkMetaData) -> bool {
    use parquet::basic::Encoding;
    c.dictionary_page_offset().is_some()
        && c.page_encoding_stats_mask()
            .is_some_and(|m| m.is_only(Encoding::PLAIN_DICTIONARY) || m.is_only(Encoding::RLE_DICTIONARY))
}

impl ChunkSource for ParquetSource {
    fn read(&self, chunk: usize, columns: &[usize]) -> Result<Vec<ArrayRef>> {
        let (fi, rg) = self.chunks[chunk];
        let f = &self.files[fi];
        let file = std::fs::File::open(&f.path).map_err(|e| io_error(&f.path, e))?;
        let mut roots: Vec<usize> = columns.iter().map(|&c| self.columns[c].0).collect();
        roots.sort_unstable();
        let mask = ProjectionMask::roots(f.meta.parquet_schema(), roots.iter().copied());
        let group = f.meta.metadata().row_group(rg);
        let rows = group.num_rows().max(1) as usize;
        let fail = |e: &dyn std::fmt::Display| io_error(&f.path, format!("row group {rg}: {e}"));
        // String columns whose every page is dictionary-encoded are read as dictionary
        // arrays: decoding keeps the file's dictionary instead of copying each row's bytes.
        let dictionary_roots: Vec<usize> = columns
            .iter()
            .filter(|&&c| {
                self.columns[c].2 == DataType::Utf8
                    && self.columns[c].1.iter().all(|&l| all_dictionary_encoded(group.column(l)))
            })
            .map(|&c| self.columns[c].0)
            .collect();
        // DECIMALs of up to 18 digits stored as integers are read as `Decimal64`: the file's
        // int64s as they are (no 16-byte widening), which is also their GPU layout.
        let descr = f.meta.parquet_schema();
        let decimal64_roots: Vec<usize> = columns
            .iter()
            .filter(|&&c| {
                let (_, leaves, ty) = &self.columns[c];
                matches!(ty, DataType::Decimal { precision, .. } if *precision <= 18)
                    && leaves.iter().all(|&l| {
                        matches!(
                            descr.column(l).physical_type(),
                            parquet::basic::Type::INT64 | parquet::basic::Type::INT32
                        )
                    })
            })
            .map(|&c| self.columns[c].0)
            .collect();
        let meta = if dictionary_roots.is_empty() && decimal64_roots.is_empty() {
            f.meta.clone()
        } else {
            let fields: Vec<arrow::datatypes::FieldRef> = f
                .meta
                .schema()
                .fields()
                .iter()
                .enumerate()
                .map(|(i, fd)| match fd.data_type() {
                    arrow::datatypes::DataType::Utf8 if dictionary_roots.contains(&i) => {
                        Arc::new(fd.as_ref().clone().with_data_type(arrow::datatypes::DataType::Dictionary(
                            Box::new(arrow::datatypes::DataType::Int32),
                            Box::new(arrow::datatypes::DataType::Utf8),
                        )))
                    }
                    arrow::datatypes::DataType::Decimal128(p, s) if decimal64_roots.contains(&i) => {
                        Arc::new(fd.as_ref().clone().with_data_type(arrow::datatypes::DataType::Decimal64(*p, *s)))
                    }
                    _ => fd.clone(),
                })
                .collect();
            let options = ArrowReaderOptions::new().with_schema(Arc::new(arrow::datatypes::Schema::new(fields)));
            ArrowReaderMetadata::try_new(f.meta.metadata().clone(), options).map_err(|e| fail(&e))?
        };
        let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(file, meta)
            .with_row_groups(vec![rg])
            .with_projection(mask)
            .with_batch_size(rows)
            .build()
            .map_err(|e| fail(&e))?;
        let batches = reader.collect::<std::result::Result<Vec<_>, _>>().map_err(|e| fail(&e))?;
        columns
            .iter()
            .map(|&c| {
                let (root, _, ty) = &self.columns[c];
                let pos = roots.binary_search(root).map_err(|_| fail(&"column missing from the projection"))?;
                let parts: Vec<ArrayRef> = batches.iter().map(|b| b.column(pos).clone()).collect();
                let whole = match parts.as_slice() {
                    [one] => one.clone(),
                    many => arrow::compute::concat(&many.iter().map(|a| a.as_ref()).collect::<Vec<_>>())
                        .map_err(|e| fail(&e))?,
                };
                if crate::host::is_stored_form(ty, whole.data_type()) {
                    return Ok(whole);
                }
                normalize_array(&whole, ty)
            })
            .collect()
    }

    fn decoded_bytes(&self, chunk: usize, columns: &[usize]) -> u64 {
        let (fi, rg) = self.chunks[chunk];
        let rg = self.files[fi].meta.metadata().row_group(rg);
        let rows = rg.num_rows().max(0) as u64;
        columns
            .iter()
            .map(|&c| {
                let (_, leaves, ty) = &self.columns[c];
                let stored: u64 = leaves.iter().map(|&l| rg.column(l).uncompressed_size().max(0) as u64).sum();
                // Decoded: at least the fixed-width values (and string offsets).
                stored.max(rows * crate::convert::gpu_width(ty) as u64)
            })
            .sum()
    }

    fn describe(&self) -> FilesInfo {
        FilesInfo {
            format: "Parquet",
            paths: self.files.iter().map(|f| f.path.display().to_string()).collect(),
            bytes: self.bytes,
        }
    }
}
