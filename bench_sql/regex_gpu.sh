#!/usr/bin/env bash
# Regex vs LIKE on the GPU at TPC-H SF 10 (bench_sql/regex.sql, or the statements file
# given: median kernel and wall ms of 5 runs), then the same statements in DuckDB (all
# cores) over lineitem.l_comment read into memory from Parquet that gpusql writes, and the
# answers of both compared:
#   bench_sql/regex_gpu.sh OUTDIR [bench_sql/regex_replace.sql]
# Needs target/release/gpusql (or $GPUSQL) and duckdb importable.
set -uo pipefail
OUT=$1
B=${GPUSQL:-target/release/gpusql}
HERE=$(dirname "$0")
SQL=${2:-$HERE/regex.sql}
mkdir -p "$OUT"
export RUST_LOG=error
python3 "$HERE/run_timed.py" "$B" "$SQL" --data "--tpch 10" --runs 5 --wall | tee "$OUT/regex_gpu.txt"
grep -v "^#\|^EACH\|^@\|^$" "$SQL" > "$OUT/statements.sql"
args=(--tpch 10 --backend gpu --format csv -c "COPY (SELECT l_comment FROM lineitem) TO '/tmp/l_comment.parquet' (FORMAT parquet);")
while IFS= read -r q; do args+=(-c "$q;"); done < "$OUT/statements.sql"
"$B" "${args[@]}" > "$OUT/answers_gpu.csv" 2> "$OUT/answers_gpu.err"
python3 - "$OUT" <<'PY'
import duckdb, statistics, sys, time
out = sys.argv[1]
c = duckdb.connect()
c.sql("CREATE TABLE lineitem AS SELECT * FROM '/tmp/l_comment.parquet'")
with open(f"{out}/regex_duckdb.txt", "w") as f:
    for q in open(f"{out}/statements.sql"):
        q = q.strip()
        times = []
        for _ in range(5):
            t = time.perf_counter(); r = c.sql(q).fetchall(); times.append((time.perf_counter() - t) * 1000)
        f.write(f"{statistics.median(times[1:]):9.3f} ms  answer {r[0][0]}  {q}\n")
print(open(f"{out}/regex_duckdb.txt").read())
PY
echo "gpusql answers (in order):"; grep -v "^count\|^sum" "$OUT/answers_gpu.csv" | tr "\n" " "; echo
