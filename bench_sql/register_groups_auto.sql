# SET register_groups = auto against off: the queries auto puts in registers (DOUBLE
# states) and those it leaves (DECIMAL sums, string MIN/MAX), and TPC-H.
EACH SET register_groups = off | SET register_groups = auto
select l_returnflag, l_linestatus, sum(l_tax::double), count(*) from lineitem group by l_returnflag, l_linestatus
select l_returnflag, l_linestatus, sum(l_tax::double), sum(l_quantity), count(*) from lineitem group by l_returnflag, l_linestatus
select l_shipmode, sum(l_tax::double), count(*) from lineitem group by l_shipmode
select l_shipdate, sum(l_extendedprice::double), count(*) from lineitem group by l_shipdate
select l_returnflag, l_linestatus, min(l_comment), max(l_comment) from lineitem group by l_returnflag, l_linestatus
@tpch/q01.sql
@bench_sql/set_operations/q01.sql
@tpch/q??.sql
