#!/usr/bin/python3
"""Plot bench_pipeline --handoff --csv output: Mpps per worker against the
share of packets owned by the other worker, one line per run (several
CSV files: the spread), the no-handoff rate as a star at the left and the
target (70% of it) as a dashed line; beside it, cycles per received
packet against the share.

usage: tools/plot_handoff.py OUT.png RESULTS.csv [RESULTS.csv ...]
"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    # (flows, dist) -> list of runs, each {"off": row, share: row}
    runs = defaultdict(list)
    for path in sys.argv[2:]:
        per = defaultdict(dict)
        with open(path) as f:
            for row in csv.DictReader(f):
                key = (int(row["flows"]), row["dist"])
                share = float(row["share"]) if row["handoff"] == "1" \
                    else "off"
                per[key][share] = row
        for key, rows in per.items():
            runs[key].append((path, rows))
    if not runs:
        sys.exit("no rows")
    fig, (ax_m, ax_c) = plt.subplots(1, 2, figsize=(11, 4.5))
    ci = 0
    for key, rlist in sorted(runs.items()):
        for ri, (path, rows) in enumerate(rlist):
            color = "C%d" % ci
            ci += 1
            label = "%s flows, %s, run %d" % ("{:,}".format(key[0]),
                                              key[1], ri + 1)
            shares = sorted(s for s in rows if s != "off")
            mpps = [float(rows[s]["mpps_per_worker"]) for s in shares]
            cyc = [float(rows[s]["cycles_per_pkt"]) for s in shares]
            pct = [100 * s for s in shares]
            ax_m.plot(pct, mpps, "o-", color=color, alpha=0.8, label=label)
            ax_c.plot(pct, cyc, "o-", color=color, alpha=0.8, label=label)
            if "off" in rows:
                off = float(rows["off"]["mpps_per_worker"])
                ax_m.plot([-2], [off], "*", color=color, ms=10,
                          label="no handoff" if ci == 1 else None)
                ax_m.axhline(0.7 * off, color=color, ls="--", lw=1,
                             label="70% of no handoff (target)"
                             if ci == 1 else None)
    ax_m.set_xlabel("packets owned by the other worker (%)")
    ax_m.set_ylabel("Mpps per worker")
    ax_m.set_ylim(bottom=0)
    ax_m.grid(True, alpha=0.3)
    ax_m.legend(fontsize=8)
    ax_m.set_title("rate per worker, clean turns (star: no handoff)")
    ax_c.set_xlabel("packets owned by the other worker (%)")
    ax_c.set_ylabel("cycles per received packet")
    ax_c.set_ylim(bottom=0)
    ax_c.grid(True, alpha=0.3)
    ax_c.legend(fontsize=8)
    ax_c.set_title("cycles per received packet, clean turns")
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=110)


if __name__ == "__main__":
    main()
