# Regular expressions and LIKE as DFAs walked from shared memory (seed 000 ch. 6;
# gpusql_plan::regex, prelude.cu dfa_match) beside LIKE's older matchers, over TPC-H SF 10
# (lineitem.l_comment: 60 M rows, ~1.6 GB of text): the DFA (like_dfa on), lock-step KMP
# over the Pivot-4 copy (like_dfa off), the byte matcher (both off). Regular expressions
# always run as DFAs. `regex_gpu.sh` runs it and the same statements in DuckDB.
EACH SET like_dfa = on; SET pivoted_strings = on | SET like_dfa = off; SET pivoted_strings = on | SET like_dfa = off; SET pivoted_strings = off
select count(*) from lineitem where l_comment like '%fur%ly%'
select count(*) from lineitem where l_comment ~ 'fur.*ly'
select count(*) from lineitem where l_comment like '%special%requests%'
select count(*) from lineitem where l_comment ~ 'special.*requests'
select count(*) from lineitem where l_comment ~ '^[a-z]+ [a-z]+ly\b'
select count(*) from lineitem where regexp_matches(l_comment, 'QUICK|SLY|bold', 'i')
select sum(length(l_comment)) from lineitem
@tpch/q13.sql
@tpch/q09.sql
@tpch/q16.sql
