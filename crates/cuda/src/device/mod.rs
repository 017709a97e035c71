//! `GpuDevice`: one CUDA context + stream, kernel loading through the cache and event
//! timing; its allocations and copies (clear out-of-memory errors, the memory pool) are in
//! `memory.rs`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use cudarc::driver::sys::{CUdevice_attribute, CUresult};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DriverError, PinnedHostSlice};
use cudarc::nvrtc::Ptx;

use crate::cache::{CacheHit, CompileStats, KernelCache};
use crate::compile::{compile_cubin_tier, nvrtc_version, Tier};
use crate::compile_pool::{CompilePool, Loaded, Priority};
use crate::staging::Stager;
use crate::timer::GpuTimer;
use crate::{describe_driver_error, libs, CudaError};

mod memory;
use memory::keep_freed_memory;

/// A GPU ready for the executor. Cheap to share (`Send + Sync`); use one per process.
///
/// All work goes to one stream ([`GpuDevice::stream`], the context's default
/// stream), so operations issued through it run in order. (While a thread captures a
/// CUDA graph, its work goes to the capture stream instead: `graph`.)
pub struct GpuDevice {
    ctx: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    /// The stream a graph is captured on (the default stream cannot be captured), and
    /// the thread capturing (`graph::thread_tag`; 0: none).
    pub(crate) capture_stream: Arc<CudaStream>,
    pub(crate) capturing: AtomicU64,
    /// Held (written) while a graph is captured: loading a module then could disturb
    /// the capture, so the compile threads wait for it (`load_module`).
    pub(crate) module_loads: Arc<std::sync::RwLock<()>>,
    ordinal: usize,
    name: String,
    compute_capability: (i32, i32),
    total_memory: usize,
    sm_count: u32,
    driver_version: (i32, i32),
    cache: Arc<KernelCache>,
    pool: CompilePool,
    allocated: AtomicUsize,
    /// Pinned staging buffers and copy streams (`staging`): allocated in the background
    /// when the device opens (pinning 256 MiB takes tens of ms), waited for by the first
    /// large upload.
    stager: OnceLock<Result<Stager, CudaError>>,
    stager_pending: std::sync::Mutex<Option<std::thread::JoinHandle<Result<Stager, CudaError>>>>,
    /// Pinned host memory that small downloads land in (`download_many`), grown on demand
    /// up to `PINNED_DOWNLOAD_MAX_BYTES`.
    download_buffer: std::sync::Mutex<Option<PinnedHostSlice<u8>>>,
    /// The kernels that stand in for costlier nodes in a graph (`graph`), loaded before
    /// the first capture; None where they failed to load (memset and event nodes then).
    pub(crate) graph_kernels: OnceLock<Option<crate::graph::GraphKernels>>,
}

impl std::fmt::Debug for GpuDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuDevice")
            .field("ordinal", &self.ordinal)
            .field("name", &self.name)
            .field("arch", &self.arch())
            .field("sm_count", &self.sm_count)
            .field("total_memory", &self.total_memory)
            .finish()
    }
}

impl Drop for GpuDevice {
    /// Waits for the staging buffers being pinned in the background: the thread holds a
    /// reference to the context, which must not outlive the device (a reset after a fault
    /// would otherwise be undone by its late release).
    /// Also stops the compile threads (see `CompilePool::shutdown`).
    fn drop(&mut self) {
        self.pool.shutdown();
        if let Some(h) = self.stager_pending.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = h.join();
        }
    }
}

impl GpuDevice {
    /// Number of CUDA devices; `Unavailable` if the driver is missing or fails.
    pub fn device_count() -> Result<usize, CudaError> {
        libs::ensure_driver_loaded()?;
        guard("cuDeviceGetCount", || {
            CudaContext::device_count()
                .map(|n| n.max(0) as usize)
                .map_err(|e| CudaError::Unavailable(format!("CUDA driver init failed: {}", describe_driver_error(e))))
        })
    }

    /// Opens device `ordinal` with the kernel cache in its default directory.
    /// Returns `Unavailable` (never panics) if there is no driver, no such device,
    /// or the driver fails to initialise.
    pub fn open(ordinal: usize) -> Result<GpuDevice, CudaError> {
        Self::open_with_cache(ordinal, KernelCache::with_default_dir())
    }

    /// [`GpuDevice::open`] with a caller-chosen kernel cache.
    pub fn open_with_cache(ordinal: usize, cache: KernelCache) -> Result<GpuDevice, CudaError> {
        libs::ensure_driver_loaded()?;
        let count = Self::device_count()?;
        if count == 0 {
            return Err(CudaError::Unavailable("no CUDA device found".into()));
        }
        if ordinal >= count {
            return Err(CudaError::Unavailable(format!("no CUDA device {ordinal} ({count} present)")));
        }
        guard("opening the device", move || Self::open_inner(ordinal, cache))
    }

    fn open_inner(ordinal: usize, cache: KernelCache) -> Result<GpuDevice, CudaError> {
        let unavailable =
            |what: &str, e: DriverError| CudaError::Unavailable(format!("{what}: {}", describe_driver_error(e)));
        let start = Instant::now();
        let ctx = CudaContext::new(ordinal).map_err(|e| unavailable("creating a CUDA context", e))?;
        let name = ctx.name().map_err(|e| unavailable("cuDeviceGetName", e))?;
        let compute_capability = ctx.compute_capability().map_err(|e| unavailable("compute capability", e))?;
        let total_memory = ctx.total_mem().map_err(|e| unavailable("cuDeviceTotalMem", e))?;
        let sm_count = ctx
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(|e| unavailable("SM count", e))?;
        let mut v = 0;
        // SAFETY: driver loaded and initialised (CudaContext::new succeeded).
        let driver_version = match unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) }.result() {
            Ok(()) => (v / 1000, (v % 1000) / 10),
            Err(_) => (0, 0),
        };
        keep_freed_memory(&ctx);
        // Every buffer is used on the one stream (the staging streams copy into buffers
        // by raw pointer and wait for their copies before the upload returns), so
        // cudarc's per-buffer events, which order uses across streams, order nothing
        // here; they cost two events made per allocation and an event recorded per
        // pointer taken (tens of µs a stage).
        // SAFETY: called before any buffer exists; no work runs on another stream while
        // a buffer is in use on this one (see above).
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        let capture_stream = ctx.new_stream().map_err(|e| unavailable("creating a stream", e))?;
        let dev = GpuDevice {
            ctx,
            stream,
            capture_stream,
            capturing: AtomicU64::new(0),
            module_loads: Default::default(),
            ordinal,
            name,
            compute_capability,
            total_memory,
            sm_count: sm_count.max(0) as u32,
            driver_version,
            cache: Arc::new(cache),
            pool: CompilePool::default(),
            allocated: AtomicUsize::new(0),
            stager: OnceLock::new(),
            download_buffer: std::sync::Mutex::new(None),
            stager_pending: std::sync::Mutex::new(None),
            graph_kernels: OnceLock::new(),
        };
        let ctx = dev.ctx.clone();
        *dev.stager_pending.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(std::thread::spawn(move || Stager::new(&ctx)));
        tracing::info!(device = %dev.describe(), "opened GPU in {:.0} ms", start.elapsed().as_secs_f64() * 1e3);
        Ok(dev)
    }

    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// (major, minor), e.g. (9, 0) for an H100.
    pub fn compute_capability(&self) -> (i32, i32) {
        self.compute_capability
    }

    /// The NVRTC target for this device, e.g. "sm_90".
    pub fn arch(&self) -> String {
        format!("sm_{}{}", self.compute_capability.0, self.compute_capability.1)
    }

    pub fn sm_count(&self) -> u32 {
        self.sm_count
    }

    /// CUDA version the driver supports, e.g. (13, 0).
    pub fn driver_version(&self) -> (i32, i32) {
        self.driver_version
    }

    /// Device memory in bytes.
    pub fn total_memory(&self) -> usize {
        self.total_memory
    }

    /// Free device memory in bytes right now (0 if the driver cannot tell).
    pub fn free_memory(&self) -> usize {
        self.try_free_memory().unwrap_or(0)
    }

    /// Free device memory in bytes, or the driver's error.
    pub fn try_free_memory(&self) -> Result<usize, CudaError> {
        self.ctx.mem_get_info().map(|(free, _total)| free).map_err(|e| CudaError::driver("cuMemGetInfo", e))
    }

    /// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.19 GiB, driver CUDA 13.0)".
    pub fn describe(&self) -> String {
        format!(
            "{} ({}, {} SMs, {} GiB, driver CUDA {}.{})",
            self.name,
            self.arch(),
            self.sm_count,
            crate::gib(self.total_memory),
            self.driver_version.0,
            self.driver_version.1
        )
    }

    pub fn ctx(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream work is queued on: the default stream, or the capture stream on the
    /// thread capturing a graph.
    pub fn stream(&self) -> &Arc<CudaStream> {
        if self.capturing_here() {
            &self.capture_stream
        } else {
            &self.stream
        }
    }

    pub fn cache(&self) -> &KernelCache {
        &self.cache
    }

    /// Compiles (or fetches from cache) `source` for this device and returns the
    /// `extern "C" __global__` function `entry`. The loaded module is kept in the
    /// memory cache, so asking again for any entry of the same source costs only a
    /// function lookup.
    pub fn load_kernel(&self, source: &str, entry: &str) -> Result<(CudaFunction, CompileStats), CudaError> {
        self.load_kernel_tier(source, entry, Tier::Full)
    }

    /// [`GpuDevice::load_kernel`] compiled at `tier`. A module being compiled ahead
    /// ([`GpuDevice::compile_ahead`]) is waited for (or, still queued, compiled here).
    pub fn load_kernel_tier(
        &self,
        source: &str,
        entry: &str,
        tier: Tier,
    ) -> Result<(CudaFunction, CompileStats), CudaError> {
        if entry.contains('\0') {
            return Err(CudaError::Driver(format!("kernel name {entry:?} contains a NUL byte")));
        }
        // (Nor may it wait for a compile thread, which waits for the capture to end.)
        self.not_capturing("loading a kernel")?;
        let arch = self.arch();
        let key = self.cache.key_memo(source, &arch, nvrtc_version()?, tier);

        let t = Instant::now();
        // Pending jobs first: a job caches its module before it leaves `pending`.
        if let Some(job) = self.pool.pending(&key) {
            match job.wait().and_then(|(module, _, _)| lookup_function(&module, entry)) {
                Ok(func) => {
                    // What the query waited for is compile time, however much was done ahead.
                    let stats = CompileStats { cache_hit: CacheHit::Miss, compile_ms: ms_since(t), load_ms: 0.0 };
                    return Ok((func, stats));
                }
                // A program merged from several modules failed: this one compiles alone
                // below (reporting its own error, if it has one).
                Err(e) if job.shared() => tracing::debug!(error = %e, "a merged compile failed"),
                Err(e) => return Err(e),
            }
        }
        if let Some(module) = self.cache.get_module(&key) {
            let func = lookup_function(&module, entry)?;
            let stats = CompileStats { cache_hit: CacheHit::Memory, compile_ms: 0.0, load_ms: ms_since(t) };
            return Ok((func, stats));
        }
        let (module, cache_hit, compile_ms) =
            compile_and_load(&self.cache, &self.ctx, &self.module_loads, &key, source, &arch, tier)?;
        let func = lookup_function(&module, entry)?;
        let stats = CompileStats { cache_hit, compile_ms, load_ms: (ms_since(t) - compile_ms).max(0.0) };
        tracing::debug!(entry, ?stats, "kernel loaded");
        Ok((func, stats))
    }

    /// Whether `source` at `tier` is loaded, or stored on disk (then loading it costs a
    /// file read and a module load, no compile). A module still compiling is not ready.
    pub fn is_ready(&self, source: &str, tier: Tier) -> bool {
        let Ok(version) = nvrtc_version() else { return false };
        let key = self.cache.key_memo(source, &self.arch(), version, tier);
        self.pool.pending(&key).is_none() && (self.cache.get_module(&key).is_some() || self.cache.has_cubin(&key))
    }

    /// Compiles and loads `source` at `tier` on a worker thread, unless it is loaded or
    /// pending already. Errors surface when the module is asked for.
    pub fn compile_ahead(&self, source: String, tier: Tier, priority: Priority) {
        let Ok(version) = nvrtc_version() else { return };
        let arch = self.arch();
        let key = self.cache.key_memo(&source, &arch, version, tier);
        if self.cache.get_module(&key).is_some() {
            return;
        }
        let (cache, ctx, loads, k) = (self.cache.clone(), self.ctx.clone(), self.module_loads.clone(), key.clone());
        self.pool.submit(key, priority, move || {
            let r = compile_and_load(&cache, &ctx, &loads, &k, &source, &arch, tier);
            if let Err(e) = &r {
                tracing::debug!(error = %e, "compiling ahead failed (reported when the kernel is needed)");
            }
            r
        });
    }

    /// [`GpuDevice::compile_ahead`] of several modules, `sources`, as one NVRTC program:
    /// `merge` makes its source from theirs (`None`: each compiles alone). Sources loaded,
    /// pending or on disk already are left out of it. The program's module then serves
    /// each of them; were it to fail, each would compile alone when asked for.
    pub fn compile_ahead_merged(
        &self,
        sources: Vec<String>,
        tier: Tier,
        priority: Priority,
        merge: impl FnOnce(&[&str]) -> Option<String>,
    ) {
        let Ok(version) = nvrtc_version() else { return };
        let arch = self.arch();
        let (mut keys, mut members) = (vec![], vec![]);
        for s in sources {
            let key = self.cache.key_memo(&s, &arch, version, tier);
            if self.cache.get_module(&key).is_some() || self.pool.pending(&key).is_some() {
                continue;
            }
            if self.cache.has_cubin(&key) {
                self.compile_ahead(s, tier, priority); // a file read, no compile
                continue;
            }
            keys.push(key);
            members.push(s);
        }
        let merged = match members.len() {
            0 => return,
            1 => None,
            _ => merge(&members.iter().map(String::as_str).collect::<Vec<_>>()),
        };
        let Some(merged) = merged else {
            return members.into_iter().for_each(|s| self.compile_ahead(s, tier, priority));
        };
        let (cache, ctx, loads, ks) = (self.cache.clone(), self.ctx.clone(), self.module_loads.clone(), keys.clone());
        self.pool.submit_shared(keys, priority, move || {
            let t = Instant::now();
            let cubin = compile_cubin_tier(&merged, &arch, tier)?;
            let compile_ms = ms_since(t);
            let module = load_module(&ctx, &loads, cubin.clone())?;
            // Under each member's key, in memory and on disk (a later session finds any of
            // them there).
            cache.write_cubin_shared(&ks, &cubin);
            for k in &ks {
                cache.insert_module(k, module.clone());
            }
            tracing::debug!(modules = ks.len(), compile_ms, "merged modules compiled");
            Ok((module, CacheHit::Miss, compile_ms))
        });
    }

    /// Drops every loaded module but those of the sources in `keep` (either tier).
    pub fn forget_modules_except(&self, keep: &[&str]) {
        let Ok(version) = nvrtc_version() else { return self.cache.clear_memory() };
        let arch = self.arch();
        let keys: Vec<String> = keep
            .iter()
            .flat_map(|s| [Tier::Quick, Tier::Full].map(|t| self.cache.key_memo(s, &arch, version, t)))
            .collect();
        self.cache.retain_modules(|k| keys.iter().any(|x| x == k));
    }

    /// Whether no module is compiling ahead.
    pub fn compiles_idle(&self) -> bool {
        self.pool.is_idle()
    }

    /// Blocks until every module compiling ahead is done.
    pub fn wait_for_compiles(&self) {
        self.pool.wait_idle();
    }

    /// Whether the context still works. A kernel fault (illegal address, illegal
    /// instruction, …) is sticky: every later call of the context fails with it, until the
    /// context is destroyed (`reset_device`).
    pub fn is_usable(&self) -> bool {
        self.ctx.bind_to_thread().is_ok() && self.stream().synchronize().is_ok() && self.ctx.check_err().is_ok()
    }

    /// Destroys device `ordinal`'s primary context and all that lives in it, so that the
    /// next `open` starts a fresh one. Call it once every `GpuDevice` of the device has
    /// been dropped (after a sticky fault, their frees fail harmlessly).
    pub fn reset_device(ordinal: usize) -> Result<(), CudaError> {
        let dev =
            cudarc::driver::result::device::get(ordinal as i32).map_err(|e| CudaError::driver("cuDeviceGet", e))?;
        // SAFETY: a valid device handle; nothing of the old context is used afterwards.
        unsafe { cudarc::driver::sys::cuDevicePrimaryCtxReset_v2(dev) }
            .result()
            .map_err(|e| CudaError::driver("cuDevicePrimaryCtxReset", e))
    }

    /// Waits for all queued work. Asynchronous kernel failures surface here.
    pub fn synchronize(&self) -> Result<(), CudaError> {
        self.not_capturing("waiting for the GPU")?;
        self.stream().synchronize().map_err(|e| CudaError::driver("synchronize", e))
    }

    /// Starts a GPU-side timer on the device stream (`timer`).
    pub fn timer_start(&self) -> Result<GpuTimer, CudaError> {
        GpuTimer::start(self)
    }

    /// Device-to-device copy bandwidth in GB/s (10^9 bytes), counting bytes read and
    /// written: copies min(1 GiB, free/4) once to warm up, then reports the median of
    /// 5 timed copies. About 3000 GB/s on an H100 SXM.
    pub fn measure_copy_bandwidth(&self) -> Result<f64, CudaError> {
        const GIB: usize = 1 << 30;
        let size = (GIB.min(self.try_free_memory()? / 4)) & !0xFFFF;
        if size < (1 << 20) {
            return Err(CudaError::OutOfMemory {
                what: "bandwidth test buffers".into(),
                requested: 2 << 20,
                free: self.free_memory(),
            });
        }
        let n = size / 4;
        let src = self.alloc_zeros::<u32>(n, "bandwidth test source")?;
        let mut dst = self.alloc_zeros::<u32>(n, "bandwidth test destination")?;
        let copy = |dst: &mut CudaSlice<u32>| {
            self.stream().memcpy_dtod(&src, dst).map_err(|e| CudaError::driver("cuMemcpyDtoDAsync", e))
        };
        copy(&mut dst)?;
        let mut times = Vec::with_capacity(5);
        for _ in 0..5 {
            let timer = self.timer_start()?;
            copy(&mut dst)?;
            times.push(timer.stop()?);
        }
        times.sort_by(f64::total_cmp);
        let ms = times[times.len() / 2];
        if ms <= 0.0 {
            return Err(CudaError::Driver("bandwidth test measured zero time".into()));
        }
        Ok(2.0 * size as f64 / (ms / 1e3) / 1e9)
    }
}

fn lookup_function(module: &Arc<CudaModule>, entry: &str) -> Result<CudaFunction, CudaError> {
    module.load_function(entry).map_err(|e| {
        if e.0 == CUresult::CUDA_ERROR_NOT_FOUND {
            CudaError::Driver(format!("kernel {entry:?} not found in module (is it extern \"C\" __global__?)"))
        } else {
            CudaError::driver(&format!("cuModuleGetFunction({entry})"), e)
        }
    })
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Runs driver-touching code, turning a panic inside cudarc (for example a symbol the
/// installed driver lacks) into `Unavailable` instead of crashing the engine.
fn guard<T>(what: &str, f: impl FnOnce() -> Result<T, CudaError>) -> Result<T, CudaError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(CudaError::Unavailable(format!("{what}: {msg}")))
        }
    }
}

/// The module of `source` (key `key`): from disk or compiled, then loaded and put in the
/// memory cache. Returns it with where it came from and the NVRTC ms.
fn compile_and_load(
    cache: &KernelCache,
    ctx: &Arc<CudaContext>,
    loads: &std::sync::RwLock<()>,
    key: &str,
    source: &str,
    arch: &str,
    tier: Tier,
) -> Loaded {
    let load = |cubin: Vec<u8>| load_module(ctx, loads, cubin);
    let (cubin, mut cache_hit, mut compile_ms) = cache.cubin(key, source, arch, tier)?;
    let module = match load(cubin) {
        Ok(m) => m,
        Err(e) if cache_hit == CacheHit::Disk => {
            // A stale or damaged disk entry: drop it and compile afresh.
            tracing::warn!(error = %e, "cached CUBIN failed to load; recompiling");
            cache.remove_cubin(key);
            let (cubin, hit, ms) = cache.cubin(key, source, arch, tier)?;
            (cache_hit, compile_ms) = (hit, ms);
            load(cubin)?
        }
        Err(e) => return Err(e),
    };
    Ok((cache.insert_module(key, module), cache_hit, compile_ms))
}

/// Loads a module, not while a graph is being captured (`GpuDevice::module_loads`).
fn load_module(
    ctx: &Arc<CudaContext>,
    loads: &std::sync::RwLock<()>,
    cubin: Vec<u8>,
) -> Result<Arc<CudaModule>, CudaError> {
    let _no_capture = loads.read().unwrap_or_else(|e| e.into_inner());
    ctx.load_module(Ptx::from_binary(cubin)).map_err(|e| CudaError::driver("loading CUBIN (cuModuleLoadData)", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_without_gpu_is_unavailable_not_panic() {
        match GpuDevice::open(0) {
            Ok(dev) => println!("GPU present: {}", dev.describe()),
            Err(e) => {
                assert!(matches!(e, CudaError::Unavailable(_)), "{e}");
                println!("no GPU: {e}");
            }
        }
    }

    #[test]
    fn oom_message_names_what_and_sizes() {
        let e = CudaError::OutOfMemory { what: "lineitem.l_comment".into(), requested: 1288490189, free: 858993459 };
        assert_eq!(e.to_string(), "GPU out of memory: lineitem.l_comment needs 1.20 GiB, 0.80 GiB free");
    }

    #[test]
    fn device_is_send_sync() {
        fn check<T: Send + Sync>() {}
        check::<GpuDevice>();
        check::<GpuTimer>();
    }
}
