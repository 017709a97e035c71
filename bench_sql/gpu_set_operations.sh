#!/usr/bin/env bash
# Set operations on the GPU beside DuckDB, over the same TPC-H data:
#   bench_sql/gpu_set_operations.sh OUTDIR [SF]
# The queries are bench_sql/set_operations/qNN.sql (q01: UNION ALL of two lineitem scans
# into an aggregate; q02: the same aggregate over one scan, for the floor). Needs
# target/release/gpusql (or $GPUSQL) and duckdb 2.0.1 importable.
set -uo pipefail
OUT=$1 SF=${2:-10}
B=${GPUSQL:-target/release/gpusql}
mkdir -p "$OUT"
"$B" bench tpch --sf "$SF" --backend gpu --runs 7 --query-dir bench_sql/set_operations \
  --json "$OUT/set_operations_gpu_sf$SF.json" 2>&1 | tail -9
python3 scripts/duckdb_bench.py --sf "$SF" --runs 5 --query-dir bench_sql/set_operations --gpusql "$B" \
  --json "$OUT/set_operations_duckdb_sf$SF.json" 2>&1 | tail -7
