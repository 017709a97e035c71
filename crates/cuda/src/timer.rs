//! GPU spans: the time the stream takes from one point to another.
//!
//! On a stream, a span is a pair of timing events. In a CUDA graph being captured, an
//! event recorded the usual way only orders the captured work: an external record
//! becomes a node that records it at each launch. But such a node costs a launch ~2.4 us
//! of GPU time and ~3 us of host time, against ~0.8 us and nothing measurable for a
//! kernel node (`examples/graph_node_costs.rs`), and a captured query records two per
//! stage. So in a graph a span's ends are marks a one-thread kernel writes (`graph_kernels.cu`):
//! the GPU's nanosecond clock, into mapped host memory the host reads once the launch
//! has run. (Where that kernel failed to load, graphs record events.)

use std::sync::Arc;

use cudarc::driver::sys::{self, CUevent_flags};
use cudarc::driver::{CudaEvent, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};

use crate::{CudaError, GpuDevice};

/// A span started on the device's stream ([`GpuDevice::timer_start`]).
pub struct GpuTimer {
    marks: Marks,
    stream: Arc<CudaStream>,
}

enum Marks {
    /// Timing events. `in_graph`: recorded into a graph being captured (external records).
    Events { start: CudaEvent, end: CudaEvent, in_graph: bool },
    /// Clock readings a kernel writes at each launch of the graph being captured.
    Stamps { stamps: Arc<HostStamps>, kernel: CudaFunction, launched_on: Arc<CudaStream> },
}

impl GpuTimer {
    /// Starts a span here on the device's stream.
    pub(crate) fn start(dev: &GpuDevice) -> Result<GpuTimer, CudaError> {
        let in_graph = dev.capturing_here();
        let marks = match dev.graph_kernels().filter(|_| in_graph) {
            Some(kernels) => Marks::Stamps {
                stamps: Arc::new(HostStamps::new()?),
                kernel: kernels.stamp.clone(),
                launched_on: dev.stream.clone(),
            },
            _ => {
                // new_event(None) would create an event with timing disabled.
                let event = || {
                    dev.ctx()
                        .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                        .map_err(|e| CudaError::driver("cuEventCreate", e))
                };
                Marks::Events { start: event()?, end: event()?, in_graph }
            }
        };
        let timer = GpuTimer { marks, stream: dev.stream().clone() };
        timer.mark(0)?;
        Ok(timer)
    }

    /// Milliseconds of GPU time between `timer_start` and now on the stream.
    /// Blocks until the work queued in between has finished.
    pub fn stop(self) -> Result<f64, CudaError> {
        self.end_here()?.ms()
    }

    /// Ends the span here on the stream without waiting for it: the host can queue more
    /// (a download that waits anyway) before asking for the span's milliseconds.
    pub fn end_here(self) -> Result<EndedTimer, CudaError> {
        self.mark(1)?;
        Ok(EndedTimer { marks: self.marks })
    }

    /// Queues the span's start (0) or end (1).
    fn mark(&self, end: usize) -> Result<(), CudaError> {
        match &self.marks {
            Marks::Events { start, end: last, in_graph } => {
                let event = if end == 0 { start } else { last };
                if !in_graph {
                    return event.record(&self.stream).map_err(|e| CudaError::driver("cuEventRecord", e));
                }
                // SAFETY: the event and the capturing stream are alive.
                unsafe {
                    sys::cuEventRecordWithFlags(
                        event.cu_event(),
                        self.stream.cu_stream(),
                        sys::CUevent_record_flags::CU_EVENT_RECORD_EXTERNAL as u32,
                    )
                }
                .result()
                .map_err(|e| CudaError::driver("cuEventRecordWithFlags", e))
            }
            Marks::Stamps { stamps, kernel, .. } => {
                let at = stamps.device_ptr + 8 * end as u64;
                let one = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
                let mut b = self.stream.launch_builder(kernel);
                b.arg(&at);
                // SAFETY: `gpusql_stamp(unsigned long long*)` writes one u64 at `at`, which
                // lies in `stamps` (held by the timer, and by the ended span the graph's
                // owner keeps with it).
                unsafe { b.launch(one) }.map(drop).map_err(|e| CudaError::driver("launching the timing kernel", e))
            }
        }
    }
}

/// A GPU span whose end is queued ([`GpuTimer::end_here`]).
pub struct EndedTimer {
    marks: Marks,
}

impl EndedTimer {
    /// The span's milliseconds, once the GPU has passed its end (waits for it). A span
    /// recorded in a graph gives its last launch's.
    pub fn ms(&self) -> Result<f64, CudaError> {
        match &self.marks {
            Marks::Events { start, end, .. } => {
                end.synchronize().map_err(|e| CudaError::driver("cuEventSynchronize", e))?;
                let ms = start.elapsed_ms(end).map_err(|e| CudaError::driver("cuEventElapsedTime", e))?;
                Ok(ms as f64)
            }
            Marks::Stamps { stamps, launched_on, .. } => {
                // (Graphs are launched on the device's stream.)
                launched_on.synchronize().map_err(|e| CudaError::driver("waiting for a graph's timing marks", e))?;
                let (start, end) = stamps.read();
                if start == 0 || end < start {
                    return Err(CudaError::Driver("a graph's span was read before a launch recorded it".into()));
                }
                Ok((end - start) as f64 / 1e6)
            }
        }
    }
}

/// Two u64 in page-locked host memory mapped into the device's address space: a span's
/// clock readings, written by the GPU, read by the host after the stream is waited for.
struct HostStamps {
    host: *mut u64,
    device_ptr: u64,
}

// SAFETY: the memory is only written by the GPU and read (volatile) by whichever thread
// holds the span, after waiting for the stream; it is freed once, on drop.
unsafe impl Send for HostStamps {}
unsafe impl Sync for HostStamps {}

impl HostStamps {
    fn new() -> Result<Self, CudaError> {
        // SAFETY: 16 bytes of page-locked memory, zeroed below before any use.
        let host = unsafe { cudarc::driver::result::malloc_host(16, sys::CU_MEMHOSTALLOC_DEVICEMAP) }
            .map_err(|e| CudaError::driver("cuMemHostAlloc", e))? as *mut u64;
        // (Freed on drop, should the next step fail.)
        let mut stamps = HostStamps { host, device_ptr: 0 };
        // SAFETY: `host` holds two u64.
        unsafe { std::ptr::write_bytes(host, 0, 2) };
        // SAFETY: `host` was allocated mapped just above.
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut stamps.device_ptr, host as *mut _, 0) }
            .result()
            .map_err(|e| CudaError::driver("cuMemHostGetDevicePointer", e))?;
        Ok(stamps)
    }

    /// The start and end readings (0 where not written).
    fn read(&self) -> (u64, u64) {
        // SAFETY: two u64 allocated in `new`; the GPU writes them, hence volatile.
        unsafe { (std::ptr::read_volatile(self.host), std::ptr::read_volatile(self.host.add(1))) }
    }
}

impl Drop for HostStamps {
    fn drop(&mut self) {
        // SAFETY: allocated by malloc_host in `new`, freed once.
        let _ = unsafe { cudarc::driver::result::free_host(self.host as *mut _) };
    }
}
