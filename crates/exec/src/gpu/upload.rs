//! A table column's chunks into the GPU layout, written straight into the pinned
//! staging buffers of `GpuDevice::upload_pieces` by all cores (no whole-column copy on
//! the host first):
//! - fixed-width values, little-endian: INTEGER/DATE 4 bytes, BIGINT/DOUBLE 8, DECIMAL
//!   8 (precision <= 18) or 16, BOOLEAN one byte;
//! - strings: the bytes of every row one after the other, and `int64` offsets (rows + 1:
//!   no limit on a column's bytes);
//! - one validity byte per row (1: a value) for nullable columns.

use arrow::array::*;
use arrow::datatypes::{Date32Type, Float64Type, Int32Type, Int64Type, TimestampMicrosecondType};
use gpusql_common::{DataType, Error, Result};
use gpusql_cuda::staging::split;
use gpusql_cuda::{CudaSlice, GpuDevice, Piece};

/// The device buffers of one column.
pub struct Uploaded {
    pub values: CudaSlice<u8>,
    /// Strings: rows + 1 `int64` offsets into `values`.
    pub offsets: Option<CudaSlice<u8>>,
    pub validity: Option<CudaSlice<u8>>,
    /// Bytes uploaded.
    pub bytes: usize,
}

/// Uploads `chunks` (arrays of `ty`'s Arrow type, in row order) as one column.
pub fn upload_column(
    dev: &GpuDevice,
    chunks: &[ArrayRef],
    ty: &DataType,
    nullable: bool,
    what: &str,
) -> Result<Uploaded> {
    let rows: usize = chunks.iter().map(|a| a.len()).sum();
    let mut starts = Vec::with_capacity(chunks.len());
    let mut at = 0;
    for a in chunks {
        starts.push(at);
        at += a.len();
    }
    let err = |e| super::device_store::cuda_error(e);
    let bad = || Error::exec(format!("{what}: column data does not match its type {ty}"));
    let mut bytes = 0;
    let (values, offsets) = match ty {
        DataType::Utf8 => {
            let strings: Vec<&StringArray> = chunks
                .iter()
                .map(|a| a.as_any().downcast_ref::<StringArray>())
                .collect::<Option<_>>()
                .ok_or_else(bad)?;
            // Each chunk's bytes start where the previous chunk's end.
            let mut base = Vec::with_capacity(strings.len());
            let mut total = 0usize;
            for s in &strings {
                base.push(total);
                let o = s.value_offsets();
                total += (o[s.len()] - o[0]) as usize;
            }
            let mut pieces = vec![];
            for (k, s) in strings.iter().enumerate() {
                let o = s.value_offsets();
                let data = &s.value_data()[o[0] as usize..o[s.len()] as usize];
                for (off, len, first) in split(base[k], data.len(), 1) {
                    pieces.push(Piece {
                        offset: off,
                        len,
                        fill: Box::new(move |dst: &mut [u8]| dst.copy_from_slice(&data[first..first + len])),
                    });
                }
            }
            let values = dev.upload_pieces(total, &pieces, what).map_err(err)?;
            let mut pieces = row_pieces(chunks, &starts, 8, |k, a, first, dst| {
                let s = a.as_any().downcast_ref::<StringArray>().expect("checked above");
                let o = s.value_offsets();
                for (i, d) in dst.chunks_exact_mut(8).enumerate() {
                    d.copy_from_slice(&((base[k] + (o[first + i] - o[0]) as usize) as i64).to_le_bytes());
                }
            });
            pieces.push(Piece {
                offset: rows * 8,
                len: 8,
                fill: Box::new(move |dst: &mut [u8]| dst.copy_from_slice(&(total as i64).to_le_bytes())),
            });
            let offsets = dev.upload_pieces((rows + 1) * 8, &pieces, what).map_err(err)?;
            bytes += total + (rows + 1) * 8;
            (values, Some(offsets))
        }
        _ => {
            let width = gpusql_storage::convert::gpu_width(ty);
            check_types(chunks, ty).ok_or_else(bad)?;
            let pieces = match ty {
                DataType::Boolean => row_pieces(chunks, &starts, 1, |_, a, first, dst| {
                    let b = a.as_any().downcast_ref::<BooleanArray>().expect("checked");
                    for (i, d) in dst.iter_mut().enumerate() {
                        *d = b.value(first + i) as u8;
                    }
                }),
                DataType::Int32 => row_pieces(chunks, &starts, 4, |_, a, first, dst| {
                    copy_values(&a.as_primitive::<Int32Type>().values()[first..], dst)
                }),
                DataType::Date => row_pieces(chunks, &starts, 4, |_, a, first, dst| {
                    copy_values(&a.as_primitive::<Date32Type>().values()[first..], dst)
                }),
                DataType::Int64 => row_pieces(chunks, &starts, 8, |_, a, first, dst| {
                    copy_values(&a.as_primitive::<Int64Type>().values()[first..], dst)
                }),
                DataType::Timestamp => row_pieces(chunks, &starts, 8, |_, a, first, dst| {
                    copy_values(&a.as_primitive::<TimestampMicrosecondType>().values()[first..], dst)
                }),
                DataType::Float64 => row_pieces(chunks, &starts, 8, |_, a, first, dst| {
                    copy_values(&a.as_primitive::<Float64Type>().values()[first..], dst)
                }),
                DataType::Decimal { precision, .. } if *precision <= 18 => {
                    row_pieces(chunks, &starts, 8, |_, a, first, dst| {
                        // Kept as the file's int64s (`Decimal64`): already the GPU layout.
                        if let Some(d64) = a.as_any().downcast_ref::<Decimal64Array>() {
                            return copy_values(&d64.values()[first..], dst);
                        }
                        let v = a.as_any().downcast_ref::<Decimal128Array>().expect("checked").values();
                        for (i, d) in dst.chunks_exact_mut(8).enumerate() {
                            d.copy_from_slice(&(v[first + i] as i64).to_le_bytes());
                        }
                    })
                }
                DataType::Decimal { .. } => row_pieces(chunks, &starts, 16, |_, a, first, dst| {
                    copy_values(&a.as_any().downcast_ref::<Decimal128Array>().expect("checked").values()[first..], dst)
                }),
                // months, days (i32 each) and microseconds (i64): prelude.cu's `Interval`.
                DataType::Interval => row_pieces(chunks, &starts, 16, |_, a, first, dst| {
                    let v = a.as_any().downcast_ref::<IntervalMonthDayNanoArray>().expect("checked");
                    for (i, d) in dst.chunks_exact_mut(16).enumerate() {
                        let iv = gpusql_storage::convert::interval_of(v.value(first + i));
                        d[0..4].copy_from_slice(&iv.months.to_le_bytes());
                        d[4..8].copy_from_slice(&iv.days.to_le_bytes());
                        d[8..16].copy_from_slice(&iv.micros.to_le_bytes());
                    }
                }),
                DataType::Utf8 => unreachable!("strings above"),
            };
            bytes += rows * width;
            (dev.upload_pieces(rows * width, &pieces, what).map_err(err)?, None)
        }
    };
    let validity = if nullable {
        let pieces = row_pieces(chunks, &starts, 1, |_, a, first, dst| match a.nulls() {
            Some(n) => {
                for (i, d) in dst.iter_mut().enumerate() {
                    *d = n.is_valid(first + i) as u8;
                }
            }
            None => dst.fill(1),
        });
        bytes += rows;
        Some(dev.upload_pieces(rows, &pieces, what).map_err(err)?)
    } else {
        None
    };
    Ok(Uploaded { values, offsets, validity, bytes })
}

/// Uploads a host vector through the staging buffers.
pub fn upload_slice<T: gpusql_cuda::DeviceRepr + Copy + Sync>(
    dev: &GpuDevice,
    v: &[T],
    what: &str,
) -> Result<CudaSlice<T>> {
    let bytes = as_bytes(v);
    let pieces: Vec<Piece> = split(0, bytes.len(), 1)
        .map(|(off, len, _)| Piece {
            offset: off,
            len,
            fill: Box::new(move |dst: &mut [u8]| dst.copy_from_slice(&bytes[off..off + len])),
        })
        .collect();
    dev.upload_pieces(bytes.len(), &pieces, what).map_err(super::device_store::cuda_error)
}

/// Whether every chunk is of the Arrow type the engine stores for `ty` (or `Decimal64`
/// for a DECIMAL of up to 18 digits: see `HostTable::data`).
fn check_types(chunks: &[ArrayRef], ty: &DataType) -> Option<()> {
    let want = ty.to_arrow();
    chunks
        .iter()
        .all(|a| {
            a.data_type() == &want
                || (matches!(ty, DataType::Decimal { .. }) && gpusql_storage::host::is_stored_form(ty, a.data_type()))
        })
        .then_some(())
}

/// Pieces covering `width` bytes per row of every chunk: `convert(chunk index, chunk,
/// first row, dst)` writes rows first.. of the chunk into dst (whole rows).
fn row_pieces<'a, F>(chunks: &'a [ArrayRef], starts: &[usize], width: usize, convert: F) -> Vec<Piece<'a>>
where
    F: Fn(usize, &'a dyn Array, usize, &mut [u8]) + Copy + Send + Sync + 'a,
{
    let mut out = vec![];
    for (k, a) in chunks.iter().enumerate() {
        let a: &'a dyn Array = a.as_ref();
        for (off, len, first) in split(starts[k] * width, a.len() * width, width) {
            out.push(Piece { offset: off, len, fill: Box::new(move |dst: &mut [u8]| convert(k, a, first, dst)) });
        }
    }
    out
}

/// Copies the first `dst.len()` bytes' worth of `v` into `dst`.
fn copy_values<T: Copy>(v: &[T], dst: &mut [u8]) {
    let b = as_bytes(v);
    dst.copy_from_slice(&b[..dst.len()]);
}

fn as_bytes<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: plain-old-data numbers viewed as their bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}
