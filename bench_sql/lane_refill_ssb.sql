# Every SSB query, the same three configurations (run with --data "--ssb 20").
EACH SET selectivity = guessed; SET lane_refill = off | SET selectivity = sampled; SET lane_refill = off | SET selectivity = sampled; SET lane_refill = on
@ssb/q1.1.sql
@ssb/q1.2.sql
@ssb/q1.3.sql
@ssb/q2.1.sql
@ssb/q2.2.sql
@ssb/q2.3.sql
@ssb/q3.1.sql
@ssb/q3.2.sql
@ssb/q3.3.sql
@ssb/q3.4.sql
@ssb/q4.1.sql
@ssb/q4.2.sql
@ssb/q4.3.sql
