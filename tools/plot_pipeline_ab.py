#!/usr/bin/python3
"""Plot an interleaved before/after bench_pipeline run (issue 29, round 2):
the lanes' CPU cycles a packet (cpu_cycles_per_pkt) of each variant, before
and after, by number of flows: the median of the rounds as a bar, their
range as an error bar, and an optional target line.

Input: one CSV of bench_pipeline --csv rows with two more leading columns,
build (before, after) and round. The variants are those of the rows, in
their order (cuckoo and rte_hash, or forward, firewall and fw_mirror).

usage: tools/plot_pipeline_ab.py AB.csv OUT.png [TARGET_CYCLES]
"""
import csv
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {("cuckoo", "before"): "#9ecae1", ("cuckoo", "after"): "C0",
          ("rte_hash", "before"): "#fcae91", ("rte_hash", "after"): "C3",
          ("forward", "before"): "#9ecae1", ("forward", "after"): "C0",
          ("firewall", "before"): "#fcae91", ("firewall", "after"): "C3",
          ("fw_mirror", "before"): "#c7e9c0", ("fw_mirror", "after"): "C2"}


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    cycles = defaultdict(list)
    variants = []
    with open(sys.argv[1]) as f:
        for row in csv.DictReader(f):
            if row["variant"] not in variants:
                variants.append(row["variant"])
            cycles[(int(row["flows"]), row["variant"], row["build"])].append(
                float(row["cpu_cycles_per_pkt"]))
    if not cycles:
        sys.exit("no rows in " + sys.argv[1])
    flows = sorted({k[0] for k in cycles})
    bars = [(v, b) for v in variants for b in ("before", "after")
            if any((n, v, b) in cycles for n in flows)]
    width = 0.8 / len(bars)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for i, (variant, build) in enumerate(bars):
        xs, med, lo, hi = [], [], [], []
        for x, n in enumerate(flows):
            vals = cycles.get((n, variant, build))
            if not vals:
                continue
            m = statistics.median(vals)
            xs.append(x + (i - (len(bars) - 1) / 2) * width)
            med.append(m)
            lo.append(m - min(vals))
            hi.append(max(vals) - m)
        ax.bar(xs, med, width, yerr=[lo, hi], capsize=3,
               color=COLORS.get((variant, build), None),
               label=f"{variant}, {build}")
        for x, m in zip(xs, med):
            ax.text(x, m + 3, f"{m:.0f}", ha="center", fontsize=7)
    if len(sys.argv) == 4:
        ax.axhline(float(sys.argv[3]), color="black", linestyle=":",
                   label=f"target at 1 K flows ({sys.argv[3]})")
    ax.set_xticks(range(len(flows)))
    ax.set_xticklabels([f"{n:,}" for n in flows])
    ax.set_xlabel("flows")
    ax.set_ylabel("CPU cycles a packet (median, range)")
    ax.set_title("bench_pipeline, one lcore: before and after, interleaved")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
