#!/usr/bin/env python3
"""Regenerate the expected SSB (Star Schema Benchmark) answers in ssb/answers/sf<SF>/ with DuckDB.

    python3 scripts/ssb_answers.py                  # SF 0.1, all 13 queries
    python3 scripts/ssb_answers.py --sf 1 --queries 1.1,4.3

Requires the `duckdb` Python package; the checked-in answers were made with
duckdb==2.0.0 (`pip install duckdb==2.0.0`).

The default SF is 0.1, the smallest power of ten at which every query returns rows
(at SF 0.01, Q2.3, Q3.2, Q3.3, Q3.4 and Q4.3 select nothing). Q3.4 is the tightest
(two UK cities on both sides, one month: ~8e-7 of lineorder); at SF 0.1 it returns
2 rows. The script warns about any query that returns no rows.

Steps:
  1. `cargo run --release -p gpusql-cli -- datagen ssb --sf <sf> --out <tmpdir>`
     writes the five tables as CSV (skip with --data-dir DIR to reuse such a dump);
  2. the tables are created in an in-memory DuckDB with explicit DDL (INTEGER for
     every key, date key, number, flag and money column, VARCHAR for strings) and
     loaded from the CSVs, then checked against the CSVs (row counts and total string
     lengths, so that no whitespace is lost in the load: c_city/s_city hold inner
     spaces, e.g. 'CHINA    3');
  3. each ssb/q<N>.sql (q1.1 .. q4.3) runs and its result goes to
     ssb/answers/sf<SF>/q<N>.csv: a header row of the column names, then the rows in
     the query's order; RFC 4180 quoting (only where needed), '\\n' line ends; DECIMAL
     printed exactly at its scale, DOUBLE as Python's repr, DATE as YYYY-MM-DD, NULL as
     an empty field (the same format as tpch/answers);
  4. ssb/answers/sf<SF>/types.txt lists every result column's DuckDB type, one line
     per column: `q<N><TAB>column<TAB>TYPE` (e.g. `q1.1\trevenue\tHUGEINT`). Lines
     starting with '#' are comments. When only some queries are run, the lines of the
     others are kept.
"""

import argparse
import csv
import decimal
import os
import re
import subprocess
import sys
import tempfile
import time

import duckdb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUERY_DIR = os.path.join(ROOT, "ssb")

QUERIES = ["1.1", "1.2", "1.3", "2.1", "2.2", "2.3",
           "3.1", "3.2", "3.3", "3.4", "4.1", "4.2", "4.3"]

DDL = {
    "lineorder": """
        lo_orderkey INTEGER NOT NULL,
        lo_linenumber INTEGER NOT NULL,
        lo_custkey INTEGER NOT NULL,
        lo_partkey INTEGER NOT NULL,
        lo_suppkey INTEGER NOT NULL,
        lo_orderdate INTEGER NOT NULL,
        lo_orderpriority VARCHAR NOT NULL,
        lo_shippriority INTEGER NOT NULL,
        lo_quantity INTEGER NOT NULL,
        lo_extendedprice INTEGER NOT NULL,
        lo_ordtotalprice INTEGER NOT NULL,
        lo_discount INTEGER NOT NULL,
        lo_revenue INTEGER NOT NULL,
        lo_supplycost INTEGER NOT NULL,
        lo_tax INTEGER NOT NULL,
        lo_commitdate INTEGER NOT NULL,
        lo_shipmode VARCHAR NOT NULL""",
    "customer": """
        c_custkey INTEGER NOT NULL,
        c_name VARCHAR NOT NULL,
        c_address VARCHAR NOT NULL,
        c_city VARCHAR NOT NULL,
        c_nation VARCHAR NOT NULL,
        c_region VARCHAR NOT NULL,
        c_phone VARCHAR NOT NULL,
        c_mktsegment VARCHAR NOT NULL""",
    "supplier": """
        s_suppkey INTEGER NOT NULL,
        s_name VARCHAR NOT NULL,
        s_address VARCHAR NOT NULL,
        s_city VARCHAR NOT NULL,
        s_nation VARCHAR NOT NULL,
        s_region VARCHAR NOT NULL,
        s_phone VARCHAR NOT NULL""",
    "part": """
        p_partkey INTEGER NOT NULL,
        p_name VARCHAR NOT NULL,
        p_mfgr VARCHAR NOT NULL,
        p_category VARCHAR NOT NULL,
        p_brand1 VARCHAR NOT NULL,
        p_color VARCHAR NOT NULL,
        p_type VARCHAR NOT NULL,
        p_size INTEGER NOT NULL,
        p_container VARCHAR NOT NULL""",
    "date": """
        d_datekey INTEGER NOT NULL,
        d_date VARCHAR NOT NULL,
        d_dayofweek VARCHAR NOT NULL,
        d_month VARCHAR NOT NULL,
        d_year INTEGER NOT NULL,
        d_yearmonthnum INTEGER NOT NULL,
        d_yearmonth VARCHAR NOT NULL,
        d_daynuminweek INTEGER NOT NULL,
        d_daynuminmonth INTEGER NOT NULL,
        d_daynuminyear INTEGER NOT NULL,
        d_monthnuminyear INTEGER NOT NULL,
        d_weeknuminyear INTEGER NOT NULL,
        d_sellingseason VARCHAR NOT NULL,
        d_lastdayinweekfl INTEGER NOT NULL,
        d_lastdayinmonthfl INTEGER NOT NULL,
        d_holidayfl INTEGER NOT NULL,
        d_weekdayfl INTEGER NOT NULL""",
}


def sf_label(sf: str) -> str:
    """'0.1' -> 'sf0.1', '1' / '1.0' -> 'sf1', '10' -> 'sf10'."""
    return "sf" + format(float(sf), "g")


def dump_tables(sf: str, outdir: str) -> None:
    cmd = ["cargo", "run", "--release", "-p", "gpusql-cli", "--",
           "datagen", "ssb", "--sf", sf, "--out", outdir]
    print("+", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, cwd=ROOT, check=True)


def load_tables(con, datadir: str) -> None:
    for name, cols in DDL.items():
        path = os.path.join(datadir, f"{name}.csv")
        # "date" is a type name too; quoting keeps the DDL unambiguous.
        con.execute(f'CREATE TABLE "{name}" ({cols})').fetchall()
        con.execute(
            f"""COPY "{name}" FROM '{path}' """
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
    got = con.execute(f'SELECT count(*), {sums} FROM "{name}"').fetchall()[0]
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


def run_query(con, q: str):
    with open(os.path.join(QUERY_DIR, f"q{q}.sql")) as f:
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
    ap.add_argument("--sf", default="0.1", help="scale factor (default 0.1)")
    ap.add_argument("--queries", default=None,
                    help="comma-separated query numbers, e.g. 1.1,4.3 (default: all 13)")
    ap.add_argument("--data-dir", default=None,
                    help="reuse CSVs already written by `gpusql datagen ssb` instead of running it")
    args = ap.parse_args()

    if float(args.sf) <= 0:
        sys.exit("--sf must be > 0")
    queries = QUERIES
    if args.queries:
        wanted = {q.strip() for q in args.queries.split(",") if q.strip()}
        bad = sorted(wanted - set(QUERIES))
        if bad:
            sys.exit(f"no such SSB query: {bad} (expected some of {','.join(QUERIES)})")
        queries = [q for q in QUERIES if q in wanted]

    outdir = os.path.join(QUERY_DIR, "answers", sf_label(args.sf))
    os.makedirs(outdir, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="ssb-csv-") as tmp:
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

        empty = []
        for q in queries:
            t0 = time.time()
            names, types, text, nrows = run_query(con, q)
            with open(os.path.join(outdir, f"q{q}.csv"), "w", newline="") as f:
                f.write(text)
            type_lines[f"q{q}"] = [f"q{q}\t{n}\t{t}" for n, t in zip(names, types)]
            print(f"q{q}: {nrows} rows in {time.time() - t0:.2f}s", file=sys.stderr)
            if nrows == 0:
                empty.append(q)

    def order(q: str):
        return [int(p) for p in q[1:].split(".")]

    with open(types_path, "w") as f:
        f.write(f"# DuckDB {duckdb.__version__} result column types, SSB {sf_label(args.sf)}\n")
        f.write("# query\tcolumn\ttype\n")
        for q in sorted(type_lines, key=order):
            for line in type_lines[q]:
                f.write(line + "\n")
    if empty:
        print(f"warning: no rows at {sf_label(args.sf)} for queries {', '.join(empty)}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
