-- The floor of q01: the same columns read and aggregated, without the join.
SELECT count(*) AS n, sum(l_quantity) AS qty
FROM lineitem
WHERE l_partkey BETWEEN 1 AND 2000000
