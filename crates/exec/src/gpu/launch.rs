//! Launching kernels: the launch queue a stage's launches are gathered in and submitted
//! from between CUDA events (`LaunchQueue`, `GpuExecutor::submit_queue`), single
//! launches and their grids, and the gather/scatter kernels (`GpuExecutor::permute`).

use super::buffers::Arg;
use super::device_store::cuda_error;
use super::{ptr, GpuExecutor};
use crate::stats::KernelStat;
use gpusql_codegen::BLOCK_SIZE;
use gpusql_common::{Error, Result};
use gpusql_cuda::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

/// Blocks per SM for grid-stride kernels at most (8 x 256 threads = full occupancy).
const BLOCKS_PER_SM: u32 = 8;

impl GpuExecutor {
    /// Submits every launch of `q` in order, back to back, between CUDA events, without
    /// waiting: the span is read once the host has waited for the stream anyway
    /// (downloading what the launches counted).
    pub(crate) fn submit_queue(&self, q: LaunchQueue) -> Result<gpusql_cuda::EndedTimer> {
        let t0 = std::time::Instant::now();
        let timer = self.dev.timer_start().map_err(cuda_error)?;
        let t1 = std::time::Instant::now();
        for l in &q.launches {
            self.launch_untimed(&l.function, &l.args, l.work_items, l.max_blocks)?;
        }
        let t2 = std::time::Instant::now();
        let ended = timer.end_here().map_err(cuda_error)?;
        if self.config.profile_host {
            eprintln!(
                "queue: {} launches, timer start {:.1} us, submitting them {:.1} us (host), host total {:.1} us",
                q.launches.len(),
                (t1 - t0).as_secs_f64() * 1e6,
                (t2 - t1).as_secs_f64() * 1e6,
                t0.elapsed().as_secs_f64() * 1e6
            );
        }
        Ok(ended)
    }

    /// Queues a launch of `f` (no timing, no synchronization).
    pub(crate) fn launch_untimed(
        &self,
        f: &CudaFunction,
        args: &[Arg],
        work_items: usize,
        max_blocks: Option<u32>,
    ) -> Result<()> {
        if self.config.profile_launches {
            let timer = self.dev.timer_start().map_err(cuda_error)?;
            self.queue_launch(f, args, work_items, max_blocks)?;
            let ms = timer.stop().map_err(cuda_error)?;
            eprintln!("launch: {} args, {work_items} work items: {ms:.3} ms", args.len());
            return Ok(());
        }
        self.queue_launch(f, args, work_items, max_blocks)
    }

    fn queue_launch(&self, f: &CudaFunction, args: &[Arg], work_items: usize, max_blocks: Option<u32>) -> Result<()> {
        let blocks = work_items.div_ceil(BLOCK_SIZE as usize).max(1);
        let blocks = max_blocks.map_or(blocks, |m| blocks.min(m as usize)) as u32;
        let cfg = LaunchConfig { grid_dim: (blocks.max(1), 1, 1), block_dim: (BLOCK_SIZE, 1, 1), shared_mem_bytes: 0 };
        let u64s: Vec<u64> = args.iter().map(|a| if let Arg::U64(v) = a { *v } else { 0 }).collect();
        let u32s: Vec<u32> = args.iter().map(|a| if let Arg::U32(v) = a { *v } else { 0 }).collect();
        let stream = self.dev.stream();
        let mut b = stream.launch_builder(f);
        for (i, a) in args.iter().enumerate() {
            match a {
                Arg::U64(_) => b.arg(&u64s[i]),
                Arg::U32(_) => b.arg(&u32s[i]),
            };
        }
        // SAFETY: the generated kernel's parameter list is exactly `args` (codegen's
        // `params`), and every pointer refers to a live allocation of the needed size.
        unsafe { b.launch(cfg) }.map_err(|e| Error::Gpu(format!("kernel launch failed: {e:?}")))?;
        self.hold(|h| h.functions.push(f.clone()));
        Ok(())
    }

    /// Moves `n` values of `width` bytes through an index array (`idx`: a device pointer
    /// to n u32) with the result-assembly kernels: gather (`out[i] = in[idx[i]]`, result
    /// rows) or scatter (`out[idx[i]] = in[i]`, hash-table payload grouped by key). The
    /// launch is added to `queue`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn permute(
        &self,
        how: Permute,
        input: &CudaSlice<u8>,
        width: usize,
        idx: u64,
        n: usize,
        queue: &mut LaunchQueue,
        stat: &mut KernelStat,
    ) -> Result<CudaSlice<u8>> {
        let (kernel, what) = match how {
            Permute::Gather => ("gather", "result column"),
            Permute::Scatter => ("scatter", "hash table payload"),
        };
        let out = self.dev.alloc_zeros::<u8>((n * width).max(16), what).map_err(cuda_error)?;
        if n > 0 {
            let f = self.util(&format!("{kernel}_{width}"), stat)?;
            let args =
                [Arg::U64(ptr(input, &self.dev)), Arg::U64(idx), Arg::U64(ptr(&out, &self.dev)), Arg::U64(n as u64)];
            queue.push(f, &args, n, Some(1024));
        }
        Ok(out)
    }

    pub(super) fn grid_limit(&self) -> u32 {
        self.dev.sm_count() * BLOCKS_PER_SM
    }

    /// The grid of a grid-stride kernel: as many blocks as can be resident at once. A kernel
    /// whose registers or shared memory fit fewer than 8 blocks per SM would otherwise run
    /// its last blocks as a second, mostly empty wave (SSB Q3.1's probe kernel: 40
    /// registers, 6 blocks per SM, 8 launched: 1.33 waves).
    pub(super) fn resident_grid(&self, f: &CudaFunction) -> u32 {
        let per_sm = f.occupancy_max_active_blocks_per_multiprocessor(BLOCK_SIZE, 0, None).unwrap_or(BLOCKS_PER_SM);
        self.dev.sm_count() * per_sm.clamp(1, BLOCKS_PER_SM)
    }
}

/// Kernel launches gathered while their buffers are allocated and their kernels looked
/// up, then submitted together (`GpuExecutor::submit_queue`): the host's work between them
/// would otherwise leave the GPU idle inside the timed span (a hash build's ten small
/// finishing kernels took 60-140 us of host time for ~25 us of GPU work).
#[derive(Default)]
pub(crate) struct LaunchQueue {
    launches: Vec<QueuedLaunch>,
    /// Scratch buffers the launches use, freed after them (frees are stream-ordered: one
    /// freed before its kernel is submitted could be handed to another buffer first).
    kept: Vec<Box<dyn std::any::Any>>,
}

struct QueuedLaunch {
    function: CudaFunction,
    args: Vec<Arg>,
    work_items: usize,
    max_blocks: Option<u32>,
}

impl LaunchQueue {
    /// Adds a launch of `function`; the buffers `args` point to must live until the
    /// queue has run.
    pub fn push(&mut self, function: CudaFunction, args: &[Arg], work_items: usize, max_blocks: Option<u32>) {
        self.launches.push(QueuedLaunch { function, args: args.to_vec(), work_items, max_blocks });
    }

    /// Keeps `buffer` alive until the queue has run.
    pub fn keep<T: 'static>(&mut self, buffer: T) {
        self.kept.push(Box::new(buffer));
    }

    pub fn is_empty(&self) -> bool {
        self.launches.is_empty()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Permute {
    Gather,
    Scatter,
}
