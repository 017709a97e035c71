# Multi-predicate filter plans ([Sitaridi 2016] ch. 4) with sampled selectivities: the written
# order, rank order with one branch per term, and the optimized plans (rank order and
# branch-free groups), on filters.sql and every TPC-H query.
EACH SET filter_order = written | SET filter_order = ranked | SET filter_order = optimized
select count(*) from lineitem where l_shipdate >= date '1994-01-01' and l_shipdate < date '1995-01-01' and l_discount between 0.05 and 0.07 and l_quantity < 24;
select count(*) from lineitem where l_tax < 0.04 and l_discount < 0.05 and l_quantity < 2;
select count(*) from lineitem where l_quantity < 49 and l_discount < 0.10 and l_tax < 0.08 and l_extendedprice > 1000;
select count(*) from lineitem where l_comment like '%special%requests%' and l_quantity < 2;
select count(*) from lineitem where l_receiptdate > l_commitdate and l_shipmode = 'AIR' and l_quantity < 10;
@tpch/q??.sql
