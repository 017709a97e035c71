//! A kernel fault must not leave the engine unusable (needs a GPU; without one the test
//! prints "skipped" and passes, unless GPUSQL_REQUIRE_GPU=1).

use gpusql::{BackendChoice, Engine};
use gpusql_cuda::{LaunchConfig, PushKernelArg};

/// Writes through a wild pointer: CUDA_ERROR_ILLEGAL_ADDRESS, which is sticky (every
/// later call of the context fails with it).
const FAULT: &str = r#"
extern "C" __global__ void fault(unsigned long long* p) { *(p + (1ULL << 40)) = 1; }
"#;

#[test]
fn a_kernel_fault_does_not_poison_the_engine() {
    let mut e = match Engine::new(BackendChoice::Gpu) {
        Ok(e) => e,
        Err(err) => {
            assert!(!std::env::var("GPUSQL_REQUIRE_GPU").is_ok_and(|v| v == "1"), "GPUSQL_REQUIRE_GPU=1 but: {err}");
            println!("skipped: no GPU ({err})");
            return;
        }
    };
    e.load_tpch(0.01).unwrap();
    let count = |e: &mut Engine| {
        e.sql("SELECT count(*) FROM lineitem WHERE l_quantity > 10").map(|b| format!("{:?}", b[0].column(0)))
    };
    let before = count(&mut e).unwrap();
    {
        let dev = e.gpu_device().unwrap().clone();
        let (f, _) = dev.load_kernel(FAULT, "fault").unwrap();
        let mut p = dev.alloc_zeros::<u64>(1, "fault target").unwrap();
        let mut b = dev.stream().launch_builder(&f);
        b.arg(&mut p);
        unsafe { b.launch(LaunchConfig::for_num_elems(1)) }.unwrap();
        assert!(dev.synchronize().is_err(), "the wild write did not fault");
        assert!(!dev.is_usable());
    }
    // The query that meets the broken context fails and says what became of the GPU; the
    // next one answers, on a new context where the driver allows one, else on the CPU
    // backend (after an illegal address the driver wants a new process), with a notice.
    let err = count(&mut e).unwrap_err().to_string();
    println!("the query that met the fault: {err}");
    assert!(err.contains("the GPU context was lost"), "{err}");
    assert_eq!(count(&mut e).unwrap(), before);
    match e.gpu_device() {
        Some(dev) => assert!(dev.is_usable()),
        None => {
            let notice = e.notice().unwrap_or_default().to_string();
            assert!(notice.contains("CPU reference backend") && notice.contains("restart"), "{notice}");
        }
    }
    println!("after the fault: {}", e.backend());
}
