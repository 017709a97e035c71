# Register groups (SET register_groups): the first groups' partials in each thread's
# registers against the atomics of every row. 4 groups (Q1, UNION ALL q01 and its one-scan
# q02, a count), 2,526 (l_shipdate) and 100,000 (l_suppkey): more groups than registers.
# Then the 22 TPC-H queries with and without.
EACH SET register_groups = 0 | SET register_groups = 4 | SET register_groups = 8 | SET register_groups = 0
select l_returnflag, l_linestatus, count(*) from lineitem group by l_returnflag, l_linestatus
@tpch/q01.sql
@bench_sql/set_operations/q01.sql
@bench_sql/set_operations/q02.sql
select l_shipdate, sum(l_extendedprice), count(*) from lineitem group by l_shipdate
select l_suppkey, sum(l_quantity), count(*) from lineitem group by l_suppkey
EACH SET register_groups = 0 | SET register_groups = 4
@tpch/q??.sql
