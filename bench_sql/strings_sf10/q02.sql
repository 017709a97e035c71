-- lower() of every l_comment
SELECT sum(length(lower(l_comment))) AS n FROM lineitem
