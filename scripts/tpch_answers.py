#!/usr/bin/env python3
"""Regenerate the expected TPC-H answers in tpch/answers/sf<SF>/ with DuckDB.

    python3 scripts/tpch_answers.py                 # SF 0.01, all 22 queries
    python3 scripts/tpch_answers.py --sf 1 --queries 1,6

Requires the `duckdb` Python package; the checked-in answers were made with
duckdb==2.0.0 (`pip install duckdb==2.0.0`).

Steps:
  1. `cargo run --release -p gpusql-datagen --example dump_tpch -- <sf> <tmpdir>`
     writes the eight tables as CSV (skip with --data-dir DIR to reuse such a dump);
  2. the tables are created in an in-memory DuckDB with explicit DDL (BIGINT keys,
     INTEGER, DECIMAL(15,2), DATE, VARCHAR) and loaded from the CSVs, then checked
     against the CSVs (row counts and total string lengths, so that no whitespace
     is lost in the load);
  3. each tpch/qNN.sql runs and its result goes to tpch/answers/sf<SF>/qNN.csv:
     a header row of the column names, then the rows in the query's order;
     RFC 4180 quoting (only where needed), '\\n' line ends; DECIMAL printed exactly
     at its scale (`123.40`), DOUBLE as Python's repr (shortest round-trip form),
     DATE as YYYY-MM-DD, NULL as an empty field.
  4. tpch/answers/sf<SF>/types.txt lists every result column's DuckDB type, one
     line per column: `qNN<TAB>column<TAB>TYPE` (e.g. `q01\tsum_qty\tDECIMAL(38,2)`,
     `q01\tavg_qty\tDOUBLE`). Lines starting with '#' are comments. When only some
     queries are run, the lines of the others are kept.
"""

import argparse
import csv
import datetime
import decimal
import os
import re
import subprocess
import sys
import tempfile
import time

import duckdb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUERY_DIR = os.path.join(ROOT, "tpch")

DDL = {
    "nation": """
        n_nationkey BIGINT NOT NULL,
        n_name VARCHAR NOT NULL,
        n_regionkey BIGINT NOT NULL,
        n_comment VARCHAR NOT NULL""",
    "region": """
        r_regionkey BIGINT NOT NULL,
        r_name VARCHAR NOT NULL,
        r_comment VARCHAR NOT NULL""",
    "part": """
        p_partkey BIGINT NOT NULL,
        p_name VARCHAR NOT NULL,
        p_mfgr VARCHAR NOT NULL,
        p_brand VARCHAR NOT NULL,
        p_type VARCHAR NOT NULL,
        p_size INTEGER NOT NULL,
        p_container VARCHAR NOT NULL,
        p_retailprice DECIMAL(15,2) NOT NULL,
        p_comment VARCHAR NOT NULL""",
    "supplier": """
        s_suppkey BIGINT NOT NULL,
        s_name VARCHAR NOT NULL,
        s_address VARCHAR NOT NULL,
        s_nationkey BIGINT NOT NULL,
        s_phone VARCHAR NOT NULL,
        s_acctbal DECIMAL(15,2) NOT NULL,
        s_comment VARCHAR NOT NULL""",
    "partsupp": """
        ps_partkey BIGINT NOT NULL,
        ps_suppkey BIGINT NOT NULL,
        ps_availqty INTEGER NOT NULL,
        ps_supplycost DECIMAL(15,2) NOT NULL,
        ps_comment VARCHAR NOT NULL""",
    "customer": """
        c_custkey BIGINT NOT NULL,
        c_name VARCHAR NOT NULL,
        c_address VARCHAR NOT NULL,
        c_nationkey BIGINT NOT NULL,
        c_phone VARCHAR NOT NULL,
        c_acctbal DECIMAL(15,2) NOT NULL,
        c_mktsegment VARCHAR NOT NULL,
        c_comment VARCHAR NOT NULL""",
    "orders": """
        o_orderkey BIGINT NOT NULL,
        o_custkey BIGINT NOT NULL,
        o_orderstatus VARCHAR NOT NULL,
        o_totalprice DECIMAL(15,2) NOT NULL,
        o_orderdate DATE NOT NULL,
        o_orderpriority VARCHAR NOT NULL,
        o_clerk VARCHAR NOT NULL,
        o_shippriority INTEGER NOT NULL,
        o_comment VARCHAR NOT NULL""",
    "lineitem": """
        l_orderkey BIGINT NOT NULL,
        l_partkey BIGINT NOT NULL,
        l_suppkey BIGINT NOT NULL,
        l_linenumber INTEGER NOT NULL,
        l_quantity DECIMAL(15,2) NOT NULL,
        l_extendedprice DECIMAL(15,2) NOT NULL,
        l_discount DECIMAL(15,2) NOT NULL,
        l_tax DECIMAL(15,2) NOT NULL,
        l_returnflag VARCHAR NOT NULL,
        l_linestatus VARCHAR NOT NULL,
        l_shipdate DATE NOT NULL,
        l_commitdate DATE NOT NULL,
        l_receiptdate DATE NOT NULL,
        l_shipinstruct VARCHAR NOT NULL,
        l_shipmode VARCHAR NOT NULL,
        l_comment VARCHAR NOT NULL""",
}


def sf_label(sf: str) -> str:
    """'0.01' -> 'sf0.01', '1' / '1.0' -> 'sf1', '10' -> 'sf10'."""
    return "sf" + format(float(sf), "g")


def dump_tables(sf: str, outdir: str) -> None:
    cmd = ["cargo", "run", "--release", "-p", "gpusql-datagen", "--example", "dump_tpch",
           "--", sf, outdir]
    print("+", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, cwd=ROOT, check=True)


def load_tables(con, datadir: str) -> None:
    for name, cols in DDL.items():
        path = os.path.join(datadir, f"{name}.csv")
        con.execute(f"CREATE TABLE {name} ({cols})").fetchall()
        con.execute(
            f"COPY {name} FROM '{path}' "
            "(FORMAT csv, HEADER true, DELIMITER ',', QUOTE '\"', ESCAPE '\"', NULL '')"
        ).fetchall()
        check_load(con, name, path)


def check_load(con, name: str, path: str) -> None:
    """The loaded table must hold exactly what the CSV says (catches trimmed spaces)."""
    string_cols = [c for c, t in con.execute(
        f"SELECT column_name, data_type FROM information_schema.columns "
        f"WHERE table_name = '{name}' ORDER BY ordinal_position").fetchall()
        if t == "VARCHAR"]
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        idx = [header.index(c) for c in string_cols]
        rows = 0
        lengths = [0] * len(idx)
        for rec in reader:
            rows += 1
            for k, i in enumerate(idx):
                lengths[k] += len(rec[i])
    sums = ", ".join(f"coalesce(sum(length({c})), 0)" for c in string_cols)
    got = con.execute(f"SELECT count(*), {sums} FROM {name}").fetchall()[0]
    want = (rows, *lengths)
    if tuple(got) != want:
        sys.exit(f"loading {name}: DuckDB has (rows, string lengths) {tuple(got)}, CSV has {want}")


_DECIMAL_RE = re.compile(r"DECIMAL\((\d+),\s*(\d+)\)")


def formatter(type_name: str):
    m = _DECIMAL_RE.fullmatch(type_name)
    if m:
        quantum = decimal.Decimal(1).scaleb(-int(m.group(2)))

        def fmt_decimal(v):
            return format(v.quantize(quantum, rounding=decimal.ROUND_HALF_EVEN), "f")
        return fmt_decimal
    if type_name in ("DOUBLE", "FLOAT"):
        return repr
    if type_name == "DATE":
        return lambda v: v.isoformat()
    if type_name == "BOOLEAN":
        return lambda v: "true" if v else "false"
    return str


def run_query(con, qnum: int):
    with open(os.path.join(QUERY_DIR, f"q{qnum:02d}.sql")) as f:
        sql = f.read()
    rel = con.sql(sql)
    names = rel.columns
    types = [str(t) for t in rel.types]
    rows = rel.fetchall()
    fmts = [formatter(t) for t in types]
    lines = [csv_line(names)]
    for row in rows:
        lines.append(csv_line(["" if v is None else fmt(v) for v, fmt in zip(row, fmts)]))
    return names, types, "".join(lines), len(rows)


def csv_field(s: str) -> str:
    if any(c in s for c in ',"\n\r'):
        return '"' + s.replace('"', '""') + '"'
    return s


def csv_line(fields) -> str:
    # Not csv.writer: it writes a lone empty field as '""', and NULL must be empty.
    return ",".join(csv_field(f) for f in fields) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sf", default="0.01", help="scale factor (default 0.01)")
    ap.add_argument("--queries", default=None,
                    help="comma-separated query numbers, e.g. 1,6 (default: all 22)")
    ap.add_argument("--data-dir", default=None,
                    help="reuse CSVs already written by dump_tpch instead of running it")
    args = ap.parse_args()

    if float(args.sf) <= 0:
        sys.exit("--sf must be > 0")
    queries = list(range(1, 23))
    if args.queries:
        queries = sorted({int(q) for q in args.queries.split(",") if q.strip()})
        bad = [q for q in queries if not 1 <= q <= 22]
        if bad:
            sys.exit(f"no such TPC-H query: {bad}")

    outdir = os.path.join(QUERY_DIR, "answers", sf_label(args.sf))
    os.makedirs(outdir, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="tpch-csv-") as tmp:
        datadir = args.data_dir
        if datadir is None:
            datadir = tmp
            dump_tables(args.sf, datadir)
        con = duckdb.connect()
        t0 = time.time()
        load_tables(con, datadir)
        print(f"loaded tables in {time.time() - t0:.1f}s", file=sys.stderr)

        type_lines = {}
        types_path = os.path.join(outdir, "types.txt")
        if os.path.exists(types_path):
            with open(types_path) as f:
                for line in f:
                    if line.startswith("#") or not line.strip():
                        continue
                    q = line.split("\t", 1)[0]
                    type_lines.setdefault(q, []).append(line.rstrip("\n"))

        for q in queries:
            t0 = time.time()
            names, types, text, nrows = run_query(con, q)
            with open(os.path.join(outdir, f"q{q:02d}.csv"), "w", newline="") as f:
                f.write(text)
            type_lines[f"q{q:02d}"] = [f"q{q:02d}\t{n}\t{t}" for n, t in zip(names, types)]
            print(f"q{q:02d}: {nrows} rows in {time.time() - t0:.2f}s", file=sys.stderr)

    with open(types_path, "w") as f:
        f.write(f"# DuckDB {duckdb.__version__} result column types, TPC-H {sf_label(args.sf)}\n")
        f.write("# query\tcolumn\ttype\n")
        for q in sorted(type_lines):
            for line in type_lines[q]:
                f.write(line + "\n")


if __name__ == "__main__":
    main()
