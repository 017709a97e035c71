-- The band join of q01 grouped by band (1,000 groups).
WITH bands AS (SELECT p_partkey AS band, (p_partkey - 1) * 2000 + 1 AS lo, p_partkey * 2000 AS hi FROM part WHERE p_partkey <= 1000)
SELECT band, count(*) AS n, sum(l_extendedprice) AS revenue
FROM lineitem, bands
WHERE l_partkey BETWEEN lo AND hi
GROUP BY band
ORDER BY revenue DESC, band
LIMIT 10
