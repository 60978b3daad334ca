#!/usr/bin/python3
"""Plot bench_pipeline's forward-mode runs with --icmp-errors and --frags
(docs/benchmarks.md, issue 26): interleaved rounds of the configurations,
one CSV each, named PREFIX.CONFIG.rROUND.csv. Prints the table of
medians (Mpps of forward and firewall, and firewall / forward in each
run) and plots each run's rates by configuration.

    tools/plot_fw_mix.py docs/bench/bench_icmp_frag_1m out.png
"""
import csv
import glob
import re
import statistics
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(prefix):
    """{(config, flows): [(forward, firewall, round), ...]}."""
    runs = {}
    for path in sorted(glob.glob(prefix + ".*.r*.csv")):
        m = re.match(re.escape(prefix) + r"\.(\w+)\.r(\d+)\.csv$", path)
        if not m:
            continue
        rates = {}
        with open(path) as f:
            for row in csv.DictReader(f):
                rates[(int(row["flows"]), row["variant"])] = \
                    float(row["mpps_per_lcore"])
        for flows in sorted({k[0] for k in rates}):
            runs.setdefault((m.group(1), flows), []).append(
                (rates[(flows, "forward")], rates[(flows, "firewall")],
                 int(m.group(2))))
    return runs


def main():
    prefix, png = sys.argv[1], sys.argv[2]
    runs = load(prefix)
    print("| config | flows | runs | forward Mpps | firewall Mpps "
          "| firewall / forward: median (min-max) | forward / base's "
          "forward, same round: median | firewall / base's firewall, "
          "same round: median |")
    print("|---|---:|---:|---:|---:|---|---:|---:|")
    for (config, flows), v in sorted(runs.items()):
        fwd = [a for a, _, _ in v]
        fw = [b for _, b, _ in v]
        ratio = [b / a for a, b, _ in v]
        base = {r: (a, b) for a, b, r in runs.get(("base", flows), [])}
        of_base = [[(a, b)[j] / base[r][j] for a, b, r in v if r in base]
                   for j in (0, 1)]
        print("| %s | %d | %d | %.2f | %.2f | %.3f (%.3f-%.3f) | %s | %s |"
              % (config, flows, len(v), statistics.median(fwd),
                 statistics.median(fw), statistics.median(ratio),
                 min(ratio), max(ratio),
                 *("%.3f" % statistics.median(x) if x else "-"
                   for x in of_base)))
    fig, ax = plt.subplots(figsize=(8, 4.5))
    keys = sorted(runs)
    for i, key in enumerate(keys):
        for j, name in enumerate(("forward", "firewall")):
            ys = [r[j] for r in runs[key]]
            ax.scatter([i + (j - 0.5) * 0.3] * len(ys), ys,
                       color="C%d" % j, label=name if i == 0 else None,
                       alpha=0.7)
            ax.hlines(statistics.median(ys), i + (j - 0.5) * 0.3 - 0.12,
                      i + (j - 0.5) * 0.3 + 0.12, color="C%d" % j)
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(["%s\n%g M flows" % (c, f / 1e6) for c, f in keys])
    ax.set_ylabel("Mpps, one lcore (each run; bar: median)")
    ax.set_ylim(bottom=0)
    ax.legend()
    ax.set_title("bench_pipeline forward mode: base, 10% ICMP errors, "
                 "1% fragmented")
    fig.tight_layout()
    fig.savefig(png, dpi=100)


if __name__ == "__main__":
    main()
