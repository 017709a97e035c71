-- upper() into a hash aggregation of 15 M strings
SELECT count(DISTINCT upper(o_comment)) AS n FROM orders
