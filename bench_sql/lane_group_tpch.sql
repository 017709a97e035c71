# The 22 TPC-H queries with and without the lane's own group in registers (SET lane_group).
#   python3 bench_sql/run_timed.py BIN bench_sql/lane_group_tpch.sql --data "--tpch 10" --runs 5
EACH SET lane_group = false | SET lane_group = true
@tpch/q??.sql
