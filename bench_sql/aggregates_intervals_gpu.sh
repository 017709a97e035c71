#!/usr/bin/env bash
# Quantiles, approx_count_distinct and intervals on the GPU at TPC-H SF 10 beside DuckDB
# 2.0.1 (bench_sql/aggregates_intervals.sql through beside_duckdb.sh):
#   bench_sql/aggregates_intervals_gpu.sh OUTDIR
LINEITEM_COLUMNS="l_orderkey, l_partkey, l_quantity, l_extendedprice, l_returnflag, l_linestatus, l_shipdate, l_commitdate, l_receiptdate, l_comment" \
  exec "$(dirname "$0")/beside_duckdb.sh" "$(dirname "$0")/aggregates_intervals.sql" 10 "$1"
