#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The portable build against -march=native: bench_pipeline and
bench_filter of two build trees, run in turns (A, B, A, B, ...) so that
the machine's drift falls on both, each run under flock /tmp/bench.lock
(other benchmarks on the machine wait, and make this one wait).
Prints the medians of each figure and their ratio A/B as a Markdown
table; --csv also writes every run's figure (tools/plot_portable.py
plots it).

usage: tools/bench_portable.py [--rounds N] [--flows LIST] [--sizes LIST]
           [--csv FILE] BUILD_A BUILD_B

  BUILD_A, BUILD_B  build directories (e.g. build, the default
                    dispatched build, and build-native, configured with
                    -Dmarch=native -Ddispatch=false)
  --rounds N        turns of each (default 5)
  --flows LIST      bench_pipeline's --flows (default 1000,1000000,10000000)
  --sizes LIST      bench_filter's --sizes (default 16,22)
"""

import argparse
import csv
import os
import re
import statistics
import subprocess
import sys

LOCK = "/tmp/bench.lock"


def run(cmd):
    p = subprocess.run(["flock", LOCK] + cmd, capture_output=True,
                       text=True)
    if p.returncode != 0:
        sys.exit("%s: exit %d\n%s%s" % (" ".join(cmd), p.returncode,
                                         p.stdout[-2000:], p.stderr[-2000:]))
    return p.stdout


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def pipeline(build, flows):
    """{(flows, 'Mpps'): value} of one bench_pipeline run."""
    out = run([os.path.join(build, "bench", "bench_pipeline"), "--no-huge",
               "-m", "3072", "-l", "0", "--no-pci",
               "--log-level=lib.*:error",
               "--file-prefix=bench_portable%d" % os.getpid(), "--",
               "--flows", flows, "--lcores", "1", "--variants", "cuckoo",
               "--seconds", "2"])
    got = {}
    for line in out.splitlines():
        c = cells(line)
        if len(c) > 5 and c[0].isdigit() and c[3] == "cuckoo":
            got[("pipeline %s flows" % c[0], "Mpps")] = float(c[4])
    return got


def filt(build, sizes):
    """{(2^L name, figure): M ops/s} of one bench_filter run: inserts
    and lookups at 50% positive, per key and bulk."""
    out = run([os.path.join(build, "bench", "bench_filter"), "--sizes",
               sizes, "--reps", "1", "--queries", "2000000", "--table3",
               "10"])
    got, log2 = {}, None
    for line in out.splitlines():
        m = re.match(r"## 2\^(\d+) slots: side by side", line)
        if m:
            log2 = m.group(1)
            continue
        c = cells(line)
        if log2 is None or len(c) < 8 or c[0] not in ("CF12", "ss-CF13"):
            continue
        single, bulk = c[6].split(), c[7].split()
        name = "filter %s 2^%s" % (c[0], log2)
        got[(name, "insert")] = float(c[3])
        got[(name, "lookup 50%")] = float(single[2])
        got[(name, "bulk32 50%")] = float(bulk[2])
    return got


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--flows", default="1000,1000000,10000000")
    ap.add_argument("--sizes", default="16,22")
    ap.add_argument("--csv")
    ap.add_argument("a")
    ap.add_argument("b")
    o = ap.parse_args()
    runs = {o.a: [], o.b: []}
    for r in range(o.rounds):
        for build in (o.a, o.b):
            got = pipeline(build, o.flows)
            got.update(filt(build, o.sizes))
            runs[build].append(got)
            print("# round %d %s: %s" % (r + 1, build, " ".join(
                "%.2f" % v for v in got.values())), file=sys.stderr)
    keys = list(runs[o.a][0])
    print("| what | figure | %s (median) | %s (median) | ratio | ratio "
          "range |" % (o.a, o.b))
    print("|---|---|---:|---:|---:|---:|")
    for k in keys:
        va = [g[k] for g in runs[o.a] if k in g]
        vb = [g[k] for g in runs[o.b] if k in g]
        ma, mb = statistics.median(va), statistics.median(vb)
        # each round's ratio: the pair that ran one after the other
        pair = sorted(a / b for a, b in zip(va, vb))
        print("| %s | %s | %.2f | %.2f | %.3f | %.2f-%.2f |" % (
            k[0], k[1], ma, mb, ma / mb, pair[0], pair[-1]))
    if o.csv:
        with open(o.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["build", "round", "what", "figure", "value"])
            for build in (o.a, o.b):
                for r, got in enumerate(runs[build]):
                    for k, v in got.items():
                        w.writerow([build, r + 1, k[0], k[1], v])


if __name__ == "__main__":
    main()
