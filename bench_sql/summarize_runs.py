#!/usr/bin/env python3
"""Summarizes run_timed.py outputs gathered under `## LABEL` lines (one label per binary or
configuration, repeated for several rounds): per query, each label's best median kernel ms,
or every round's with --all.

    python3 bench_sql/summarize_runs.py FILE [--all]
"""
import re
import sys

path, show_all = sys.argv[1], "--all" in sys.argv[2:]
res = {}
for section in re.split(r"^## ", open(path).read(), flags=re.M)[1:]:
    label, *lines = section.splitlines()
    for line in lines:
        m = re.match(r"\s*([\d.]+) ms\s+(?:wall\s+[\d.]+ ms\s+first\s+[\d.]+ ms\s+)?(.+)", line)
        if m:
            res.setdefault(m.group(2), {}).setdefault(label, []).append(float(m.group(1)))
for query, by_label in res.items():
    cells = ("/".join(f"{x:.3f}" for x in v) if show_all else f"{min(v):.3f}" for v in by_label.values())
    print(query, " ".join(f"{k}:{c}" for k, c in zip(by_label, cells)))
