#!/bin/bash
# per-stage timing of every SSB query at SF 20 (last of 4 runs)
B=${B:-./target/release/gpusql}
args=()
for q in ssb/q*.sql; do args+=(-f $q -f $q -f $q -f $q); done
$B --ssb 20 --backend gpu --timing --format csv "${args[@]}" > /dev/null 2> $OUT/parts.txt
echo rc=$?
python3 - <<'PY'
import re,os
t=open(os.environ['OUT']+'/parts.txt').read()
blocks=t.split('Time:')
qs=sorted(__import__('glob').glob('ssb/q*.sql'))
for i,q in enumerate(qs):
    b=blocks[i*4+3]
    print('==',q); print('\n'.join(l for l in b.splitlines() if 'pipeline' in l or 'sort' in l or 'kernels' in l or 'query read' in l))
PY
# every launch of Q2.1 and Q3.1 timed on its own (third run of each)
for q in ssb/q2.1.sql ssb/q3.1.sql; do
  echo "== launches $q"
  GPUSQL_PROFILE_LAUNCHES=1 $B --ssb 20 --backend gpu --timing --format csv -f $q -f $q -f $q 2>&1 >/dev/null | awk '/^Time:/{n++} n==2' 
done
