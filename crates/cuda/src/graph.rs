//! Capturing GPU work as a CUDA graph, to launch it again whole.
//!
//! While a thread captures (`GpuDevice::capture`), the work it queues through the device
//! (allocations, memsets, copies between device buffers, launches, timing events) goes
//! to a capture stream and is recorded, not run: the default stream, which every other
//! queue goes to, cannot be captured. What cannot be replayed from a graph fails instead
//! of being recorded: uploads and downloads (their host memory would be read or written
//! at each launch) and waits for the GPU (nothing has run yet).
//!
//! Buffers allocated during the capture are the graph's: the same addresses at each
//! launch, allocated when it runs. Those freed during the capture are freed by the
//! graph; the others must be freed after each launch (`free_graph_buffer`) on the default
//! stream. A graph is launched on the default stream, after all queued work.
//!
//! Some nodes cost a launch more than others: in a chain of kernels, allocations and
//! frees next to nothing, a kernel ~0.8 us of GPU time, a memset ~1.8 us and ~1.6 us of
//! host time, a timing event ~2.4 us and ~3 us (`examples/graph_node_costs.rs`). So
//! during a capture, buffers allocated zeroed are zeroed by a kernel, and timing marks
//! are a kernel writing the GPU's clock (`timer`): `graph_kernels.cu`.

use crate::{CudaError, GpuDevice};
use cudarc::driver::safe::CudaGraph;
use cudarc::driver::{sys, CudaFunction, CudaSlice, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use std::sync::atomic::{AtomicU64, Ordering};

/// An instantiated graph (`GpuDevice::capture`).
pub struct Graph(CudaGraph);

// SAFETY: a graph may be used from any thread as long as its uses do not overlap; its
// only use, `GpuDevice::launch_graph`, takes it by reference from the one owner, which
// keeps it under a lock (the plan memo).
unsafe impl Send for Graph {}

impl Graph {
    /// How many nodes of each kind the graph holds, for profiling: e.g. `kernel 12`.
    pub fn node_kinds(&self) -> Result<Vec<(String, usize)>, CudaError> {
        let g = self.0.cu_graph();
        let mut n = 0usize;
        // SAFETY: a graph alive here; the first call only counts its nodes.
        unsafe { sys::cuGraphGetNodes(g, std::ptr::null_mut(), &mut n) }
            .result()
            .map_err(|e| CudaError::driver("cuGraphGetNodes", e))?;
        let mut nodes = vec![std::ptr::null_mut(); n];
        // SAFETY: `nodes` has room for the n nodes counted above.
        unsafe { sys::cuGraphGetNodes(g, nodes.as_mut_ptr(), &mut n) }
            .result()
            .map_err(|e| CudaError::driver("cuGraphGetNodes", e))?;
        let mut kinds = std::collections::BTreeMap::<String, usize>::new();
        for node in nodes.into_iter().take(n) {
            let mut kind = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
            // SAFETY: a node of the graph above.
            unsafe { sys::cuGraphNodeGetType(node, &mut kind) }
                .result()
                .map_err(|e| CudaError::driver("cuGraphNodeGetType", e))?;
            let name = format!("{kind:?}").trim_start_matches("CU_GRAPH_NODE_TYPE_").to_ascii_lowercase();
            *kinds.entry(name).or_default() += 1;
        }
        Ok(kinds.into_iter().collect())
    }
}

/// The kernels of `graph_kernels.cu`.
pub(crate) struct GraphKernels {
    /// Writes the GPU's clock: a timing mark.
    pub stamp: CudaFunction,
    zero: CudaFunction,
}

impl GraphKernels {
    /// Queues the zeroing of `slice`'s first `bytes`.
    pub fn zero<T: DeviceRepr>(&self, dev: &GpuDevice, slice: &CudaSlice<T>, bytes: usize) -> Result<(), CudaError> {
        let (p, _sync) = slice.device_ptr(dev.stream());
        if bytes == 0 {
            return Ok(());
        }
        if p % 16 != 0 {
            // (Not seen: pool allocations are 256-byte aligned.)
            // SAFETY: `bytes` lie in `slice`.
            return unsafe { cudarc::driver::result::memset_d8_async(p, 0, bytes, dev.stream().cu_stream()) }
                .map_err(|e| CudaError::driver("cuMemsetD8Async", e));
        }
        let blocks = (bytes / 16).div_ceil(256).clamp(1, dev.sm_count() as usize * 4) as u32;
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        let n = bytes as u64;
        let mut b = dev.stream().launch_builder(&self.zero);
        b.arg(&p).arg(&n);
        // SAFETY: `gpusql_zero_bytes(unsigned char*, unsigned long long)` writes the n
        // bytes at p, which lie in `slice`.
        unsafe { b.launch(cfg) }.map(drop).map_err(|e| CudaError::driver("launching the zeroing kernel", e))
    }
}

/// A number for the calling thread, never 0 (the capture's owner).
fn thread_tag() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local!(static TAG: u64 = NEXT.fetch_add(1, Ordering::Relaxed));
    TAG.with(|t| *t)
}

/// Ends a capture that `work` left running (an error or a panic): the thread's work goes
/// to the default stream again.
struct Capturing<'a>(&'a GpuDevice);

impl Drop for Capturing<'_> {
    fn drop(&mut self) {
        if self.0.capturing_here() {
            let _ = self.0.finish_capture();
            let _ = self.0.ctx().check_err();
        }
    }
}

impl GpuDevice {
    /// Whether the calling thread is capturing a graph.
    pub fn capturing_here(&self) -> bool {
        self.capturing.load(Ordering::Relaxed) == thread_tag()
    }

    /// Loads `graph_kernels.cu`, once (not while capturing).
    fn load_graph_kernels(&self) {
        self.graph_kernels.get_or_init(|| {
            let source = include_str!("graph_kernels.cu");
            let load = |entry| self.load_kernel(source, entry).map(|(f, _)| f);
            match load("gpusql_stamp").and_then(|stamp| Ok(GraphKernels { stamp, zero: load("gpusql_zero_bytes")? })) {
                Ok(k) => Some(k),
                Err(e) => {
                    tracing::warn!(error = %e, "graph kernels failed to load: graphs record memsets and timing events");
                    None
                }
            }
        });
    }

    /// The kernels of `graph_kernels.cu`, where loaded.
    pub(crate) fn graph_kernels(&self) -> Option<&GraphKernels> {
        self.graph_kernels.get().and_then(Option::as_ref)
    }

    /// Err where the calling thread is capturing: `what` cannot be part of a graph.
    pub(crate) fn not_capturing(&self, what: &str) -> Result<(), CudaError> {
        if self.capturing_here() {
            return Err(CudaError::Driver(format!("{what} cannot be part of a CUDA graph")));
        }
        Ok(())
    }

    /// Runs `work`, capturing the GPU work it queues on this thread, and returns what it
    /// returned with the graph of that work, ready to launch (or why there is none: an
    /// operation that cannot be captured makes the capture fail, whatever `work` returned).
    /// Nothing `work` queued has run. Err where capturing cannot start (another thread
    /// is capturing).
    pub fn capture<T>(&self, work: impl FnOnce() -> T) -> Result<(T, Result<Graph, CudaError>), CudaError> {
        let tag = thread_tag();
        // (Not loadable once capturing.)
        self.load_graph_kernels();
        // Module loads wait (on other threads; on this one they fail).
        let _no_loads = self.module_loads.write().unwrap_or_else(|e| e.into_inner());
        // (An error a freed buffer left for later would fail the capture's first call.)
        self.ctx().check_err().map_err(|e| CudaError::driver("an earlier asynchronous call", e))?;
        self.capturing
            .compare_exchange(0, tag, Ordering::AcqRel, Ordering::Relaxed)
            .map_err(|_| CudaError::Driver("another thread is capturing a CUDA graph".into()))?;
        if let Err(e) = self.capture_stream.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED) {
            self.capturing.store(0, Ordering::Release);
            return Err(CudaError::driver("cuStreamBeginCapture", e));
        }
        let guard = Capturing(self);
        let out = work();
        let graph = self.finish_capture();
        drop(guard);
        // Frees recorded in a capture that failed leave their errors for the next call.
        let _ = self.ctx().check_err();
        Ok((out, graph))
    }

    /// Ends this thread's capture: the graph, instantiated.
    fn finish_capture(&self) -> Result<Graph, CudaError> {
        // (Buffers a graph allocated and left unfreed are freed before its next launch
        // if they were not already.)
        let flags = sys::CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH;
        let made = self.capture_stream.end_capture(flags);
        self.capturing.store(0, Ordering::Release);
        match made {
            Ok(Some(g)) => Ok(Graph(g)),
            Ok(None) => Err(CudaError::Driver("the capture recorded no graph".into())),
            Err(e) => Err(CudaError::driver("capturing a CUDA graph", e)),
        }
    }

    /// Launches `graph` on the default stream, after the work queued there.
    pub fn launch_graph(&self, graph: &Graph) -> Result<(), CudaError> {
        self.not_capturing("a graph launch")?;
        // SAFETY: an instantiated graph of this context, launched by one thread at a time.
        unsafe { sys::cuGraphLaunch(graph.0.cu_graph_exec(), self.stream.cu_stream()) }
            .result()
            .map_err(|e| CudaError::driver("cuGraphLaunch", e))
    }

    /// Frees a buffer a graph allocated and did not free, stream-ordered on the default
    /// stream.
    ///
    /// # Safety
    /// `ptr` is such a buffer of the graph's last launch, not freed since, and nothing
    /// queued after this call uses it.
    pub unsafe fn free_graph_buffer(&self, ptr: u64) -> Result<(), CudaError> {
        // SAFETY: the caller's.
        unsafe { sys::cuMemFreeAsync(ptr, self.stream.cu_stream()) }
            .result()
            .map_err(|e| CudaError::driver("cuMemFreeAsync", e))
    }
}
