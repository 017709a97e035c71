-- UNION ALL materialized in full (no aggregate above it): the arms' rows are copied.
SELECT l_orderkey, l_quantity FROM lineitem WHERE l_quantity > 49 UNION ALL SELECT o_orderkey, o_totalprice FROM orders WHERE o_totalprice > 500000
