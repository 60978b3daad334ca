#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Plot bench_blocklist's ns a packet: bars for each list and target.

usage: tools/plot_blocklist.py [-c] [-t TARGET,...] OUT.png LABEL=FILE[@TEXT] [...]

Each FILE holds one or more runs of bench_blocklist (its table rows,
'| list | entries | lens | cuckoo | burst | rte_hash | rte_fib | ...',
the targets' columns found by the header's 'ns/pkt' names, rte_fib 1B's
among them where the run has it);
for each list and target the median of the runs' medians is the bar,
the lowest and highest round of the runs its range. "LABEL: target"
names a bar; a FILE's target without figures ('-') is left out. With
@TEXT, only the rows under a '## ' line holding TEXT are read (one
side of an A/B file). -t plots only the targets named (of cuckoo,
cuckoo bursts, rte_hash, rte_fib, rte_fib 1B). -c plots the CPU time
lines below the table ('- LIST: ... CPU ns/pkt burst 8.0 (7.7-8.5) ...')
instead of the table's wall-clock figures.
"""

import re
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TARGETS = ["cuckoo", "cuckoo bursts", "rte_hash", "rte_fib", "rte_fib 1B"]
HEADER = {"cuckoo ns/pkt": "cuckoo", "cuckoo burst ns/pkt": "cuckoo bursts",
          "rte_hash ns/pkt": "rte_hash", "rte_fib ns/pkt": "rte_fib",
          "rte_fib 1B ns/pkt": "rte_fib 1B"}
CELL = re.compile(r"([0-9.]+) \(([0-9.]+)-([0-9.]+)\)")
CPU = re.compile(r"(cuckoo|burst|hash|fib1|fib) ([0-9.]+) \(([0-9.]+)-([0-9.]+)\)")
CPU_NAMES = {"cuckoo": "cuckoo", "burst": "cuckoo bursts", "hash": "rte_hash",
             "fib": "rte_fib", "fib1": "rte_fib 1B"}


def read_cpu(spec):
    """{list: {target: [(median, lo, hi), ...]}} of the CPU time lines."""
    path, _, want = spec.partition("@")
    out = {}
    keep = not want
    for line in open(path, encoding="utf-8"):
        if line.startswith("## "):
            keep = not want or want in line
        if not keep or not line.startswith("- ") or "CPU ns/pkt" not in line:
            continue
        name = line[2:].split(":", 1)[0]
        for m in CPU.finditer(line.split("CPU ns/pkt", 1)[1]):
            out.setdefault(name, {}).setdefault(CPU_NAMES[m.group(1)],
                                                []).append(
                tuple(float(x) for x in m.groups()[1:]))
    return out


def read(spec):
    """{list: {target: [(median, lo, hi), ...]}} of the file's rows."""
    path, _, want = spec.partition("@")
    out = {}
    keep = not want
    cols_of = list(zip(TARGETS[:4], range(3, 7)))  # before the header
    for line in open(path, encoding="utf-8"):
        if line.startswith("## "):
            keep = not want or want in line
        if not keep:
            continue
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if cols and cols[0] == "list":
            cols_of = [(HEADER[c], i) for i, c in enumerate(cols)
                       if c in HEADER]
            continue
        if len(cols) < 7 or cols[0] == "" or cols[0][0] == "-":
            continue
        for t, i in cols_of:
            m = CELL.fullmatch(cols[i])
            if m:
                out.setdefault(cols[0], {}).setdefault(t, []).append(
                    tuple(float(x) for x in m.groups()))
    return out


def main(argv):
    only, reader = TARGETS, read
    if len(argv) > 1 and argv[1] == "-c":
        reader = read_cpu
        argv = argv[:1] + argv[2:]
    if len(argv) > 2 and argv[1] == "-t":
        only = argv[2].split(",")
        if any(t not in TARGETS for t in only):
            sys.exit(__doc__)
        argv = argv[:1] + argv[3:]
    if len(argv) < 3:
        sys.exit(__doc__)
    runs = [(a.split("=", 1)[0], reader(a.split("=", 1)[1]))
            for a in argv[2:]]
    lists = []
    for _, data in runs:
        lists += [name for name in data if name not in lists]
    bars = []  # (list, label, median, lo, hi)
    for name in lists:
        for label, data in runs:
            for t in only:
                v = data.get(name, {}).get(t)
                if not v:
                    continue
                bars.append((name, f"{label}: {t}",
                             statistics.median(x[0] for x in v),
                             min(x[1] for x in v), max(x[2] for x in v)))
    labels = sorted({b[1] for b in bars}, key=[b[1] for b in bars].index)
    fig, axes = plt.subplots(1, len(lists), figsize=(5 * len(lists), 4.5),
                             squeeze=False)
    for ax, name in zip(axes[0], lists):
        mine = [b for b in bars if b[0] == name]
        xs = range(len(mine))
        ax.bar(xs, [b[2] for b in mine],
               yerr=[[b[2] - b[3] for b in mine], [b[4] - b[2] for b in mine]],
               color=[f"C{labels.index(b[1]) % 10}" for b in mine],
               capsize=3)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([b[1] for b in mine], rotation=60, ha="right",
                           fontsize=7)
        ax.set_title(name)
        ax.set_ylabel(("CPU " if reader is read_cpu else "") +
                      "ns a packet (median, range of rounds)")
        ax.set_yscale("log")
    fig.tight_layout()
    fig.savefig(argv[1], dpi=110)


if __name__ == "__main__":
    main(sys.argv)
