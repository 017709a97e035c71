#!/usr/bin/env python3
"""TPC-H in DuckDB over the same data gpusql generates, for a side-by-side benchmark.

    python3 scripts/duckdb_bench.py --sf 10 --json /tmp/duckdb_sf10.json
    python3 scripts/duckdb_bench.py --sf 0.1 --queries q01,q06 --runs 3
    python3 scripts/duckdb_bench.py --sf 10 --query-dir bench_sql/set_operations   # other queries
    python3 scripts/duckdb_bench.py --sf 10 --data-dir /tmp/tpch10   # keep/reuse the CSVs
    python3 scripts/duckdb_bench.py --sf 30 --parquet-dir /tmp/pq30 --answers-dir /tmp/ans30
        # over the Parquet files `gpusql datagen tpch --format parquet` wrote (views, no load)
    python3 scripts/duckdb_bench.py --sf 10 --parquet-dir /tmp/ds10/data --in-memory \
        --query-dir tpcds   # TPC-DS (scripts/tpcds_data.py): every table of the folder,
                            # loaded into memory first (timed as load_seconds)

Steps:
  1. `gpusql datagen tpch --sf SF --out DIR` writes the eight tables as CSV (the same
     generator as `gpusql bench tpch`); with --data-dir DIR holding lineitem.csv this is
     skipped, and without --data-dir the CSVs go to a temporary folder deleted after the
     load. Without a gpusql binary it falls back to the cargo command of tpch_answers.py;
  2. the tables are created in an in-memory DuckDB with tpch_answers.py's DDL (BIGINT keys,
     DECIMAL(15,2), DATE, ...) and loaded with DuckDB's parallel COPY ... FROM csv, timed
     as load_seconds. --checked-load uses tpch_answers.load_tables instead, which also
     re-reads every CSV in Python to check the load (slow: minutes at SF 10);
  3. each tpch/qNN.sql runs once cold (not counted), then --runs times warm; each run is
     timed with time.perf_counter around `con.execute(sql).fetchall()` (median_ms,
     min_ms); execute_median_ms is the same without the fetch into Python objects.

JSON (--json): {"engine": "duckdb", "version", "sf", "threads", "runs", "device",
"datagen_seconds", "load_seconds", "queries": [{"query": "q01", "median_ms", "min_ms",
"max_ms", "execute_median_ms", "rows"}, ...]}. Compare with gpusql's bench JSON using
scripts/compare_bench.py. Requires the duckdb package (tested with duckdb 2.0.0).
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import duckdb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import answers_common  # noqa: E402
from tpch_answers import DDL, TPCH, load_tables  # noqa: E402

QUERIES = [f"q{i:02d}" for i in range(1, 23)]


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def generate(gpusql, sf, outdir):
    if gpusql:
        cmd = [gpusql, "datagen", "tpch", "--sf", sf, "--out", outdir]
    else:
        cmd = TPCH.datagen(sf, outdir)
    print("+", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, cwd=ROOT, check=True)


def fast_load(con, datadir):
    """tpch_answers' DDL and COPY options, without its Python re-read of each CSV."""
    for name, cols in DDL.items():
        path = os.path.join(datadir, f"{name}.csv")
        con.execute(f'CREATE TABLE "{name}" ({cols})')
        con.execute(f"""COPY "{name}" FROM '{path}' """
                    "(FORMAT csv, HEADER true, DELIMITER ',', QUOTE '\"', ESCAPE '\"', NULL '')")


def parquet_views(con, pqdir, in_memory):
    """Each table of the folder (<t>.parquet, or parts <t>/*.parquet) as a view over its
    files, or with `in_memory` a table loaded from them."""
    names = sorted(f[:-len(".parquet")] if f.endswith(".parquet") else f for f in os.listdir(pqdir)
                   if f.endswith(".parquet") or os.path.isdir(os.path.join(pqdir, f)))
    for name in names:
        single = os.path.join(pqdir, f"{name}.parquet")
        path = single if os.path.exists(single) else os.path.join(pqdir, name, "*.parquet")
        kind = "TABLE" if in_memory else "VIEW"
        con.execute(f"CREATE {kind} \"{name}\" AS SELECT * FROM read_parquet('{path}')")


def bench(con, sql, runs, cold):
    cold()  # not counted
    total, execute = [], []
    rows = 0
    for _ in range(runs):
        t0 = time.perf_counter()
        res = con.execute(sql)
        t1 = time.perf_counter()
        rows = len(res.fetchall())
        t2 = time.perf_counter()
        execute.append((t1 - t0) * 1e3)
        total.append((t2 - t0) * 1e3)
    r = lambda x: round(x, 3)  # noqa: E731
    return {"median_ms": r(statistics.median(total)), "min_ms": r(min(total)),
            "max_ms": r(max(total)), "execute_median_ms": r(statistics.median(execute)),
            "rows": rows}


def write_answer(con, path, q, answers_dir, types):
    """The cold run: plain, or as an expected answer file (answers_common's format)."""
    if not answers_dir:
        with open(path) as f:
            con.execute(f.read()).fetchall()
        return
    os.makedirs(answers_dir, exist_ok=True)
    names, tys, text, _ = answers_common.run_query(con, path)
    with open(os.path.join(answers_dir, f"{q}.csv"), "w", newline="") as f:
        f.write(text)
    types[q] = [f"{q}\t{c}\t{t}" for c, t in zip(names, tys)]


def main():
    default_gpusql = os.path.join(ROOT, "target", "release", "gpusql")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sf", default="1", help="scale factor (default 1)")
    ap.add_argument("--runs", type=int, default=10, help="warm runs per query (default 10)")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                    help="DuckDB threads (default: all cores, %(default)s here)")
    ap.add_argument("--queries", default=None, help="e.g. q01,q06 or 1,6 (default: all 22)")
    ap.add_argument("--json", default=None, help="write the results as JSON")
    ap.add_argument("--query-dir", default=os.path.join(ROOT, "tpch"),
                    help="folder of the qNN.sql files (default tpch/; e.g. bench_sql/set_operations)")
    ap.add_argument("--gpusql", default=default_gpusql if os.path.exists(default_gpusql) else None,
                    help="gpusql binary generating the data (default target/release/gpusql "
                         "if present, else cargo run ... dump_tpch)")
    ap.add_argument("--data-dir", default=None,
                    help="CSV folder: reused if it holds lineitem.csv, else generated there and kept")
    ap.add_argument("--answers-dir", default=None,
                    help="also write each query's result (the cold run) as the expected answer "
                         "DIR/qNN.csv, with DIR/types.txt, in tpch_answers.py's format")
    ap.add_argument("--parquet-dir", default=None,
                    help="query the Parquet files of this folder (views over read_parquet) "
                         "instead of loading CSVs into tables")
    ap.add_argument("--in-memory", action="store_true",
                    help="with --parquet-dir: load the tables into memory instead of views over the files")
    ap.add_argument("--checked-load", action="store_true",
                    help="load with tpch_answers.load_tables, which checks every CSV (slow)")
    args = ap.parse_args()

    queries = QUERIES
    if os.path.abspath(args.query_dir) != os.path.join(ROOT, "tpch"):
        queries = sorted(f[:-4] for f in os.listdir(args.query_dir) if f.startswith("q") and f.endswith(".sql"))
    if args.queries:
        toks = [t.strip().lstrip("qQ") for t in args.queries.split(",") if t.strip()]
        queries = [f"q{int(t):02d}" if t.isdigit() else t for t in toks]
        bad = [q for q in queries if not os.path.exists(os.path.join(args.query_dir, f"{q}.sql"))]
        if bad:
            sys.exit(f"no such TPC-H query: {bad}")

    gpusql = args.gpusql and os.path.abspath(args.gpusql)  # the generator runs in ROOT
    if args.parquet_dir:
        args.data_dir = args.parquet_dir
    datadir = os.path.abspath(args.data_dir or tempfile.mkdtemp(prefix="duckdb-bench-tpch-"))
    datagen_s = 0.0
    con = duckdb.connect()
    con.execute(f"SET threads = {args.threads}")
    try:
        if args.parquet_dir:
            t0 = time.perf_counter()
            parquet_views(con, datadir, args.in_memory)
            load_s = time.perf_counter() - t0
        elif not os.path.exists(os.path.join(datadir, "lineitem.csv")):
            t0 = time.perf_counter()
            generate(gpusql, args.sf, datadir)
            datagen_s = time.perf_counter() - t0
            print(f"generated SF {args.sf} CSVs in {datagen_s:.1f}s", file=sys.stderr)
        if not args.parquet_dir:
            t0 = time.perf_counter()
            (load_tables if args.checked_load else fast_load)(con, datadir)
            load_s = time.perf_counter() - t0
    finally:
        if args.data_dir is None:
            shutil.rmtree(datadir)
    tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
    print(f"DuckDB {duckdb.__version__}, {args.threads} threads: {len(tables)} tables of SF {args.sf} "
          f"ready in {load_s:.1f}s", file=sys.stderr)

    results = []
    types = {}
    print(f"{'query':<6} {'median ms':>10} {'min ms':>10} {'exec ms':>10} {'rows':>8}", flush=True)
    for q in queries:
        path = os.path.join(args.query_dir, f"{q}.sql")
        with open(path) as f:
            sql = f.read()
        try:
            r = {"query": q, **bench(con, sql, args.runs, lambda: write_answer(con, path, q, args.answers_dir, types))}
        except duckdb.Error as e:
            print(f"{q:<6} failed: {str(e).splitlines()[0]}", flush=True)
            continue
        results.append(r)
        print(f"{q:<6} {r['median_ms']:>10.2f} {r['min_ms']:>10.2f} "
              f"{r['execute_median_ms']:>10.2f} {r['rows']:>8}", flush=True)

    if args.answers_dir:
        with open(os.path.join(args.answers_dir, "types.txt"), "w") as f:
            f.write(f"# DuckDB {duckdb.__version__} result column types, TPC-H {answers_common.sf_label(args.sf)}\n# query\tcolumn\ttype\n")
            for q in queries:
                f.write("".join(line + "\n" for line in types[q]))
    if args.json:
        out = {"engine": "duckdb", "version": duckdb.__version__, "sf": float(args.sf),
               "threads": args.threads, "runs": args.runs,
               "device": f"{cpu_name()} ({os.cpu_count()} CPUs)",
               "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "ms_is": "median wall time of con.execute(sql).fetchall()",
               "data": ("tables loaded from Parquet" if args.in_memory else "parquet views")
               if args.parquet_dir else "tables loaded from CSV",
               "datagen_seconds": round(datagen_s, 3), "load_seconds": round(load_s, 3),
               "queries": results}
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
            f.write("\n")
        print(f"wrote {args.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
