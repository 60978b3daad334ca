#!/usr/bin/python3
"""Plot bench_pipeline --csv output: Mpps per lcore against the number of
flows, one line per variant (ceiling, probe, cuckoo, rte_hash, cuckoo_il; forward, firewall,
fw_mirror) and lcore count,
one panel per flow distribution.

usage: tools/plot_pipeline.py RESULTS.csv OUT.png
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"ceiling": "gray", "probe": "black", "cuckoo": "C0", "rte_hash": "C3", "cuckoo_il": "C9",
          "forward": "C2", "firewall": "C1", "fw_mirror": "C4"}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    lines = defaultdict(lambda: defaultdict(list))
    with open(sys.argv[1]) as f:
        for row in csv.DictReader(f):
            key = (row["variant"], int(row["lcores"]))
            lines[row["dist"]][key].append((int(row["flows"]),
                                            float(row["mpps_per_lcore"])))
    dists = sorted(lines)
    if not dists:
        sys.exit("no rows in " + sys.argv[1])
    fig, axes = plt.subplots(1, len(dists), figsize=(6 * len(dists), 4.5),
                             squeeze=False)
    for ax, dist in zip(axes[0], dists):
        for (variant, lcores), points in sorted(lines[dist].items()):
            points.sort()
            ax.plot([p[0] for p in points], [p[1] for p in points],
                    "o-" if lcores == 1 else "s--",
                    color=COLORS.get(variant, "black"),
                    label="%s, %d lcore%s" % (variant, lcores,
                                              "s" if lcores > 1 else ""))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title("%s flows" % dist)
        ax.set_xlabel("flows")
        ax.set_ylabel("Mpps per lcore")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
