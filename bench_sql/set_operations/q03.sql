-- UNION (distinct) of two keys: a group table per arm, then one over their groups.
SELECT count(*) FROM (SELECT l_orderkey FROM lineitem WHERE l_quantity < 5 UNION SELECT o_orderkey FROM orders WHERE o_orderdate < DATE '1993-01-01') u
