#!/bin/bash
# Runs each statement of filters.sql 8 times with --timing and prints the median kernel ms
# of runs 2-8 per statement. Usage: run_filters.sh BINARY
B=$1
args=()
while IFS= read -r q; do for i in 1 2 3 4 5 6 7 8; do args+=(-c "$q"); done; done < "$(dirname "$0")/filters.sql"
"$B" --tpch 10 --backend gpu --timing --format csv "${args[@]}" 2>&1 >/dev/null | grep -o "kernels [0-9.]* ms" | awk '{print $2}' | python3 -c "
import sys, statistics
v = [float(x) for x in sys.stdin]
for s in range(len(v) // 8):
    print(f'stmt {s+1}: median {statistics.median(v[s*8+1:s*8+8]):.3f} ms')
"
