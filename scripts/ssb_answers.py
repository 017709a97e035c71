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

Steps (the shared ones are described in answers_common.py):
  1. `cargo run --release -p gpusql-cli -- datagen ssb --sf <sf> --out <tmpdir>`
     writes the five tables as CSV (skip with --data-dir DIR to reuse such a dump);
  2. the tables are created in an in-memory DuckDB with explicit DDL (INTEGER for
     every key, date key, number, flag and money column, VARCHAR for strings),
     loaded from the CSVs and checked against them (c_city/s_city hold inner
     spaces, e.g. 'CHINA    3', which the check makes sure survive);
  3. each ssb/q<N>.sql (q1.1 .. q4.3) runs and its result goes to
     ssb/answers/sf<SF>/q<N>.csv (the same format as tpch/answers; see
     answers_common.py);
  4. ssb/answers/sf<SF>/types.txt lists every result column's DuckDB type:
     `q<N><TAB>column<TAB>TYPE` (e.g. `q1.1\trevenue\tHUGEINT`).
"""

import answers_common

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


SSB = answers_common.Suite(
    name="SSB",
    dir="ssb",
    ddl=DDL,
    queries=QUERIES,
    query_stem=lambda q: f"q{q}",
    parse_query=lambda tok: tok,
    datagen=lambda sf, outdir: ["cargo", "run", "--release", "-p", "gpusql-cli", "--",
                                "datagen", "ssb", "--sf", sf, "--out", outdir],
    datagen_name="`gpusql datagen ssb`",
    default_sf="0.1",
    queries_example="1.1,4.3",
)


if __name__ == "__main__":
    answers_common.main(SSB, __doc__)
