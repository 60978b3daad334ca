#!/usr/bin/python3
"""The replay clock end to end (issue 24): captures split over queues
whose times are far apart, and frames that do not parse moving the time,
against an ordered replay computed here by a model of the documented
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

from harness import NO_HUGE_MB
from harness import DEADLINE, no_crash, timed_pcap

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
    return timed_pcap(path, frames)


def flow_of(frame):
    """A UDP frame's flow (its canonical 5-tuple), else None."""
    from scapy.all import IP, UDP
    if IP not in frame or UDP not in frame:
        return None
    ends = sorted([(frame[IP].src, frame[UDP].sport),
                   (frame[IP].dst, frame[UDP].dport)])
    return tuple(ends)


def contract_truth(stream, timeout=UDP_TIMEOUT, margin=1.0, opened=None):
    """The counters of one stream of frames (time, frame) replayed in
    order under docs/design.md's contract: every frame's time, tracked
    or not, moves the clock, and an earlier time counts as the latest
    seen; a UDP flow is seen while its idle time (clock less its last
    packet) is within the timeout, else expired and new again; at the
    end, as of the latest time seen, the flows idle past it are expired,
    the rest active. Flows idle within @margin of the timeout are
    refused: the tracker's ticks (16.8 ms, 268 ms with 16-bit values)
    make those undecided. The frames that open a flow (new) are
    appended to @opened if given."""
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
            if opened is not None:
                opened.append(bytes(frame))
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
        [APP, "--lcores", LCORES[nb], "--no-pci", "--no-huge", "-m", NO_HUGE_MB,
         "--log-level=lib.*:error",
         "--file-prefix=cfclk%d_%d" % (os.getpid(), n), "--vdev", vdev,
         "--", "--clock", "pkt", "--exit-on-eof", "--fp-bits", "32",
         "--timeout-udp", "%d" % UDP_TIMEOUT, "--stats-json", str(out)] +
        list(args), capture_output=True, text=True, timeout=DEADLINE)
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


# ------------------------------------------ streams far apart in time

# (value bits, the gap): over a quarter of the tick range, a leap of the
# clock: 26 days with 32-bit values; 9.2 minutes with 16-bit ones and
# the default timeouts.
GAPS = {"32-bit, 30 days": ("32", 30 * DAY),
        "16-bit, 15 minutes": ("16", 900.0)}


def apart_capture(tmp_path, gap):
    """One UDP flow, 2000 packets 10 ms apart (more than 60 bursts), on
    queue 0; @gap later, 40 flows of 3 packets on queue 1, 26 of them
    idle past the timeout at the end. Returns (q0, q1, merged, truth):
    the truth of one ordered replay."""
    one = [(T0 + k * 0.01, udp("10.0.0.1", 1000)) for k in range(2000)]
    later = T0 + gap
    forty = sorted(((later + 4.4 * i + d, udp(
        "10.1.0.%d" % (i + 1), 2000 + i, "192.0.2.2"))
        for i in range(40) for d in (0, 1, 2.5)), key=lambda x: x[0])
    files = [write_pcap(tmp_path / ("apart_%s.pcap" % n), frames)
             for n, frames in (("q0", one), ("q1", forty),
                               ("merged", one + forty))]
    return files + [contract_truth(one + forty)]


@pytest.mark.parametrize("case", GAPS)
def test_apart_merged_one_worker(tmp_path, case):
    """The ordered replay itself: the merged capture on one worker gives
    the truth (the leap expires the first flow, idle since)."""
    bits, gap = GAPS[case]
    _, _, merged, want = apart_capture(tmp_path, gap)
    assert want["flows_new"] == 41 and want["flows_expired"] == 27
    got = run(tmp_path, 1, [merged], ["--age-bits", bits])
    assert not differences(got, want), differences(got, want)


@pytest.mark.slow
@pytest.mark.parametrize("nb", (1, 2))
@pytest.mark.parametrize("case", GAPS)
def test_apart_split(tmp_path, case, nb):
    """Each group on its own rx queue: one worker reading both, or two
    handing flows over, with 8 hash seeds (which worker owns which flow),
    give the ordered replay's counters. (A packet of queue 1, read or
    handed over first, leapt its tracker's clock and the leap's sweep
    expired the first flow while its packets were still coming: 42 new
    and 28 expired against 41 and 27.)"""
    bits, gap = GAPS[case]
    q0, q1, _, want = apart_capture(tmp_path, gap)
    bad = []
    for seed in SEEDS if nb == 2 else SEEDS[:2]:
        got = run(tmp_path, nb, [q0, q1], ["--age-bits", bits,
                                           "--hash-seed", str(seed)])
        diff = differences(got, want)
        if diff:
            bad.append("seed %d: %s" % (seed, diff))
    assert not bad, bad


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


# --------------------------- a sparse capture round the 16-bit range

# With --age-bits 16 and the default timeouts a tick is 2^28 ns: 8192
# ticks, a range of 2199.02 s (with --mirror-first 1, 2 count bits take
# the time's and 1.07 s ticks give the same range).
RANGE_16 = 8192 * 2 ** 28 / 1e9
STEP_16 = RANGE_16 / 5 + 1.0


def sparse_capture(tmp_path):
    """UDP flows A1..A4 at T0, then 5 steps of a fifth of the 16-bit range
    plus 1 s (440 s, under a quarter: no leap), each a packet of 4 new
    flows, then A1..A4 again 1 s after the last step: 2205 s idle, the
    range plus 6 s, which the range reads as 6 s. Returns (capture, its
    frames)."""
    frames = [(T0 + i * 0.001, udp("10.2.0.%d" % (i + 1), 3000 + i))
              for i in range(4)]
    for k in range(1, 6):
        frames += [(T0 + k * STEP_16 + i * 0.001, udp(
            "10.3.%d.%d" % (k, i + 1), 4000 + i)) for i in range(4)]
    frames += [(T0 + 5 * STEP_16 + 1.0 + i * 0.001,
                udp("10.2.0.%d" % (i + 1), 3000 + i)) for i in range(4)]
    return write_pcap(tmp_path / "sparse.pcap", frames), frames


def forward_run(tmp_path, nb, capture, args):
    """cuckooflow forwarding port 0 (the capture) to port 1, copying each
    flow's first packet to port 2 (--mirror-first 1), @nb workers (a tx
    file per worker and port); returns (totals, forwarded frames,
    mirrored frames) as raw bytes, each list sorted."""
    from scapy.all import RawPcapReader
    n = next(_runs)
    empty = str(tmp_path / ("empty%d.pcap" % n))
    write_pcap(empty, [])
    tx = [[str(tmp_path / ("tx%d_p%d_w%d.pcap" % (n, p, w)))
           for w in range(nb)] for p in range(3)]
    rx = [capture, empty, empty]
    out = tmp_path / ("stats%d.json" % n)
    vdevs = ["--vdev=net_pcap%d,rx_pcap=%s,%s" % (
        p, rx[p], ",".join("tx_pcap=" + t for t in tx[p]))
        for p in range(3)]
    p = subprocess.run(
        [APP, "--lcores", LCORES[nb], "--no-pci", "--no-huge", "-m", "512",
         "--log-level=lib.*:error",
         "--file-prefix=cfclk%d_%d" % (os.getpid(), n)] + vdevs +
        ["--", "--mode", "forward", "--mirror-port", "2",
         "--mirror-first", "1", "--clock", "pkt", "--exit-on-eof",
         "--fp-bits", "32", "--timeout-udp", "%d" % UDP_TIMEOUT,
         "--stats-json", str(out)] + list(args),
        capture_output=True, text=True, timeout=DEADLINE)
    log = p.stdout + p.stderr
    no_crash(p.returncode, log=log)
    assert p.returncode == 0 and out.exists(), "rc %d: %s" % (
        p.returncode, log.strip()[-400:])

    def frames(files):
        got = []
        for f in files:
            if os.path.exists(f) and os.path.getsize(f) > 0:
                r = RawPcapReader(f)
                got += [bytes(d) for d, _ in r]
                r.close()
        return sorted(got)
    with open(out) as f:
        return json.load(f)["total"], frames(tx[1]), frames(tx[2])


@pytest.mark.parametrize("nb", (1, 2))
@pytest.mark.parametrize("bits", ("32", "16"))
def test_sparse_round_the_range(tmp_path, bits, nb):
    """The sparse capture above, forwarded with each flow's first packet
    mirrored, with 32- and 16-bit values, 1 and 2 workers (3 hash seeds:
    which worker owns which flow): the counters are the contract's (A1..A4
    expired and new again: 28 new, 20 expired, 8 active), every frame is
    forwarded, and the mirror has each flow's first packet, A1..A4's
    second ones among them. With 16-bit values the tracker read A1..A4's
    2205 s idle as 6 s: their second packets were SEEN and not mirrored,
    24 new, 4 seen, 16 expired, 24 copies (1 and 2 workers, every seed:
    checked on the old code)."""
    cap, stream = sparse_capture(tmp_path)
    first = []
    want = contract_truth(stream, opened=first)
    assert (want["flows_new"], want["flows_expired"], want["active"]) == \
        (28, 20, 8), want
    sent = sorted(bytes(f) for _, f in stream)
    first.sort()
    bad = []
    for seed in SEEDS[:3] if nb == 2 else SEEDS[:1]:
        got, fwd, mir = forward_run(tmp_path, nb, cap, [
            "--age-bits", bits, "--hash-seed", str(seed)])
        diff = differences(got, want)
        if diff:
            bad.append("seed %d: %s" % (seed, diff))
        if fwd != sent:
            bad.append("seed %d: %d frames forwarded of %d sent" % (
                seed, len(fwd), len(sent)))
        if mir != first:
            bad.append("seed %d: %d first packets mirrored, want %d" % (
                seed, len(mir), len(first)))
    assert not bad, bad
