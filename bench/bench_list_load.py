#!/usr/bin/python3
"""How long a million-line list takes to read and build (hostile review
5): two cuckooflow-filter binaries side by side.

usage: /usr/bin/python3 bench/bench_list_load.py --old BIN --new BIN
       [--lines N] [--rounds R] [--csv FILE] [--plot FILE]

Writes four text lists of N lines to a temporary directory:
  addresses   N IPv4 addresses, all distinct;
  prefixes8   N random IPv4 prefixes of 8 lengths (/8 /12 /16 /20 /24
              /28 /30 /32, an eighth each): the /8s and /12s repeat, as
              in a merged feed;
  flows       N UDP flows;
  repeated    N lines repeating 128.0.0.0/1 and 10.0.0.0/8 (only the
              old binary's first 40,000 lines: its build is quadratic in
              them, hours for N; its time for N is not measured).
Then runs `cuckooflow-filter info LIST` (read, check, build, as a start
or a reload does) with each binary, interleaved round by round (old new
old new ...: the machine is shared, each pair sees the same load), and
prints one row per list: the wall time's median and range over the
rounds for each binary, and the ratio of the medians.
"""
import argparse
import csv
import os
import random
import statistics
import subprocess
import tempfile
import time

OLD_REPEATED_MAX = 40000


def write_lists(d, n):
    rnd = random.Random(1)
    lists = {}

    def put(name, lines):
        path = os.path.join(d, name + ".txt")
        with open(path, "w") as f:
            f.writelines(lines)
        lists[name] = path
    put("addresses", ("%d.%d.%d.%d\n" % (11 + i % 200, (i >> 16) & 255,
                                         (i >> 8) & 255, i & 255)
                      for i in range(n)))
    lens = [8, 12, 16, 20, 24, 28, 30, 32]

    def prefix(i):
        ln = lens[i % 8]
        a = rnd.getrandbits(32) & (0xffffffff << (32 - ln)) & 0xffffffff
        return "%d.%d.%d.%d/%d\n" % (a >> 24, (a >> 16) & 255,
                                     (a >> 8) & 255, a & 255, ln)
    put("prefixes8", (prefix(i) for i in range(n)))
    put("flows", ("udp 10.%d.%d.%d %d 192.0.2.%d 53\n" % (
        (i >> 16) & 255, (i >> 8) & 255, i & 255, 1024 + i % 60000, i % 250)
        for i in range(n)))
    put("repeated", ["128.0.0.0/1\n10.0.0.0/8\n"] * (n // 2))
    put("repeated_old", ["128.0.0.0/1\n10.0.0.0/8\n"] *
        (min(n, OLD_REPEATED_MAX) // 2))
    return lists


def timed(binary, path):
    t = time.perf_counter()
    p = subprocess.run([binary, "info", path], capture_output=True,
                       text=True)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError("%s info %s: %s" % (binary, path, p.stderr))
    return dt, p.stdout.splitlines()[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--lines", type=int, default=1000000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--csv")
    ap.add_argument("--plot")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_list_load") as d:
        lists = write_lists(d, a.lines)
        names = ["addresses", "prefixes8", "flows", "repeated"]
        times = {(nm, b): [] for nm in names for b in ("old", "new")}
        what = {}
        for r in range(a.rounds):
            for nm in names:
                for b, binary in (("old", a.old), ("new", a.new)):
                    path = lists["repeated_old" if nm == "repeated" and
                                 b == "old" else nm]
                    dt, line = timed(binary, path)
                    times[(nm, b)].append(dt)
                    what[(nm, b)] = line.split(": ", 1)[1]
        print("%-10s %9s %-22s %-22s %8s  %s" % (
            "list", "lines", "old s: median [range]",
            "new s: median [range]", "old/new", "built (new)"))
        for nm in names:
            o, n = times[(nm, "old")], times[(nm, "new")]
            mo, mn = statistics.median(o), statistics.median(n)
            lines_old = min(a.lines, OLD_REPEATED_MAX) \
                if nm == "repeated" else a.lines
            print("%-10s %9s %-22s %-22s %8s  %s" % (
                nm, a.lines if lines_old == a.lines else "%d (old %d)" % (
                    a.lines, lines_old),
                "%.3f [%.3f-%.3f]" % (mo, min(o), max(o)),
                "%.3f [%.3f-%.3f]" % (mn, min(n), max(n)),
                "%.1f" % (mo / mn) if lines_old == a.lines else "-",
                what[(nm, "new")]))
            rows.append([nm, a.lines, lines_old, mo, min(o), max(o), mn,
                         min(n), max(n)])
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["list", "lines", "old_lines", "old_median_s",
                        "old_min_s", "old_max_s", "new_median_s",
                        "new_min_s", "new_max_s"])
            w.writerows(rows)
    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 4))
        x = range(len(rows))
        for k, (label, med, lo, hi) in enumerate(
                (("old", 3, 4, 5), ("new", 6, 7, 8))):
            ax.bar([i + (k - 0.5) * 0.38 for i in x],
                   [r[med] for r in rows], 0.38, label=label,
                   yerr=[[r[med] - r[lo] for r in rows],
                         [r[hi] - r[med] for r in rows]], capsize=3)
        ax.set_xticks(list(x))
        ax.set_xticklabels(["%s\n(old: %d lines)" % (r[0], r[2])
                            if r[2] != r[1] else r[0] for r in rows])
        ax.set_yscale("log")
        ax.set_ylabel("cuckooflow-filter info, s (median, range)")
        ax.set_title("Reading and building a list of %d lines" % a.lines)
        ax.legend()
        fig.tight_layout()
        fig.savefig(a.plot, dpi=100)


if __name__ == "__main__":
    main()
