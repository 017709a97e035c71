//! Tests that need a real GPU. Without one they print "skipped: no GPU" and pass,
//! unless GPUSQL_REQUIRE_GPU=1 (set it on the GPU machine).

use gpusql_cuda::{CacheHit, CudaError, GpuDevice, KernelCache, LaunchConfig, PushKernelArg};

fn device() -> Option<GpuDevice> {
    let dir = std::env::temp_dir().join(format!("gpusql-gpu-test-{}", std::process::id()));
    device_with_dir(dir)
}

fn device_with_dir(dir: std::path::PathBuf) -> Option<GpuDevice> {
    match GpuDevice::open_with_cache(0, KernelCache::new(Some(dir))) {
        Ok(d) => Some(d),
        Err(e) => {
            if std::env::var("GPUSQL_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                panic!("GPUSQL_REQUIRE_GPU=1 but: {e}");
            }
            println!("skipped: no GPU ({e})");
            None
        }
    }
}

const KERNELS: &str = r#"
extern "C" __global__ void scale_add(const long long* in, long long* out, long long k, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * k + 1;
}
extern "C" __global__ void wide_mul(const long long* a, const long long* b, __int128* out, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (__int128)a[i] * (__int128)b[i];
}
extern "C" __global__ void count(unsigned long long* total, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(total, 1ULL);
}
"#;

#[test]
fn kernels_run_and_cache() {
    let Some(dev) = device() else { return };
    println!("{}  arch={} free={}", dev.describe(), dev.arch(), dev.free_memory());
    assert!(dev.arch().starts_with("sm_"));
    assert!(dev.sm_count() > 0);
    assert!(dev.total_memory() >= dev.free_memory());

    let (f, s1) = dev.load_kernel(KERNELS, "scale_add").unwrap_or_else(|e| panic!("{e}"));
    println!("first load: {s1:?}");
    assert_ne!(s1.cache_hit, CacheHit::Memory);
    let (g, s2) = dev.load_kernel(KERNELS, "wide_mul").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s2.cache_hit, CacheHit::Memory);
    println!("second load: {s2:?}");
    let (c, _) = dev.load_kernel(KERNELS, "count").unwrap_or_else(|e| panic!("{e}"));

    let n = 1_000_003u32;
    let host: Vec<i64> = (0..n as i64).map(|i| i - 500_000).collect();
    let input = dev.upload(&host, "input").unwrap_or_else(|e| panic!("{e}"));
    let mut out = dev.alloc_zeros::<i64>(n as usize, "output").unwrap_or_else(|e| panic!("{e}"));
    let k = 3i64;
    let timer = dev.timer_start().unwrap_or_else(|e| panic!("{e}"));
    let mut b = dev.stream().launch_builder(&f);
    b.arg(&input).arg(&mut out).arg(&k).arg(&n);
    unsafe { b.launch(LaunchConfig::for_num_elems(n)) }.unwrap_or_else(|e| panic!("{e:?}"));
    let ms = timer.stop().unwrap_or_else(|e| panic!("{e}"));
    println!("scale_add over {n} rows: {ms:.3} ms");
    assert!(ms > 0.0);
    let got = dev.download(&out).unwrap_or_else(|e| panic!("{e}"));
    assert!(got.iter().zip(&host).all(|(g, h)| *g == h * 3 + 1));

    // __int128 results come back as i128.
    let a: Vec<i64> = vec![i64::MAX, -7, 123_456_789_012];
    let bv: Vec<i64> = vec![i64::MAX, 9, -987_654_321_098];
    let da = dev.upload(&a, "a").unwrap_or_else(|e| panic!("{e}"));
    let db = dev.upload(&bv, "b").unwrap_or_else(|e| panic!("{e}"));
    let mut dout = dev.alloc_zeros::<i128>(3, "wide").unwrap_or_else(|e| panic!("{e}"));
    let m = 3u32;
    let mut b = dev.stream().launch_builder(&g);
    b.arg(&da).arg(&db).arg(&mut dout).arg(&m);
    unsafe { b.launch(LaunchConfig::for_num_elems(m)) }.unwrap_or_else(|e| panic!("{e:?}"));
    let wide = dev.download(&dout).unwrap_or_else(|e| panic!("{e}"));
    let want: Vec<i128> = a.iter().zip(&bv).map(|(x, y)| *x as i128 * *y as i128).collect();
    assert_eq!(wide, want);

    let mut total = dev.alloc_zeros::<u64>(1, "total").unwrap_or_else(|e| panic!("{e}"));
    let mut b = dev.stream().launch_builder(&c);
    b.arg(&mut total).arg(&n);
    unsafe { b.launch(LaunchConfig::for_num_elems(n)) }.unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(dev.download(&total).unwrap_or_else(|e| panic!("{e}")), vec![n as u64]);

    assert!(dev.allocated_bytes() >= n as usize * 16);

    // Missing entry point is an error, not a panic.
    let err = dev.load_kernel(KERNELS, "nope").expect_err("no such kernel");
    println!("{err}");

    // A second device object with the same disk directory skips NVRTC.
    let dir = dev.cache().dir().map(|p| p.to_path_buf());
    drop(dev);
    if let Some(dir) = dir {
        let dev2 = device_with_dir(dir.clone()).expect("device opens again");
        let (_, s3) = dev2.load_kernel(KERNELS, "count").unwrap_or_else(|e| panic!("{e}"));
        println!("new process-like load: {s3:?}");
        assert_eq!(s3.cache_hit, CacheHit::Disk);
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn empty_buffers_work() {
    let Some(dev) = device() else { return };
    let empty: Vec<u32> = Vec::new();
    match dev.upload(&empty, "empty") {
        Ok(s) => {
            assert_eq!(s.len(), 0);
            assert!(dev.download(&s).unwrap_or_else(|e| panic!("{e}")).is_empty());
        }
        Err(e) => panic!("empty upload failed: {e}"),
    }
    let z = dev.alloc_zeros::<u64>(0, "empty zeros").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(z.len(), 0);
    dev.synchronize().unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn out_of_memory_is_an_error() {
    let Some(dev) = device() else { return };
    let too_much = dev.total_memory() + (1 << 30);
    let err = dev.alloc_zeros::<u8>(too_much, "huge join table").expect_err("cannot fit");
    println!("{err}");
    assert!(matches!(err, CudaError::OutOfMemory { .. }));
    assert!(err.to_string().starts_with("GPU out of memory: huge join table needs"));
    // The device is still fine afterwards.
    let ok = dev.alloc_zeros::<u8>(1 << 20, "small").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(ok.len(), 1 << 20);
}

#[test]
fn copy_bandwidth() {
    let Some(dev) = device() else { return };
    let gbs = dev.measure_copy_bandwidth().unwrap_or_else(|e| panic!("{e}"));
    println!("device-to-device copy: {gbs:.0} GB/s (read+write)");
    assert!(gbs > 10.0);
}

/// Spins for `ns` nanoseconds of the GPU's clock.
const SPIN: &str = r#"
extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
"#;

/// In a graph a span's ends are clock readings a kernel writes (no event nodes, which
/// cost each launch more), and the span measures what timing events measure outside one.
#[test]
fn graph_spans_are_stamped_and_agree_with_events() {
    let Some(dev) = device() else { return };
    let (f, _) = dev.load_kernel(SPIN, "spin").unwrap();
    let spin = |dev: &GpuDevice| -> Result<(), CudaError> {
        let mut b = dev.stream().launch_builder(&f);
        let ns = 200_000u64;
        b.arg(&ns);
        // SAFETY: `spin` takes one u64.
        unsafe { b.launch(LaunchConfig::for_num_elems(1)) }.map(drop).map_err(|e| CudaError::Driver(e.to_string()))
    };
    spin(&dev).unwrap(); // (The first launch also loads the module.)
    let t = dev.timer_start().unwrap();
    spin(&dev).unwrap();
    let outside = t.stop().unwrap();
    let (span, graph) = dev
        .capture(|| {
            let t = dev.timer_start()?;
            spin(&dev)?;
            t.end_here()
        })
        .unwrap();
    let (span, graph) = (span.unwrap(), graph.unwrap());
    let kinds = graph.node_kinds().unwrap();
    assert_eq!(kinds, vec![("kernel".to_string(), 3)], "two marks and the spin");
    assert!(span.ms().is_err(), "read before any launch");
    for _ in 0..3 {
        dev.launch_graph(&graph).unwrap();
        let ms = span.ms().unwrap();
        assert!((0.2..0.3).contains(&ms) && (0.2..0.3).contains(&outside), "graph {ms} ms, events {outside} ms");
        assert!((ms - outside).abs() < 0.01, "graph {ms} ms, events {outside} ms");
    }
}

/// Buffers allocated zeroed while a graph is captured are zeroed by a kernel node at each
/// launch (not a memset node), whatever the memory held: the tail past the last whole
/// 16-byte word too.
#[test]
fn graph_zeroes_its_buffers_with_a_kernel() {
    let Some(dev) = device() else { return };
    for n in [1usize, 15, 16, 1000, 1 << 20] {
        // Stale bytes in the pool, for the graph's allocation to reuse.
        drop(dev.upload(&vec![0xABu8; n + 4096], "dirty").unwrap());
        dev.synchronize().unwrap();
        let (zeroed, graph) = dev.capture(|| dev.alloc_zeros::<u8>(n, "zeroed in a graph")).unwrap();
        let (mut zeroed, graph) = (zeroed.unwrap(), graph.unwrap());
        let kinds = graph.node_kinds().unwrap();
        assert!(kinds.iter().any(|(k, c)| k == "kernel" && *c == 1), "{kinds:?}");
        assert!(!kinds.iter().any(|(k, _)| k == "memset"), "{kinds:?}");
        for _ in 0..2 {
            dev.launch_graph(&graph).unwrap();
            assert!(dev.download(&zeroed).unwrap().iter().all(|b| *b == 0), "{n} bytes zeroed");
            // Dirtied again (the buffer lives until the next launch), for that one to zero.
            dev.stream().memcpy_htod(&vec![0xABu8; n], &mut zeroed).unwrap();
        }
        // The graph's buffer, left to its owner to free.
        let p = zeroed.leak();
        // SAFETY: the last launch's buffer, not freed since, not used after.
        unsafe { dev.free_graph_buffer(p) }.unwrap();
    }
}
