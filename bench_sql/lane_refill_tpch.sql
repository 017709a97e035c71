# Every TPC-H query: guessed selectivities without Lane Refill (the earlier engine),
# sampled selectivities without, and with Lane Refill (the default).
EACH SET selectivity = guessed; SET lane_refill = off | SET selectivity = sampled; SET lane_refill = off | SET selectivity = sampled; SET lane_refill = on
@tpch/q??.sql
