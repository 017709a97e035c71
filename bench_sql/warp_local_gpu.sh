#!/usr/bin/env bash
# The A/B of bench_sql/warp_local.sql: gpusql builds alternating, ROUNDS rounds (default 2),
# TPC-H SF 10 generated in each process; prints each statement's best median kernel ms per
# build. bench_sql/warp_local_gpu.sh OUTDIR NAME=BINARY... (a .gz binary is unpacked first;
# SQL=FILE: other statements than bench_sql/warp_local.sql)
set -uo pipefail
OUT=$1; shift
mkdir -p "$OUT" bin_ab
builds=()
for nb in "$@"; do
  name=${nb%%=*} bin=${nb#*=}
  case "$bin" in *.gz) gunzip -c "$bin" > "bin_ab/$name" && chmod +x "bin_ab/$name"; bin="bin_ab/$name";; esac
  builds+=("$name=$bin")
done
for ((i = 0; i < ${ROUNDS:-2}; i++)); do
  for nb in "${builds[@]}"; do
    echo "## ${nb%%=*}"
    python3 bench_sql/run_timed.py "${nb#*=}" "${SQL:-bench_sql/warp_local.sql}" --data "--tpch 10" --runs 6 --wall
  done
done > "$OUT/warp_local.txt" 2>&1
python3 bench_sql/summarize_runs.py "$OUT/warp_local.txt"
