# Window functions at TPC-H scale (lineitem): bench_sql/beside_duckdb.sh bench_sql/window.sql SF OUTDIR.
select count(*), sum(rn) from (select row_number() over (partition by l_suppkey order by l_shipdate, l_orderkey, l_linenumber) as rn from lineitem)
select max(s), min(s) from (select sum(l_extendedprice) over (order by l_orderkey, l_linenumber) as s from lineitem)
select count(*) from (select rank() over (partition by l_returnflag, l_linestatus order by l_extendedprice desc) as r from lineitem) where r <= 10
select avg(m) from (select avg(l_quantity) over (partition by l_partkey order by l_orderkey, l_linenumber rows between 3 preceding and 3 following) as m from lineitem)
select sum(d) from (select l_quantity - lag(l_quantity, 1, 0) over (partition by l_orderkey order by l_linenumber) as d from lineitem)
