# Lane Refill on/off ([Funke & Teubner 2020] §5.2): lineitem filtered on l_quantity at
# selectivities 2%, 10%, 20%, 50%, 90%, 100%, joined with part and aggregated; then TPC-H
# Q10 and Q19 (filter and sparse-join divergence), at thresholds off / 16 / 24 / 28.
EACH SET lane_refill = off | SET lane_refill = on
select p_brand, count(*), sum(l_extendedprice) from lineitem, part where l_partkey = p_partkey and l_quantity <= 1 group by p_brand
select p_brand, count(*), sum(l_extendedprice) from lineitem, part where l_partkey = p_partkey and l_quantity <= 5 group by p_brand
select p_brand, count(*), sum(l_extendedprice) from lineitem, part where l_partkey = p_partkey and l_quantity <= 10 group by p_brand
select p_brand, count(*), sum(l_extendedprice) from lineitem, part where l_partkey = p_partkey and l_quantity <= 25 group by p_brand
select p_brand, count(*), sum(l_extendedprice) from lineitem, part where l_partkey = p_partkey and l_quantity <= 45 group by p_brand
select p_brand, count(*), sum(l_extendedprice) from lineitem, part where l_partkey = p_partkey and l_quantity <= 50 group by p_brand
@tpch/q10.sql
@tpch/q19.sql
EACH SET lane_refill = 16 | SET lane_refill = 28
select p_brand, count(*), sum(l_extendedprice) from lineitem, part where l_partkey = p_partkey and l_quantity <= 5 group by p_brand
@tpch/q10.sql
@tpch/q19.sql
