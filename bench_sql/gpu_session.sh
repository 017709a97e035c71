#!/usr/bin/env bash
# One device call: the correctness runs (suites, corner and TPC-H fuzz, TPC-DS SF 0.01 check),
# then TPC-DS SF 1 generated on the machine and run beside DuckDB. Expects
# target/gpusql.gz, .whl155/duckdbs.tar.xz (site/ = duckdb 2.0.1, gen/ = duckdb 1.5.5 + tpcds
# extension, unpacked wheels) and target/tpcds-sf0.01. On a machine minutes old the checks
# compile every kernel several times slower: the TPC-DS SF 0.01 check took over 60 s on a
# fresh H100 and 70 s on a warm one (99 queries), the .slt suite over 150 s fresh.
set -uo pipefail
OUT=${OUT:-/tmp/out}; SF=${SF:-1}
mkdir -p target/release /tmp/pk "$OUT"
gunzip -c target/gpusql.gz > target/release/gpusql && chmod +x target/release/gpusql
tar xJf .whl155/duckdbs.tar.xz -C /tmp/pk
export XDG_CACHE_HOME=/tmp/cache PYTHONPATH=/tmp/pk/site RUST_LOG=error
G=$XDG_CACHE_HOME/gpusql/tpcds-gen-1.5.5
mkdir -p "$G" && cp -r /tmp/pk/gen/. "$G" && touch "$G/.complete"
(uptime; nvidia-smi -L; nproc) > "$OUT/machine.txt"
env -u PYTHONPATH bash bench_sql/tpcds_gpu.sh gen "$SF" /tmp/ds$SF none
# (The SF 0.01 check and the window / string_agg comparisons only where EXTRA=1: with them the
# call runs past 600 s on a fresh machine.)
if [ "${EXTRA:-0}" = 1 ]; then
  timeout -k 2 150 target/release/gpusql check --backend gpu --suites tpcds --tpcds target/tpcds-sf0.01 \
    --query-timeout 30 > "$OUT/tpcds001.txt" 2>&1
fi
timeout -k 2 300 bash bench_sql/gpu_correctness.sh 997 90 12 30 "$OUT/corr" > "$OUT/correctness.txt" 2>&1
if [ "${EXTRA:-0}" = 1 ]; then
  timeout 35 bash bench_sql/beside_duckdb.sh bench_sql/window.sql 1 "$OUT/window" > "$OUT/window.txt" 2>&1
  timeout 25 bash bench_sql/beside_duckdb.sh bench_sql/string_agg.sql 1 "$OUT/string_agg" > "$OUT/string_agg.txt" 2>&1
fi
tail -3 /tmp/ds$SF.log > "$OUT/gen.txt"
timeout ${BENCH_SECS:-130} bash bench_sql/tpcds_gpu.sh gpusql "$SF" /tmp/ds$SF "$OUT/ds" > /dev/null 2>&1
timeout ${DUCK_SECS:-140} bash bench_sql/tpcds_gpu.sh duckdb "$SF" /tmp/ds$SF "$OUT/ds" > /dev/null 2>&1
cat "$OUT/machine.txt" "$OUT/gen.txt"; grep -sv "^ok" "$OUT/tpcds001.txt" | tail -12
tail -22 "$OUT/correctness.txt"; tail -8 "$OUT/window.txt" 2>/dev/null; tail -6 "$OUT/string_agg.txt" 2>/dev/null
tail -8 "$OUT/ds/gpusql_tpcds_sf$SF.txt"; grep -v "^ok" "$OUT/ds/check_tpcds_sf$SF.txt" | tail -25
