#!/bin/bash
# Times statements on the GPU in one process (one data generation): each line of LIST is
# - `SET …`: run once, untimed (e.g. SET lane_refill = off, to compare forms);
# - `@path/to/query.sql`: that file, run 8 times;
# - any other line: that statement, run 8 times.
# Prints the median kernel ms of runs 2-8 of each timed line.
# Usage: run_timed.sh BINARY LIST [DATA, default "--tpch 10"; e.g. "--ssb 20"]
B=$1; LIST=$2; DATA=${3:---tpch 10}
args=(); names=()
while IFS= read -r q; do
  [ -z "$q" ] && continue
  case "$q" in
    \#*) continue ;;
    [Ss][Ee][Tt]\ *) args+=(-c "$q"); names+=("=$q") ;;
    @*) for i in 1 2 3 4 5 6 7 8; do args+=(-f "${q#@}"); done; names+=("$q") ;;
    *) for i in 1 2 3 4 5 6 7 8; do args+=(-c "$q"); done; names+=("$q") ;;
  esac
done < "$LIST"
printf '%s\n' "${names[@]}" > /tmp/run_timed_names.$$
"$B" $DATA --backend gpu --timing --format csv "${args[@]}" 2>&1 >/dev/null | grep -o "kernels [0-9.]* ms" | awk '{print $2}' | python3 -c "
import sys, statistics
v = [float(x) for x in sys.stdin]
names = [l.rstrip('\n') for l in open('/tmp/run_timed_names.$$')]
i = 0
for n in names:
    if n.startswith('='):
        print('--', n[1:])
        continue
    runs = v[i * 8:(i + 1) * 8]
    i += 1
    print(f'{statistics.median(runs[1:]):9.3f} ms  {n[:110]}')
"
rm -f /tmp/run_timed_names.$$
