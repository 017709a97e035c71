-- The same aggregate over one scan: half of q01's floor (q01 reads every column twice).
SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_price, count(*) AS n
FROM lineitem
WHERE l_shipdate <= DATE '1995-06-17' OR l_shipdate > DATE '1995-06-17'
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus
