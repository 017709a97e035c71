#!/bin/bash
# A/B of two gpusql binaries (bin_ab/gpusql_old, bin_ab/gpusql_new; carried to the device):
# SSB SF 20 twice each, alternating, then TPC-H SF 10 once each (median kernel ms).
for i in 1 2; do for b in old new; do echo "## ssb $b run $i"; python3 bench_sql/run_timed.py bin_ab/gpusql_$b bench_sql/ssb_all.sql --data "--ssb 20" --runs 8; done; done
for b in old new; do echo "## tpch $b"; python3 bench_sql/run_timed.py bin_ab/gpusql_$b bench_sql/tpch_all.sql --data "--tpch 10" --runs 6; done
