//! `gpusql bench compile`: where the compile time of a never-seen query goes. Every
//! module of each TPC-H or SSB query (planned over SF 0.01 data; the kernels' shape does
//! not depend on the scale), or TPC-DS query (over the files of `--data`) is compiled with NVRTC to PTX (front end and NVVM), to CUBIN
//! (what the engine does: the above plus ptxas) and to CUBIN with ptxas at -O0; then all
//! modules of the query are compiled at once on `threads` threads (the wall a parallel
//! compile would take), and as one NVRTC program (the prelude once). Needs no GPU.

use gpusql::{BackendChoice, CompileProfile, Engine};
use std::path::Path;
use std::time::Instant;

pub struct CompileOptions {
    pub suite: String,
    pub arch: String,
    pub threads: usize,
    pub queries: Option<Vec<String>>,
    /// TPC-DS's folder (scripts/tpcds_data.py's `--out`: the tables under data/).
    pub data: Option<std::path::PathBuf>,
}

pub fn run(o: &CompileOptions) -> Result<String, String> {
    let mut engine = Engine::new(BackendChoice::Cpu).map_err(|e| e.to_string())?;
    match o.suite.as_str() {
        "tpch" => engine.load_tpch(0.01),
        "ssb" => engine.load_ssb(0.01),
        "tpcds" => {
            let dir = o.data.as_ref().ok_or("--suite tpcds needs --data DIR (scripts/tpcds_data.py's --out)")?;
            let opened = engine.open_directory(&dir.join("data")).map_err(|e| e.to_string())?;
            opened.errors.first().map_or(Ok(()), |e| Err(gpusql::Error::Io(e.clone())))
        }
        other => return Err(format!("unknown suite {other:?} (tpch, ssb or tpcds)")),
    }
    .map_err(|e| e.to_string())?;
    let mut files: Vec<_> = std::fs::read_dir(Path::new(&o.suite))
        .map_err(|e| format!("{}: {e} (run from the repository root)", o.suite))?
        .filter_map(|f| f.ok().map(|f| f.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    files.sort();
    // NVRTC's first compile in a process also loads and initializes it: timed apart.
    let t = Instant::now();
    gpusql::compile_module("extern \"C\" __global__ void warm_up() {}", &o.arch).map_err(|e| e.to_string())?;
    let warm_up =
        format!("(NVRTC's first compile in the process, an empty kernel: {:.0} ms)\n", t.elapsed().as_secs_f64() * 1e3);
    let mut out = format!(
        "{warm_up}NVRTC compile time by module, {} ({}), {} threads for the parallel wall\n{:<8} {:<14} {:>7} {:>7} {:>8} {:>9} {:>9} {:>10}\n",
        o.arch, o.suite, o.threads, "query", "module", "src KB", "PTX KB", "PTX ms", "ptxas ms", "CUBIN ms", "ptxas -O0"
    );
    let (mut serial, mut parallel, mut ptx, mut one_program_ms) = (vec![], vec![], vec![], vec![]);
    for f in files {
        let name = f.file_stem().unwrap_or_default().to_string_lossy().to_string();
        // "q01" is query 1, "q1.1" query 1.1.
        let number = |s: &str| s.trim_start_matches('q').trim_start_matches('0').to_string();
        if o.queries.as_ref().is_some_and(|q| !q.iter().any(|x| number(x) == number(&name))) {
            continue;
        }
        let sql = std::fs::read_to_string(&f).map_err(|e| e.to_string())?;
        let sources = engine.cuda_sources(&sql).map_err(|e| format!("{}: {e}", f.display()))?;
        let mut total = (0.0, 0.0);
        for (module, src) in &sources {
            let p = gpusql::compile_profile(src, &o.arch).map_err(|e| format!("{module}: {e}"))?;
            out.push_str(&row(&name, module, &p));
            total.0 += p.to_cubin_ms;
            total.1 += p.to_ptx_ms;
        }
        let wall = parallel_wall(&sources, &o.arch, o.threads)?;
        let one = match one_program(&sources) {
            Some(src) => {
                let t = Instant::now();
                gpusql::compile_module(&src, &o.arch).map_err(|e| format!("{name} as one program: {e}"))?;
                let ms = t.elapsed().as_secs_f64() * 1e3;
                one_program_ms.push(ms);
                format!("{ms:.0} ms")
            }
            None => "n/a (kernel names repeat)".to_string(),
        };
        out.push_str(&format!(
            "{:<8} {} modules: serial {:.0} ms (PTX {:.0}), parallel wall {:.0} ms, as one program {one}\n",
            name,
            sources.len(),
            total.0,
            total.1,
            wall
        ));
        serial.push(total.0);
        ptx.push(total.1);
        parallel.push(wall);
    }
    out.push_str(&format!(
        "geomean per query: serial CUBIN {:.0} ms, of which to PTX {:.0} ms; parallel wall {:.0} ms; as one program {:.0} ms ({} queries)\n",
        geomean(&serial),
        geomean(&ptx),
        geomean(&parallel),
        geomean(&one_program_ms),
        one_program_ms.len()
    ));
    Ok(out)
}

/// All of a query's modules as one program: the prelude once, then each module's own
/// code (None where two modules define a kernel of the same name, e.g. two sorts).
fn one_program(sources: &[(String, String)]) -> Option<String> {
    gpusql::merge_modules(&sources.iter().map(|(_, s)| s.as_str()).collect::<Vec<_>>())
}

fn row(query: &str, module: &str, p: &CompileProfile) -> String {
    format!(
        "{:<8} {:<14} {:>7.1} {:>7.1} {:>8.1} {:>9.1} {:>9.1} {:>10.1}\n",
        query,
        module,
        p.source_bytes as f64 / 1024.0,
        p.ptx_bytes as f64 / 1024.0,
        p.to_ptx_ms,
        p.to_cubin_ms - p.to_ptx_ms,
        p.to_cubin_ms,
        p.to_cubin_ptxas_o0_ms
    )
}

/// Wall ms to compile every module to CUBIN at once on `threads` threads.
fn parallel_wall(sources: &[(String, String)], arch: &str, threads: usize) -> Result<f64, String> {
    let t = Instant::now();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                s.spawn(|| -> Result<(), String> {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some((module, src)) = sources.get(i) else { return Ok(()) };
                        gpusql::compile_module(src, arch).map_err(|e| format!("{module}: {e}"))?;
                    }
                })
            })
            .collect();
        workers.into_iter().try_for_each(|w| w.join().map_err(|_| "a compile thread panicked".to_string())?)
    })?;
    Ok(t.elapsed().as_secs_f64() * 1e3)
}

fn geomean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    (xs.iter().map(|x| x.max(1e-9).ln()).sum::<f64>() / xs.len() as f64).exp()
}
