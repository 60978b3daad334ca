#!/usr/bin/python3
"""Flow records end to end (issue 27): the application's --records,
exported over IPFIX to Debian's nfcapd and as JSON lines, against a
truth made from each capture's plan, never from the tracker.

- test_records_plan: a capture whose flows end every way a flow ends:
  FIN and RST (their linger over, later packets counted), idle (TCP, UDP,
  ICMP, ICMPv6), a flow cut by the active timeout into records whose sums
  are the flow's, a SYN reopening a closed flow's tuple, and flows open
  or lingering at the end of the run. nfdump lists exactly the truth's
  records (tuple, packets, IP bytes, first and last ms, flags, ingress
  interface, end reason, ICMP type.code), each flow once per end, no
  sequence failure; the JSON lines the same, each record's flow id that
  of its flow's new-flow line. 1 and 2 workers, forwarding: every frame
  goes out unchanged.
- test_records_eviction: a table of 64 flows under 400 flows: evicted
  flows end with reason 5, and each flow's records, back to back, sum to
  its packets and bytes.
- test_records_captures: every capture of pcaps/ (link types, tunnels,
  mixed.pcap): the records' packets and bytes are the capture's tracked
  packets and their IP octets (the truth's record_bytes).
- test_records_flush: /cuckooflow/flush ends every flow with a forced
  record, none left for the exit.
- test_records_losses: records that cannot go out are counted and said at
  exit: no collector (the IPFIX socket refused), a full event ring.
- test_records_store_orphans_expire: keys left in the key store by
  records dropped on a full ring expire, so that later flows are kept.
- test_records_warm_restart: a --state-file restart between two
  captures: the flows open across it end with a forced record at the
  first exit, then with a named one (JSON and IPFIX) counting the
  packets since the restart; each flow's records sum to it, none
  unnamed.
- test_records_checkpoint_keys: the same after a SIGKILL, from a
  --state-interval save.
"""
import ipaddress
import itertools
import json
import os
import re
import signal
import subprocess
import time

import pytest

from harness import NO_HUGE_MB
from harness import (DEADLINE, flush, nfcapd, nfdump_flows, no_crash, query,
                     run_ended, run_replay, sequence_failures, timed_pcap,
                     wait_until)

APP = PCAPS = TMP = None
runs = 0
WORKER_LCORES = {1: "0@0,1@1", 2: "0@0,1@1,2@1"}
T0 = 1700000000
REASONS = {"idle": 1, "active": 2, "end": 3, "forced": 4, "resources": 5}
# The plan's timeouts: short, so that flows end within a short capture.
TIMEOUTS = {"tcp": 3, "udp": 2, "icmp": 2, "other": 2}
LINGER = 1
ACTIVE = 5
OPTS = ["--timeout-tcp", "3", "--timeout-udp", "2", "--timeout-icmp", "2",
        "--timeout-other", "2", "--close-linger", str(LINGER),
        "--active-timeout", str(ACTIVE)]


@pytest.fixture(scope="module", autouse=True)
def _paths(cuckooflow, pcaps, tmp_path_factory):
    global APP, PCAPS, TMP
    APP, PCAPS = cuckooflow, pcaps
    TMP = str(tmp_path_factory.mktemp("cuckooflow-records"))


def prefix_next():
    global runs
    runs += 1
    return "cfrec%d_%d" % (os.getpid(), runs)


def run(nb, vdevs, args, prefix=None, ok_rc=(0,)):
    """cuckooflow with @nb workers on oversubscribed lcores, a replay to
    its end; (rc, stdout + stderr, --stats-json: None with an exit
    status not in @ok_rc). A run that loses records exits 4 (usage.md,
    Losses and exit status)."""
    prefix = prefix or prefix_next()
    return run_replay(APP, WORKER_LCORES[nb], prefix, vdevs, args,
                      os.path.join(TMP, prefix + ".json"), ok_rc=ok_rc)


def lost_said(log):
    """The exit's "lost N records: COUNTER: ..." warnings (one a
    counter): the Ns summed, or None."""
    ns = re.findall(r"cuckooflow: warning: lost (\d+) records: ", log)
    return sum(int(n) for n in ns) if ns else None


def json_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


# ------------------------------------------------------------ the plan

def ip_len(p):
    """RFC 7012's octets of a packet: its IP header's length field."""
    from scapy.all import IP, IPv6
    p = p.__class__(bytes(p))   # the lengths as built
    return p[IP].len if IP in p else 40 + p[IPv6].plen


class Flow:
    """One flow of the plan: its packets (time, scapy packet), and how
    it ends (a reason of REASONS)."""

    def __init__(self, name, end):
        self.name, self.end, self.pkts = name, end, []

    def add(self, t, pkt):
        self.pkts.append((t, pkt))


def tcp_pair(c, s, cport, sport, v6=False):
    from scapy.all import IP, IPv6, TCP, Ether, Raw
    L3 = IPv6 if v6 else IP
    e = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    up = lambda fl, n=0: e / L3(src=c, dst=s) / TCP(
        sport=cport, dport=sport, flags=fl) / Raw(b"u" * n)
    down = lambda fl, n=0: e / L3(src=s, dst=c) / TCP(
        sport=sport, dport=cport, flags=fl) / Raw(b"d" * n)
    return up, down


def plan():
    """The flows of test_records_plan, packets at whole milliseconds plus
    0.5 ms (a record's last time is kept to 65.5 us: its millisecond is
    exact), every age a timeout or the linger is judged at a second or
    more from it. The capture lasts 20 s."""
    from scapy.all import (IP, IPv6, UDP, ICMP, ICMPv6EchoRequest,
                           ICMPv6EchoReply, Ether, Raw, fragment)
    e = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    flows = []
    # FIN: handshake, data, FIN both ways, the last ACK after the FIN
    for f in range(6):
        up, down = tcp_pair("10.1.0.%d" % (f + 1), "10.2.0.1", 40000 + f,
                            443, v6=f % 3 == 2)
        if f % 3 == 2:
            up, down = tcp_pair("2001:db8::%x" % (f + 1), "2001:db8:1::1",
                                40000 + f, 443, v6=True)
        fl = Flow("fin%d" % f, "end")
        t = 0.1 + f * 0.3
        for k, p in enumerate([up("S"), down("SA"), up("A"), up("PA", 100),
                               down("PA", 1200 + f), up("A"), up("FA"),
                               down("FA"), up("A")]):
            fl.add(t + 0.02 * k, p)
        flows.append(fl)
    # RST from the server after data
    for f in range(3):
        up, down = tcp_pair("10.1.1.%d" % (f + 1), "10.2.0.2", 41000 + f, 80)
        fl = Flow("rst%d" % f, "end")
        t = 2.0 + f * 0.25
        for k, p in enumerate([up("S"), down("SA"), up("PA", 40 + f),
                               down("RA")]):
            fl.add(t + 0.01 * k, p)
        flows.append(fl)
    # idle: UDP both ways, TCP picked up mid-flow, ICMP and ICMPv6 echo
    for f in range(4):
        c, s = "10.1.2.%d" % (f + 1), "10.2.0.53"
        fl = Flow("udp%d" % f, "idle")
        for k in range(3 + f):
            fl.add(3.0 + f * 0.1 + 0.05 * k, e / IP(src=c, dst=s) /
                   UDP(sport=5000 + f, dport=53) / Raw(b"q" * (10 + k))
                   if k % 2 == 0 else e / IP(src=s, dst=c) /
                   UDP(sport=53, dport=5000 + f) / Raw(b"a" * (30 + k)))
        flows.append(fl)
    up, down = tcp_pair("10.1.3.1", "10.2.0.3", 42000, 8080)
    fl = Flow("tcpidle", "idle")
    for k, p in enumerate([down("PA", 500), up("A"), down("PA", 20)]):
        fl.add(4.0 + 0.1 * k, p)
    flows.append(fl)
    fl = Flow("icmp", "idle")
    for k in range(3):
        fl.add(5.0 + 0.2 * k, e / IP(src="10.1.4.1", dst="10.2.0.4") /
               ICMP(type=8, id=7, seq=k) / Raw(b"p" * 56))
        fl.add(5.0 + 0.2 * k + 0.01, e / IP(src="10.2.0.4",
                                            dst="10.1.4.1") /
               ICMP(type=0, id=7, seq=k) / Raw(b"p" * 56))
    flows.append(fl)
    # another echo between the same hosts, identifier 8: its own flow and
    # record (ICMP queries are keyed by identifier, issue 26)
    fl = Flow("icmp_id8", "idle")
    for k in range(2):
        fl.add(5.1 + 0.2 * k, e / IP(src="10.1.4.1", dst="10.2.0.4") /
               ICMP(type=8, id=8, seq=k) / Raw(b"r" * 40))
        fl.add(5.1 + 0.2 * k + 0.02, e / IP(src="10.2.0.4",
                                            dst="10.1.4.1") /
               ICMP(type=0, id=8, seq=k) / Raw(b"r" * 40))
    flows.append(fl)
    # a UDP datagram of 3000 bytes in three fragments: its record counts
    # the first fragment (its own IP octets), the tracker the datagram
    # once (the later ones are fragments_seen: plan_extra())
    fl = Flow("frag", "idle")
    frags = fragment(e / IP(src="10.1.10.1", dst="10.2.0.10", id=77) /
                     UDP(sport=8000, dport=9000) / Raw(b"f" * 3000),
                     fragsize=1480)
    fl.add(6.0, frags[0])
    fl.add(6.2, e / IP(src="10.2.0.10", dst="10.1.10.1") /
           UDP(sport=9000, dport=8000) / Raw(b"g" * 20))
    flows.append(fl)
    fl = Flow("icmp6", "idle")
    for k in range(2):
        fl.add(5.5 + 0.2 * k, e / IPv6(src="2001:db8::41",
                                       dst="2001:db8:1::4") /
               ICMPv6EchoRequest(id=9, seq=k))
        fl.add(5.5 + 0.2 * k + 0.01, e / IPv6(src="2001:db8:1::4",
                                              dst="2001:db8::41") /
               ICMPv6EchoReply(id=9, seq=k))
    flows.append(fl)
    # a flow of 16 s, a packet every 0.4 s: cut by the active timeout,
    # then idle
    up, down = tcp_pair("10.1.5.1", "10.2.0.5", 43000, 22)
    fl = Flow("long", "idle")
    for k in range(40):
        fl.add(1.0 + 0.4 * k, (up if k % 2 == 0 else down)(
            "PA" if k else "S", 60 + k))
    flows.append(fl)
    # a FIN, then a SYN on the tuple within the linger: two flows
    up, down = tcp_pair("10.1.6.1", "10.2.0.6", 44000, 25)
    fl = Flow("reused_old", "end")
    for k, p in enumerate([up("S"), down("SA"), up("PA", 30), up("FA")]):
        fl.add(7.0 + 0.05 * k, p)
    flows.append(fl)
    fl = Flow("reused_new", "idle")
    for k, p in enumerate([up("S"), down("SA"), up("A")]):
        fl.add(7.5 + 0.05 * k, p)
    flows.append(fl)
    # open at the end (the capture ends at 20 s): UDP, TCP; and a TCP
    # flow closed 0.3 s before the end, lingering
    for f in range(3):
        c, s = "10.1.7.%d" % (f + 1), "10.2.0.7"
        fl = Flow("open%d" % f, "forced")
        for k in range(2 + f):
            fl.add(19.0 + 0.2 * f + 0.1 * k, e / IP(src=c, dst=s) /
                   UDP(sport=6000 + f, dport=123) / Raw(b"n" * 48))
        flows.append(fl)
    up, down = tcp_pair("2001:db8::81", "2001:db8:1::8", 45000, 443,
                        v6=True)
    fl = Flow("open_tcp6", "forced")
    for k, p in enumerate([up("S"), down("SA"), up("PA", 700)]):
        fl.add(19.2 + 0.1 * k, p)
    flows.append(fl)
    up, down = tcp_pair("10.1.8.1", "10.2.0.8", 46000, 443)
    fl = Flow("lingering", "end")
    for k, p in enumerate([up("S"), down("SA"), up("FA"), down("FA")]):
        fl.add(19.3 + 0.1 * k, p)
    flows.append(fl)
    # the last packet: the capture's end
    fl = Flow("last", "forced")
    fl.add(20.0, e / IP(src="10.1.9.1", dst="10.2.0.9") /
           UDP(sport=7000, dport=7001))
    flows.append(fl)
    return flows


def plan_extra():
    """The plan's packets that are in no record (issue 26's kinds): the
    later fragments of flow "frag"'s datagram (fragments_seen), and an
    ICMP port unreachable from 10.2.0.53 about udp1's query, that flow
    live (related: as conntrack's accounting, an error counts in no
    flow's record)."""
    from scapy.all import IP, UDP, ICMP, Ether, Raw, fragment
    e = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    frags = fragment(e / IP(src="10.1.10.1", dst="10.2.0.10", id=77) /
                     UDP(sport=8000, dport=9000) / Raw(b"f" * 3000),
                     fragsize=1480)
    return [(6.0 + 0.001 * k, f) for k, f in enumerate(frags) if k] + [
        (3.12, e / IP(src="10.2.0.53", dst="10.1.2.2") /
         ICMP(type=3, code=3) / IP(src="10.1.2.2", dst="10.2.0.53") /
         UDP(sport=5001, dport=53) / Raw(b"q" * 10))]


def stamp(t):
    """A plan time in ns since the epoch: whole ms plus 0.5 ms."""
    return (T0 * 1000 + round(t * 1000)) * 1000000 + 500000


def unit_ns(active_s, longest_s):
    """The active timeout's unit, as docs/usage.md states it: the
    smallest power of two of ns from 2^20 over 1/220 of the active
    timeout + 9/8 of the longest timeout or linger + 2 s; a record is cut
    at its first packet ceil(active / unit) + 1 units on."""
    span = (active_s + longest_s + longest_s / 8 + 2) * 1e9
    u = 1 << 20
    while span / u >= 220:
        u <<= 1
    return u, -(-active_s * 10**9 // u) + 1


def truth_records(flows):
    """The records the plan makes: each flow's packets cut at the active
    timeout (the rule above), the last part ending as the flow does."""
    from scapy.all import TCP, IP, IPv6
    u, due = unit_ns(ACTIVE, max(max(TIMEOUTS.values()), LINGER))
    out = []
    for fl in flows:
        parts, cur = [], []
        for t, p in fl.pkts:
            ns = stamp(t)
            if cur and ns // u - stamp(cur[0][0]) // u >= due:
                parts.append(cur)
                cur = []
            cur.append((t, p))
        parts.append(cur)
        first = fl.pkts[0][1]
        first = first.__class__(bytes(first))   # as dissected
        ip = first[IP] if IP in first else first[IPv6]
        proto = ip.proto if IP in first else ip.nh
        icmp = None
        if proto in (1, 58):
            l4 = ip.payload
            icmp = (l4.type, l4.code)
        sport = dport = 0
        if TCP in first or "UDP" in first:
            sport, dport = ip.payload.sport, ip.payload.dport
        for k, part in enumerate(parts):
            flags = 0
            for _, p in part:
                flags |= int(p[TCP].flags) if TCP in p else 0
            out.append({
                "flow": fl.name, "src": str(ipaddress.ip_address(ip.src)),
                "dst": str(ipaddress.ip_address(ip.dst)), "sport": sport,
                "dport": dport, "proto": proto, "flags": flags,
                "first": stamp(part[0][0]) // 10**6,
                "last": stamp(part[-1][0]) // 10**6,
                "packets": len(part),
                "bytes": sum(ip_len(p) for _, p in part),
                "reason": REASONS["active" if k + 1 < len(parts) else
                                  fl.end], "icmp": icmp})
    return out


def plan_capture():
    """The plan's capture (once) and its truth."""
    path = os.path.join(TMP, "records_plan.pcap")
    flows = plan()
    if not os.path.exists(path):
        pkts = sorted([(stamp(t), p) for fl in flows for t, p in fl.pkts]
                      + [(stamp(t), p) for t, p in plan_extra()],
                      key=lambda x: x[0])
        timed_pcap(path, [(ns / 1e9, p) for ns, p in pkts])
    return path, truth_records(flows)


def as_nfdump(r, port=0):
    """A truth record as nfdump_flows() lists it (ingress port + 1)."""
    icmp = r["icmp"] is not None
    return (r["src"], r["dst"], 0 if icmp else r["sport"],
            0 if icmp else r["dport"], r["proto"], r["flags"], port + 1,
            r["first"], r["last"], r["bytes"], r["packets"], r["reason"],
            r["icmp"])


def as_json(line):
    """A JSON record line as a truth record's fields."""
    icmp = (line["icmp_type"], line["icmp_code"]) \
        if "icmp_type" in line else None
    return (line["src"], line["dst"], 0 if icmp else line["sport"],
            0 if icmp else line["dport"], line["proto"], line["tcp_flags"],
            line["port"] + 1, line["start_ns"] // 10**6,
            line["end_ns"] // 10**6, line["bytes"], line["packets"],
            REASONS[line["reason"]], icmp)


def test_records_plan_truth():
    """The plan makes every kind of end, and a flow cut in three."""
    _, want = plan_capture()
    reasons = {r["reason"] for r in want}
    assert reasons == {1, 2, 3, 4}
    long = [r for r in want if r["flow"] == "long"]
    assert [r["reason"] for r in long] == [2, 2, 2, 1], long
    assert sum(r["packets"] for r in long) == 40


@pytest.mark.parametrize("nb", (1, 2))
def test_records_plan(nb, tmp_path):
    """nfdump and the JSON lines list exactly the plan's records, with 1
    and 2 workers, forwarding every frame unchanged (module docstring)."""
    from scapy.utils import rdpcap
    pcap, want = plan_capture()
    events = str(tmp_path / "events.jsonl")
    tx = [str(tmp_path / ("tx%d.pcap" % q)) for q in range(nb)]
    with nfcapd(tmp_path) as cap:
        rc, log, stats = run(nb, ["net_pcap0,rx_pcap=%s,%s" % (
            pcap, ",".join("tx_pcap=" + t for t in tx))],
            ["--mode", "forward", "--ipfix", "127.0.0.1:%d" % cap.port,
             "--events", events] + OPTS)
        assert stats is not None, "rc %d: %s" % (rc, log[-800:])
    flows = nfdump_flows(cap.files)
    assert sorted(flows) == sorted(as_nfdump(r) for r in want)
    assert sequence_failures(cap.files) == 0
    lines = json_lines(events)
    recs = [l for l in lines if l["event"] == "record"]
    assert sorted(map(as_json, recs)) == sorted(as_nfdump(r) for r in want)
    # every record's flow id is its flow's new-flow line's
    new = {l["flow"]: l for l in lines if l["event"] == "new"}
    assert len(new) == len({r["flow"] for r in want})
    for r in recs:
        n = new[r["flow"]]
        assert (n["src"], n["dst"], n["sport"], n["dport"], n["proto"]) == \
            (r["src"], r["dst"], r["sport"], r["dport"], r["proto"])
        assert n["time_ns"] // 10**6 <= r["start_ns"] // 10**6
    assert all(l["v"] == 2 for l in lines)
    # the two echoes between the same hosts: a record each, named by
    # their identifiers (the requester's port, the responder's 0)
    echo = sorted((r["sport"], r["dport"], r["packets"]) for r in recs
                  if r["proto"] == 1 and r["src"] == "10.1.4.1")
    assert echo == [(7, 0, 6), (8, 0, 4)], echo
    t = stats["total"]
    # the ICMP error and the later fragments: in no record (plan_extra)
    assert (t["related"], t["fragments_seen"]) == (1, 2)
    assert (t["records_idle"], t["records_active"], t["records_end"],
            t["records_shutdown"]) == (
        sum(r["reason"] == 1 for r in want),
        sum(r["reason"] == 2 for r in want),
        sum(r["reason"] == 3 for r in want) - 1,   # lingering at the end
        sum(r["reason"] == 4 for r in want) + 1)
    assert t["records_dropped"] == 0 and t["events_dropped"] == 0
    # forwarded: every frame, unchanged
    sent = sorted(bytes(p) for t_ in tx for p in rdpcap(t_))
    assert sent == sorted(bytes(p) for p in rdpcap(pcap))


def test_records_eviction(tmp_path):
    """A table of 64 flows under 400 UDP flows of 3 packets each, their
    packets interleaved: evicted flows end with reason 5, later packets
    open them anew; each flow's records follow each other and sum to its
    packets and bytes, none lost."""
    from scapy.all import Ether, IP, UDP, Raw
    e = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    frames, per = [], {}
    for k in range(3):
        for f in range(400):
            c = "10.3.%d.%d" % (f // 200, f % 200 + 1)
            p = e / IP(src=c, dst="10.4.0.1") / UDP(
                sport=9000 + f, dport=53) / Raw(b"x" * (f % 50 + k))
            frames.append(p)
            key = (c, 9000 + f)
            pk, by = per.get(key, (0, 0))
            per[key] = (pk + 1, by + ip_len(p))
    pcap = timed_pcap(tmp_path / "evict.pcap", frames, gap=0.0002)
    events = str(tmp_path / "events.jsonl")
    rc, log, stats = run(1, ["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (
        pcap, os.devnull)], ["--flows", "64", "--events", events,
                             "--records", "on"] + OPTS)
    assert stats is not None, "rc %d: %s" % (rc, log[-800:])
    recs = [l for l in json_lines(events) if l["event"] == "record"]
    got = {}
    for r in sorted(recs, key=lambda r: r["start_ns"]):
        key = (r["src"], r["sport"])
        pk, by, last = got.get(key, (0, 0, 0))
        assert r["start_ns"] >= last, r      # back to back, not overlapping
        got[key] = (pk + r["packets"], by + r["bytes"], r["end_ns"])
    assert {k: v[:2] for k, v in got.items()} == per
    t = stats["total"]
    assert t["flows_evicted"] > 0
    assert sum(r["reason"] == "resources" for r in recs) == \
        t["records_resources"] == t["flows_evicted"]
    assert len(recs) == t["flows_new"]


def test_records_captures(truth_file, tmp_path):
    """Every capture of pcaps/: the JSON records' packets and bytes sum
    to its tracked packets (new, seen, closing) and their IP octets."""
    with open(truth_file) as f:
        want = json.load(f)
    pcap = truth_file[: -len(".truth.json")] + ".pcap"
    events = str(tmp_path / "events.jsonl")
    rc, log, stats = run(1, ["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (
        pcap, os.devnull)], want.get("args", []) + [
        "--events", events, "--records", "on"])
    assert stats is not None, "rc %d: %s" % (rc, log[-800:])
    recs = [l for l in json_lines(events) if l["event"] == "record"]
    assert sum(r["packets"] for r in recs) == \
        want["flows_new"] + want["flows_seen"] + want["flows_closed"]
    assert sum(r["bytes"] for r in recs) == want["record_bytes"]
    assert len(recs) == want["flows_new"]


def test_records_captures_two_workers(tmp_path):
    """mixed.pcap's records with 2 workers: the same sums."""
    with open(os.path.join(PCAPS, "mixed.truth.json")) as f:
        want = json.load(f)
    events = str(tmp_path / "events.jsonl")
    rc, log, stats = run(2, ["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (
        os.path.join(PCAPS, "mixed.pcap"), os.devnull)],
        ["--events", events, "--records", "on"])
    assert stats is not None, "rc %d: %s" % (rc, log[-800:])
    recs = [l for l in json_lines(events) if l["event"] == "record"]
    assert sum(r["packets"] for r in recs) == \
        want["flows_new"] + want["flows_seen"] + want["flows_closed"]
    assert sum(r["bytes"] for r in recs) == want["record_bytes"]
    assert {r["worker"] for r in recs} == {0, 1}


@pytest.mark.parametrize("nb", (1, 2))
def test_records_flush(nb, tmp_path):
    """/cuckooflow/flush ends every open flow with a forced record (and
    a lingering one with an end record); the exit finds none left."""
    pcap, want = plan_capture()
    events = str(tmp_path / "events.jsonl")
    prefix = prefix_next()
    proc = subprocess.Popen(
        [APP, "--lcores", WORKER_LCORES[nb], "--no-pci", "--no-huge", "-m",
         NO_HUGE_MB, "--log-level=lib.*:error", "--file-prefix=" + prefix,
         "--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (pcap, os.devnull),
         "--", "--clock", "pkt", "--fp-bits", "32", "--events", events,
         "--records", "on"] + OPTS, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    try:
        stats = run_ended(prefix, proc)
        left = stats["active"] + stats["lingering"]
        assert left == sum(r["reason"] == 4 for r in want) + 1
        reply = flush(prefix, proc)
        assert reply["flushed"] == stats["active"], reply
        after = wait_until(lambda: query(prefix, "/cuckooflow/stats"),
                           "the counters", proc=proc)
        assert after["records_forced"] == stats["active"]
        assert after["active"] == after["lingering"] == 0
    finally:
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=DEADLINE)
    no_crash(rc, log=proc.stderr.read())
    recs = [l for l in json_lines(events) if l["event"] == "record"]
    forced = [r for r in recs if r["reason"] == "forced"]
    assert len(forced) == stats["active"]
    assert len(recs) == len(want)
    assert sum(r["packets"] for r in recs) == \
        sum(r["packets"] for r in want)


def records_said(log):
    """The exit's line of records that did not go out: (out, dropped,
    unnamed, key store full), or None."""
    m = re.search(r"cuckooflow: --records: (\d+) records out; (\d+) "
                  r"dropped .*?, (\d+) unnamed .*?: (\d+) new flows found "
                  r"the key store full", log)
    return tuple(int(x) for x in m.groups()) if m else None


def closed_udp_port():
    """A UDP port on 127.0.0.1 with no socket: datagrams to it are
    refused (ICMP port unreachable)."""
    import socket
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_records_no_collector(tmp_path):
    """--ipfix to a port no collector listens on: the records the socket
    refuses are counted (ipfix_records_lost) and said at exit, and the
    JSON lines still hold every record."""
    pcap, want = plan_capture()
    events = str(tmp_path / "events.jsonl")
    rc, log, stats = run(1, ["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (
        pcap, os.devnull)], ["--ipfix", "127.0.0.1:%d" % closed_udp_port(),
                             "--events", events] + OPTS, ok_rc=(4,))
    # records lost: exit status 4 (a loss, not an error)
    assert rc == 4 and stats is not None, "rc %d: %s" % (rc, log[-800:])
    recs = [l for l in json_lines(events) if l["event"] == "record"]
    assert len(recs) == len(want)
    lost = [l for l in log.splitlines() if "records lost in" in l]
    assert lost, log[-800:]
    # "N of M records lost": M every record, N of them lost
    n, m = lost[0].split("--ipfix")[1].split(":", 2)[2].split()[0:3:2]
    assert int(m) == len(want) and 0 < int(n) <= int(m), lost[0]
    assert lost_said(log) == int(n), log[-800:]


def test_records_ring_full(tmp_path):
    """A ring of 64 events under 20 000 short UDP flows that end idle
    during the replay: new-flow events and records are dropped, counted
    (events_dropped, records_dropped), the records of flows whose
    new-flow event was dropped counted unnamed, and said at exit; every
    flow is one of these."""
    from scapy.all import Ether, IP, UDP
    e = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    frames = [e / IP(src="10.%d.%d.%d" % (f >> 16, (f >> 8) & 255,
                                          f & 255), dst="192.0.2.9") /
              UDP(sport=1024, dport=53) for f in range(20000)]
    pcap = timed_pcap(tmp_path / "flood.pcap", frames, gap=0.001)
    events = str(tmp_path / "events.jsonl")
    rc, log, stats = run(1, ["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (
        pcap, os.devnull)], ["--events", events, "--records", "on",
                             "--event-ring", "64", "--timeout-udp", "1"],
                         ok_rc=(4,))
    assert rc == 4 and stats is not None, "rc %d: %s" % (rc, log[-800:])
    t = stats["total"]
    assert t["events_dropped"] > 0 and t["records_dropped"] > 0, t
    said = records_said(log)
    assert said, log[-800:]
    out, dropped, unnamed, _ = said
    recs = [l for l in json_lines(events) if l["event"] == "record"]
    assert out == len(recs)
    assert dropped == t["records_dropped"]
    # a flow's record: out, dropped on the ring, or unnamed (its new
    # event dropped: every such flow's record that reached the store)
    assert out + dropped + unnamed == 20000 == t["flows_new"]
    # the losses at exit: the records dropped and unnamed
    assert lost_said(log) == dropped + unnamed, log[-800:]


def test_records_store_full(tmp_path):
    """A key store of 5 flows (--records-max 5) for the plan's flows:
    the new flows it cannot keep are counted (records_store_full), their
    records unnamed, said at exit; the rest go out named."""
    pcap, want = plan_capture()
    events = str(tmp_path / "events.jsonl")
    prefix = prefix_next()
    rc, log, stats = run(1, ["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (
        pcap, os.devnull)], ["--events", events, "--records", "on",
                             "--records-max", "5"] + OPTS, prefix=prefix,
                         ok_rc=(4,))
    assert rc == 4 and stats is not None, "rc %d: %s" % (rc, log[-800:])
    said = records_said(log)
    assert said, log[-800:]
    out, _, unnamed, full = said
    recs = [l for l in json_lines(events) if l["event"] == "record"]
    assert out == len(recs) and unnamed > 0 and full > 0
    assert out + unnamed == len(want) and lost_said(log) == unnamed


def restart_plan():
    """test_records_warm_restart's two captures, 2 s apart: (flows, the
    first capture's packets, the second's), a flow a list of (time,
    packet). "tcp" and "udp" are open across the restart (the TCP flow
    ends by FIN in the second capture, its linger over before its end),
    "rst" ends in the first, "new" opens in the second (and goes idle),
    "cut" is due for an active timeout at its first packet after the
    restart, the last of the second capture."""
    from scapy.all import Ether, IP, IPv6, UDP, Raw
    e = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    flows = {}
    up, down = tcp_pair("10.9.0.1", "10.9.1.1", 40100, 443)
    flows["tcp"] = [(0.1, up("S")), (0.2, down("SA")), (0.3, up("A")),
                    (0.4, up("PA", 100)), (0.5, down("PA", 900)),
                    (2.1, up("PA", 10)), (2.2, down("PA", 20)),
                    (2.3, up("FA")), (2.4, down("FA")), (2.5, up("A"))]
    up, down = tcp_pair("2001:db8::91", "2001:db8:1::91", 40200, 80,
                        v6=True)
    flows["rst"] = [(0.15, up("S")), (0.25, down("SA")), (0.35, down("RA"))]
    u = lambda n: e / IP(src="10.9.0.2", dst="10.9.1.2") / UDP(
        sport=5353, dport=53) / Raw(b"u" * n)
    flows["udp"] = [(0.6, u(10)), (1.0, u(11)), (2.05, u(12)), (3.6, u(13))]
    flows["new"] = [(2.15, e / IPv6(src="2001:db8::92",
                                   dst="2001:db8:1::92") /
                     UDP(sport=7000, dport=7001) / Raw(b"n" * 30)),
                    (2.35, e / IPv6(src="2001:db8:1::92",
                                    dst="2001:db8::92") /
                     UDP(sport=7001, dport=7000) / Raw(b"m" * 5))]
    # open across the restart, its record due for the active timeout
    # (5 s) at its first packet after it: that packet starts the next
    # record, nothing counted before it since the restart
    up, down = tcp_pair("10.9.0.3", "10.9.1.3", 40300, 22)
    flows["cut"] = [(-0.9, up("S")), (1.9, down("SA")), (4.6, up("A"))]
    first = sorted((t, p) for fl in flows.values() for t, p in fl if t < 2)
    second = sorted((t, p) for fl in flows.values() for t, p in fl
                    if t >= 2)
    return flows, first, second


@pytest.mark.parametrize("nb", (1, 2))
def test_records_warm_restart(nb, tmp_path):
    """A warm restart (--state-file) between two captures: the flows
    open across it end in the first run with a forced record, then in
    the second with a named record (JSON lines and IPFIX through nfcapd)
    that starts at the save and counts the packets after it: each flow's
    records sum to its packets and bytes, nothing unnamed or lost (exit
    0). Forwarding: every frame goes out unchanged, in both runs. On the
    code before, the state file kept no keys: the restored flows'
    records were unnamed, not exported, and the run exited 4."""
    from scapy.utils import rdpcap
    flows, first, second = restart_plan()
    state = str(tmp_path / "state")
    recs, logs = [], []
    for k, part in enumerate((first, second)):
        pcap = timed_pcap(tmp_path / ("part%d.pcap" % k),
                          [(stamp(t) / 1e9, p) for t, p in part])
        tx = [str(tmp_path / ("tx%d_%d.pcap" % (k, q))) for q in range(nb)]
        events = str(tmp_path / ("events%d.jsonl" % k))
        with nfcapd(tmp_path / ("nfcapd%d" % k)) as cap:
            rc, log, stats = run(nb, ["net_pcap0,rx_pcap=%s,%s" % (
                pcap, ",".join("tx_pcap=" + t for t in tx))],
                ["--mode", "forward", "--events", events, "--state-file",
                 state, "--ipfix", "127.0.0.1:%d" % cap.port] + OPTS)
        logs.append(log)
        assert stats is not None, "run %d: rc %d: %s" % (k, rc, log[-800:])
        assert records_said(log) is None, log[-800:]
        assert lost_said(log) is None, log[-800:]
        lines = [l for l in json_lines(events) if l["event"] == "record"]
        assert sorted(map(as_json, lines)) == sorted(nfdump_flows(
            cap.files)), "run %d: JSON and IPFIX differ" % k
        assert sequence_failures(cap.files) == 0
        recs += [(k, l) for l in lines]
        sent = sorted(bytes(p) for t_ in tx for p in rdpcap(t_))
        assert sent == sorted(bytes(p) for p in rdpcap(pcap))
    assert "took over 3 open flows" in logs[1], logs[1][-800:]
    assert "took over the keys of 3 flows" in logs[1], logs[1][-800:]
    resume = stamp(first[-1][0]) // 10**6
    for name, pkts in flows.items():
        got = [(k, r) for k, r in recs if (r["sport"], r["dport"]) in
               {(p.sport, p.dport) for _, p in pkts}]
        want = [part for part in ([x for x in pkts if x[0] < 2],
                                  [x for x in pkts if x[0] >= 2]) if part]
        assert len(got) == len(want), (name, got)
        for (k, r), part in zip(sorted(got, key=lambda x: x[0]), want):
            assert (r["packets"], r["bytes"]) == (
                len(part), sum(ip_len(p) for _, p in part)), (name, r)
            # a record after the restart starts at the save
            assert r["start_ns"] // 10**6 == (
                resume if k == 1 and name in ("tcp", "udp", "cut") else
                stamp(part[0][0]) // 10**6), (name, r)
            assert r["end_ns"] // 10**6 == stamp(part[-1][0]) // 10**6
        reasons = [r["reason"] for _, r in sorted(got, key=lambda x: x[0])]
        assert reasons == {"tcp": ["forced", "end"], "rst": ["end"],
                           "udp": ["forced", "forced"], "new": ["idle"],
                           "cut": ["forced", "forced"]}[name], (name,
                                                                reasons)
    # a flow keeps its id across the restart
    ids = {}
    for k, r in recs:
        ids.setdefault((r["src"], r["sport"]), set()).add(r["flow"])
    assert all(len(v) == 1 for v in ids.values()), ids


@pytest.mark.parametrize("nb", (1, 2))
def test_records_store_orphans_expire(nb, tmp_path):
    """Records dropped on a full event ring leave their flows' keys in
    the key store (orphans: no record will free them). A burst of 3000
    UDP flows through a ring of 64 events under a key store of 64
    (--records-max 64) leaves it full of orphans (a table of 4096 flows:
    the sweep that expires them covers it in a few calls, so that their
    records come faster than the main lcore drains them in any build;
    with the default table they were spread over thousands of calls,
    and the sanitizer build drained them all in 1 run of 3); a minute
    of capture later, 40 new flows: each of them whose new-flow line was written
    (the ring drops some) must be kept by the store (a flow id, not 0),
    its records named: the orphans, older than any record of a live
    flow lasts (--active-timeout plus the longest timeout), are gone.
    On the code before, the orphans stayed for good: these flows were
    not kept (id 0, records_store_full), their records unnamed."""
    from scapy.all import Ether, IP, UDP
    e = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    udp = lambda src, sport: e / IP(src=src, dst="192.0.2.9") / UDP(
        sport=sport, dport=53)
    frames = [(0.1 + k * 0.0001, udp("10.%d.%d.1" % (k >> 8, k & 255),
                                     1024)) for k in range(3000)]
    # a flow kept open all along: the clock moves on, the sweep runs
    frames += [(t * 0.5, udp("10.200.0.1", 2000)) for t in range(1, 120)]
    late = ["10.201.0.%d" % (k + 1) for k in range(40)]
    for k in range(20000):
        t, i = 60 + k * 0.0005, k // 500
        # a late flow opens every 0.25 s; each open one has a packet
        # every second or more often (--timeout-udp 2): open at the end
        src = late[i] if k % 500 == 0 else \
            late[(k // 50) % (i + 1)] if k % 50 == 1 else "10.200.0.1"
        frames.append((t, udp(src, 3000 if src in late else 2000)))
    frames.sort(key=lambda x: x[0])
    pcap = timed_pcap(tmp_path / "orphans.pcap",
                      [(stamp(t) / 1e9, p) for t, p in frames])
    # The run's premises hang on the main lcore's pace against the
    # ring (records dropped in the burst, some late new-flow lines
    # through): a run that meets them not (a main lcore starved for the
    # whole late part on a loaded machine) decides nothing and is run
    # again, until DEADLINE.
    end = time.monotonic() + DEADLINE
    for attempt in itertools.count():
        events = str(tmp_path / ("events%d.jsonl" % attempt))
        rc, log, stats = run(nb, ["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (
            pcap, os.devnull)], ["--events", events, "--records", "on",
                                 "--event-ring", "64", "--records-max",
                                 "64", "--flows", "4096"] + OPTS,
            ok_rc=(4,))
        assert rc == 4 and stats is not None, "rc %d: %s" % (
            rc, log[-800:])
        lines = json_lines(events)
        # a new flow the key store keeps has an id (0: not kept, its
        # records will be unnamed)
        ids = {l["src"]: l.get("flow", 0) for l in lines
               if l["event"] == "new" and l["src"] in late}
        if (stats["total"]["records_dropped"] > 0 and ids) or \
                time.monotonic() > end:
            break
    assert stats["total"]["records_dropped"] > 0, (attempt, stats["total"])
    assert ids, "no late new-flow line passed the ring (%d runs)" % (
        attempt + 1)
    assert all(ids.values()), (sorted(ids.items()), records_said(log))
    # and their records are named: those written carry those ids
    for l in lines:
        if l["event"] == "record" and l["src"] in ids:
            assert l["flow"] == ids[l["src"]], l


@pytest.mark.parametrize("nb", (1, 2))
def test_records_checkpoint_keys(nb, tmp_path):
    """--state-interval saves keep the flow records' keys too: after a
    SIGKILL (no exit, no forced records, no save at exit), the next run
    takes over the flows of the last save and names their records (JSON
    and IPFIX): each counts the packets since the restart, nothing
    unnamed, exit 0; forwarding, every frame out unchanged. The first
    run's replay is over before the saves waited for. (Before: the
    periodic saves held no keys; those records were unnamed, exit 4.)"""
    from scapy.utils import rdpcap
    flows, first, second = restart_plan()
    state = str(tmp_path / "state")
    pcap0 = timed_pcap(tmp_path / "part0.pcap",
                       [(stamp(t) / 1e9, p) for t, p in first])
    prefix = prefix_next()
    proc = subprocess.Popen(
        [APP, "--lcores", WORKER_LCORES[nb], "--no-pci", "--no-huge", "-m",
         NO_HUGE_MB, "--log-level=lib.*:error", "--file-prefix=" + prefix,
         "--vdev", "net_pcap0,rx_pcap=%s,%s" % (pcap0, ",".join(
             ["tx_pcap=" + os.devnull] * nb)),
         "--", "--clock", "pkt", "--fp-bits", "32", "--hash-seed", "7",
         "--mode", "forward", "--events", str(tmp_path / "events0.jsonl"),
         "--records", "on", "--state-file", state, "--state-interval",
         "1"] + OPTS,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        run_ended(prefix, proc)
        saves = query(prefix, "/cuckooflow/state")["saves"]
        wait_until(lambda: query(prefix, "/cuckooflow/state")["saves"] >=
                   saves + 2, "two saves after the replay's end", proc=proc)
    finally:
        proc.kill()
        proc.wait(timeout=DEADLINE)
    pcap1 = timed_pcap(tmp_path / "part1.pcap",
                       [(stamp(t) / 1e9, p) for t, p in second])
    tx = [str(tmp_path / ("tx%d.pcap" % q)) for q in range(nb)]
    events = str(tmp_path / "events1.jsonl")
    with nfcapd(tmp_path / "nfcapd") as cap:
        rc, log, stats = run(nb, ["net_pcap0,rx_pcap=%s,%s" % (
            pcap1, ",".join("tx_pcap=" + t for t in tx))],
            ["--mode", "forward", "--events", events, "--state-file",
             state, "--ipfix", "127.0.0.1:%d" % cap.port] + OPTS)
    assert stats is not None, "rc %d: %s" % (rc, log[-800:])
    assert records_said(log) is None and lost_said(log) is None, log[-800:]
    assert "took over the keys of 3 flows" in log, log[-800:]
    recs = [l for l in json_lines(events) if l["event"] == "record"]
    assert sorted(map(as_json, recs)) == sorted(nfdump_flows(cap.files))
    got = sorted((r["src"], r["reason"], r["packets"], r["bytes"])
                 for r in recs)
    want = sorted(
        (str(ipaddress.ip_address(pkts[0][1].payload.src)),
         {"tcp": "end", "udp": "forced", "new": "idle",
          "cut": "forced"}[name],
         len(part), sum(ip_len(p) for _, p in part))
        for name, pkts in flows.items()
        for part in [[x for x in pkts if x[0] >= 2]] if part)
    assert got == want, (got, want)
    sent = sorted(bytes(p) for t_ in tx for p in rdpcap(t_))
    assert sent == sorted(bytes(p) for p in rdpcap(pcap1))
