//! A band join's table on the GPU (`Stage::BandTable`, `gpusql_plan::band`): the rows the
//! sort and slice left dense, in key order, become the payload that band probes
//! binary-search, as one match range [0, n); where a probe searches an upper bound over
//! another column, that column's running maximum is kept beside them.

use super::buffers::{value_width, Arg, BuiltTable, Intermediate, OwnedColumn};
use super::{ptr, GpuExecutor, LaunchQueue};
use crate::gpu::device_store::cuda_error;
use crate::stats::KernelStat;
use gpusql_common::{Error, Result};

pub fn band_table(
    ex: &GpuExecutor,
    data: Intermediate,
    max: Option<usize>,
    stat: &mut KernelStat,
) -> Result<(BuiltTable, Option<gpusql_cuda::EndedTimer>)> {
    let dev = &ex.dev;
    let n = data.rows;
    let rows = u32::try_from(n).map_err(|_| Error::not_supported(format!("a band join over {n} build rows")))?;
    let mut q = LaunchQueue::default();
    let band_max = match max {
        Some(m) => {
            let c = data.columns.get(m).ok_or_else(|| Error::exec("band table column missing"))?;
            let entry = match gpusql_codegen::c_type(&c.ty) {
                "int32_t" => "running_max_i32",
                "int64_t" => "running_max_i64",
                "double" => "running_max_f64",
                other => return Err(Error::exec(format!("band join upper bound of C type {other}"))),
            };
            let out =
                dev.alloc_zeros::<u8>((n * value_width(&c.ty)).max(1), "band running maximum").map_err(cuda_error)?;
            if n > 0 {
                let f = ex.util(entry, stat)?;
                let args = [Arg::U64(ptr(&c.values, dev)), Arg::U64(ptr(&out, dev)), Arg::U64(n as u64)];
                // One block (see util.cu).
                q.push(f, &args, n, Some(1));
            }
            stat.bytes_read += n * value_width(&c.ty);
            Some(OwnedColumn { ty: c.ty, values: out, validity: None })
        }
        None => None,
    };
    let span = if q.is_empty() { None } else { Some(ex.submit_queue(q)?) };
    let upload = |v: u32, what: &str| dev.upload(&[v], what).map_err(cuda_error);
    let table = BuiltTable {
        slots: dev.upload(&[-1i32], "band table slot").map_err(cuda_error)?,
        slot_count: 1,
        keys: vec![],
        offsets: Some(upload(0, "band table offsets")?),
        counts: upload(rows, "band table rows")?,
        payload: data.columns.into_iter().map(Some).collect(),
        multi: true,
        entries: None,
        entry_slots: 0,
        direct: None,
        bitmap: None,
        iota: Default::default(),
        band_max,
    };
    Ok((table, span))
}
