//! Sort stage on the GPU: bitonic sort of a row permutation.

use super::buffers::{Arg, Intermediate};
use super::{ptr, GpuExecutor};
use crate::stats::KernelStat;
use gpusql_codegen::sort::generate_sort;
use gpusql_codegen::{Param, Part};
use gpusql_common::{Error, Result};
use gpusql_plan::SortColumn;
use gpusql_storage::device::cuda_error;

pub fn run(ex: &GpuExecutor, mut data: Intermediate, keys: &[SortColumn], input: usize) -> Result<(Intermediate, KernelStat)> {
    let spec = generate_sort(&data.schema, keys)?;
    let mut stat = KernelStat { name: format!("sort #{input}"), rows_in: data.rows, rows_out: data.rows, ..Default::default() };
    let n = data.rows;
    let npow2 = n.max(1).next_power_of_two();
    if npow2 > u32::MAX as usize / 2 {
        return Err(Error::not_supported(format!("sorting {n} rows")));
    }
    let iota = ex.load(&spec.source, &spec.iota_entry, &mut stat)?;
    let step = ex.load(&spec.source, &spec.step_entry, &mut stat)?;
    let perm = ex.dev.alloc_zeros::<u32>(npow2, "sort permutation").map_err(cuda_error)?;
    let p = ptr(&perm, &ex.dev);
    stat.ms += ex.launch(&iota, &[Arg::U64(p), Arg::U32(npow2 as u32)], npow2, None)?;
    let mut key_args = vec![];
    for q in &spec.params {
        let Param::Input { column, part } = q else { continue };
        let c = &data.columns[*column];
        key_args.push(Arg::U64(match part {
            Part::Validity => ptr(c.validity.as_ref().ok_or_else(|| Error::exec("sort key validity missing"))?, &ex.dev),
            _ => ptr(&c.values, &ex.dev),
        }));
        stat.bytes_read += n * super::value_width(&c.ty);
    }
    let timer = ex.dev.timer_start().map_err(cuda_error)?;
    let mut k = 2;
    while k <= npow2 {
        let mut j = k / 2;
        while j > 0 {
            let mut args = vec![Arg::U64(p), Arg::U32(npow2 as u32), Arg::U64(n as u64), Arg::U32(j as u32), Arg::U32(k as u32)];
            args.extend(key_args.iter().copied());
            ex.launch_untimed(&step, &args, npow2, None)?;
            j /= 2;
        }
        k *= 2;
    }
    stat.ms += timer.stop().map_err(cuda_error)?;
    data.perm = Some(perm);
    Ok((data, stat))
}
