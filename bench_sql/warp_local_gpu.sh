#!/usr/bin/env bash
# The A/B of bench_sql/warp_local.sql: two gpusql builds alternating, two rounds each, TPC-H
# SF 10 generated in each process; then DuckDB 2.0.1 over the same statements where
# DUCKDB=1. bench_sql/warp_local_gpu.sh OLD NEW OUTDIR (binaries, or .gz files unpacked first)
set -uo pipefail
OLD=$1 NEW=$2 OUT=$3
mkdir -p "$OUT" bin_ab
unpack() { case "$1" in *.gz) gunzip -c "$1" > "bin_ab/$2" && chmod +x "bin_ab/$2"; echo "bin_ab/$2";; *) echo "$1";; esac; }
A=$(unpack "$OLD" old) B=$(unpack "$NEW" new)
for i in 1 2; do
  for b in "old $A" "new $B"; do
    set -- $b
    echo "## $1"
    python3 bench_sql/run_timed.py "$2" bench_sql/warp_local.sql --data "--tpch 10" --runs 6 --wall
  done
done > "$OUT/warp_local.txt" 2>&1
python3 bench_sql/summarize_runs.py "$OUT/warp_local.txt"
