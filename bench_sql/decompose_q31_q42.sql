# Q3.1 and Q4.2 taken apart: the same joins with fewer group keys, no grouping, fewer joins
@ssb/q3.1.sql
select sum(lo_revenue) from customer, lineorder, supplier, date where lo_custkey = c_custkey and lo_suppkey = s_suppkey and lo_orderdate = d_datekey and c_region = 'ASIA' and s_region = 'ASIA' and d_year >= 1992 and d_year <= 1997
select d_year, sum(lo_revenue) from customer, lineorder, supplier, date where lo_custkey = c_custkey and lo_suppkey = s_suppkey and lo_orderdate = d_datekey and c_region = 'ASIA' and s_region = 'ASIA' and d_year >= 1992 and d_year <= 1997 group by d_year
select c_nation, s_nation, sum(lo_revenue) from customer, lineorder, supplier, date where lo_custkey = c_custkey and lo_suppkey = s_suppkey and lo_orderdate = d_datekey and c_region = 'ASIA' and s_region = 'ASIA' and d_year >= 1992 and d_year <= 1997 group by c_nation, s_nation
select sum(lo_revenue) from customer, lineorder, supplier where lo_custkey = c_custkey and lo_suppkey = s_suppkey and c_region = 'ASIA' and s_region = 'ASIA'
select sum(lo_revenue) from lineorder, supplier where lo_suppkey = s_suppkey and s_region = 'ASIA'
select sum(lo_revenue) from lineorder, customer where lo_custkey = c_custkey and c_region = 'ASIA'
select sum(lo_revenue) from lineorder where lo_custkey > 0 and lo_suppkey > 0 and lo_orderdate > 0
@ssb/q4.2.sql
select sum(lo_revenue - lo_supplycost) from date, customer, supplier, part, lineorder where lo_custkey = c_custkey and lo_suppkey = s_suppkey and lo_partkey = p_partkey and lo_orderdate = d_datekey and c_region = 'AMERICA' and s_region = 'AMERICA' and (d_year = 1997 or d_year = 1998) and (p_mfgr = 'MFGR#1' or p_mfgr = 'MFGR#2')
select d_year, sum(lo_revenue - lo_supplycost) from date, customer, supplier, part, lineorder where lo_custkey = c_custkey and lo_suppkey = s_suppkey and lo_partkey = p_partkey and lo_orderdate = d_datekey and c_region = 'AMERICA' and s_region = 'AMERICA' and (d_year = 1997 or d_year = 1998) and (p_mfgr = 'MFGR#1' or p_mfgr = 'MFGR#2') group by d_year
@ssb/q2.1.sql
select sum(lo_revenue) from lineorder, part, supplier where lo_partkey = p_partkey and lo_suppkey = s_suppkey and p_category = 'MFGR#12' and s_region = 'AMERICA'
EACH SET lane_refill = off
@ssb/q3.1.sql
@ssb/q4.2.sql
@ssb/q2.1.sql
