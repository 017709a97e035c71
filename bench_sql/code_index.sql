# Group ids by the keys' dictionary codes (ops/aggregate/code_index.rs) against the group
# cache (hash, then compare keys): two binaries, alternating (bench_sql/ab_bins.sh-style),
# each with and without groups in registers. TPC-H SF 10, keys l_returnflag, l_linestatus,
# l_shipmode, l_shipinstruct (dictionary-encoded).
EACH SET register_groups = off | SET register_groups = 4
select l_returnflag, l_linestatus, count(*) from lineitem group by l_returnflag, l_linestatus
@bench_sql/set_operations/q02.sql
@bench_sql/set_operations/q01.sql
@tpch/q01.sql
select l_returnflag, l_linestatus, sum(l_tax::double), count(*) from lineitem group by l_returnflag, l_linestatus
select l_shipmode, l_shipinstruct, sum(l_quantity), count(*) from lineitem group by l_shipmode, l_shipinstruct
