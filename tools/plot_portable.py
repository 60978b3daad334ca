#!/usr/bin/python3
"""Plot tools/bench_portable.py --csv output: each figure of the
portable (dispatched) build over the -march=native one, one point per
round (the two runs of a round ran one after the other), the median
marked.

usage: tools/plot_portable.py RESULTS.csv OUT.png
"""
import csv
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    vals = defaultdict(dict)  # (what, figure) -> {(build, round): value}
    builds = []
    with open(sys.argv[1]) as f:
        for row in csv.DictReader(f):
            if row["build"] not in builds:
                builds.append(row["build"])
            vals[(row["what"], row["figure"])][
                (row["build"], int(row["round"]))] = float(row["value"])
    a, b = builds[:2]
    keys = list(vals)
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(keys) + 1.5))
    for y, k in enumerate(keys):
        rounds = sorted(r for (bld, r) in vals[k] if bld == a)
        ratios = [vals[k][(a, r)] / vals[k][(b, r)] for r in rounds
                  if (b, r) in vals[k]]
        ax.plot(ratios, [y] * len(ratios), "o", color="tab:blue",
                alpha=0.5)
        ax.plot([statistics.median(ratios)], [y], "|", color="black",
                markersize=14, markeredgewidth=2)
    ax.axvline(1.0, color="gray", linestyle="--")
    ax.set_yticks(range(len(keys)))
    ax.set_yticklabels(["%s, %s" % k for k in keys])
    ax.invert_yaxis()
    ax.set_xlabel("%s / %s (each round; bar: median)" % (a, b))
    ax.set_title("Portable build (x86-64-v2 + clones) against -march=native")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100)


if __name__ == "__main__":
    main()
