-- Band join: lineitem against 1,000 ranges of 2,000 part keys each (issue 32's target:
-- >= 20x DuckDB at SF 10). Every row falls in one band: the join reads l_partkey and
-- l_quantity, and each row binary-searches the 1,000 sorted ranges.
WITH bands AS (SELECT p_partkey AS band, (p_partkey - 1) * 2000 + 1 AS lo, p_partkey * 2000 AS hi FROM part WHERE p_partkey <= 1000)
SELECT count(*) AS n, sum(l_quantity) AS qty
FROM lineitem, bands
WHERE l_partkey BETWEEN lo AND hi
