#!/usr/bin/env python3
"""Time to first answer from files: a new process started on a folder of Parquet files
runs TPC-H Q1, then Q6; process start to both answers, gpusql beside DuckDB.

    python3 scripts/first_answer.py --data /tmp/pq10 --json first.json

Measured, in this order, --runs times each (the files are read once first, so both
engines start from the page cache):
  - gpusql with an empty kernel cache (GPUSQL_CACHE_DIR a new folder): every kernel is
    compiled with NVRTC;
  - gpusql with the kernel cache the first run filled (what a user sees from the second
    start on);
  - DuckDB (`python3 -c`: import duckdb, a view per table over read_parquet, both
    queries), all cores.
Each time is the wall time of the whole process (subprocess.run), results printed as CSV
to a pipe. Requires the duckdb package.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLES = ["nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem"]

DUCKDB = """
import duckdb, os, sys
con = duckdb.connect()
d = sys.argv[1]
for t in {tables}:
    single = os.path.join(d, t + ".parquet")
    path = single if os.path.exists(single) else os.path.join(d, t, "*.parquet")
    con.execute(f"CREATE VIEW {{t}} AS SELECT * FROM read_parquet('{{path}}')")
for q in sys.argv[2:]:
    print(con.execute(open(q).read()).fetchall())
"""


def timed(cmd, env=None):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ms = (time.perf_counter() - t0) * 1e3
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return ms, r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpusql", default=os.path.join(ROOT, "target", "release", "gpusql"))
    ap.add_argument("--data", required=True, help="folder of Parquet files (gpusql datagen tpch --format parquet)")
    ap.add_argument("--queries", default="1,6")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    queries = [os.path.join(ROOT, "tpch", f"q{int(q):02d}.sql") for q in args.queries.split(",")]
    # Both engines read the files from the page cache.
    subprocess.run(["bash", "-c", f"find {args.data} -name '*.parquet' -exec cat {{}} + > /dev/null"], check=True)

    gpu_cmd = [args.gpusql, args.data, "--format", "csv", "--timing"] + [a for q in queries for a in ("-f", q)]
    duck_cmd = [sys.executable, "-c", DUCKDB.format(tables=TABLES), args.data] + queries
    runs = {"gpusql_empty_kernel_cache_ms": [], "gpusql_cached_kernels_ms": [], "duckdb_ms": []}
    logs = {}
    for _ in range(args.runs):
        cache = tempfile.mkdtemp(prefix="gpusql-kernels-")
        env = dict(os.environ, GPUSQL_CACHE_DIR=cache)
        ms, logs["empty_cache"] = timed(gpu_cmd, env)
        runs["gpusql_empty_kernel_cache_ms"].append(ms)
        ms, logs["cached"] = timed(gpu_cmd, env)
        runs["gpusql_cached_kernels_ms"].append(ms)
        ms, _ = timed(duck_cmd)
        runs["duckdb_ms"].append(ms)
    out = {k: {"median": round(statistics.median(v), 1), "runs": [round(x, 1) for x in v]} for k, v in runs.items()}
    out["queries"] = args.queries
    out["data"] = args.data
    for k, v in out.items():
        print(f"{k}: {v}")
    print("gpusql --timing, empty kernel cache (last run):\n" + logs["empty_cache"])
    print("gpusql --timing, cached kernels (last run):\n" + logs["cached"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
