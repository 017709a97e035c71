# Warp-cooperative upper/lower (issue 32: upper(l_comment) at >= 500 GB/s of input) and the
# hash aggregation's local resolution (issue 32: UNION ALL of two
# scans into an aggregate within 1.2x of their floor), TPC-H SF 10, against the build before.
select sum(length(upper(l_comment))) from lineitem
select sum(length(lower(l_comment))) from lineitem
select sum(length(l_comment)) from lineitem
# upper's fixed costs: the arena's one atomicAdd per warp and the warp's walk over its 32
# strings, with no bytes (0) or one byte (1) a string
select sum(length(upper(left(l_comment, 0)))) from lineitem
select sum(length(upper(left(l_comment, 1)))) from lineitem
select count(DISTINCT upper(o_comment)) from orders
@bench_sql/set_operations/q01.sql
@bench_sql/set_operations/q02.sql
# 4 groups, 7, 2,526, ~100,000 and 15 M (one row each)
@tpch/q01.sql
select l_shipmode, sum(l_quantity), min(l_shipdate), max(l_discount), count(*) from lineitem group by l_shipmode
select l_shipdate, sum(l_extendedprice), count(*) from lineitem group by l_shipdate
select l_suppkey, sum(l_quantity), count(*) from lineitem group by l_suppkey
select l_orderkey, sum(l_quantity), max(l_shipdate) from lineitem group by l_orderkey order by 2 desc limit 5
@tpch/q18.sql
