//! What handing a statement to another thread and waiting for its answer costs: a job
//! sent over a channel to a waiting thread (as `statement_thread` does), its result sent
//! back, less the job's own time. Medians and 90th percentiles of 2,000 hops, with jobs
//! of 0 and 500 us (a small query's warm time).
//!
//! `cargo run --release -p gpusql --example thread_hop`. On the H100 machine's host
//! (16 cores): 28.6 / 32.4 us median; that is why a kept plan of a shallow statement runs
//! on the caller's thread (`Engine::execute`).

use std::sync::mpsc;
use std::time::{Duration, Instant};

type Job = Box<dyn FnOnce() + Send>;

fn main() {
    let (tx, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            while let Ok(job) = rx.recv() {
                job();
            }
        })
        .expect("a thread");
    for work_us in [0u64, 500] {
        let mut hops = vec![];
        for _ in 0..2000 {
            let (done, result) = mpsc::sync_channel::<Duration>(1);
            let t = Instant::now();
            let job = move || {
                let s = Instant::now();
                while s.elapsed() < Duration::from_micros(work_us) {}
                let _ = done.send(s.elapsed());
            };
            tx.send(Box::new(job)).expect("the thread runs");
            let inner = result.recv().expect("the job answers");
            hops.push((t.elapsed() - inner).as_secs_f64() * 1e6);
        }
        hops.sort_by(f64::total_cmp);
        println!("job of {work_us} us: hop overhead median {:.1} us, p90 {:.1} us", hops[1000], hops[1800]);
    }
}
