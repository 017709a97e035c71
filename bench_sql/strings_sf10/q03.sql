-- upper() of the comments of the rows a filter keeps (the warp's strings not one after another)
SELECT sum(length(upper(l_comment))) AS n FROM lineitem WHERE l_quantity > 25
