select count(*) from lineitem where l_shipdate >= date '1994-01-01' and l_shipdate < date '1995-01-01' and l_discount between 0.05 and 0.07 and l_quantity < 24;
select count(*) from lineitem where l_tax < 0.04 and l_discount < 0.05 and l_quantity < 2;
select count(*) from lineitem where l_quantity < 49 and l_discount < 0.10 and l_tax < 0.08 and l_extendedprice > 1000;
select count(*) from lineitem where l_comment like '%special%requests%' and l_quantity < 2;
select count(*) from lineitem where l_receiptdate > l_commitdate and l_shipmode = 'AIR' and l_quantity < 10;
