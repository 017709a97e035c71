//! Compiling ahead, on all cores: a query's modules are handed to worker threads at once
//! (NVRTC spends 50-300 ms of one core on each; a TPC-H query has up to 12), and the
//! fully optimized builds of the kernels a query settled on follow at low priority.
//!
//! Each job is keyed like the kernel cache. Whoever needs a module that is queued or being
//! compiled waits for that job instead of compiling it twice; a job still queued is taken
//! over by the thread that needs it, so a waiting query never sits behind background work.

use std::collections::{HashMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::Instant;

use cudarc::driver::CudaModule;

use crate::cache::CacheHit;
use crate::CudaError;

/// NVRTC recurses over deeply nested expressions: its threads get the statement thread's
/// stack (only the pages touched are committed).
const WORKER_STACK_BYTES: usize = 256 << 20;

/// Which queue a job waits in: workers take every `Now` job before any `Later` one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// A module the running query is about to need.
    Now,
    /// An optimized build that replaces a quick one when ready.
    Later,
}

/// What compiling and loading one module produced.
pub(crate) type Loaded = Result<(Arc<CudaModule>, CacheHit, f64), CudaError>;
type Work = Box<dyn FnOnce() -> Loaded + Send>;

pub(crate) struct Job {
    /// Whether the job compiles the modules of several keys as one program.
    shared: bool,
    work: Mutex<Option<Work>>,
    done: Mutex<Option<Loaded>>,
    finished: Condvar,
}

impl Job {
    pub(crate) fn shared(&self) -> bool {
        self.shared
    }

    /// Runs the job here unless a thread has taken it already.
    fn run(&self) {
        let Some(work) = lock(&self.work).take() else { return };
        let result = catch_unwind(AssertUnwindSafe(work))
            .unwrap_or_else(|_| Err(CudaError::Nvrtc { msg: "compile job panicked".into(), log: String::new() }));
        *lock(&self.done) = Some(result);
        self.finished.notify_all();
    }

    /// The job's result: runs it here if no worker has started it, else waits for it.
    pub(crate) fn wait(&self) -> Loaded {
        self.run();
        let mut done = lock(&self.done);
        loop {
            if let Some(r) = done.as_ref() {
                return r.clone();
            }
            done = self.finished.wait(done).unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[derive(Default)]
struct Queues {
    now: VecDeque<Arc<Job>>,
    later: VecDeque<Arc<Job>>,
    /// Jobs queued or running, by cache key.
    pending: HashMap<String, Arc<Job>>,
    workers: usize,
    /// Jobs workers are running now, and of them `Now` jobs.
    running: usize,
    running_now: usize,
    /// Set by `shutdown`: no job is queued any more.
    stopped: bool,
}

#[derive(Default)]
struct Shared {
    queues: Mutex<Queues>,
    work_ready: Condvar,
    all_done: Condvar,
}

/// Worker threads (up to one per core, started on first use) and the jobs they share.
#[derive(Clone)]
pub(crate) struct CompilePool {
    shared: Arc<Shared>,
}

/// Every pool of the process, for `stop_all` before it exits.
static POOLS: Mutex<Vec<Weak<Shared>>> = Mutex::new(Vec::new());

impl Default for CompilePool {
    fn default() -> Self {
        let shared = Arc::new(Shared::default());
        let mut pools = lock(&POOLS);
        pools.retain(|p| p.strong_count() > 0);
        pools.push(Arc::downgrade(&shared));
        CompilePool { shared }
    }
}

/// Stops every compile pool of the process (`CompilePool::shutdown`). A program that ends
/// with `std::process::exit`, without dropping its devices, calls it first: the process
/// must not exit while NVRTC runs on another thread (its library teardown then crashes
/// it: a segmentation fault after the last answer).
pub fn stop_all() {
    let pools: Vec<Arc<Shared>> = lock(&POOLS).iter().filter_map(Weak::upgrade).collect();
    for shared in pools {
        CompilePool { shared }.shutdown();
    }
}

impl CompilePool {
    /// The job compiling `key`, if one is queued or running.
    pub(crate) fn pending(&self, key: &str) -> Option<Arc<Job>> {
        lock(&self.shared.queues).pending.get(key).cloned()
    }

    /// Queues `work` under `key` unless a job for it is pending. `work` must put its module
    /// where later lookups find it (the memory cache) before it returns: the job leaves
    /// `pending` only after that.
    pub(crate) fn submit(&self, key: String, priority: Priority, work: impl FnOnce() -> Loaded + Send + 'static) {
        self.queue(vec![key], priority, false, work);
    }

    /// `submit` of one job that compiles the modules of every key in `keys` (one program
    /// holding all their kernels); it is pending under each key not pending already, and
    /// not queued when every key is.
    pub(crate) fn submit_shared(
        &self,
        keys: Vec<String>,
        priority: Priority,
        work: impl FnOnce() -> Loaded + Send + 'static,
    ) {
        self.queue(keys, priority, true, work);
    }

    fn queue(
        &self,
        keys: Vec<String>,
        priority: Priority,
        shared: bool,
        work: impl FnOnce() -> Loaded + Send + 'static,
    ) {
        let mut q = lock(&self.shared.queues);
        let keys: Vec<String> = keys.into_iter().filter(|k| !q.pending.contains_key(k)).collect();
        if q.stopped || keys.is_empty() {
            return;
        }
        // The keys leave `pending` when the work is done, wherever it ran.
        let (pool, ks) = (self.clone(), keys.clone());
        let work: Work = Box::new(move || {
            let r = work();
            pool.finish(&ks);
            r
        });
        let job =
            Arc::new(Job { shared, work: Mutex::new(Some(work)), done: Mutex::new(None), finished: Condvar::new() });
        for k in keys {
            q.pending.insert(k, job.clone());
        }
        match priority {
            Priority::Now => q.now.push_back(job),
            Priority::Later => q.later.push_back(job),
        }
        if q.workers < workers() {
            let shared = self.shared.clone();
            let spawned = std::thread::Builder::new()
                .name("gpusql-compile".into())
                .stack_size(WORKER_STACK_BYTES)
                .spawn(move || worker(shared));
            match spawned {
                Ok(_) => q.workers += 1,
                Err(e) => tracing::warn!(error = %e, "cannot start a compile thread"),
            }
        }
        drop(q);
        self.shared.work_ready.notify_one();
    }

    fn finish(&self, keys: &[String]) {
        let mut q = lock(&self.shared.queues);
        for k in keys {
            q.pending.remove(k);
        }
        if q.pending.is_empty() {
            self.shared.all_done.notify_all();
        }
    }

    /// Drops the jobs no thread has started and waits for the running ones: a process
    /// must not exit while NVRTC runs on another thread (its library teardown then
    /// crashes it). A dropped job's module is simply not compiled.
    pub(crate) fn shutdown(&self) {
        let mut q = lock(&self.shared.queues);
        q.stopped = true;
        let queued: Vec<Arc<Job>> = {
            let q = &mut *q;
            q.now.drain(..).chain(q.later.drain(..)).collect()
        };
        for j in &queued {
            lock(&j.work).take();
        }
        q.pending.retain(|_, j| !queued.iter().any(|d| Arc::ptr_eq(d, j)));
        while q.running > 0 {
            q = self.shared.all_done.wait(q).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Whether no job is queued or running.
    pub(crate) fn is_idle(&self) -> bool {
        lock(&self.shared.queues).pending.is_empty()
    }

    /// Blocks until no job is queued or running.
    pub(crate) fn wait_idle(&self) {
        let mut q = lock(&self.shared.queues);
        while !q.pending.is_empty() {
            q = self.shared.all_done.wait(q).unwrap_or_else(|e| e.into_inner());
        }
    }
}

fn worker(shared: Arc<Shared>) {
    loop {
        let job = {
            let mut q = lock(&shared.queues);
            loop {
                if let Some(j) = q.now.pop_front() {
                    q.running += 1;
                    q.running_now += 1;
                    break (j, Priority::Now);
                }
                // Background work waits until no query waits on a compile, and runs on
                // few threads: a running job cannot be stopped, and on a host whose
                // compile throughput is a core or two, a query that comes next would wait
                // behind every one of them.
                if q.running_now == 0 && q.running < background_workers() {
                    if let Some(j) = q.later.pop_front() {
                        q.running += 1;
                        break (j, Priority::Later);
                    }
                }
                q = shared.work_ready.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        let (job, priority) = job;
        let t = Instant::now();
        job.run();
        tracing::debug!("compile job ({priority:?}) ran {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
        let mut q = lock(&shared.queues);
        q.running -= 1;
        if priority == Priority::Now {
            q.running_now -= 1;
        }
        drop(q);
        // Waiting Later jobs may start now; shutdown and wait_idle look too.
        shared.work_ready.notify_all();
        shared.all_done.notify_all();
    }
}

/// Compile threads: one per core.
fn workers() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| {
        let n = std::thread::available_parallelism().map_or(2, |n| n.get());
        tracing::debug!("{n} compile threads");
        n
    })
}

/// Threads that may run `Later` jobs at once: an eighth of the compile threads, at least one.
fn background_workers() -> usize {
    (workers() / 8).max(1)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere while holding the lock leaves the data usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn failing(ms: u64, msg: &'static str) -> impl FnOnce() -> Loaded + Send + 'static {
        move || {
            std::thread::sleep(Duration::from_millis(ms));
            Err(CudaError::Driver(msg.into()))
        }
    }

    /// Runs `f` on a thread and fails the test if it does not finish in 10 s (a deadlock).
    fn within_10s(f: impl FnOnce() + Send + 'static) {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            f();
            let _ = tx.send(());
        });
        assert!(rx.recv_timeout(Duration::from_secs(10)).is_ok(), "deadlock");
    }

    #[test]
    fn a_waiter_gets_the_jobs_result_and_the_key_leaves_pending() {
        within_10s(|| {
            let pool = CompilePool::default();
            pool.submit("a".into(), Priority::Now, failing(50, "job a"));
            let job = pool.pending("a").expect("pending");
            assert!(matches!(job.wait(), Err(CudaError::Driver(m)) if m == "job a"));
            pool.wait_idle();
            assert!(pool.pending("a").is_none());
            // A second submit of a pending key is ignored; a finished key may run again.
            pool.submit("a".into(), Priority::Later, failing(0, "again"));
            pool.wait_idle();
        });
    }

    #[test]
    fn a_shared_job_is_pending_under_each_key_until_done() {
        within_10s(|| {
            let pool = CompilePool::default();
            let (release, released) = std::sync::mpsc::channel::<()>();
            pool.submit("a".into(), Priority::Now, failing(0, "a alone"));
            pool.submit_shared(vec!["a".into(), "b".into(), "c".into()], Priority::Now, move || {
                let _ = released.recv();
                Err(CudaError::Driver("b and c".into()))
            });
            // "a" was pending (or done): the shared job took the other two.
            let (b, c) = (pool.pending("b").expect("b"), pool.pending("c").expect("c"));
            assert!(Arc::ptr_eq(&b, &c) && b.shared());
            assert!(pool.pending("a").is_none_or(|a| !Arc::ptr_eq(&a, &b)));
            release.send(()).unwrap();
            assert!(matches!(c.wait(), Err(CudaError::Driver(m)) if m == "b and c"));
            pool.wait_idle();
            assert!(pool.pending("b").is_none() && pool.pending("c").is_none());
        });
    }

    #[test]
    fn shutdown_drops_queued_jobs_and_waits_for_running_ones() {
        within_10s(|| {
            let pool = CompilePool::default();
            for k in 0..64 {
                pool.submit(format!("k{k}"), Priority::Later, failing(20, "slow"));
            }
            pool.submit("now".into(), Priority::Now, failing(20, "now"));
            pool.shutdown();
            assert_eq!(lock(&pool.shared.queues).running, 0);
            assert!(lock(&pool.shared.queues).now.is_empty());
        });
    }
}
