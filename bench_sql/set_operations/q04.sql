-- INTERSECT and EXCEPT over a key: tagged arms, one group table, kept groups.
SELECT (SELECT count(*) FROM (SELECT o_custkey FROM orders WHERE o_orderpriority = '1-URGENT' INTERSECT SELECT c_custkey FROM customer WHERE c_mktsegment = 'BUILDING') i) AS intersect_n,
       (SELECT count(*) FROM (SELECT c_custkey FROM customer EXCEPT SELECT o_custkey FROM orders) e) AS except_n
