"""Shared code of scripts/tpch_answers.py and scripts/ssb_answers.py.

Both regenerate a suite's expected answers with DuckDB; a `Suite` describes what
differs between them (tables, query names, the generator command, the default SF).

Requires the `duckdb` Python package; the checked-in answers were made with
duckdb==2.0.0 (`pip install duckdb==2.0.0`).

Steps, for a suite <suite> (tpch, ssb):
  1. the suite's generator writes its tables as CSV into a temporary directory
     (skip with --data-dir DIR to reuse such a dump);
  2. the tables are created in an in-memory DuckDB with the suite's explicit DDL and
     loaded from the CSVs, then checked against the CSVs (row counts and total string
     lengths, so that no whitespace is lost in the load);
  3. each <suite>/q<N>.sql runs and its result goes to <suite>/answers/sf<SF>/q<N>.csv:
     a header row of the column names, then the rows in the query's order;
     RFC 4180 quoting (only where needed), '\\n' line ends; DECIMAL printed exactly
     at its scale (`123.40`), DOUBLE as Python's repr (shortest round-trip form),
     DATE as YYYY-MM-DD, BOOLEAN as true/false, NULL as an empty field;
  4. <suite>/answers/sf<SF>/types.txt lists every result column's DuckDB type, one
     line per column: `q<N><TAB>column<TAB>TYPE`. Lines starting with '#' are
     comments. When only some queries are run, the lines of the others are kept.
The script warns about any query that returns no rows.
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
from dataclasses import dataclass
from typing import Callable, Dict, List, Sequence

import duckdb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass(frozen=True)
class Suite:
    name: str                # "TPC-H": in messages and the types.txt header
    dir: str                 # "tpch": queries in ROOT/<dir>/, answers in ROOT/<dir>/answers/
    ddl: Dict[str, str]      # table name -> column definitions, in load order
    queries: List[str]       # query ids as given to --queries, in order: "1".."22", "1.1"..
    query_stem: Callable[[str], str]      # id -> file stem, "1" -> "q01", "1.1" -> "q1.1"
    parse_query: Callable[[str], str]     # a --queries token -> id; ValueError if malformed
    datagen: Callable[[str, str], List[str]]  # (sf, outdir) -> command writing <table>.csv
    datagen_name: str        # how --data-dir's help names the generator
    default_sf: str
    queries_example: str     # for --queries' help, e.g. "1,6"

    def load_tables(self, con, datadir: str) -> None:
        load_tables(con, datadir, self.ddl)


def sf_label(sf: str) -> str:
    """'0.01' -> 'sf0.01', '1' / '1.0' -> 'sf1', '10' -> 'sf10'."""
    return "sf" + format(float(sf), "g")


def dump_tables(suite: Suite, sf: str, outdir: str) -> None:
    cmd = suite.datagen(sf, outdir)
    print("+", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, cwd=ROOT, check=True)


def load_tables(con, datadir: str, ddl: Dict[str, str]) -> None:
    for name, cols in ddl.items():
        path = os.path.join(datadir, f"{name}.csv")
        # Table names are quoted: SSB's "date" is a type name too.
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


def run_query(con, sql_path: str):
    """Runs one query file: (column names, DuckDB type names, CSV text, row count)."""
    with open(sql_path) as f:
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


def select_queries(suite: Suite, arg) -> List[str]:
    """The ids named by --queries (all when None), in the suite's order."""
    if not arg:
        return list(suite.queries)
    wanted, bad = set(), []
    for tok in (t.strip() for t in arg.split(",")):
        if not tok:
            continue
        try:
            q = suite.parse_query(tok)
        except ValueError:
            q = None
        if q in suite.queries:
            wanted.add(q)
        else:
            bad.append(tok)
    if bad:
        sys.exit(f"no such {suite.name} query: {sorted(set(bad))} "
                 f"(expected some of {','.join(suite.queries)})")
    return [q for q in suite.queries if q in wanted]


def read_type_lines(path: str) -> Dict[str, List[str]]:
    """types.txt's lines, by query stem, without the comments."""
    type_lines: Dict[str, List[str]] = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                q = line.split("\t", 1)[0]
                type_lines.setdefault(q, []).append(line.rstrip("\n"))
    return type_lines


def main(suite: Suite, doc: str, argv: Sequence[str] = None) -> None:
    """The command line of <suite>_answers.py; `doc`'s first line is its description."""
    n = len(suite.queries)
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--sf", default=suite.default_sf,
                    help=f"scale factor (default {suite.default_sf})")
    ap.add_argument("--queries", default=None,
                    help=f"comma-separated query numbers, e.g. {suite.queries_example} "
                         f"(default: all {n})")
    ap.add_argument("--data-dir", default=None,
                    help=f"reuse CSVs already written by {suite.datagen_name} instead of running it")
    args = ap.parse_args(argv)

    if float(args.sf) <= 0:
        sys.exit("--sf must be > 0")
    queries = select_queries(suite, args.queries)

    query_dir = os.path.join(ROOT, suite.dir)
    outdir = os.path.join(query_dir, "answers", sf_label(args.sf))
    os.makedirs(outdir, exist_ok=True)
    types_path = os.path.join(outdir, "types.txt")

    with tempfile.TemporaryDirectory(prefix=f"{suite.dir}-csv-") as tmp:
        datadir = args.data_dir
        if datadir is None:
            datadir = tmp
            dump_tables(suite, args.sf, datadir)
        con = duckdb.connect()
        t0 = time.time()
        suite.load_tables(con, datadir)
        print(f"loaded tables in {time.time() - t0:.1f}s", file=sys.stderr)

        type_lines = read_type_lines(types_path)
        empty = []
        for q in queries:
            stem = suite.query_stem(q)
            t0 = time.time()
            names, types, text, nrows = run_query(con, os.path.join(query_dir, f"{stem}.sql"))
            with open(os.path.join(outdir, f"{stem}.csv"), "w", newline="") as f:
                f.write(text)
            type_lines[stem] = [f"{stem}\t{c}\t{t}" for c, t in zip(names, types)]
            print(f"{stem}: {nrows} rows in {time.time() - t0:.2f}s", file=sys.stderr)
            if nrows == 0:
                empty.append(q)

    # The suite's query order; stems it does not know (none, normally) go last.
    rank = {suite.query_stem(q): i for i, q in enumerate(suite.queries)}
    with open(types_path, "w") as f:
        f.write(f"# DuckDB {duckdb.__version__} result column types, "
                f"{suite.name} {sf_label(args.sf)}\n")
        f.write("# query\tcolumn\ttype\n")
        for stem in sorted(type_lines, key=lambda s: (rank.get(s, n), s)):
            for line in type_lines[stem]:
                f.write(line + "\n")
    if empty:
        print(f"warning: no rows at {sf_label(args.sf)} for queries {', '.join(empty)}",
              file=sys.stderr)
