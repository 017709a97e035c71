# Multi-predicate filter plans (seed 000 ch. 4) with sampled selectivities: the written
# order against the optimized plans, on filters.sql and the filter-heavy TPC-H queries.
SET filter_order = written
select count(*) from lineitem where l_shipdate >= date '1994-01-01' and l_shipdate < date '1995-01-01' and l_discount between 0.05 and 0.07 and l_quantity < 24;
select count(*) from lineitem where l_tax < 0.04 and l_discount < 0.05 and l_quantity < 2;
select count(*) from lineitem where l_quantity < 49 and l_discount < 0.10 and l_tax < 0.08 and l_extendedprice > 1000;
select count(*) from lineitem where l_comment like '%special%requests%' and l_quantity < 2;
select count(*) from lineitem where l_receiptdate > l_commitdate and l_shipmode = 'AIR' and l_quantity < 10;
@tpch/q01.sql
@tpch/q06.sql
@tpch/q12.sql
@tpch/q14.sql
@tpch/q19.sql
SET filter_order = optimized
select count(*) from lineitem where l_shipdate >= date '1994-01-01' and l_shipdate < date '1995-01-01' and l_discount between 0.05 and 0.07 and l_quantity < 24;
select count(*) from lineitem where l_tax < 0.04 and l_discount < 0.05 and l_quantity < 2;
select count(*) from lineitem where l_quantity < 49 and l_discount < 0.10 and l_tax < 0.08 and l_extendedprice > 1000;
select count(*) from lineitem where l_comment like '%special%requests%' and l_quantity < 2;
select count(*) from lineitem where l_receiptdate > l_commitdate and l_shipmode = 'AIR' and l_quantity < 10;
@tpch/q01.sql
@tpch/q06.sql
@tpch/q12.sql
@tpch/q14.sql
@tpch/q19.sql
