# Quantiles, approx_count_distinct and intervals at TPC-H SF 10 (lineitem, 60 M rows):
# bench_sql/aggregates_intervals_gpu.sh OUTDIR.
select median(l_extendedprice) from lineitem
select l_returnflag, l_linestatus, median(l_quantity), quantile_cont(l_extendedprice, 0.9) from lineitem group by l_returnflag, l_linestatus order by 1, 2
select quantile_disc(l_shipdate, 0.25), percentile_cont(0.5) within group (order by l_extendedprice desc) from lineitem where l_quantity < 10
select approx_count_distinct(l_orderkey) from lineitem
select approx_count_distinct(l_comment) from lineitem
select l_returnflag, approx_count_distinct(l_partkey) from lineitem group by l_returnflag order by 1
select count(distinct l_partkey) from lineitem
select count(*) from lineitem where cast(l_receiptdate as timestamp) - cast(l_shipdate as timestamp) > interval 20 day
select max(cast(l_receiptdate as timestamp) - cast(l_shipdate as timestamp)), min(cast(l_commitdate as timestamp) - cast(l_shipdate as timestamp)) from lineitem
select sum(extract(epoch from cast(l_receiptdate as timestamp) - cast(l_shipdate as timestamp) + interval 36 hour)) from lineitem
