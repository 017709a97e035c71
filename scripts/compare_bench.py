#!/usr/bin/env python3
"""Markdown table comparing a gpusql TPC-H bench JSON with a DuckDB one.

    python3 scripts/compare_bench.py GPUSQL.json DUCKDB.json [--markdown OUT.md]

GPUSQL.json comes from `gpusql bench tpch --json` (e.g. docs/bench/tpch_sf10_h100.json),
DUCKDB.json from scripts/duckdb_bench.py --json. Per query: gpusql's median kernel time
(`exec_ms_median`: the sum of kernel times on the GPU, the whole execution on the CPU
backend), gpusql's median end-to-end time (`wall_ms_median`: Engine::execute, i.e. parse,
plan, compile or cache hit, kernels, download), DuckDB's median (`median_ms`:
execute + fetchall), and the speed-ups DuckDB / gpusql. The last row is the geometric
mean over the queries both engines ran. Queries gpusql skipped show its "not supported"
reason below the table; differing row counts are flagged too.
"""
import argparse
import json
import math
import sys

# Field names, as found in the two JSON files.
G_KERNEL, G_E2E, G_STATUS, G_NOTE = "exec_ms_median", "wall_ms_median", "status", "note"
D_MS = "median_ms"


def load(path, needed):
    with open(path) as f:
        doc = json.load(f)
    queries = {q["query"]: q for q in doc["queries"]}
    fields = set().union(*(q.keys() for q in queries.values())) if queries else set()
    missing = [k for k in needed if k not in fields]
    if missing:
        sys.exit(f"{path}: no field {missing} in its queries (fields: {sorted(fields)})")
    return doc, queries


def ms(x):
    return "" if x is None else f"{x:.3f}" if x < 10 else f"{x:.2f}" if x < 100 else f"{x:.1f}"


def times(x):
    return f"{x:.3g}×"


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gpusql_json")
    ap.add_argument("duckdb_json")
    ap.add_argument("--markdown", help="also write the table to this file")
    args = ap.parse_args()

    g_doc, g = load(args.gpusql_json, ["query", G_KERNEL, G_STATUS])
    d_doc, d = load(args.duckdb_json, ["query", D_MS])
    has_e2e = any(q.get(G_E2E) is not None for q in g.values())

    out = [f"# TPC-H SF {g_doc.get('sf'):g}: gpusql vs DuckDB", ""]
    if g_doc.get("sf") != d_doc.get("sf"):
        msg = f"**Scale factors differ**: gpusql SF {g_doc.get('sf')}, DuckDB SF {d_doc.get('sf')}."
        print("warning: " + msg, file=sys.stderr)
        out += [msg, ""]
    out += [f"- gpusql: {g_doc.get('device', '?')}; {g_doc.get('runs', '?')} warm runs, medians; "
            f"kernel ms = {g_doc.get('exec_ms_is', G_KERNEL)} ({g_doc.get('date', '')})",
            f"- DuckDB {d_doc.get('version', '?')}: {d_doc.get('device', '?')}, "
            f"{d_doc.get('threads', '?')} threads; {d_doc.get('runs', '?')} warm runs, medians of "
            f"execute + fetchall; load {d_doc.get('load_seconds', 0):.1f} s ({d_doc.get('date', '')})",
            ""]

    cols = ["query", "gpusql kernel ms"] + (["gpusql end-to-end ms"] if has_e2e else []) + \
        ["DuckDB ms", "speed-up (DuckDB ÷ kernel)"] + (["speed-up (DuckDB ÷ end-to-end)"] if has_e2e else [])
    out += ["| " + " | ".join(cols) + " |", "|---" + "|---:" * (len(cols) - 1) + "|"]
    notes, both = [], []
    for name in sorted(set(g) | set(d)):
        gq, dq = g.get(name, {}), d.get(name, {})
        kernel, e2e, dms = gq.get(G_KERNEL), gq.get(G_E2E), dq.get(D_MS)
        if not gq:
            gcells = ["not run"] + ([""] if has_e2e else [])
        elif gq.get(G_STATUS) != "ok" or kernel is None:
            status = "not supported" if gq.get(G_STATUS) == "skipped" else gq.get(G_STATUS, "?")
            gcells = [status] + ([""] if has_e2e else [])
            note = gq.get(G_NOTE) or ""
            notes.append(f"- {name}: gpusql " + (note if note.startswith(status) else f"{status}: {note}"))
        else:
            gcells = [ms(kernel)] + ([ms(e2e)] if has_e2e else [])
        ups = []
        if kernel is not None and dms is not None and gq.get(G_STATUS) == "ok":
            both.append((kernel, e2e, dms))
            ups = [times(dms / kernel)] + ([times(dms / e2e) if e2e else ""] if has_e2e else [])
            if gq.get("rows") is not None and dq.get("rows") is not None and gq["rows"] != dq["rows"]:
                notes.append(f"- {name}: row counts differ: gpusql {gq['rows']}, DuckDB {dq['rows']}")
        else:
            ups = [""] * (2 if has_e2e else 1)
        out.append("| " + " | ".join([name] + gcells + [ms(dms) if dq else "not run"] + ups) + " |")

    if both:
        gk, ge, gd = (geomean([b[i] for b in both if b[i]]) for i in range(3))
        row = [f"**geomean ({len(both)} queries)**", ms(gk)] + ([ms(ge)] if has_e2e else []) + \
            [ms(gd), f"**{times(gd / gk)}**"]
        if has_e2e:
            row.append(f"**{times(geomean([b[2] / b[1] for b in both if b[1]]))}**")
        out.append("| " + " | ".join(row) + " |")
    if notes:
        out += [""] + notes
    text = "\n".join(out) + "\n"
    print(text, end="")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
