#!/usr/bin/env bash
# TPC-DS on the GPU beside DuckDB, per query: first run (no compiled kernel cached), warm
# wall and kernel times (gpusql bench over tpcds/qNN.sql), DuckDB's warm time over the same
# Parquet files loaded into memory, and the GPU's answers checked against DuckDB's.
# Three steps, because dsdgen needs DuckDB 1.5.5 and the oracle is 2.0.1 (two wheel
# folders; see scripts/tpcds_data.py):
#   bench_sql/tpcds_gpu.sh gen    SF DIR WHEELS155   # dsdgen in the background (log: DIR.log)
#   bench_sql/tpcds_gpu.sh gpusql SF DIR OUT         # gpusql bench: first run, warm, kernels
#   bench_sql/tpcds_gpu.sh duckdb SF DIR OUT         # DuckDB 2.0.1 timings and answers, then
#                                                    # gpusql check --suites tpcds on the GPU
# Needs target/release/gpusql (or $GPUSQL).
set -uo pipefail
STEP=$1 SF=$2 DIR=$3
B=${GPUSQL:-target/release/gpusql}
HERE=$(cd "$(dirname "$0")/.." && pwd)
export RUST_LOG=${RUST_LOG:-error}
case "$STEP" in
gen)
    mkdir -p "$DIR"
    # (setsid: the generator outlives this command; the next step waits for DIR/data/.done.)
    setsid nohup bash -c "python3 '$HERE/scripts/tpcds_data.py' --sf $SF --out '$DIR' --data-only --wheels '$4' \
        && touch '$DIR/data/.done'" > "$DIR.log" 2>&1 < /dev/null &
    echo "generating TPC-DS SF $SF into $DIR (log $DIR.log)"
    ;;
gpusql)
    OUT=$4
    mkdir -p "$OUT"
    while [ ! -e "$DIR/data/.done" ]; do sleep 5; done
    "$B" bench tpcds --backend gpu --data "$DIR/data" --sf "$SF" --cold --runs 3 \
        --json "$OUT/gpusql_tpcds_sf$SF.json" 2>&1 | tee "$OUT/gpusql_tpcds_sf$SF.txt"
    ;;
duckdb)
    OUT=$4
    mkdir -p "$OUT" "$DIR/answers"
    python3 "$HERE/scripts/duckdb_bench.py" --sf "$SF" --parquet-dir "$DIR/data" --in-memory \
        --query-dir "$HERE/tpcds" --runs 3 --answers-dir "$DIR/answers" \
        --json "$OUT/duckdb_tpcds_sf$SF.json" 2>&1 | tee "$OUT/duckdb_tpcds_sf$SF.txt"
    "$B" check --backend gpu --suites tpcds --tpcds "$DIR" --query-timeout 60 2>&1 \
        | tee "$OUT/check_tpcds_sf$SF.txt" | tail -30
    ;;
*)
    echo "usage: $0 gen|gpusql|duckdb SF DIR (WHEELS155|OUT)" >&2
    exit 2
    ;;
esac
