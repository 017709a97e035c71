#!/bin/bash
# A/B of one gpusql binary under an environment switch: bench_sql/ab_env.sh VAR
# (runs with VAR=0, then VAR=1, twice on SSB SF 20, once on TPC-H SF 10).
B=${B:-./target/release/gpusql}
for i in 1 2; do for v in 0 1; do echo "## ssb $1=$v run $i"; env $1=$v python3 bench_sql/run_timed.py $B bench_sql/ssb_all.sql --data "--ssb 20" --runs 8; done; done
for v in 0 1; do echo "## tpch $1=$v"; env $1=$v python3 bench_sql/run_timed.py $B bench_sql/tpch_all.sql --data "--tpch 10" --runs 6; done
