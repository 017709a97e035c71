#!/usr/bin/env python3
"""Regenerate the expected TPC-H answers in tpch/answers/sf<SF>/ with DuckDB.

    python3 scripts/tpch_answers.py                 # SF 0.01, all 22 queries
    python3 scripts/tpch_answers.py --sf 1 --queries 1,6

Requires the `duckdb` Python package; the checked-in answers were made with
duckdb==2.0.0 (`pip install duckdb==2.0.0`).

Steps (the shared ones are described in answers_common.py):
  1. `cargo run --release -p gpusql-datagen --example dump_tpch -- <sf> <tmpdir>`
     writes the eight tables as CSV (skip with --data-dir DIR to reuse such a dump);
  2. the tables are created in an in-memory DuckDB with explicit DDL (BIGINT keys,
     INTEGER, DECIMAL(15,2), DATE, VARCHAR), loaded from the CSVs and checked
     against them;
  3. each tpch/qNN.sql (q01 .. q22) runs and its result goes to
     tpch/answers/sf<SF>/qNN.csv (format: see answers_common.py);
  4. tpch/answers/sf<SF>/types.txt lists every result column's DuckDB type:
     `qNN<TAB>column<TAB>TYPE` (e.g. `q01\tsum_qty\tDECIMAL(38,2)`,
     `q01\tavg_qty\tDOUBLE`).

scripts/slt_expected.py imports `load_tables` from here.
"""

import answers_common

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


def load_tables(con, datadir: str) -> None:
    """Creates the eight TPC-H tables in `con` and loads them from datadir/<table>.csv."""
    answers_common.load_tables(con, datadir, DDL)


TPCH = answers_common.Suite(
    name="TPC-H",
    dir="tpch",
    ddl=DDL,
    queries=[str(q) for q in range(1, 23)],
    query_stem=lambda q: f"q{int(q):02d}",
    parse_query=lambda tok: str(int(tok)),
    datagen=lambda sf, outdir: ["cargo", "run", "--release", "-p", "gpusql-datagen",
                                "--example", "dump_tpch", "--", sf, outdir],
    datagen_name="dump_tpch",
    default_sf="0.01",
    queries_example="1,6",
)


if __name__ == "__main__":
    answers_common.main(TPCH, __doc__)
