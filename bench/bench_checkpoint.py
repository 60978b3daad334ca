#!/usr/bin/python3
"""What --state-interval costs a running cuckooflow (issue 28, item 7).

usage: /usr/bin/python3 bench/bench_checkpoint.py [--app BIN] [--flows N]
       [--seconds S] [--rounds R] [--workers W] [--csv FILE] [--plot FILE]

Writes a capture of N UDP flows (one packet each, raw bytes), then runs
cuckooflow on it replayed in a loop (net_pcap infinite_rx, tx to
/dev/null, --mode forward, W workers on CPUs of their own when the
machine has them) for S seconds in three settings, interleaved round by
round (the machine is shared: each round sees the same load):
  none      no --state-file;
  exit      --state-file (saved at exit only: the rate while running is
            that of "none");
  every1s   --state-file --state-interval 1: every second each worker
            copies its tables between two bursts, the saver thread
            writes and fsyncs the file.
Prints one row per setting and round: packets received, the rate
(cuckooflow's own summary line), and for every1s the saves made and the
last save's time (/cuckooflow/state); then the medians and the ratio to
"none". The state files go to a temporary directory (its file system is
the one fsync'd).
"""
import argparse
import csv
import os
import re
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(ROOT, "tests"), os.path.join(ROOT, "tools")]
from harness import query, wait_until  # noqa: E402


def write_capture(path, flows):
    """@flows UDP packets 198.18.x.y:1024+k -> 198.19.0.1:53, each its
    own 5-tuple, as a pcap (Ethernet, 60-byte frames)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        eth = bytes.fromhex("020000000002020000000001") + b"\x08\x00"
        for k in range(flows):
            src = struct.pack(">I", 0xc6120000 + (k >> 6))
            ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 46, 0, 0, 64, 17, 0,
                             src, socket.inet_aton("198.19.0.1"))
            udp = struct.pack(">HHHH", 1024 + (k & 63), 53, 26, 0)
            frame = eth + ip + udp + bytes(18)
            f.write(struct.pack("<IIII", k // 1000000, k % 1000000,
                                len(frame), len(frame)))
            f.write(frame)


def run_one(app, pcap, flows, workers, seconds, setting, tmp, n):
    prefix = "cfbenchcp%d_%d" % (os.getpid(), n)
    cpus = os.cpu_count() or 1
    lcores = ",".join(["0@0"] + ["%d@%d" % (w + 1, (w + 1) % cpus)
                                 for w in range(workers)])
    args = [app, "--lcores", lcores, "--no-pci", "--no-huge", "-m", "2048",
            "--log-level=lib.*:error", "--file-prefix=" + prefix,
            "--vdev=net_pcap0,rx_pcap=%s,%s,infinite_rx=1" % (
                pcap, ",".join(["tx_pcap=/dev/null"] * workers)),
            "--", "--mode", "forward", "--timeout-udp", "3600",
            # infinite_rx holds the whole capture in mbufs
            "--mbufs", str(2 * flows + 65536)]
    state = os.path.join(tmp, prefix + ".state")
    if setting != "none":
        args += ["--state-file", state]
    if setting == "every1s":
        args += ["--state-interval", "1"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    wait_until(lambda: query(prefix, "/cuckooflow/stats"), "telemetry",
               proc=proc)
    t0 = time.monotonic()
    st = None
    while time.monotonic() - t0 < seconds:
        time.sleep(0.2)  # a benchmark's clock, not a test's wait
    if setting == "every1s":
        st = query(prefix, "/cuckooflow/state")
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=600)
    m = re.search(r"ran ([\d.]+) s: (\d+) packets received, ([\d.]+) kpps",
                  out)
    if proc.returncode != 0 or m is None:
        sys.exit("cuckooflow (%s) failed, status %d:\n%s" % (
            setting, proc.returncode, out[-2000:]))
    if os.path.exists(state):
        os.unlink(state)
    shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)
    return {"setting": setting, "seconds": float(m.group(1)),
            "packets": int(m.group(2)), "kpps": float(m.group(3)),
            "saves": st["saves"] if st else 0,
            "last_save_ms": st["last_save_ms"] if st else 0,
            "last_flows": st["last_flows"] if st else 0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--app", default=os.path.join(ROOT, "build", "app",
                                                  "cuckooflow"))
    ap.add_argument("--flows", type=int, default=200000)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--csv")
    ap.add_argument("--plot")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench_checkpoint")
    rows = []
    try:
        pcap = os.path.join(tmp, "flows.pcap")
        write_capture(pcap, a.flows)
        settings = ("none", "exit", "every1s")
        n = 0
        print("%-8s %5s %9s %12s %9s %6s %12s %11s" % (
            "setting", "round", "seconds", "packets", "kpps", "saves",
            "last_save_ms", "last_flows"))
        for r in range(a.rounds):
            for s in settings:
                n += 1
                row = run_one(a.app, pcap, a.flows, a.workers, a.seconds, s, tmp, n)
                row["round"] = r
                rows.append(row)
                print("%-8s %5d %9.2f %12d %9.1f %6d %12d %11d" % (
                    s, r, row["seconds"], row["packets"], row["kpps"],
                    row["saves"], row["last_save_ms"], row["last_flows"]),
                    flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = {s: statistics.median(r["kpps"] for r in rows
                                if r["setting"] == s) for s in settings}
    print("\nmedian kpps (ratio to none): " + ", ".join(
        "%s %.1f (%.3f)" % (s, med[s], med[s] / med["none"])
        for s in settings))
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6, 3.5))
        for i, s in enumerate(settings):
            ks = [r["kpps"] for r in rows if r["setting"] == s]
            ax.scatter([i] * len(ks), ks, label=s)
            ax.hlines(med[s], i - 0.2, i + 0.2)
        ax.set_xticks(range(len(settings)), settings)
        ax.set_ylabel("kpps received (cuckooflow's summary)")
        ax.set_ylim(bottom=0)
        ax.set_title("--state-interval's cost: %d flows, %d worker(s), "
                     "%g s runs" % (a.flows, a.workers, a.seconds))
        fig.tight_layout()
        fig.savefig(a.plot, dpi=100)


if __name__ == "__main__":
    main()
