# string_agg at TPC-H scale (lineitem): bench_sql/beside_duckdb.sh bench_sql/string_agg.sql SF OUTDIR.
select l_returnflag, length(string_agg(l_shipmode, ',' order by l_orderkey, l_linenumber)) from lineitem group by l_returnflag order by 1
select count(*), sum(length(v)) from (select l_orderkey, string_agg(l_comment, ' | ' order by l_linenumber) as v from lineitem group by l_orderkey)
select sum(length(v)), min(v) from (select l_suppkey, string_agg(distinct l_shipmode, '/' order by l_shipmode) as v from lineitem group by l_suppkey)
select length(string_agg(l_comment, '' order by l_orderkey, l_linenumber)) from lineitem where l_quantity < 5
