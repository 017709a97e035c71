#!/usr/bin/env python3
"""DuckDB as the fuzzer's third opinion (`gpusql fuzz --duckdb`).

Usage: duckdb_oracle.py DIR   (DIR holds one <table>.parquet per table)
Loads every table, then reads one JSON object per line on stdin, {"sql": "..."}, and
answers one JSON line each: {"rows": [[value text, ...], ...]} or {"error": "..."}.
Values are rendered as gpusql's .slt runner prints them (`fmt`, which scripts/slt_expected.py
imports too).
"""
import datetime
import decimal
import json
import os
import sys
import threading

import duckdb


def fmt(v):
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        s = f"{v:.9f}".rstrip("0").rstrip(".")
        return "0" if s == "-0" else s
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, datetime.datetime):
        s = f"{v.year:04d}-{v.month:02d}-{v.day:02d} {v.hour:02d}:{v.minute:02d}:{v.second:02d}"
        return s + (f".{v.microsecond:06d}".rstrip("0") if v.microsecond else "")
    s = str(v)
    return "(empty)" if s == "" else s


def fetch(con, sql):
    """The rows of `sql`, INTERVAL columns as DuckDB's text (Python's timedelta folds months
    into 30 days and hours into days, so it cannot be rendered back)."""
    cur = con.execute(sql)
    types = [str(d[1]) for d in cur.description or []]
    if "INTERVAL" not in types:
        return cur.fetchall()
    cols = [f"CAST(#{i + 1} AS VARCHAR)" if t == "INTERVAL" else f"#{i + 1}" for i, t in enumerate(types)]
    return con.execute(f"SELECT {', '.join(cols)} FROM ({sql.rstrip().rstrip(';')}) AS __q").fetchall()


def main():
    folder = sys.argv[1]
    con = duckdb.connect()
    con.execute("SET threads TO 1")  # one per fuzz job (jobs run side by side)
    # A query DuckDB cannot answer quickly (or in bounded memory) is an error, not a wait.
    con.execute("SET memory_limit = '4GB'")
    timeout = float(os.environ.get("GPUSQL_DUCKDB_TIMEOUT", "20"))
    for name in sorted(os.listdir(folder)):
        if name.endswith(".parquet"):
            table = name[: -len(".parquet")]
            con.execute(f'CREATE TABLE "{table}" AS SELECT * FROM read_parquet(\'{os.path.join(folder, name)}\')')
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        timer = threading.Timer(timeout, con.interrupt)
        timer.start()
        try:
            rows = fetch(con, request["sql"])
            answer = {"rows": [[fmt(v) for v in r] for r in rows]}
        except Exception as e:  # every DuckDB error is an answer too
            answer = {"error": str(e).splitlines()[0]}
        finally:
            timer.cancel()
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
