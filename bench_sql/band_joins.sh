#!/usr/bin/env bash
# Band joins on the GPU beside DuckDB, over the same TPC-H data:
#   bench_sql/band_joins.sh OUTDIR [SF]
# The queries are bench_sql/band_joins/qNN.sql (q01: lineitem against 1,000 ranges of part
# keys; q02: the same grouped by range; q03: q01's scan and aggregate without the join, for
# the floor); then q01 with band_joins on and off (the naive form); then the answers of
# q01 and q02 from both engines over the same rows (gpusql writes the columns they read as
# Parquet, DuckDB reads it). Needs target/release/gpusql (or $GPUSQL) and duckdb 2.0.1
# importable.
set -uo pipefail
OUT=$1 SF=${2:-10}
B=${GPUSQL:-target/release/gpusql}
HERE=$(dirname "$0")
mkdir -p "$OUT"
"$B" bench tpch --sf "$SF" --backend gpu --runs 7 --query-dir "$HERE/band_joins" \
  --json "$OUT/band_joins_gpu_sf$SF.json" 2>&1 | tail -6
python3 scripts/duckdb_bench.py --sf "$SF" --runs 5 --query-dir "$HERE/band_joins" --gpusql "$B" \
  --json "$OUT/band_joins_duckdb_sf$SF.json" 2>&1 | tail -6
python3 "$HERE/run_timed.py" "$B" "$HERE/band_joins_naive.txt" --data "--tpch $SF" --runs 3 --wall | tee "$OUT/band_joins_naive_sf$SF.txt"
args=(--tpch "$SF" --backend gpu --format csv
  -c "COPY (SELECT l_partkey, l_quantity, l_extendedprice FROM lineitem) TO '/tmp/band_lineitem.parquet' (FORMAT parquet);"
  -c "COPY (SELECT p_partkey FROM part) TO '/tmp/band_part.parquet' (FORMAT parquet);")
for q in q01 q02; do args+=(-c "$(grep -v '^--' "$HERE/band_joins/$q.sql");"); done
"$B" "${args[@]}" > "$OUT/band_answers_gpu.csv" 2>&1
python3 - "$HERE" "$OUT" <<'PY'
import duckdb, sys
here, out = sys.argv[1], sys.argv[2]
c = duckdb.connect()
c.sql("CREATE VIEW lineitem AS SELECT * FROM '/tmp/band_lineitem.parquet'")
c.sql("CREATE VIEW part AS SELECT * FROM '/tmp/band_part.parquet'")
with open(f"{out}/band_answers_duckdb.txt", "w") as f:
    for q in ("q01", "q02"):
        sql = "".join(l for l in open(f"{here}/band_joins/{q}.sql") if not l.startswith("--"))
        f.write(f"{q}: {c.sql(sql).fetchall()}\n")
PY
cat "$OUT/band_answers_gpu.csv" "$OUT/band_answers_duckdb.txt"
