#!/usr/bin/python3
"""Plot issue 29's figures against their targets: for each figure, the
ratio before the change and after it (each from a run recorded in
docs/benchmarks.md, "Speed where it was behind"), and the target.

The CSV has a row a figure: figure, before, after, target, better
(higher or lower: which side of the target is met).

usage: tools/plot_speed.py SPEED.csv OUT.png
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        rows = list(csv.DictReader(f))
    fig, ax = plt.subplots(figsize=(10, 0.42 * len(rows) + 1.6))
    for y, r in enumerate(rows):
        if r["before"]:
            ax.plot([float(r["before"])], [y], "o", color="tab:gray",
                    label="before" if y == 0 else None)
        after = float(r["after"])
        target = float(r["target"])
        met = after >= target if r["better"] == "higher" else \
            after <= target
        ax.plot([after], [y], "o", color="tab:green" if met else "tab:red",
                label=None)
        ax.plot([target], [y], "|", color="black", markersize=14,
                markeredgewidth=2, label="target" if y == 0 else None)
    ax.plot([], [], "o", color="tab:green", label="after, target met")
    ax.plot([], [], "o", color="tab:red", label="after, missed")
    ax.set_xscale("log")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r["figure"] for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("ratio (log scale; see each figure's label)")
    ax.set_title("Issue 29: before, after, target (one loaded 2-vCPU "
                 "Xeon VM)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100)


if __name__ == "__main__":
    main()
