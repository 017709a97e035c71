# SSB Q2.1 / Q3.1 / Q4.1 taken apart (run with --data "--ssb 20"): which operator costs what.
select sum(lo_revenue) from lineorder
select count(*) from lineorder, supplier where lo_suppkey = s_suppkey and s_region = 'AMERICA'
select count(*) from lineorder, part where lo_partkey = p_partkey and p_category = 'MFGR#12'
select count(*) from lineorder, customer where lo_custkey = c_custkey and c_region = 'ASIA'
select count(*) from lineorder, part, supplier where lo_partkey = p_partkey and lo_suppkey = s_suppkey and p_category = 'MFGR#12' and s_region = 'AMERICA'
select sum(lo_revenue) from lineorder, date, part, supplier where lo_orderdate = d_datekey and lo_partkey = p_partkey and lo_suppkey = s_suppkey and p_category = 'MFGR#12' and s_region = 'AMERICA'
@ssb/q2.1.sql
select count(*) from lineorder, customer, supplier where lo_custkey = c_custkey and lo_suppkey = s_suppkey and c_region = 'ASIA' and s_region = 'ASIA'
select sum(lo_revenue) from customer, lineorder, supplier, date where lo_custkey = c_custkey and lo_suppkey = s_suppkey and lo_orderdate = d_datekey and c_region = 'ASIA' and s_region = 'ASIA' and d_year >= 1992 and d_year <= 1997
@ssb/q3.1.sql
select sum(lo_revenue - lo_supplycost) from date, customer, supplier, part, lineorder where lo_custkey = c_custkey and lo_suppkey = s_suppkey and lo_partkey = p_partkey and lo_orderdate = d_datekey and c_region = 'AMERICA' and s_region = 'AMERICA' and (p_mfgr = 'MFGR#1' or p_mfgr = 'MFGR#2')
@ssb/q4.1.sql
