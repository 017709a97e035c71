//! Exclusive prefix sums on the GPU: a hash build's rows per key (join.rs) and a
//! result's string offsets (result.rs).

use super::buffers::Arg;
use super::device_store::cuda_error;
use super::{ptr, GpuExecutor, LaunchQueue};
use crate::stats::KernelStat;
use gpusql_common::Result;
use gpusql_cuda::CudaSlice;

/// Exclusive prefix sum of `n` values on the GPU, summed as `O` (256 per block, block
/// totals scanned recursively); the launches are added to `q`. `I` and `O` are u32 or u64
/// (`scan_blocks_<in bytes>_<out bytes>` in util.cu).
pub fn exclusive_scan<I: ScanValue, O: ScanValue>(
    ex: &GpuExecutor,
    input: &CudaSlice<I>,
    n: usize,
    q: &mut LaunchQueue,
    stat: &mut KernelStat,
) -> Result<CudaSlice<O>> {
    let out = ex.dev.alloc_zeros::<O>(n.max(1), "prefix sum").map_err(cuda_error)?;
    if n == 0 {
        return Ok(out);
    }
    let blocks = n.div_ceil(256);
    let sums = ex.dev.alloc_zeros::<O>(blocks, "prefix sum blocks").map_err(cuda_error)?;
    let (iw, ow) = (std::mem::size_of::<I>(), std::mem::size_of::<O>());
    let f = ex.util(&format!("scan_blocks_{iw}_{ow}"), stat)?;
    q.push(
        f,
        &[
            Arg::U64(ptr(input, &ex.dev)),
            Arg::U64(ptr(&out, &ex.dev)),
            Arg::U64(ptr(&sums, &ex.dev)),
            Arg::U64(n as u64),
        ],
        n,
        None,
    );
    if blocks > 1 {
        let block_offsets = exclusive_scan::<O, O>(ex, &sums, blocks, q, stat)?;
        let f = ex.util(&format!("add_block_offsets_{ow}"), stat)?;
        q.push(f, &[Arg::U64(ptr(&out, &ex.dev)), Arg::U64(ptr(&block_offsets, &ex.dev)), Arg::U64(n as u64)], n, None);
        q.keep(block_offsets);
    }
    q.keep(sums);
    Ok(out)
}

/// A value `exclusive_scan` sums.
pub trait ScanValue:
    gpusql_cuda::cudarc::driver::DeviceRepr + gpusql_cuda::cudarc::driver::ValidAsZeroBits + 'static
{
}
impl ScanValue for u32 {}
impl ScanValue for u64 {}
