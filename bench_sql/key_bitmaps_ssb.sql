# Every SSB query without and with key bitmaps in front of the probes (run with --data "--ssb 20").
EACH SET key_bitmaps = off | SET key_bitmaps = on
@ssb/q?.?.sql
