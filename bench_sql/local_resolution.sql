# Local resolution of the hash aggregation: 2,526 groups, 4 (Q1 and UNION ALL) and 100,000
select l_shipdate, sum(l_extendedprice), count(*) from lineitem group by l_shipdate
@tpch/q01.sql
@bench_sql/set_operations/q01.sql
select l_suppkey, sum(l_quantity), count(*) from lineitem group by l_suppkey
