#!/usr/bin/python3
"""Plot bench_filter --csv output: lookup throughput against the fraction
of positive queries, one panel per table size (like the paper's Figure 5),
with the memory probe ceiling measured in the same run.

usage: tools/plot_bench.py RESULTS.csv OUT.png
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    side = defaultdict(lambda: defaultdict(list))
    ceiling = {}
    with open(sys.argv[1]) as f:
        for row in csv.reader(f):
            if row[0] == "side":
                log2, target, mix = int(row[1]), row[2], int(row[3])
                side[log2][target].append((mix, float(row[4]),
                                           float(row[5])))
            elif row[0] == "ceiling":
                ceiling[int(row[1])] = float(row[3])
    sizes = sorted(side)
    if not sizes:
        sys.exit("no side-by-side rows in " + sys.argv[1])
    fig, axes = plt.subplots(1, len(sizes), figsize=(5 * len(sizes), 4.2),
                             squeeze=False)
    for ax, log2 in zip(axes[0], sizes):
        for i, (target, points) in enumerate(sorted(side[log2].items())):
            points.sort()
            mixes = [p[0] for p in points]
            color = "C%d" % i
            ax.plot(mixes, [p[2] for p in points], "o-", color=color,
                    label=target + " bulk32")
            ax.plot(mixes, [p[1] for p in points], "x--", color=color,
                    label=target + " single")
        if log2 in ceiling:
            ax.axhline(ceiling[log2], color="gray", linestyle=":",
                       label="probe ceiling")
        ax.set_title("2^%d slots" % log2)
        ax.set_xlabel("positive queries (%)")
        ax.set_ylabel("lookups (M/s)")
        ax.set_xticks([0, 25, 50, 75, 100])
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
