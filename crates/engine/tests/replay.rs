//! Replayed runs (`SET replay_repeats`, exec `gpu/replay.rs`): a plan run again with the
//! same values launches its stages back to back with the counts its last run read back,
//! checked against the GPU's at the end; from its next run, as one CUDA graph
//! (`graph_repeats`, exec `gpu/graph.rs`). Needs a GPU; without one each test prints
//! "skipped" and passes, unless GPUSQL_REQUIRE_GPU=1.

use gpusql::{BackendChoice, Engine, Output};
use gpusql_exec::gpu::{GpuExecutor, PlanMemo};
use std::path::Path;

fn gpu_tpch() -> Option<Engine> {
    match Engine::new(BackendChoice::Gpu) {
        Ok(mut e) => {
            e.load_tpch(0.01).unwrap();
            Some(e)
        }
        Err(err) => {
            assert!(!std::env::var("GPUSQL_REQUIRE_GPU").is_ok_and(|v| v == "1"), "GPUSQL_REQUIRE_GPU=1 but: {err}");
            println!("skipped: no GPU ({err})");
            None
        }
    }
}

/// The answer as text, and whether the stages were replayed.
fn run(e: &mut Engine, sql: &str) -> (String, bool) {
    let (text, replayed, _) = run_graph(e, sql);
    (text, replayed)
}

/// `run`, and whether the replay was launched as a graph.
fn run_graph(e: &mut Engine, sql: &str) -> (String, bool, bool) {
    match e.execute(sql).unwrap().into_iter().last() {
        Some(Output::Rows { batches, stats }) => {
            (arrow::util::pretty::pretty_format_batches(&batches).unwrap().to_string(), stats.replayed, stats.graph)
        }
        other => panic!("{other:?}"),
    }
}

/// TPC-H query `q`'s text.
fn tpch_query(q: u32) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join(format!("tpch/q{q:02}.sql"))).unwrap()
}

#[test]
fn repeated_tpch_queries_replay_with_equal_answers() {
    let Some(mut e) = gpu_tpch() else { return };
    let mut replayed = vec![];
    for q in 1..=22 {
        let sql = tpch_query(q);
        let (first, _) = run(&mut e, &sql);
        // The first run may size a sink too small and run it again (a log not kept); the
        // second logs a settled run, the third replays it.
        for _ in 0..2 {
            let (again, r) = run(&mut e, &sql);
            assert_eq!(again, first, "Q{q}");
            if r {
                replayed.push(q);
                break;
            }
        }
    }
    assert_eq!(replayed, (1..=22).collect::<Vec<_>>(), "queries replayed");
    e.set("replay_repeats", "off").unwrap();
    let sql = tpch_query(3);
    for _ in 0..3 {
        assert!(!run(&mut e, &sql).1, "replayed with replay_repeats off");
    }
}

#[test]
fn repeated_tpch_queries_run_as_graphs_with_equal_answers() {
    let Some(mut e) = gpu_tpch() else { return };
    // (Graphs are kept once every kernel they launch is fully optimized.)
    let mut relaunched = vec![];
    for q in 1..=22 {
        let sql = tpch_query(q);
        let (first, _, _) = run_graph(&mut e, &sql);
        e.wait_for_compiles();
        let mut graphs = 0;
        for _ in 0..5 {
            let (again, _, graph) = run_graph(&mut e, &sql);
            assert_eq!(again, first, "Q{q}");
            graphs += graph as usize;
        }
        if graphs >= 2 {
            relaunched.push(q);
        }
    }
    assert_eq!(relaunched, (1..=22).collect::<Vec<_>>(), "queries whose graph was launched again");
    e.set("graph_repeats", "off").unwrap();
    let sql = tpch_query(3);
    for _ in 0..4 {
        let (_, _, graph) = run_graph(&mut e, &sql);
        assert!(!graph, "a graph with graph_repeats off");
    }
}

#[test]
fn a_replay_whose_log_disagrees_with_the_gpu_runs_again() {
    let Some(e) = gpu_tpch() else { return };
    let sql = "SELECT l_returnflag, l_linestatus, count(*) AS n, sum(l_quantity) AS q FROM lineitem \
               GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus";
    let plan = e.plan(sql).unwrap();
    let ex = GpuExecutor::new(e.gpu_device().unwrap().clone(), e.config().clone());
    let memo = PlanMemo::default();
    let text = |r: &(Vec<arrow::record_batch::RecordBatch>, _)| {
        arrow::util::pretty::pretty_format_batches(&r.0).unwrap().to_string()
    };
    let first = ex.execute_with(&plan, e.tables(), &memo).unwrap();
    let mut second = ex.execute_with(&plan, e.tables(), &memo).unwrap();
    if !second.1.replayed {
        second = ex.execute_with(&plan, e.tables(), &memo).unwrap();
    }
    assert!(second.1.replayed);
    assert_eq!(text(&second), text(&first));
    // The log now says the aggregate found one group less than the GPU will.
    assert!(memo.skew_last_run());
    let skewed = ex.execute_with(&plan, e.tables(), &memo).unwrap();
    assert!(!skewed.1.replayed, "a diverged replay's result was returned");
    assert_eq!(text(&skewed), text(&first));
    assert_eq!(skewed.0.iter().map(|b| b.num_rows()).sum::<usize>(), 4);
    // The run that waited logged the right counts again.
    let again = ex.execute_with(&plan, e.tables(), &memo).unwrap();
    assert!(again.1.replayed);
    assert_eq!(text(&again), text(&first));
}
