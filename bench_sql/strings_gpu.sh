#!/usr/bin/env bash
# The string functions at scale on the GPU: answers beside the CPU backend's at TPC-H SF 1
# (new strings as group keys, MIN/MAX, DISTINCT, sort keys, a join's filter; one query
# makes ~80 bytes a row, more than the arena's first guess, so it runs again), then
# upper(l_comment) over SF 10's lineitem, timed (3 runs):
#   bench_sql/strings_gpu.sh OUTDIR
set -uo pipefail
OUT=$1
B=${GPUSQL:-target/release/gpusql}
mkdir -p "$OUT"
Q=(
  "SELECT l_shipmode, count(*), max(upper(l_comment)), min(l_comment || l_comment || l_comment), sum(length(lower(l_comment || l_shipinstruct))) FROM lineitem GROUP BY l_shipmode ORDER BY 1"
  "SELECT count(DISTINCT upper(l_comment)), count(DISTINCT split_part(l_comment, ' ', 2)) FROM lineitem"
  "SELECT upper(l_comment) || '/' || l_orderkey AS x FROM lineitem ORDER BY x LIMIT 5"
  "SELECT lower(o_orderpriority) AS p, count(*), max(lpad(CAST(o_totalprice AS VARCHAR), 12, '0')) FROM orders JOIN lineitem ON o_orderkey = l_orderkey WHERE contains(l_comment, 'fur') GROUP BY p ORDER BY p"
  "SELECT CAST(l_shipdate AS VARCHAR) || ' ' || trim(l_shipmode) AS k, count(*) FROM lineitem GROUP BY k ORDER BY k LIMIT 3"
)
for backend in gpu cpu; do
  args=(--tpch 1 --backend "$backend" --format csv)
  for q in "${Q[@]}"; do args+=(-c "$q;"); done
  "$B" "${args[@]}" > "$OUT/strings_sf1_$backend.csv" 2> "$OUT/strings_sf1_$backend.err"
done
if cmp -s "$OUT/strings_sf1_gpu.csv" "$OUT/strings_sf1_cpu.csv"; then echo "SF 1: GPU = CPU ($(wc -l < "$OUT/strings_sf1_gpu.csv") lines)"; else echo "SF 1: GPU and CPU DIFFER"; diff "$OUT/strings_sf1_gpu.csv" "$OUT/strings_sf1_cpu.csv" | head -20; fi
[ "${SKIP_SF10:-0}" = 1 ] && exit 0
T="SELECT sum(length(upper(l_comment))) FROM lineitem"
"$B" --tpch 10 --backend gpu --timing -c "$T;" -c "$T;" -c "$T;" -c "SELECT sum(length(l_comment)) FROM lineitem;" > "$OUT/upper_sf10.log" 2>&1
grep -iE "kernel|total|sum" "$OUT/upper_sf10.log" | head -30
