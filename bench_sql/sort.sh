#!/usr/bin/env bash
# The GPU sort, TPC-H lineitem at SF ${2:-10} (60 M rows at SF 10): a string key
# (l_comment), two integer keys, a DOUBLE DESC with an integer; each as ORDER BY … LIMIT
# 2000 (above the bitonic top-N's 1,024 rows) and as a window's sort of every row
# (row_number() OVER (ORDER BY …)). radix_sort = off (bitonic) against on; 3 runs each, the
# first compiling. Printed per statement: the sort stage's kernel ms, all kernels' ms and
# the wall ms, from --timing.
#   bash bench_sql/sort.sh [BINARY] [SF]
set -euo pipefail
BIN=${1:-target/release/gpusql}; SF=${2:-10}
KEYS=("l_comment" "l_partkey, l_suppkey" "l_extendedprice DESC, l_orderkey")
script=$(mktemp)
for mode in off on; do
  echo "SET radix_sort = $mode;" >> "$script"
  for k in "${KEYS[@]}"; do
    for r in 1 2 3; do echo "SELECT l_orderkey FROM lineitem ORDER BY $k LIMIT 2000;" >> "$script"; done
    for r in 1 2 3; do echo "SELECT max(rn) FROM (SELECT row_number() OVER (ORDER BY $k) AS rn FROM lineitem);" >> "$script"; done
  done
done
"$BIN" --tpch "$SF" --backend "${BACKEND:-gpu}" --timing -f "$script" 2>&1 >/dev/null | python3 -c '
import re, sys
stmts = [l.strip() for l in open(sys.argv[1]) if l.strip()]
i, sort_ms = 0, 0.0
kern = None
for line in sys.stdin:
    m = re.match(r"\s+sort #\d+\s+([0-9.]+)", line)
    if m: sort_ms += float(m.group(1))
    m = re.search(r"in ([0-9.]+) ms of kernels", line)
    if m: kern = float(m.group(1))
    m = re.match(r"Time: ([0-9.]+) ms", line)
    if m:
        s = stmts[i] if i < len(stmts) else "?"
        k = "-" if kern is None else f"{kern:.3f}"
        print(s if s.startswith("SET") else f"sort {sort_ms:9.3f} ms  kernels {k:>9} ms  wall {float(m.group(1)):9.3f} ms  {s}")
        i += 1; sort_ms = 0.0; kern = None
    elif line.startswith(("error", "Error")) or "not supported" in line:
        print(line.rstrip())
' "$script"
