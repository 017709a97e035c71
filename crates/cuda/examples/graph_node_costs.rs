//! What each kind of CUDA graph node costs a launch, on the GPU and on the host.
//!
//! A replayed query is captured as a graph (`GpuDevice::capture`): its kernels, but also
//! an allocation and a free per buffer, memsets of counters and tables, and timing marks
//! around each stage (SSB q3.4 at SF 20: 20 kernels, 45 allocations, 39 frees, 24
//! memsets, 18 marks). This captures 20 short kernels in a chain, alone and with one or
//! two other nodes of a kind before each, and reports the medians of 50 launches: the
//! graph's GPU span, the host time of `cuGraphLaunch`, and launch-to-done wall. It also
//! prints the step of the GPU's nanosecond clock, which the timing kernel reads.
//!
//! `cargo run --release -p gpusql-cuda --example graph_node_costs` (needs a GPU).
//! Measured on an H100 (docs/BENCHMARKS.md "Graph nodes"), per node: allocations and
//! frees next to nothing, a memset ~1.8 us of GPU and ~1.6 us of host time, an event
//! record ~2.4 us and ~2.9 us, a kernel zeroing a buffer or writing the clock ~0.8 us and
//! no host time. So graphs zero buffers and mark time with kernels (`graph.rs`, `timer.rs`).

use gpusql_cuda::cudarc::driver::sys;
use gpusql_cuda::{CudaSlice, GpuDevice, LaunchConfig, PushKernelArg};
use std::time::Instant;

const KERNELS: usize = 20;
const ROWS: usize = 1 << 20;

const SOURCE: &str = r#"
extern "C" __global__ void touch(unsigned* out, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = out[i] * 3u + 1u;
}
extern "C" __global__ void ticks(unsigned long long* out, int n) {
    // Distinct successive readings of %globaltimer: its resolution.
    unsigned long long last, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(last));
    for (int k = 0; k < n;) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t != last) { out[k++] = t - last; last = t; }
    }
}
"#;

/// The kernels graphs use in place of memsets and event records.
const GRAPH_KERNELS: &str = include_str!("../src/graph_kernels.cu");

/// A node put before each kernel.
#[derive(Clone, Copy, PartialEq)]
enum Node {
    /// Two allocations, freed after the kernel.
    AllocFree,
    Memset,
    ZeroKernel,
    /// An external event record (what a timing event in a graph is).
    EventRecord,
    /// A one-thread kernel writing the clock.
    StampKernel,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    use Node::*;
    let dev = GpuDevice::open(0)?;
    let kernel = |source, name| dev.load_kernel(source, name).map(|(f, _)| f);
    let (touch, ticks) = (kernel(SOURCE, "touch")?, kernel(SOURCE, "ticks")?);
    let (zero, stamp) = (kernel(GRAPH_KERNELS, "gpusql_zero_bytes")?, kernel(GRAPH_KERNELS, "gpusql_stamp")?);
    let one = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
    let out = dev.alloc_zeros::<u64>(64, "ticks")?;
    let mut b = dev.stream().launch_builder(&ticks);
    b.arg(&out).arg(&64i32);
    // SAFETY: `ticks` writes n u64 into a buffer of 64.
    unsafe { b.launch(one) }?;
    let mut steps = dev.download(&out)?;
    steps.sort_unstable();
    println!("%globaltimer steps (ns): min {} median {} max {}", steps[0], steps[32], steps[63]);

    let stamps = dev.alloc_zeros::<u64>(1, "stamps")?;
    let event = dev.ctx().new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?;
    let data = dev.alloc_zeros::<u32>(ROWS, "data")?;
    let cfg = LaunchConfig { grid_dim: (dev.sm_count() * 2, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
    let n = ROWS as u64;
    let cases: [(&str, &[Node]); 8] = [
        ("kernels only", &[]),
        ("+ 2 allocs/frees", &[AllocFree]),
        ("+ memset", &[Memset]),
        ("+ zeroing kernel", &[ZeroKernel]),
        ("+ event record", &[EventRecord]),
        ("+ clock kernel", &[StampKernel]),
        ("+ allocs, memset, event", &[AllocFree, Memset, EventRecord]),
        ("+ allocs, memset, clock kernel", &[AllocFree, Memset, StampKernel]),
    ];
    println!("{KERNELS} kernels over {ROWS} u32 each, with nodes before each; medians of 50 launches");
    println!("{:<32} {:>6} {:>12} {:>14} {:>10}", "graph", "nodes", "GPU span us", "launch host us", "wall us");
    for (name, extra) in cases {
        let (out, graph) = dev.capture(|| -> Result<(), Box<dyn std::error::Error>> {
            for _ in 0..KERNELS {
                let mut held: Vec<CudaSlice<u32>> = vec![];
                for node in extra {
                    match node {
                        AllocFree => {
                            for _ in 0..2 {
                                held.push(dev.alloc_unset::<u32>(1024, "temp")?);
                            }
                        }
                        // (Not `alloc_zeros`, which zeroes by a kernel in a capture. Left
                        // to the graph: its launches free them.)
                        Memset => {
                            let mut buf = dev.alloc_unset::<u32>(64, "counters")?;
                            dev.stream().memset_zeros(&mut buf)?;
                            buf.leak();
                        }
                        ZeroKernel => {
                            let buf = dev.alloc_unset::<u32>(64, "counters")?;
                            let mut b = dev.stream().launch_builder(&zero);
                            b.arg(&buf).arg(&256u64);
                            // SAFETY: `gpusql_zero_bytes` writes n bytes, the buffer's 256.
                            unsafe { b.launch(LaunchConfig::for_num_elems(256)) }?;
                            buf.leak();
                        }
                        EventRecord => {
                            // SAFETY: the event and the capturing stream are alive.
                            unsafe {
                                sys::cuEventRecordWithFlags(
                                    event.cu_event(),
                                    dev.stream().cu_stream(),
                                    sys::CUevent_record_flags::CU_EVENT_RECORD_EXTERNAL as u32,
                                )
                            }
                            .result()?;
                        }
                        StampKernel => {
                            let mut b = dev.stream().launch_builder(&stamp);
                            b.arg(&stamps);
                            // SAFETY: `gpusql_stamp` writes one u64.
                            unsafe { b.launch(one) }?;
                        }
                    }
                }
                let mut b = dev.stream().launch_builder(&touch);
                b.arg(&data).arg(&n);
                // SAFETY: `touch` takes a buffer of n u32 and n.
                unsafe { b.launch(cfg) }?;
            }
            Ok(())
        })?;
        out?;
        let graph = graph?;
        let nodes: usize = graph.node_kinds()?.iter().map(|(_, k)| k).sum();
        let (mut gpu, mut host, mut wall) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..55 {
            dev.synchronize()?;
            let t = dev.timer_start()?;
            let start = Instant::now();
            dev.launch_graph(&graph)?;
            host.push(start.elapsed().as_secs_f64() * 1e6);
            gpu.push(t.stop()? * 1e3);
            wall.push(start.elapsed().as_secs_f64() * 1e6);
        }
        let median = |v: &mut Vec<f64>| {
            let v = &mut v[5..];
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (g, h, w) = (median(&mut gpu), median(&mut host), median(&mut wall));
        println!("{name:<32} {nodes:>6} {g:>12.1} {h:>14.1} {w:>10.1}");
    }
    Ok(())
}
