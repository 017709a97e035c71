#!/usr/bin/env python3
"""TPC-DS: data from DuckDB's dsdgen as Parquet, and DuckDB 2.0.1's answers over it.

    python3 scripts/tpcds_data.py --sf 1 --out data/tpcds-sf1
    gpusql check --tpcds data/tpcds-sf1            # runs tpcds/qNN.sql, compares

writes
    <out>/data/<table>.parquet     the 24 tables (dsdgen's types: INTEGER keys,
                                   DECIMAL(7,2) amounts, DATE, VARCHAR)
    <out>/answers/qNN.csv          DuckDB 2.0.1's answer to tpcds/qNN.sql over those files
                                   (answers_common.py's format), and types.txt
    <out>/answers/errors.txt       the queries DuckDB itself fails on (none, normally)

The generator is DuckDB's tpcds extension. No extension is published for DuckDB 2.0.1, so
dsdgen runs in DuckDB 1.5.5 with the pip package `duckdb-extension-tpcds==1.5.5`,
installed once under ~/.cache/gpusql/tpcds-gen-1.5.5 (the data are the same: dsdgen is
deterministic). The answers come from the oracle, the `duckdb` package of this Python
(2.0.1), reading the Parquet files the engine reads.

`--write-queries` rewrites tpcds/q01.sql .. q99.sql from the extension's texts (they are
checked in; DuckDB's adaptation of the TPC-DS templates with the qualification
substitutions).
"""

import argparse
import os
import subprocess
import sys
import textwrap
import time

GEN_VERSION = "1.5.5"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUERY_DIR = os.path.join(ROOT, "tpcds")


def generator_dir(wheels: str = None) -> str:
    """A --target install of DuckDB 1.5.5 and its tpcds extension, made once (from the
    wheel files in `wheels` where given: machines without a package index)."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    target = os.path.join(cache, "gpusql", f"tpcds-gen-{GEN_VERSION}")
    marker = os.path.join(target, ".complete")
    if not os.path.exists(marker):
        print(f"+ installing duckdb=={GEN_VERSION} and its tpcds extension into {target}",
              file=sys.stderr)
        index = ["--no-index", "--find-links", wheels] if wheels else []
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                        "--disable-pip-version-check", "--no-compile", "--upgrade", *index,
                        "--target", target, f"duckdb=={GEN_VERSION}",
                        f"duckdb-extension-tpcds=={GEN_VERSION}"], check=True)
        open(marker, "w").close()
    return target


# Runs in the generator's DuckDB (a child process: two versions of the duckdb module
# cannot share one interpreter).
GENERATE = textwrap.dedent("""
    import glob, os, sys, duckdb, duckdb_extension_tpcds
    sf, datadir, querydir = float(sys.argv[1]), sys.argv[2], sys.argv[3]
    ext = glob.glob(os.path.join(duckdb_extension_tpcds.__path__[0], "extensions", "*",
                                 "tpcds.duckdb_extension"))[0]
    con = duckdb.connect()
    con.execute(f"LOAD '{ext}'")
    if querydir:
        for nr, text in con.execute("SELECT query_nr, query FROM tpcds_queries()").fetchall():
            with open(os.path.join(querydir, f"q{nr:02d}.sql"), "w") as f:
                f.write(text.strip() + "\\n")
    if datadir:
        con.execute(f"CALL dsdgen(sf={sf})")
        tables = [t for (t,) in con.execute(
            "SELECT table_name FROM duckdb_tables() ORDER BY table_name").fetchall()]
        for t in tables:
            con.execute(f"COPY {t} TO '{os.path.join(datadir, t)}.parquet' (FORMAT parquet)")
        print(f"{len(tables)} tables", file=sys.stderr)
""")


def generate(sf: str, datadir: str, write_queries: bool, wheels: str) -> None:
    env = dict(os.environ, PYTHONPATH=generator_dir(wheels))
    args = [sys.executable, "-c", GENERATE, sf, datadir or "", QUERY_DIR if write_queries else ""]
    subprocess.run(args, env=env, check=True)


def answer(datadir: str, outdir: str) -> None:
    # (Imported here: --data-only runs where the oracle's duckdb is not installed.)
    import duckdb
    import answers_common
    con = duckdb.connect()
    for name in sorted(os.listdir(datadir)):
        if name.endswith(".parquet"):
            path = os.path.join(datadir, name)
            con.execute(f"CREATE VIEW {name[:-8]} AS SELECT * FROM read_parquet('{path}')")
    stems = sorted(n[:-4] for n in os.listdir(QUERY_DIR) if n.endswith(".sql"))
    types, errors, empty = [], [], []
    for stem in stems:
        t0 = time.time()
        try:
            names, tys, text, nrows = answers_common.run_query(
                con, os.path.join(QUERY_DIR, f"{stem}.sql"))
        except duckdb.Error as e:
            errors.append(f"{stem}\t{str(e).splitlines()[0]}")
            continue
        with open(os.path.join(outdir, f"{stem}.csv"), "w", newline="") as f:
            f.write(text)
        types += [f"{stem}\t{c}\t{t}" for c, t in zip(names, tys)]
        if nrows == 0:
            empty.append(stem)
        print(f"{stem}: {nrows} rows in {time.time() - t0:.2f}s", file=sys.stderr)
    with open(os.path.join(outdir, "types.txt"), "w") as f:
        f.write(f"# DuckDB {duckdb.__version__} result column types\n# query\tcolumn\ttype\n")
        f.write("".join(line + "\n" for line in types))
    with open(os.path.join(outdir, "errors.txt"), "w") as f:
        f.write("".join(line + "\n" for line in errors))
    if errors:
        print(f"warning: DuckDB {duckdb.__version__} failed on {len(errors)} queries "
              f"(answers/errors.txt)", file=sys.stderr)
    if empty:
        print(f"note: no rows for {', '.join(empty)}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sf", default="1", help="scale factor (default 1; CI uses 0.01)")
    ap.add_argument("--out", help="folder for data/ and answers/")
    ap.add_argument("--write-queries", action="store_true",
                    help="rewrite tpcds/qNN.sql from the extension's query texts")
    ap.add_argument("--data-only", action="store_true",
                    help="write <out>/data only (answers made elsewhere from the same data)")
    ap.add_argument("--wheels", metavar="DIR",
                    help="install the generator from the wheel files in DIR (no package index)")
    args = ap.parse_args()
    if float(args.sf) <= 0:
        sys.exit("--sf must be > 0")
    if not args.out and not args.write_queries:
        sys.exit("nothing to do: give --out DIR (and/or --write-queries)")
    datadir = answers = None
    if args.out:
        datadir = os.path.join(args.out, "data")
        answers = os.path.join(args.out, "answers")
        os.makedirs(datadir, exist_ok=True)
        if not args.data_only:
            os.makedirs(answers, exist_ok=True)
    if args.write_queries:
        os.makedirs(QUERY_DIR, exist_ok=True)
    t0 = time.time()
    generate(args.sf, datadir, args.write_queries, args.wheels)
    print(f"generated in {time.time() - t0:.1f}s", file=sys.stderr)
    if args.out and not args.data_only:
        answer(datadir, answers)


if __name__ == "__main__":
    main()
