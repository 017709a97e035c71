#!/bin/bash
# One gpusql binary under several environment configurations on SSB SF 20 (median kernel
# ms per query; the first configuration runs again at the end, as a noise check):
# bench_sql/ab_configs.sh "X=0" "GPUSQL_DIRECT_TABLES=1" "GPUSQL_SMEM_TABLES=1"
B=${B:-./target/release/gpusql}
for cfg in "$@" "$1"; do echo "## $cfg"; env $cfg python3 bench_sql/run_timed.py $B bench_sql/ssb_all.sql --data "--ssb 20" --runs 6; done > $OUT/configs.txt 2>&1
python3 - <<'PY'
import re,os
t=open(os.environ['OUT']+'/configs.txt').read()
res={}
for s in re.split(r'^## ', t, flags=re.M)[1:]:
    head,*lines=s.splitlines()
    for l in lines:
        m=re.match(r'\s*([\d.]+) ms\s+(\S+)',l)
        if m: res.setdefault(m.group(2),{}).setdefault(head,[]).append(float(m.group(1)))
for q,d in res.items():
    print(q, ' '.join(f"{k}:{'/'.join('%.3f'%x for x in v)}" for k,v in d.items()))
PY
