EACH SET lane_refill = 24 | SET lane_refill = 16 | SET lane_refill = 28 | SET lane_refill = 32
@ssb/q2.1.sql
@ssb/q3.1.sql
@ssb/q3.2.sql
@ssb/q4.1.sql
@ssb/q4.2.sql
