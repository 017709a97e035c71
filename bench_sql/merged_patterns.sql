# Pattern tests of one column joined by OR as one DFA (merged_patterns, seed 000 ch. 6's
# multi-pattern matching) against each test walked on its own, over TPC-H SF 10
# (lineitem.l_comment: 60 M rows, ~1.6 GB of text):
#   python3 bench_sql/run_timed.py target/release/gpusql bench_sql/merged_patterns.sql --data "--tpch 10" --runs 5 --wall
EACH SET merged_patterns = off | SET merged_patterns = on | SET merged_patterns = off | SET merged_patterns = on
select count(*) from lineitem where l_comment like '%fur%ly%' or l_comment like '%special%requests%'
select count(*) from lineitem where l_comment like '%fur%ly%' or l_comment like '%special%requests%' or l_comment like '%ironic%' or l_comment like '%pending%' or l_comment like '%bold%'
select count(*) from lineitem where l_comment ~ 'fur.*ly' or l_comment ~ 'special.*requests' or l_comment ~ '^the' or l_comment like '%deposits%'
select sum(length(l_comment)) from lineitem
