# ORDER BY … LIMIT: top-N (bitonic chunks halved by merging) vs sorting every row,
# TPC-H SF 10 (run_timed.py).
EACH SET top_n = off | SET top_n = on
select l_orderkey, l_linenumber, l_extendedprice from lineitem order by l_extendedprice desc, l_orderkey, l_linenumber limit 10
select l_orderkey, l_linenumber, l_extendedprice from lineitem where l_shipdate < date '1993-01-01' order by l_extendedprice desc, l_orderkey, l_linenumber limit 100
select o_orderkey, o_totalprice, o_comment from orders order by o_comment, o_orderkey limit 20
@tpch/q03.sql
@tpch/q18.sql
