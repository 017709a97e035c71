#!/bin/bash
# One gpusql binary under several environment configurations (median kernel ms per query;
# the first configuration runs again at the end, as a noise check). SSB SF 20 by default;
# SQL=FILE and DATA="--tpch 10" choose other statements and data:
# OUT=dir bench_sql/ab_configs.sh "X=0" "GPUSQL_DIRECT_TABLES=1" "GPUSQL_SHARED_MEMORY_PROBE_TABLES=on"
B=${B:-./target/release/gpusql}
for cfg in "$@" "$1"; do echo "## $cfg"; env $cfg python3 bench_sql/run_timed.py $B ${SQL:-bench_sql/ssb_all.sql} --data "${DATA:---ssb 20}" --runs 6; done > $OUT/configs.txt 2>&1
python3 bench_sql/summarize_runs.py $OUT/configs.txt --all
