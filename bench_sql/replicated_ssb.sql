# Every SSB query: replicated tables off / single copy / on with Lane Refill on (the
# default), and off / on without Lane Refill (run with --data "--ssb 20").
EACH SET replicated_tables = off; SET lane_refill = on | SET replicated_tables = single; SET lane_refill = on | SET replicated_tables = on; SET lane_refill = on | SET replicated_tables = off; SET lane_refill = off | SET replicated_tables = on; SET lane_refill = off
@ssb/q?.?.sql
