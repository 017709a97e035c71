# The lane's own group in registers (SET lane_group, ops/aggregate/hash.rs) against the
# warp's local resolution and atomics for every row: one group per block (UNION ALL q01's
# second arm; a filter that leaves one group), a few mixed groups (q02, a count, TPC-H Q1),
# 28 groups, and many (l_shipdate 2,526; l_suppkey 100,000). TPC-H SF 10, alternating.
#   python3 bench_sql/run_timed.py BIN bench_sql/lane_group.sql --data "--tpch 10" --runs 5
EACH SET lane_group = false | SET lane_group = true | SET lane_group = false | SET lane_group = true
@bench_sql/set_operations/q01.sql
@bench_sql/set_operations/q02.sql
select l_returnflag, l_linestatus, count(*) from lineitem group by l_returnflag, l_linestatus
@tpch/q01.sql
select l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice), count(*) from lineitem where l_shipdate > date '1995-06-17' group by l_returnflag, l_linestatus
select l_shipmode, l_shipinstruct, sum(l_quantity), count(*) from lineitem group by l_shipmode, l_shipinstruct
select l_shipdate, sum(l_extendedprice), count(*) from lineitem group by l_shipdate
select l_suppkey, sum(l_quantity), count(*) from lineitem group by l_suppkey
