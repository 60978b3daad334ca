#!/usr/bin/python3
"""Plot bench_pipeline's events mode (--csv): each variant's rate over
cuckoo's (no events, no sketch), the median of the turns with their
quartiles, by the lane's CPU time (left) and by wall time (right), one bar
group per new-flow share. Several CSV files (runs) give a bar each.

usage: tools/plot_events.py OUT.png RESULTS.csv [RESULTS.csv ...]
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ORDER = ["main_spin", "top", "ev_ring", "ev_mref", "ev_json", "ev_ipfix",
         "ev_pcapng", "ev_all", "ev_all_top", "rec_ring", "rec_json",
         "rec_ipfix"]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    runs = []
    for path in sys.argv[2:]:
        with open(path) as f:
            runs.append([r for r in csv.DictReader(f)
                         if r["variant"] != "cuckoo"])
    shares = sorted({float(r["new_share_asked"]) for run in runs
                     for r in run})
    variants = [v for v in ORDER
                if any(r["variant"] == v for run in runs for r in run)]
    if not variants:
        sys.exit("no events rows in " + " ".join(sys.argv[2:]))
    records = any(v.startswith("rec_") for v in variants)
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), sharey=True)
    for ax, (col, title) in zip(axes, (
            ("turns_cpu", "by the lane's CPU time"),
            ("turns", "by wall time"))):
        group = len(shares) * len(runs) + 1
        for si, share in enumerate(shares):
            for ri, run in enumerate(runs):
                xs, ys, lo, hi = [], [], [], []
                for vi, v in enumerate(variants):
                    row = [r for r in run if r["variant"] == v and
                           float(r["new_share_asked"]) == share]
                    if not row:
                        continue
                    m = float(row[0][col + "_median"])
                    xs.append(vi * group + si * len(runs) + ri)
                    ys.append(m)
                    lo.append(m - float(row[0][col + "_q1"]))
                    hi.append(float(row[0][col + "_q3"]) - m)
                ax.bar(xs, ys, yerr=[lo, hi], capsize=2,
                       color="C%d" % si, alpha=1 - 0.25 * ri,
                       label="%.0f%% new flows%s" % (
                           100 * share,
                           ", run %d" % (ri + 1) if len(runs) > 1 else ""))
        if records:
            ax.axhline(0.90, color="red", linestyle="--", linewidth=1,
                       label="records' target: 0.90")
        else:
            ax.axhline(0.95, color="red", linestyle="--", linewidth=1,
                       label="target at 1%: 0.95")
        ax.axhline(1.0, color="gray", linewidth=0.8)
        ax.set_xticks([vi * group + (group - 2) / 2
                       for vi in range(len(variants))])
        ax.set_xticklabels(variants, rotation=30)
        ax.set_ylim(0.5, 1.1)
        ax.set_title("rate over cuckoo's, " + title)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].set_ylabel("median of turns (quartiles)")
    axes[1].legend(fontsize=7, loc="lower left")
    flows = int(runs[0][0]["flows"])
    fig.suptitle("%s, %s flows, one lane (bench_pipeline)" % (
        "Flow records" if records else "Flow events and top sources",
        "%d M" % (flows // 10**6) if flows >= 10**6 else str(flows)))
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=100)


if __name__ == "__main__":
    main()
