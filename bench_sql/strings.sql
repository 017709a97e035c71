# Pivot-4 strings with lock-step KMP vs the byte matcher over contiguous bytes
# ([Sitaridi 2016] §5.3.2, [Sitaridi & Ross 2015]), TPC-H SF 10: LIKE '%…%' scans of
# l_comment (60M rows), o_comment (15M), s_comment, p_name, and the TPC-H queries that use
# such patterns.
EACH SET pivoted_strings = off | SET pivoted_strings = on
select count(*) from lineitem where l_comment like '%Customer%Complaints%'
select count(*) from lineitem where l_comment like '%special%requests%'
select count(*) from orders where o_comment like '%Customer%Complaints%'
select count(*) from orders where o_comment not like '%special%requests%'
select count(*) from supplier where s_comment like '%Customer%Complaints%'
select count(*) from part where p_name like '%green%'
@tpch/q09.sql
@tpch/q13.sql
@tpch/q16.sql
# Contiguous again: the first block's numbers are not a warm-up artefact.
EACH SET pivoted_strings = off
select count(*) from lineitem where l_comment like '%Customer%Complaints%'
select count(*) from orders where o_comment like '%Customer%Complaints%'
@tpch/q13.sql
