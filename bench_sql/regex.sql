# Regular expressions as a DFA walked from shared memory (seed 000 ch. 6; gpusql_plan::regex,
# prelude.cu dfa_match / dfa_match_pivot4) beside LIKE's lock-step KMP, over TPC-H SF 10
# (lineitem.l_comment: 60 M rows, ~1.6 GB of text): Pivot-4 copies on, then off (the DFA's
# word loads over offsets + bytes; LIKE's byte matcher). `regex_gpu.sh` runs it and the
# same statements in DuckDB.
EACH SET pivoted_strings = on | SET pivoted_strings = off
select count(*) from lineitem where l_comment like '%fur%ly%'
select count(*) from lineitem where l_comment ~ 'fur.*ly'
select count(*) from lineitem where l_comment like '%special%requests%'
select count(*) from lineitem where l_comment ~ 'special.*requests'
select count(*) from lineitem where l_comment ~ '^[a-z]+ [a-z]+ly\b'
select count(*) from lineitem where regexp_matches(l_comment, 'QUICK|SLY|bold', 'i')
select sum(length(l_comment)) from lineitem
