#!/usr/bin/env python3
"""Times SQL statements on the GPU in one gpusql process (one data generation).

    python3 bench_sql/run_timed.py BINARY LIST [--data "--tpch 10"] [--runs 8]

Each line of LIST is one of:
  # …                    a comment
  SET name = value       a session setting, run once, untimed
  EACH alt | alt | …     the statements after it, up to the next EACH, run once per
                         alternative; an alternative is SET statements separated by `;`
                         (e.g. `EACH SET lane_refill = off | SET lane_refill = on`)
  @path/to/query.sql     that file, timed (a glob such as @tpch/q??.sql: each file, sorted)
  anything else          that statement, timed
A timed statement runs --runs times; printed: the median kernel ms of all runs but the
first (which compiles and uploads), from `--timing`'s "kernels … ms", and with --wall also
the median wall ms (parse to result, `Time: … ms`) of those runs, and the first run's wall
ms (a new query: its kernels compiled, unless the kernel cache has them, and its columns
uploaded).
"""
import argparse
import glob
import re
import statistics
import subprocess
import sys


def expand(lines):
    """The list as ("set", sql) and ("time", label, source) steps, EACH blocks unrolled."""
    steps, block, alternatives = [], [], None

    def flush():
        if alternatives is None:
            steps.extend(block)
            return
        for alt in alternatives:
            steps.extend(("set", s.strip()) for s in alt.split(";") if s.strip())
            steps.extend(block)

    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("EACH "):
            flush()
            block, alternatives = [], [a.strip() for a in line[5:].split("|")]
        elif line.upper().startswith("SET "):
            block.append(("set", line))
        elif line.startswith("@") and any(c in line for c in "*?["):
            block.extend(("time", "@" + f) for f in sorted(glob.glob(line[1:])))
        else:
            block.append(("time", line))
    flush()
    return steps


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("list")
    ap.add_argument("--data", default="--tpch 10", help='data to generate, e.g. "--ssb 20"')
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--wall", action="store_true", help="also print the median wall ms")
    a = ap.parse_args()
    steps = expand(open(a.list))
    args = [a.binary, *a.data.split(), "--backend", "gpu", "--timing", "--format", "csv"]
    for step in steps:
        if step[0] == "set":
            args += ["-c", step[1]]
        else:
            flag, src = ("-f", step[1][1:]) if step[1].startswith("@") else ("-c", step[1])
            args += [flag, src] * a.runs
    out = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    times = [float(m) for m in re.findall(r"kernels ([0-9.]+) ms", out.stderr)]
    walls = [float(m) for m in re.findall(r"^Time: ([0-9.]+) ms \(wall", out.stderr, re.M)]
    timed = [s for s in steps if s[0] == "time"]
    if out.returncode != 0 or len(times) != len(timed) * a.runs or (a.wall and len(walls) != len(times)):
        sys.exit(f"gpusql failed or printed {len(times)} timings for {len(timed) * a.runs} runs:\n{out.stderr[-3000:]}")
    i = 0
    for step in steps:
        if step[0] == "set":
            print("--", step[1])
            continue
        runs = times[i * a.runs:(i + 1) * a.runs]
        wall = ""
        if a.wall:
            wall = f"  wall {statistics.median(walls[i * a.runs + 1:(i + 1) * a.runs]):9.3f} ms"
            wall += f"  first {walls[i * a.runs]:9.1f} ms"
        i += 1
        print(f"{statistics.median(runs[1:]):9.3f} ms{wall}  {step[1][:110]}")


if __name__ == "__main__":
    main()
