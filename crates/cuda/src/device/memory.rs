//! `GpuDevice`'s memory: allocations and copies that name what they are for in their
//! out-of-memory errors, checked against free memory first, and the stream-ordered pool
//! they come from.

use std::sync::atomic::Ordering;

use cudarc::driver::sys::CUresult;
use cudarc::driver::{CudaContext, CudaSlice, DevicePtr, DeviceRepr, DriverError, ValidAsZeroBits};

use super::GpuDevice;
use crate::staging::{Piece, Stager};
use crate::CudaError;

/// Allocations from this size up are checked against free memory before they are made.
const CHECKED_ALLOCATION_BYTES: usize = 16 << 20;
/// Uploads at least this large go through the pinned staging buffers (`staging`).
const STAGED_UPLOAD_BYTES: usize = 4 << 20;

/// Downloads of at most this many bytes in all go through pinned memory in one round
/// trip; larger ones (bandwidth-bound anyway) copy into pageable memory piece by piece.
const PINNED_DOWNLOAD_MAX_BYTES: usize = 64 << 20;

impl GpuDevice {
    /// Bytes successfully allocated through [`GpuDevice::alloc_zeros`] and
    /// [`GpuDevice::upload`] since open (or the last reset). A running total: frees
    /// are not subtracted (cudarc frees on drop, which we do not observe), so this is
    /// "bytes this device has handed out", useful per query after a reset.
    pub fn allocated_bytes(&self) -> usize {
        self.allocated.load(Ordering::Relaxed)
    }

    /// Resets [`GpuDevice::allocated_bytes`] to 0.
    pub fn reset_allocated_bytes(&self) {
        self.allocated.store(0, Ordering::Relaxed);
    }

    /// Fails with `OutOfMemory` if `bytes` cannot fit in free memory.
    /// (cuMemGetInfo costs microseconds: only requests of at least
    /// CHECKED_ALLOCATION_BYTES ask it.)
    fn check_fits(&self, bytes: usize, what: &str) -> Result<(), CudaError> {
        let Ok(free) = self.try_free_memory() else {
            return Ok(()); // cannot tell: let the allocation itself decide
        };
        if bytes <= free {
            return Ok(());
        }
        // Freed buffers stay in the stream-ordered pool (keep_freed_memory) and count
        // as used: wait for queued frees, hand the pool's unused memory back, look again.
        self.not_capturing("making room")?;
        let _ = self.stream().synchronize();
        trim_pool(&self.ctx);
        let free = self.try_free_memory().unwrap_or(free);
        if bytes <= free {
            Ok(())
        } else {
            Err(CudaError::OutOfMemory { what: what.to_string(), requested: bytes, free })
        }
    }

    fn alloc_error(&self, op: &str, what: &str, bytes: usize, e: DriverError) -> CudaError {
        if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            CudaError::OutOfMemory { what: what.to_string(), requested: bytes, free: self.free_memory() }
        } else {
            CudaError::driver(&format!("{op} for {what}"), e)
        }
    }

    fn byte_size<T>(&self, n: usize, what: &str) -> Result<usize, CudaError> {
        n.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| CudaError::OutOfMemory {
            what: what.to_string(),
            requested: usize::MAX,
            free: self.free_memory(),
        })
    }

    /// Allocates `n` zeroed elements. `what` names the buffer in error messages
    /// ("lineitem.l_extendedprice").
    pub fn alloc_zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        n: usize,
        what: &str,
    ) -> Result<CudaSlice<T>, CudaError> {
        let bytes = self.byte_size::<T>(n, what)?;
        if let Some(kernels) = self.graph_kernels().filter(|_| self.capturing_here()) {
            let slice = self.alloc_unset::<T>(n, what)?;
            kernels.zero(self, &slice, bytes)?;
            return Ok(slice);
        }
        self.with_room(bytes, what, "allocation", || self.stream().alloc_zeros::<T>(n))
    }

    /// Allocates `n` elements left as they are (no memset): for buffers every element of
    /// which the kernels write before anything reads it (a 60 M-row hash build's rows and
    /// slots: ~2 GB of memsets a run otherwise).
    pub fn alloc_unset<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        n: usize,
        what: &str,
    ) -> Result<CudaSlice<T>, CudaError> {
        let bytes = self.byte_size::<T>(n, what)?;
        // SAFETY: T is a plain number type (any bits are a value); callers write before reading.
        self.with_room(bytes, what, "allocation", || unsafe { self.stream().alloc::<T>(n) })
    }

    /// Copies `host` to a new device buffer.
    pub fn upload<T: DeviceRepr>(&self, host: &[T], what: &str) -> Result<CudaSlice<T>, CudaError> {
        let bytes = std::mem::size_of_val(host);
        self.not_capturing(what)?;
        self.with_room(bytes, what, "upload", || self.stream().clone_htod(host))
    }

    /// Uploads `len` bytes into a new device buffer; `pieces` cover [0, len) and write
    /// their bytes when asked. Uploads of at least STAGED_UPLOAD_BYTES are written by all
    /// cores into pinned staging buffers and copied on several streams at once
    /// (`staging`); smaller ones go through one pageable copy.
    pub fn upload_pieces<T: DeviceRepr>(
        &self,
        len: usize,
        pieces: &[Piece],
        what: &str,
    ) -> Result<CudaSlice<T>, CudaError> {
        self.not_capturing(what)?;
        let size = std::mem::size_of::<T>().max(1);
        let n = len.div_ceil(size).max(16 / size).max(1);
        // SAFETY: every byte of [0, len) is written by the pieces before use.
        let slice = self.with_room(n * size, what, "upload", || unsafe { self.stream().alloc::<T>(n) })?;
        if len < STAGED_UPLOAD_BYTES {
            let mut host = vec![0u8; len];
            for p in pieces {
                (p.fill)(&mut host[p.offset..p.offset + p.len]);
            }
            if len > 0 {
                let dst = {
                    let (p, _sync) = slice.device_ptr(self.stream());
                    p
                };
                // SAFETY: dst holds at least len bytes; a pageable source is copied
                // before the call returns.
                unsafe { cudarc::driver::result::memcpy_htod_async(dst, &host[..], self.stream().cu_stream()) }
                    .map_err(|e| CudaError::driver(&format!("upload of {what}"), e))?;
            }
            return Ok(slice);
        }
        // The copies run on other streams: the allocation must be complete first.
        self.synchronize()?;
        let stager = self.stager.get_or_init(|| {
            let pending = self.stager_pending.lock().unwrap_or_else(|e| e.into_inner()).take();
            match pending.map(|h| h.join()) {
                Some(Ok(made)) => made,
                _ => Stager::new(&self.ctx),
            }
        });
        let stager = stager.as_ref().map_err(|e| e.clone())?;
        let dst = {
            let (p, _sync) = slice.device_ptr(self.stream());
            p
        };
        stager.upload(&self.ctx, dst, pieces).map_err(|e| match e {
            CudaError::Driver(m) => CudaError::Driver(format!("upload of {what}: {m}")),
            other => other,
        })?;
        Ok(slice)
    }

    /// Runs `alloc`, which takes `bytes` of device memory. Large requests are checked
    /// against free memory first (a clear error instead of a driver failure); a request
    /// that fails for want of memory is retried once after the pool's unused memory has
    /// been handed back (keep_freed_memory).
    fn with_room<T>(
        &self,
        bytes: usize,
        what: &str,
        op: &str,
        alloc: impl Fn() -> Result<CudaSlice<T>, DriverError>,
    ) -> Result<CudaSlice<T>, CudaError> {
        if bytes >= CHECKED_ALLOCATION_BYTES {
            self.check_fits(bytes, what)?;
        }
        let slice = match alloc() {
            Err(e) if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY && !self.capturing_here() => {
                let _ = self.stream().synchronize();
                trim_pool(&self.ctx);
                alloc()
            }
            r => r,
        }
        .map_err(|e| self.alloc_error(op, what, bytes, e))?;
        self.allocated.fetch_add(bytes, Ordering::Relaxed);
        Ok(slice)
    }

    /// After a query: waits for its queued frees and hands the pool's unused memory beyond
    /// `keep` bytes back to the driver (what the next query's buffers will likely reuse
    /// stays; a large query's temporaries do not stay reserved for this process).
    pub fn release_pool_memory(&self, keep: usize) {
        let _ = self.stream().synchronize();
        trim_pool_to(&self.ctx, keep);
    }

    /// Copies a device buffer back to the host (waits for all queued work first).
    pub fn download<T: DeviceRepr>(&self, slice: &CudaSlice<T>) -> Result<Vec<T>, CudaError> {
        self.download_range(slice, 0..slice.len())
    }

    /// Queues a copy of `bytes` bytes from device address `src` to `dst` (no wait).
    ///
    /// # Safety
    /// Both ranges must lie in allocations of this context that live until the copy runs.
    pub unsafe fn copy_device(&self, dst: u64, src: u64, bytes: usize) -> Result<(), CudaError> {
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: the caller's ranges.
        unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, bytes, self.stream().cu_stream()) }
            .map_err(|e| CudaError::driver("device copy", e))
    }

    /// Copies elements `range` of a device buffer back to the host (waits for all queued
    /// work first), through the pinned buffer of `download_many`.
    pub fn download_range<T: DeviceRepr>(
        &self,
        slice: &CudaSlice<T>,
        range: std::ops::Range<usize>,
    ) -> Result<Vec<T>, CudaError> {
        if range.is_empty() {
            return Ok(vec![]);
        }
        if range.end > slice.len() {
            return Err(CudaError::Driver(format!("download of {range:?} from a buffer of {}", slice.len())));
        }
        let size = std::mem::size_of::<T>();
        let (p, _sync) = slice.device_ptr(self.stream());
        // SAFETY: the range lies in `slice` (checked above), alive here.
        let bytes = unsafe { self.download_many(&[(p + (range.start * size) as u64, range.len() * size)]) }?;
        let bytes = &bytes[0];
        let mut out = Vec::<T>::with_capacity(range.len());
        // SAFETY: a DeviceRepr is plain bytes on the device and here; `bytes` holds
        // exactly range.len() of them, written into capacity reserved above.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.as_mut_ptr() as *mut u8, bytes.len());
            out.set_len(range.len());
        }
        Ok(out)
    }

    /// Copies device byte ranges `(pointer, bytes)` to the host, after all queued work, in
    /// one round trip: each range is copied into a pinned buffer and the stream is waited
    /// for once (a pageable download waits per copy, 10-20 µs each). Ranges of more than
    /// `PINNED_DOWNLOAD_MAX_BYTES` in all are copied one by one into pageable memory.
    ///
    /// # Safety
    /// Each range must lie in a live allocation of this context.
    pub unsafe fn download_many(&self, ranges: &[(u64, usize)]) -> Result<Vec<Vec<u8>>, CudaError> {
        self.not_capturing("a download")?;
        let total: usize = ranges.iter().map(|r| r.1).sum();
        let err = |e| CudaError::driver("download", e);
        if total > PINNED_DOWNLOAD_MAX_BYTES {
            let mut out = Vec::with_capacity(ranges.len());
            for &(src, len) in ranges {
                let mut v = vec![0u8; len];
                if len > 0 {
                    // SAFETY: the caller's range; a pageable copy is complete on return.
                    unsafe { cudarc::driver::result::memcpy_dtoh_async(&mut v[..], src, self.stream().cu_stream()) }
                        .map_err(err)?;
                }
                out.push(v);
            }
            self.stream().synchronize().map_err(err)?;
            return Ok(out);
        }
        let mut held = self.download_buffer.lock().unwrap_or_else(|e| e.into_inner());
        if held.as_ref().is_none_or(|b| b.len() < total) {
            *held = None;
            let size = total.next_power_of_two().max(1 << 20);
            // SAFETY: only the bytes a copy wrote are read (below).
            *held = Some(
                unsafe { self.ctx.alloc_pinned_with_flags::<u8>(size, 0) }
                    .map_err(|e| CudaError::driver("cuMemHostAlloc", e))?,
            );
        }
        let buffer = held.as_mut().ok_or_else(|| CudaError::Driver("download buffer missing".into()))?;
        let host = buffer.as_mut_slice().map_err(err)?;
        let mut at = 0;
        for &(src, len) in ranges {
            if len > 0 {
                // SAFETY: the caller's range, into pinned bytes nothing else uses until
                // the stream is waited for below.
                unsafe {
                    cudarc::driver::result::memcpy_dtoh_async(&mut host[at..at + len], src, self.stream().cu_stream())
                }
                .map_err(err)?;
            }
            at += len;
        }
        self.stream().synchronize().map_err(err)?;
        let mut at = 0;
        Ok(ranges
            .iter()
            .map(|&(_, len)| {
                at += len;
                host[at - len..at].to_vec()
            })
            .collect())
    }
}

/// Buffers are allocated and freed stream-ordered (cuMemAllocAsync) from the device's
/// default memory pool. By default the pool hands freed memory back to the driver at every
/// synchronization, so each query's hash tables and sink buffers were mapped afresh:
/// tens of microseconds per allocation on the host between kernels. Keeping freed memory in
/// the pool makes a repeated allocation a pool lookup. (The memory stays reserved for
/// this process; allocations that do not fit trim the pool first, and
/// `release_pool_memory` trims it after each query.)
pub(super) fn keep_freed_memory(ctx: &CudaContext) {
    use cudarc::driver::sys;
    let mut threshold: u64 = u64::MAX;
    // SAFETY: the context is current (just created); the pool handle comes from the
    // driver and `threshold` outlives the call.
    let r = default_pool(ctx).and_then(|pool| unsafe {
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        )
        .result()
    });
    if let Err(e) = r {
        tracing::warn!(error = ?e, "could not keep freed memory in the pool; allocations stay slower");
    }
}

/// Hands the memory the pool holds but no buffer uses back to the driver, down to `keep`
/// bytes of it.
fn trim_pool_to(ctx: &CudaContext, keep: usize) {
    // SAFETY: a pool handle from the driver; trimming never touches memory in use.
    if let Err(e) =
        default_pool(ctx).and_then(|pool| unsafe { cudarc::driver::sys::cuMemPoolTrimTo(pool, keep).result() })
    {
        tracing::warn!(error = ?e, "could not trim the memory pool");
    }
}

/// `trim_pool_to(0)`, and the memory kept graphs hold for their buffers between launches.
fn trim_pool(ctx: &CudaContext) {
    trim_pool_to(ctx, 0);
    // SAFETY: the context's device; trimming leaves memory in use alone.
    if let Err(e) = unsafe { cudarc::driver::sys::cuDeviceGraphMemTrim(ctx.cu_device()) }.result() {
        tracing::warn!(error = ?e, "could not trim the graphs' memory");
    }
}

fn default_pool(ctx: &CudaContext) -> Result<cudarc::driver::sys::CUmemoryPool, DriverError> {
    let mut pool = std::ptr::null_mut();
    // SAFETY: `pool` outlives the call; the device handle is the context's.
    unsafe { cudarc::driver::sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()) }.result()?;
    Ok(pool)
}
