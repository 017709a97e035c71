#!/usr/bin/env bash
# Statements on the GPU at a TPC-H scale factor (median kernel and wall ms of runs 2-5 and
# the first run's wall, one process: run_timed.py), then the same statements in DuckDB
# 2.0.1 (all cores) over lineitem's LINEITEM_COLUMNS, from Parquet that gpusql writes; both
# engines' answers kept:
#   bench_sql/beside_duckdb.sh STATEMENTS SF OUTDIR
# LINEITEM_COLUMNS (environment) defaults to every column of lineitem. Needs target/release/gpusql
# (or $GPUSQL) and duckdb importable.
set -uo pipefail
SQL=$1 SF=$2 OUT=$3
COLS=${LINEITEM_COLUMNS:-*}
B=${GPUSQL:-target/release/gpusql}
HERE=$(dirname "$0")
mkdir -p "$OUT"
export RUST_LOG=error
python3 "$HERE/run_timed.py" "$B" "$SQL" --data "--tpch $SF" --runs 5 --wall | tee "$OUT/gpu.txt"
grep -v "^#\|^EACH\|^@\|^$" "$SQL" > "$OUT/statements.sql"
args=(--tpch "$SF" --backend gpu --format csv -c "COPY (SELECT $COLS FROM lineitem) TO '/tmp/lineitem_cols.parquet' (FORMAT parquet);")
while IFS= read -r q; do args+=(-c "$q;"); done < "$OUT/statements.sql"
"$B" "${args[@]}" > "$OUT/answers_gpu.csv" 2> "$OUT/answers_gpu.err"
python3 - "$OUT" <<'PY'
import duckdb, statistics, sys, time
out = sys.argv[1]
c = duckdb.connect()
c.sql("CREATE TABLE lineitem AS SELECT * FROM '/tmp/lineitem_cols.parquet'")
with open(f"{out}/duckdb.txt", "w") as f:
    for q in open(f"{out}/statements.sql"):
        q = q.strip()
        times = []
        for _ in range(5):
            t = time.perf_counter(); r = c.sql(q).fetchall(); times.append((time.perf_counter() - t) * 1000)
        f.write(f"{statistics.median(times[1:]):9.3f} ms  answer {[tuple(map(str, x)) for x in r][:4]}  {q}\n")
print(open(f"{out}/duckdb.txt").read())
PY
echo "gpusql answers (in order):"; cat "$OUT/answers_gpu.csv"
