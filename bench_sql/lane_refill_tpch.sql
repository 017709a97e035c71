# Every TPC-H query: guessed selectivities without Lane Refill (the earlier engine),
# sampled selectivities without, and with Lane Refill (the default).
EACH SET selectivity = guessed; SET lane_refill = off | SET selectivity = sampled; SET lane_refill = off | SET selectivity = sampled; SET lane_refill = on
@tpch/q01.sql
@tpch/q02.sql
@tpch/q03.sql
@tpch/q04.sql
@tpch/q05.sql
@tpch/q06.sql
@tpch/q07.sql
@tpch/q08.sql
@tpch/q09.sql
@tpch/q10.sql
@tpch/q11.sql
@tpch/q12.sql
@tpch/q13.sql
@tpch/q14.sql
@tpch/q15.sql
@tpch/q16.sql
@tpch/q17.sql
@tpch/q18.sql
@tpch/q19.sql
@tpch/q20.sql
@tpch/q21.sql
@tpch/q22.sql
