#!/bin/bash
# A/B/… of several gpusql binaries on SSB SF 20: bench_sql/ab_bins.sh NAME... times
# bin_ab/gpusql_NAME for each NAME, alternating, two rounds; prints each query's best
# median kernel ms per binary. Binaries carried gzip'd (bin_gz/gpusql_NAME.gz, the
# device's 64 MiB carry limit) are unpacked first.
mkdir -p bin_ab
for b in "$@"; do
  if [ -f bin_gz/gpusql_$b.gz ]; then gunzip -c bin_gz/gpusql_$b.gz > bin_ab/gpusql_$b && chmod +x bin_ab/gpusql_$b; fi
done
for i in 1 2; do for b in "$@"; do echo "## $b"; python3 bench_sql/run_timed.py bin_ab/gpusql_$b bench_sql/ssb_all.sql --data "--ssb 20" --runs 6; done; done > $OUT/ab_bins.txt 2>&1
python3 bench_sql/summarize_runs.py $OUT/ab_bins.txt
