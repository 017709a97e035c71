# Early key bitmaps (later probes' bitmaps tested with the first probe's, before its Lane
# Refill) against each probe testing its own: every SSB query, off / on / off / on.
EACH SET early_bitmaps = off | SET early_bitmaps = on | SET early_bitmaps = off | SET early_bitmaps = on
@ssb/q*.sql
