-- UNION ALL of two scans of lineitem into one aggregate (issue 32's target: within 1.2x of
-- the two scans' floor). Each arm reads l_shipdate, l_returnflag, l_linestatus, l_quantity,
-- l_extendedprice.
SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_price, count(*) AS n
FROM (SELECT l_returnflag, l_linestatus, l_quantity, l_extendedprice FROM lineitem WHERE l_shipdate <= DATE '1995-06-17'
      UNION ALL
      SELECT l_returnflag, l_linestatus, l_quantity, l_extendedprice FROM lineitem WHERE l_shipdate > DATE '1995-06-17') u
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus
