//! Developer tasks: `cargo xtask <task>`.
//!
//! - `test`     the whole suite, as CI runs it (scripts/test.sh)
//! - `answers`  regenerate the DuckDB answers and .slt expectations (needs `pip install duckdb`)
//! - `bundle`   build the release binary for the GPU machine and print what to carry
//! - `check-gpu` print the command that runs the suites and benchmarks on the GPU machine

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run(cmd: &mut Command) -> bool {
    eprintln!("+ {cmd:?}");
    match cmd.current_dir(root()).status() {
        Ok(s) => s.success(),
        Err(e) => {
            eprintln!("cannot run: {e}");
            false
        }
    }
}

// The memcheck pass catches out-of-bounds accesses that pool sub-allocation hides (a
// multi-match join once wrote past its output buffers and failed only on some machines).
const GPU_COMMAND: &str = "B=target/release/gpusql; $B check --backend gpu && $B check --backend gpu --sf 1 && \
${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer --tool memcheck --error-exitcode 1 $B check --backend gpu && \
$B bench tpch --sf 10 --backend gpu --json $OUT/tpch.json && $B bench ssb --sf 20 --backend gpu --json $OUT/ssb.json && \
$B bench skew-join --backend gpu";

fn main() -> ExitCode {
    let task = std::env::args().nth(1).unwrap_or_default();
    let ok = match task.as_str() {
        "test" => run(Command::new("bash").arg("scripts/test.sh")),
        "answers" => {
            run(Command::new("python3").arg("scripts/tpch_answers.py"))
                && run(Command::new("python3").arg("scripts/ssb_answers.py"))
                && run(Command::new("python3").arg("scripts/slt_expected.py"))
        }
        "bundle" => {
            let built = run(Command::new("cargo").args(["build", "--release", "-p", "gpusql-cli"]));
            if built {
                println!("carry: target/release/gpusql (with sql-tests/, tpch/, ssb/ from the working tree)");
            }
            built
        }
        "check-gpu" => {
            println!("{GPU_COMMAND}");
            true
        }
        other => {
            eprintln!("unknown task '{other}'; tasks: test, answers, bundle, check-gpu");
            false
        }
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
