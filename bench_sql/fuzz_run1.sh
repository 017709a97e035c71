set -x
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site
B=target/release/gpusql
L=$OUT/logs; mkdir -p $L
nvidia-smi -L
$B fuzz --backend gpu --jobs 14 --queries 14000 --sf 0.01 --reduce-secs 20 --hang-secs 60 --time-limit 420 --report $L/fuzz_gpu.json > $L/fuzz_gpu.txt 2>&1
echo "fuzz exit $?"
head -c 3000 $L/fuzz_gpu.txt
cp /tmp/gpusql-fuzz-jobs-*/job0.log $L/ 2>/dev/null
tar czf $OUT/logs.tgz -C $OUT logs
