for i in 1 2; do for b in old new; do echo "## $b run $i"; python3 bench_sql/run_timed.py bin_ab/gpusql_$b bench_sql/ssb_all.sql --data "--ssb 20" --runs 8; done; done
