//! The GPU backend of an engine, opened in the background (`GpuSlot`).

use super::*;

/// The GPU backend. With `Auto` it is opened in the background when the engine is made
/// (creating a CUDA context takes ~0.2 s, which opening files and planning and decoding the
/// first query overlap) and waited for where it is first needed.
pub(crate) struct GpuSlot {
    pub(crate) ready: OnceLock<Option<GpuExecutor>>,
    pub(crate) opening: Mutex<Option<std::thread::JoinHandle<std::result::Result<GpuExecutor, CudaError>>>>,
    /// Why `Auto` runs on the CPU, once known.
    pub(crate) notice: OnceLock<String>,
    pub(crate) notice_shown: AtomicBool,
}

impl GpuSlot {
    pub(crate) fn ready(gpu: Option<GpuExecutor>) -> GpuSlot {
        GpuSlot {
            ready: OnceLock::from(gpu),
            opening: Mutex::new(None),
            notice: OnceLock::new(),
            notice_shown: AtomicBool::new(false),
        }
    }

    pub(crate) fn opening(config: SessionConfig, cancel: CancelToken) -> GpuSlot {
        GpuSlot {
            ready: OnceLock::new(),
            opening: Mutex::new(Some(std::thread::spawn(move || open_gpu(config, cancel)))),
            notice: OnceLock::new(),
            notice_shown: AtomicBool::new(false),
        }
    }

    /// The GPU executor (waiting for it to open), or None on the CPU backend.
    pub(crate) fn get(&self) -> Option<&GpuExecutor> {
        self.ready
            .get_or_init(|| {
                let handle = self.opening.lock().unwrap_or_else(|e| e.into_inner()).take();
                let why = match handle.map(|h| h.join()) {
                    Some(Ok(Ok(g))) => return Some(g),
                    Some(Ok(Err(e))) => e.to_string(),
                    Some(Err(_)) => "opening the GPU failed".to_string(),
                    None => return None,
                };
                let _ = self.notice.set(format!("notice: no usable GPU ({why}); running on the CPU reference backend"));
                None
            })
            .as_ref()
    }

    pub(crate) fn get_mut(&mut self) -> Option<&mut GpuExecutor> {
        self.get();
        self.ready.get_mut().and_then(|g| g.as_mut())
    }
}

/// Opens GPU 0 as a session's backend, its helper module compiling ahead.
pub(crate) fn open_gpu(config: SessionConfig, cancel: CancelToken) -> std::result::Result<GpuExecutor, CudaError> {
    let dev = GpuDevice::open(0)?;
    let mut gpu = GpuExecutor::new(Arc::new(dev), config);
    gpu.cancel = cancel;
    // Every query uses the helper module: it compiles while the session loads its data
    // (which also pays NVRTC's first-use cost, 130-500 ms, before any query waits on it).
    gpu.compile_util_ahead();
    Ok(gpu)
}
