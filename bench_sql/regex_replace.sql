# regexp_replace and regexp_extract on the GPU (gpusql_plan::regex find DFAs, strings.cu
# dfa_find: a forward walk to the match's end and a reverse walk to its start, then the
# result's size and its bytes in two passes) over TPC-H SF 10 (lineitem.l_comment: 60 M
# rows, ~1.6 GB of text), beside replace()'s byte matcher and the read of every byte.
# `regex_gpu.sh OUTDIR bench_sql/regex_replace.sql` runs it and the same in DuckDB.
select sum(length(l_comment)) from lineitem
select sum(length(replace(l_comment, 'e', 'E'))) from lineitem
select sum(length(regexp_replace(l_comment, 'e', 'E', 'g'))) from lineitem
select sum(length(regexp_replace(l_comment, '[aeiou]+', '', 'g'))) from lineitem
select sum(length(regexp_replace(l_comment, '^\w+', 'X'))) from lineitem
select sum(length(regexp_extract(l_comment, 'fur\w*'))) from lineitem
select count(*) from lineitem where regexp_extract(l_comment, '[a-z]+ly') = 'carefully'
