//! Host-to-GPU uploads at the speed of the link: the data is written by all cores into
//! pinned (page-locked) staging buffers, piece by piece, and each piece is copied by DMA
//! on one of several streams while the next is being written. A copy from pageable
//! memory goes through the driver's own small bounce buffer on one thread instead
//! (~1-9 GB/s against ~25 GB/s over an H100's PCIe link).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaEvent, CudaStream, PinnedHostSlice};

use crate::CudaError;

/// Bytes of one staging buffer: the largest piece of an upload.
pub const STAGING_BYTES: usize = 16 << 20;
/// Copy workers, each with its own stream and two staging buffers (one being filled
/// while the other is copied).
const MAX_WORKERS: usize = 8;

/// One part of an upload: `len` bytes at `offset` of the device buffer, which
/// `fill(dst)` writes (`dst.len() == len`, at most STAGING_BYTES).
pub struct Piece<'a> {
    pub offset: usize,
    pub len: usize,
    pub fill: Box<dyn Fn(&mut [u8]) + Send + Sync + 'a>,
}

/// Splits `len` bytes at `offset` into pieces of whole `unit`-byte values of at most
/// STAGING_BYTES: (offset, length, first value) each.
pub fn split(offset: usize, len: usize, unit: usize) -> impl Iterator<Item = (usize, usize, usize)> {
    let per = (STAGING_BYTES / unit.max(1)).max(1) * unit.max(1);
    (0..len.div_ceil(per)).map(move |i| (offset + i * per, per.min(len - i * per), i * per / unit.max(1)))
}

struct Worker {
    stream: Arc<CudaStream>,
    buffers: [(PinnedHostSlice<u8>, CudaEvent); 2],
}

/// The staging buffers and copy streams, made on the first large upload and kept.
pub(crate) struct Stager {
    workers: Vec<Mutex<Worker>>,
}

impl Stager {
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> Result<Stager, CudaError> {
        let n = std::thread::available_parallelism().map_or(4, |n| n.get()).clamp(2, MAX_WORKERS);
        let mut workers = vec![];
        for _ in 0..n {
            let stream = ctx.new_stream().map_err(|e| CudaError::driver("cuStreamCreate", e))?;
            let buffer = || -> Result<(PinnedHostSlice<u8>, CudaEvent), CudaError> {
                // SAFETY: the bytes are written (fill) before they are copied.
                let b = unsafe { ctx.alloc_pinned::<u8>(STAGING_BYTES) }
                    .map_err(|e| CudaError::driver("cuMemHostAlloc (staging buffer)", e))?;
                let e = ctx.new_event(None).map_err(|e| CudaError::driver("cuEventCreate", e))?;
                Ok((b, e))
            };
            workers.push(Mutex::new(Worker { stream, buffers: [buffer()?, buffer()?] }));
        }
        Ok(Stager { workers })
    }

    /// Writes and copies `pieces` into device memory at `dst` (a buffer allocated and
    /// ready: the caller synchronized its allocation), then waits for every copy.
    pub(crate) fn upload(&self, ctx: &Arc<CudaContext>, dst: u64, pieces: &[Piece]) -> Result<(), CudaError> {
        let next = AtomicUsize::new(0);
        let workers = self.workers.len().min(pieces.len()).max(1);
        let results: Vec<Result<(), CudaError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = self.workers[..workers]
                .iter()
                .map(|w| {
                    let next = &next;
                    scope.spawn(move || -> Result<(), CudaError> {
                        ctx.bind_to_thread().map_err(|e| CudaError::driver("cuCtxSetCurrent", e))?;
                        let mut w = w.lock().map_err(|_| CudaError::Driver("staging buffer lock poisoned".into()))?;
                        let Worker { stream, buffers } = &mut *w;
                        let mut turn = 0;
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(p) = pieces.get(i) else { break };
                            let (buf, done) = &mut buffers[turn % 2];
                            turn += 1;
                            // The buffer's previous copy must have finished before it is rewritten.
                            done.synchronize().map_err(|e| CudaError::driver("cuEventSynchronize", e))?;
                            let host = buf.as_mut_slice().map_err(|e| CudaError::driver("staging buffer", e))?;
                            let host = &mut host[..p.len];
                            (p.fill)(host);
                            // SAFETY: dst + offset .. + len lies in the caller's allocation, and
                            // `host` is pinned and not rewritten until `done` has passed.
                            unsafe {
                                cudarc::driver::result::memcpy_htod_async(
                                    dst + p.offset as u64,
                                    host,
                                    stream.cu_stream(),
                                )
                            }
                            .map_err(|e| CudaError::driver("cuMemcpyHtoDAsync", e))?;
                            done.record(stream).map_err(|e| CudaError::driver("cuEventRecord", e))?;
                        }
                        stream.synchronize().map_err(|e| CudaError::driver("upload", e))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(CudaError::Driver("upload worker panicked".into()))))
                .collect()
        });
        results.into_iter().collect()
    }
}
