#!/usr/bin/env bash
# TPC-H from Parquet files on the GPU machine, beside DuckDB over the same files:
#   bench_sql/files_tpch.sh SF OUTDIR [first]
# 1. `gpusql datagen tpch --format parquet` writes SF into /tmp/pq<SF> (timed);
# 2. DuckDB (all cores) runs the 22 queries over the files (views over read_parquet),
#    writing its answers (the cold run) and warm timings;
# 3. `gpusql check --backend gpu --data` compares gpusql's answers with DuckDB's;
# 4. `gpusql bench tpch --data` times them (decode, upload GB/s, kernels, wall);
# 5. with "first": scripts/first_answer.py, process start to the Q1 and Q6 answers.
# Logs and JSON go to OUTDIR. Needs target/release/gpusql and duckdb importable.
set -uo pipefail
SF=$1
OUT=$2
B=${GPUSQL:-target/release/gpusql}
D=/tmp/pq$SF
mkdir -p "$OUT"
echo "== datagen SF $SF"
/usr/bin/time -f "datagen: %e s wall, %M KiB max RSS" "$B" datagen tpch --sf "$SF" --format parquet --out "$D" 2>&1 | tail -2 | tee "$OUT/datagen_sf$SF.log"
du -sh "$D" | tee -a "$OUT/datagen_sf$SF.log"
echo "== DuckDB over the files"
python3 scripts/duckdb_bench.py --sf "$SF" --parquet-dir "$D" --runs 3 --answers-dir "/tmp/ans$SF" --json "$OUT/duckdb_sf$SF.json" > "$OUT/duckdb_sf$SF.log" 2>&1
tail -25 "$OUT/duckdb_sf$SF.log"
echo "== gpusql check against DuckDB's answers"
"$B" check --backend gpu --data "$D" --sf "$SF" --answers-dir "/tmp/ans$SF" > "$OUT/check_sf$SF.log" 2>&1
grep -v '^ok' "$OUT/check_sf$SF.log" | tail -20
echo "== gpusql bench"
"$B" bench tpch --data "$D" --sf "$SF" --runs 3 --backend gpu --json "$OUT/bench_sf$SF.json" > "$OUT/bench_sf$SF.log" 2>&1
tail -40 "$OUT/bench_sf$SF.log"
if [ "${3:-}" = first ]; then
  echo "== time to first answer"
  python3 scripts/first_answer.py --gpusql "$B" --data "$D" --runs 2 --json "$OUT/first_sf$SF.json" > "$OUT/first_sf$SF.log" 2>&1
  head -40 "$OUT/first_sf$SF.log"
fi
