# Every SSB query, the same three configurations (run with --data "--ssb 20").
EACH SET selectivity = guessed; SET lane_refill = off | SET selectivity = sampled; SET lane_refill = off | SET selectivity = sampled; SET lane_refill = on
@ssb/q?.?.sql
