#!/usr/bin/python3
"""The replay clock end to end (issue 24): frames that do not parse
moving the time, against an ordered replay computed here by a model of the documented
contract (scapy and Python only), not by the tracker.

usage: /usr/bin/python3 -m pytest tests/e2e/test_clock.py
           [--cuckooflow BIN] [-k EXPRESSION]
Each run has its own --file-prefix and files under pytest's tmp_path.
"""
import itertools
import json
import os
import subprocess

import pytest

from harness import no_crash

T0 = 1700000000.0
DAY = 86400.0
UDP_TIMEOUT = 60.0
# Test frames' MACs, given: scapy would ARP for a missing destination.
MAC_A, MAC_B = "02:00:00:00:00:01", "02:00:00:00:00:02"
# 1 and 2 workers on oversubscribed lcores (2 cores).
LCORES = {1: "0@0,1@1", 2: "0@0,1@1,2@1"}
SEEDS = (1, 2, 3, 4, 5, 6, 7, 8)
_runs = itertools.count()


def udp(src, sport, dst="192.0.2.1"):
    from scapy.all import Ether, IP, UDP, Raw
    return Ether(src=MAC_A, dst=MAC_B) / IP(src=src, dst=dst) / \
        UDP(sport=sport, dport=53) / Raw(b"q" * 8)


def arp():
    from scapy.all import Ether, ARP
    return Ether(src=MAC_A, dst="ff:ff:ff:ff:ff:ff") / ARP(
        psrc="10.9.9.9", pdst="10.9.9.1")


def bad_ip():
    """An IPv4 ethertype whose header says version 5: malformed."""
    from scapy.all import Ether, Raw
    return Ether(src=MAC_A, dst=MAC_B, type=0x0800) / Raw(
        b"\x55" + bytes(39))


def write_pcap(path, frames):
    """@frames: (time, scapy frame), written in that order."""
    from scapy.all import wrpcap
    out = []
    for t, f in frames:
        f = f.copy()
        f.time = t
        out.append(f)
    wrpcap(str(path), out, linktype=1)
    return str(path)


def flow_of(frame):
    """A UDP frame's flow (its canonical 5-tuple), else None."""
    from scapy.all import IP, UDP
    if IP not in frame or UDP not in frame:
        return None
    ends = sorted([(frame[IP].src, frame[UDP].sport),
                   (frame[IP].dst, frame[UDP].dport)])
    return tuple(ends)


def contract_truth(stream, timeout=UDP_TIMEOUT, margin=1.0):
    """The counters of one stream of frames (time, frame) replayed in
    order under docs/design.md's contract: every frame's time, tracked
    or not, moves the clock, and an earlier time counts as the latest
    seen; a UDP flow is seen while its idle time (clock less its last
    packet) is within the timeout, else expired and new again; at the
    end, as of the latest time seen, the flows idle past it are expired,
    the rest active. Flows idle within @margin of the timeout are
    refused: the tracker's ticks (16.8 ms, 268 ms with 16-bit values)
    make those undecided."""
    clock, last = 0.0, {}
    want = dict.fromkeys(("packets", "non_ip", "malformed_total",
                          "flows_new", "flows_seen", "flows_expired",
                          "active"), 0)

    def idle(f):
        gap = clock - last[f]
        assert abs(gap - timeout) > margin, "flow idle %.3f s" % gap
        return gap > timeout

    for t, frame in stream:
        clock = max(clock, t)
        want["packets"] += 1
        f = flow_of(frame)
        if f is None:  # here: an IPv4 ethertype is bad_ip()'s
            want["malformed_total" if frame.type == 0x0800 else
                 "non_ip"] += 1
            continue
        if f in last and not idle(f):
            want["flows_seen"] += 1
        else:
            want["flows_expired"] += f in last
            want["flows_new"] += 1
        last[f] = clock
    for f in last:
        if idle(f):
            want["flows_expired"] += 1
        else:
            want["active"] += 1
    return want


def run(tmp_path, nb, queues, args=()):
    """cuckooflow with @nb workers on one net_pcap port, a queue per file
    of @queues, replaying on the packets' clock to the end; returns the
    stats JSON's totals."""
    n = next(_runs)
    out = tmp_path / ("stats%d.json" % n)
    vdev = "net_pcap0,%s,tx_pcap=%s" % (
        ",".join("rx_pcap=" + q for q in queues), os.devnull)
    p = subprocess.run(
        [APP, "--lcores", LCORES[nb], "--no-pci", "--no-huge", "-m", "512",
         "--log-level=lib.*:error",
         "--file-prefix=cfclk%d_%d" % (os.getpid(), n), "--vdev", vdev,
         "--", "--clock", "pkt", "--exit-on-eof", "--fp-bits", "32",
         "--timeout-udp", "%d" % UDP_TIMEOUT, "--stats-json", str(out)] +
        list(args), capture_output=True, text=True, timeout=120)
    log = p.stdout + p.stderr
    no_crash(p.returncode, log=log)
    assert p.returncode == 0 and out.exists(), "rc %d: %s" % (
        p.returncode, log.strip()[-400:])
    with open(out) as f:
        return json.load(f)["total"]


APP = None


@pytest.fixture(scope="module", autouse=True)
def _app(cuckooflow):
    global APP
    APP = cuckooflow


def differences(got, want):
    return {k: (got[k], v) for k, v in want.items() if got[k] != v}


# ------------------------------------- frames that do not parse, timed

KINDS = {"non-IP": arp, "malformed": bad_ip}


@pytest.mark.parametrize("nb", (1, 2))
@pytest.mark.parametrize("kind", KINDS)
def test_unparsed_frame_moves_time(tmp_path, kind, nb):
    """UDP flow A at t, a frame that does not parse at t + 1000 s, UDP
    flow B at t + 10 s: B counts at t + 1000 s, the latest time seen, so
    at the end A has been idle 1000 s and B none: 1 expired, 1 active
    (was 2 expired, 0 active: the tracker's clock and the end-of-run
    sweep took different times). Two workers: a worker reading the
    queue, flows handed to their owner, 3 hash seeds."""
    frames = [(T0, udp("10.0.0.1", 1000)),
              (T0 + 1000, KINDS[kind]()),
              (T0 + 10, udp("10.0.0.2", 1001))]
    want = contract_truth(frames)
    assert want["flows_expired"] == 1 and want["active"] == 1, want
    cap = write_pcap(tmp_path / "unparsed.pcap", frames)
    bad = []
    for seed in SEEDS[:3] if nb == 2 else SEEDS[:1]:
        got = run(tmp_path, nb, [cap], ["--hash-seed", str(seed)])
        diff = differences(got, want)
        if diff:
            bad.append("seed %d: %s" % (seed, diff))
    assert not bad, bad
