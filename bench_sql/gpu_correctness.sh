#!/usr/bin/env bash
# The correctness runs of the GPU machine: the suites on the GPU backend, then the corner
# fuzzer (signed zeros, NaN, rounding ties, UTF-8, NULLs; `crates/cli/src/fuzz/corners.rs`)
# and the TPC-H fuzzer (its sorts radix-sorted, `--set radix_sort=always`: the fuzzer's
# tables are below the 4,096 rows from which the default radix-sorts), each against the CPU
# backend and DuckDB:
#   bench_sql/gpu_correctness.sh SEED CORNER_SECS JOBS TPCH_SECS OUTDIR
# The check runs beside the corner fuzzer. On a 64-core host (`nvidia-h100-x4`), 58 jobs
# ran 21,254 corner queries in 345 s. Needs target/release/gpusql (or $GPUSQL) and
# duckdb 2.0.1 importable.
set -uo pipefail
SEED=$1 CORNERS=$2 JOBS=$3 TPCH=$4 OUT=$5
B=${GPUSQL:-target/release/gpusql}
mkdir -p "$OUT"
export RUST_LOG=error
"$B" fuzz --backend gpu --schema corners --seed "$SEED" --queries 200000 --jobs "$JOBS" --reduce-secs 20 \
  --time-limit "$CORNERS" --report "$OUT/fuzz_corners_$SEED.json" > "$OUT/fuzz_corners_$SEED.log" 2>&1 &
fuzz=$!
# (A timeout that ends this script ends the fuzzer too.)
trap 'kill $fuzz 2>/dev/null' EXIT TERM
"$B" check --backend gpu 2>&1 | tee "$OUT/check_gpu.log" | grep -v "^ok"
wait $fuzz
head -3 "$OUT/fuzz_corners_$SEED.log"; grep -A8 "^FAILURE" "$OUT/fuzz_corners_$SEED.log"
if [ "$TPCH" -gt 0 ]; then
  "$B" fuzz --backend gpu --schema tpch --seed "$SEED" --queries 200000 --jobs "$JOBS" --reduce-secs 20 \
    --set radix_sort=always \
    --time-limit "$TPCH" --report "$OUT/fuzz_tpch_$SEED.json" > "$OUT/fuzz_tpch_$SEED.log" 2>&1
  head -3 "$OUT/fuzz_tpch_$SEED.log"; grep -A8 "^FAILURE" "$OUT/fuzz_tpch_$SEED.log"
fi
