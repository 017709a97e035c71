-- upper() of every l_comment, materialized (issue 32: >= 500 GB/s of input: 2.07 GB of
-- offsets and bytes at SF 10)
SELECT sum(length(upper(l_comment))) AS n FROM lineitem
