#!/usr/bin/env bash
# The qNN.sql files of one or more folders on the GPU beside DuckDB, over the same TPC-H data:
#   bench_sql/query_dir_vs_duckdb.sh OUTDIR SF DIR...
# e.g. `bench_sql/query_dir_vs_duckdb.sh out 10 bench_sql/set_operations bench_sql/strings_sf10`
# (set_operations/q01: UNION ALL of two lineitem scans into an aggregate; q02: the same
# aggregate over one scan, for the floor). Several folders are run as one, so that each
# engine makes the data once: their files are copied into one folder as q<i><NN>.sql, i the
# folder's place in the list (q101 is the first folder's q01; OUTDIR/queries.txt says which). Needs target/release/gpusql (or $GPUSQL) and duckdb 2.0.1 importable.
set -uo pipefail
OUT=$1 SF=$2; shift 2
B=${GPUSQL:-target/release/gpusql}
mkdir -p "$OUT"
DIR=$1
if [ $# -gt 1 ]; then
  DIR=$(mktemp -d)
  i=0
  for d in "$@"; do
    i=$((i + 1))
    for f in "$d"/q*.sql; do
      cp "$f" "$DIR/q$i$(basename "$f" | cut -c2-)"
      echo "q$i$(basename "$f" .sql | cut -c2-) $f" >> "$OUT/queries.txt"
    done
  done
fi
"$B" bench tpch --sf "$SF" --backend gpu --runs 7 --query-dir "$DIR" \
  --json "$OUT/gpu_sf$SF.json" 2>&1 | tail -12
python3 scripts/duckdb_bench.py --sf "$SF" --runs 5 --query-dir "$DIR" --gpusql "$B" \
  --json "$OUT/duckdb_sf$SF.json" 2>&1 | tail -10
