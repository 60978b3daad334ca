#!/usr/bin/python3
"""The firewall's outside, fail closed (issue 24, item 5): packets that
passed `--inside 0 --outside 1` though they belong to no flow opened from
the inside, each sent through cuckooflow in forward mode on net_pcap
ports, with 1 and 2 workers, and what comes out of the inside port read
back frame by frame:

- IP behind 3 or more VLAN tags (3 and 9, IPv4 and IPv6), inside MPLS,
  PPPoE or 802.3 LLC/SNAP, other non-IP frames: dropped by
  --firewall-unparsed (default drop), by reason; ARP and IPv6 neighbour
  discovery (hop limit 255) pass;
- the inside direction of a tracked flow sent from the outside (the
  inside host's source claimed): wrong_direction;
- with --decap: tunnels carrying a non-IP frame, a tracked flow's reply
  wrapped in a tunnel between other endpoints (a spoofed outer source,
  another inside host as outer destination, a plain flow wrapped), an
  allowed service reached through a tunnel: dropped; the tunnel's own
  replies pass;
- a warm restart (--state-file) carries the roles and the allow list it
  was made under, or is refused by name; its file is private (0600, a
  file others may read or write is refused), a fixed --hash-seed is not
  adopted by a run without one, and a file of the previous format is
  refused by its version;
- a scapy sweep of random encapsulations with a fixed seed: no
  unsolicited packet reaches the inside, every legitimate one does.

Causality across the two ports comes from a warm restart: a first run
replays the inside's packets (opening the flows) and saves its tables,
a second replays the outside's into them. The replies of the flows
opened are expected to pass, so the first run's tables are known to
have been taken over.

usage: /usr/bin/python3 -m pytest tests/e2e/test_fw_bypass.py
           [--cuckooflow BIN]
"""
import collections
import ctypes
import ctypes.util
import json
import os
import pwd
import random
import shutil
import stat
import struct
import subprocess

import pytest
from scapy.all import (ARP, Dot1Q, Ether, GRE, IP, IPv6, LLC, PPP, PPPoE,
                       Raw, SNAP, TCP, UDP, ICMPv6ND_NA, ICMPv6ND_NS,
                       ICMPv6ND_RA)
from scapy.contrib.geneve import GENEVE
from scapy.contrib.gtp import GTP_U_Header
from scapy.contrib.mpls import MPLS
from scapy.layers.vxlan import VXLAN
from scapy.utils import RawPcapReader

from harness import NO_HUGE_MB
from harness import DEADLINE, empty_pcap, no_crash

APP = None
WORKER_LCORES = {1: "0@0,1@1", 2: "0@0,1@1,2@1"}
T0 = 1700000000.0
MAC_IN, MAC_OUT = "02:cf:00:00:00:01", "02:cf:00:00:00:02"
FW = ["--mode", "forward", "--inside", "0", "--outside", "1"]
ALLOW = "tcp 198.18.1.20 22\n"

# Hosts: A and B inside, S an allowed ssh server inside, X a server
# outside, E an attacker outside; the tunnel endpoints of each side.
A, B, S = "198.18.1.10", "198.18.1.99", "198.18.1.20"
X, E = "203.0.113.5", "203.0.113.66"
A6, X6 = "2001:db8:1::10", "2001:db8:ff::5"
VTEP_IN, VTEP_OUT = "198.18.1.1", "203.0.113.1"
LL_IN, LL_OUT = "fe80::10", "fe80::5"

_runs = [0]


@pytest.fixture(scope="module", autouse=True)
def _app(cuckooflow):
    global APP
    APP = cuckooflow


def prefix():
    _runs[0] += 1
    return "cffwb%d_%d" % (os.getpid(), _runs[0])


def pcap(path, frames, t0):
    """A capture (Ethernet) of @frames' bytes as they are, 1 ms apart
    from @t0 (an empty one if none)."""
    if not frames:
        return empty_pcap(path)
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for k, fr in enumerate(frames):
            b = bytes(fr)
            us = int(round(t0 * 1e6)) + k * 1000
            f.write(struct.pack("<IIII", us // 1000000, us % 1000000,
                                len(b), len(b)) + b)
    return path


def xxh64(data):
    """XXH64 with seed 0, by the library cuckooflow links."""
    lib = ctypes.CDLL(ctypes.util.find_library("xxhash"))
    lib.XXH64.restype = ctypes.c_uint64
    lib.XXH64.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
    return lib.XXH64(bytes(data), len(data), 0)


def frames_of(paths):
    out = []
    for p in paths:
        if not os.path.exists(p) or os.path.getsize(p) == 0:
            continue
        r = RawPcapReader(p)
        try:
            out += [bytes(fr) for fr, _ in r]
        finally:
            r.close()
    return out


def run(tmp, tag, inside, outside, args, nb, t0=T0):
    """cuckooflow, port 0 (inside) replaying @inside and port 1 (outside)
    @outside, to the end. Returns (rc, log, frames sent out of port 0,
    frames sent out of port 1, stats total)."""
    rx = [pcap(os.path.join(tmp, "%s_rx%d.pcap" % (tag, p)), fr, t0)
          for p, fr in enumerate((inside, outside))]
    tx = [[os.path.join(tmp, "%s_tx%d_%d.pcap" % (tag, p, q))
           for q in range(nb)] for p in (0, 1)]
    for f in sum(tx, []):
        if os.path.exists(f):
            os.unlink(f)
    stats = os.path.join(tmp, tag + ".json")
    pre = prefix()
    vdevs = ["--vdev=net_pcap%d,rx_pcap=%s,%s" % (
        p, rx[p], ",".join("tx_pcap=" + t for t in tx[p])) for p in (0, 1)]
    cmd = [APP, "--lcores", WORKER_LCORES[nb], "--no-pci", "--no-huge",
           "-m", NO_HUGE_MB, "--log-level=lib.*:error", "--file-prefix=" + pre] + \
        vdevs + ["--", "--clock", "pkt", "--exit-on-eof", "--stats-json",
                 stats] + list(args)
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=DEADLINE)
    finally:
        shutil.rmtree("/var/run/dpdk/" + pre, ignore_errors=True)
    log = (p.stdout + p.stderr).decode(errors="replace")
    no_crash(p.returncode, log=log)
    total = {}
    if p.returncode == 0:
        with open(stats) as f:
            total = json.load(f)["total"]
    return p.returncode, log, frames_of(tx[0]), frames_of(tx[1]), total


def restart_pair(tmp, tag, inside, outside, args, nb, args2=None):
    """The inside's frames in a first run, saved (--state-file); the
    outside's in a second run that takes the tables over (@args2: its
    own arguments, default @args). Returns (first run's log, frames out
    of port 1 in the first run, second run's log, frames out of port 0
    in the second run, second run's stats)."""
    state = os.path.join(tmp, tag + ".state")
    if os.path.exists(state):
        os.unlink(state)
    rc, log1, _, out1, _ = run(tmp, tag + "_a", inside, [], args +
                               ["--state-file", state], nb)
    assert rc == 0, log1[-800:]
    rc, log2, in2, _, st2 = run(tmp, tag + "_b", [], outside,
                                (args if args2 is None else args2) +
                                ["--state-file", state], nb, t0=T0 + 1)
    assert rc == 0, log2[-800:]
    return log1, out1, log2, in2, st2


def counter(st, name):
    """A counter of the stats JSON; 'missing' when it has none."""
    return st.get(name, "missing")


# ----------------------------------------------------------- frames

def eth_out(dst=MAC_IN):
    return Ether(src=MAC_OUT, dst=dst)


def eth_in(dst=MAC_OUT):
    return Ether(src=MAC_IN, dst=dst)


def tcp4(src, dst, sport, dport, flags, payload=b""):
    return IP(src=src, dst=dst) / TCP(sport=sport, dport=dport,
                                      flags=flags) / Raw(payload)


def udp4(src, dst, sport, dport, payload=b"u"):
    return IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) / \
        Raw(payload)


def tcp6(src, dst, sport, dport, flags):
    return IPv6(src=src, dst=dst) / TCP(sport=sport, dport=dport,
                                        flags=flags)


def tagged(l3, tpids, eth=None):
    """@l3 behind VLAN tags of the given TPIDs (outermost first)."""
    fr = eth if eth is not None else eth_out()
    ethertype = 0x86dd if IPv6 in l3 else 0x0800
    if not tpids:
        fr.type = ethertype
        return fr / l3
    fr.type = tpids[0]
    layer = fr
    for k, _ in enumerate(tpids):
        nxt = tpids[k + 1] if k + 1 < len(tpids) else ethertype
        tag = Dot1Q(vlan=100 + k, type=nxt)
        layer = layer / tag
    return layer / l3


def tunnel(kind, osrc, odst, inner, eth=None):
    """@inner (IP, or an Ethernet frame for VXLAN, Geneve and GRE-TEB)
    in a tunnel of @kind between IPv4 @osrc and @odst."""
    fr = eth if eth is not None else eth_out()
    is_eth = isinstance(inner, Ether)
    if kind == "vxlan":
        return fr / IP(src=osrc, dst=odst) / UDP(sport=50001, dport=4789) / \
            VXLAN(vni=42, flags=0x08) / (inner if is_eth else
                                         inner_eth(inner))
    if kind == "geneve":
        return fr / IP(src=osrc, dst=odst) / UDP(sport=50002, dport=6081) / \
            GENEVE(vni=42, proto=0x6558) / (inner if is_eth else
                                            inner_eth(inner))
    if kind == "gre":
        return fr / IP(src=osrc, dst=odst) / GRE(
            proto=0x6558 if is_eth else 0x86dd if IPv6 in inner else
            0x0800) / inner
    if is_eth:
        inner = inner.payload
    return fr / IP(src=osrc, dst=odst) / UDP(sport=2152, dport=2152) / \
        GTP_U_Header(teid=9) / inner


def inner_eth_hdr():
    """A tunnel's inner Ethernet header."""
    return Ether(src="02:cf:00:00:01:01", dst="02:cf:00:00:01:02")


def inner_eth(l3):
    return inner_eth_hdr() / l3


def arp_frame(tags=0, eth=None):
    fr = eth if eth is not None else eth_out("ff:ff:ff:ff:ff:ff")
    a = ARP(psrc=X, pdst=A, hwsrc=MAC_OUT)
    if tags == 0:
        return fr / a
    return fr / Dot1Q(vlan=7) / a


def inner_arp():
    return Ether(src="02:cf:00:00:01:01", dst="ff:ff:ff:ff:ff:ff") / \
        ARP(psrc=E, pdst=B)


def nd(kind, hlim=255):
    if kind == "na":
        return eth_out() / IPv6(src=LL_OUT, dst=LL_IN, hlim=hlim) / \
            ICMPv6ND_NA(tgt=LL_OUT, S=1)
    if kind == "ns":
        return eth_out("33:33:ff:00:00:10") / \
            IPv6(src=LL_OUT, dst="ff02::1:ff00:10", hlim=hlim) / \
            ICMPv6ND_NS(tgt=LL_IN)
    return eth_out("33:33:00:00:00:01") / \
        IPv6(src=LL_OUT, dst="ff02::1", hlim=hlim) / ICMPv6ND_RA()


def llc_snap(l3):
    """802.3 with LLC/SNAP carrying IPv4."""
    body = bytes(LLC(dsap=0xaa, ssap=0xaa, ctrl=3) /
                 SNAP(OUI=0, code=0x0800) / l3)
    return Ether(src=MAC_OUT, dst=MAC_IN, type=len(body)) / Raw(body)


def inside_frames(decap):
    """The first run: flows opened from the inside (and traffic that
    passes any filter). Tunnelled flows only with --decap."""
    fr = [eth_in() / tcp4(A, X, 40000, 80, "S"),
          eth_in() / udp4(A, X, 5353, 53),
          eth_in() / tcp6(A6, X6, 40000, 80, "S"),
          eth_in("ff:ff:ff:ff:ff:ff") / ARP(psrc=A, pdst=X, hwsrc=MAC_IN),
          eth_in("33:33:ff:00:00:05") /
          IPv6(src=LL_IN, dst="ff02::1:ff00:5", hlim=255) /
          ICMPv6ND_NS(tgt=LL_OUT)]
    if decap:
        fr += [tunnel("vxlan", VTEP_IN, VTEP_OUT,
                      tcp4(A, X, 40002, 443, "S"), eth_in()),
               tunnel("gre", VTEP_IN, VTEP_OUT,
                      tcp4(A, X, 40003, 443, "S"), eth_in()),
               tunnel("gtpu", VTEP_IN, VTEP_OUT, udp4(A, X, 40004, 53),
                      eth_in())]
    return fr


def outside_table(decap):
    """The second run's frames: (name, frame, expected): "pass", or the
    reason it is dropped for (its counter: dropped_REASON). Tunnel
    frames only with --decap (decap on, they are judged by their inner
    packet)."""
    syn22 = tcp4(X, A, 1234, 22, "S")
    syn22_6 = tcp6(X6, A6, 1234, 22, "S")
    reply = tcp4(X, A, 80, 40000, "SA")
    t = [
        ("reply", eth_out() / reply, "pass"),
        ("UDP reply", eth_out() / udp4(X, A, 53, 5353), "pass"),
        ("IPv6 reply", eth_out() / tcp6(X6, A6, 80, 40000, "SA"), "pass"),
        ("reply, 1 tag", tagged(tcp4(X, A, 80, 40000, "A"), [0x8100]),
         "pass"),
        ("reply, QinQ", tagged(tcp4(X, A, 80, 40000, "A"),
                               [0x88a8, 0x8100]), "pass"),
        ("ARP", arp_frame(), "pass"),
        ("ARP, 1 tag", arp_frame(tags=1), "pass"),
        ("ND NA", nd("na"), "pass"),
        ("ND NS", nd("ns"), "pass"),
        ("ND RA", nd("ra"), "pass"),
        ("allowed ssh", eth_out() / tcp4(X, S, 9000, 22, "S"), "pass"),
        ("inside's direction, TCP", eth_out() /
         tcp4(A, X, 40000, 80, "A", b"spoof"), "wrong_direction"),
        ("inside's direction, UDP", eth_out() / udp4(A, X, 5353, 53),
         "wrong_direction"),
        ("inside's direction, IPv6", eth_out() /
         tcp6(A6, X6, 40000, 80, "A"), "wrong_direction"),
        ("unsolicited SYN", eth_out() / syn22, "unsolicited"),
        ("SYN, 3 tags", tagged(syn22, [0x8100] * 3), "vlan_depth"),
        ("SYN, QinQ + 2", tagged(syn22, [0x88a8, 0x8100, 0x8100]),
         "vlan_depth"),
        ("SYN, 9 tags", tagged(syn22, [0x8100] * 9), "vlan_depth"),
        ("IPv6 SYN, 3 tags", tagged(syn22_6, [0x8100] * 3), "vlan_depth"),
        ("IPv6 SYN, 9 tags", tagged(syn22_6, [0x8100] * 9), "vlan_depth"),
        ("reply, 3 tags", tagged(reply, [0x8100] * 3), "vlan_depth"),
        ("SYN in MPLS", Ether(src=MAC_OUT, dst=MAC_IN, type=0x8847) /
         MPLS(label=16, s=1) / syn22, "encapsulated"),
        ("SYN in PPPoE", Ether(src=MAC_OUT, dst=MAC_IN, type=0x8864) /
         PPPoE(sessionid=1) / PPP(proto=0x0021) / syn22, "encapsulated"),
        ("SYN in LLC/SNAP", llc_snap(syn22), "encapsulated"),
        ("LLDP", Ether(src=MAC_OUT, dst="01:80:c2:00:00:0e",
                       type=0x88cc) / Raw(b"\x02\x07\x04" + b"\0" * 20),
         "non_ip"),
        ("ND NA, hop limit 64", nd("na", hlim=64), "unsolicited"),
    ]
    if not decap:
        return t
    wrapped = tcp4(X, A, 80, 40000, "SA")
    t += [
        ("VXLAN reply", tunnel("vxlan", VTEP_OUT, VTEP_IN,
                               tcp4(X, A, 443, 40002, "SA")), "pass"),
        ("GRE reply", tunnel("gre", VTEP_OUT, VTEP_IN,
                             tcp4(X, A, 443, 40003, "SA")), "pass"),
        ("GTP-U reply", tunnel("gtpu", VTEP_OUT, VTEP_IN,
                               udp4(X, A, 53, 40004)), "pass"),
        ("ARP in VXLAN", tunnel("vxlan", E, B, inner_arp()),
         "tunnel_non_ip"),
        ("ARP in Geneve", tunnel("geneve", E, B, inner_arp()),
         "tunnel_non_ip"),
        ("ARP in GRE-TEB", tunnel("gre", E, B, inner_arp()),
         "tunnel_non_ip"),
        ("3 tags in VXLAN", tunnel("vxlan", E, B, tagged(
            syn22, [0x8100] * 3, inner_eth_hdr())), "tunnel_non_ip"),
        ("plain reply in GRE to B", tunnel("gre", E, B, wrapped),
         "unsolicited"),
        ("plain reply in VXLAN to B", tunnel("vxlan", E, B, wrapped),
         "unsolicited"),
        ("plain reply in GTP-U to B", tunnel("gtpu", E, B, wrapped),
         "unsolicited"),
        ("VXLAN reply, outer source spoofed", tunnel(
            "vxlan", E, VTEP_IN, tcp4(X, A, 443, 40002, "A")),
         "unsolicited"),
        ("VXLAN reply, to another inside host", tunnel(
            "vxlan", VTEP_OUT, B, tcp4(X, A, 443, 40002, "A")),
         "unsolicited"),
        ("GRE reply, outer source spoofed", tunnel(
            "gre", E, VTEP_IN, tcp4(X, A, 443, 40003, "A")),
         "unsolicited"),
        ("tunnel flow, the inside's direction", tunnel(
            "vxlan", VTEP_IN, VTEP_OUT, tcp4(A, X, 40002, 443, "A")),
         "wrong_direction"),
        ("allowed ssh through VXLAN", tunnel(
            "vxlan", VTEP_OUT, VTEP_IN, tcp4(X, S, 9001, 22, "S")),
         "unsolicited"),
        ("VXLAN, inner IP cut", cut_frame(
            bytes(tunnel("vxlan", E, B, syn22)),
            len(tunnel("vxlan", E, B, syn22)) - len(syn22) + 12),
         "malformed"),
    ]
    return t


def label_of(frame, table):
    for name, fr, _ in table:
        if bytes(fr) == frame:
            return name
    return "unknown frame %s" % frame[:40].hex()


@pytest.mark.parametrize("nb", (1, 2), ids=("1 worker", "2 workers"))
@pytest.mark.parametrize("decap", (False, True),
                         ids=("plain", "decap"))
def test_outside_table(tmp_path, nb, decap):
    """Each frame of outside_table() from the outside, after the inside
    opened its flows: what passes is exactly the frames expected to
    (replies, ARP, neighbour discovery, the allowed service; in order
    within a flow), the rest is counted dropped by its reason; every
    inside frame went out."""
    tmp = str(tmp_path)
    allow = os.path.join(tmp, "allow.txt")
    with open(allow, "w") as f:
        f.write(ALLOW)
    args = FW + ["--allow", allow] + (["--decap", "all"] if decap else [])
    table = outside_table(decap)
    inside = inside_frames(decap)
    _, out1, log2, got, st = restart_pair(
        tmp, "table", inside, [fr for _, fr, _ in table], args, nb)
    bad = []
    if sorted(out1) != sorted(bytes(f) for f in inside):
        bad.append("first run: %d of %d inside frames out" % (
            len(out1), len(inside)))
    want = [bytes(fr) for _, fr, exp in table if exp == "pass"]
    cg, cw = collections.Counter(got), collections.Counter(want)
    for fr in cg - cw:
        bad.append("passed, must be dropped: %s" % label_of(fr, table))
    for fr in cw - cg:
        bad.append("dropped, must pass: %s" % label_of(fr, table))
    # one worker: in the order sent
    if nb == 1 and not bad and got != want:
        bad.append("out of order: %s" % [label_of(f, table) for f in got])
    reasons = collections.Counter(exp for _, _, exp in table
                                  if exp != "pass")
    for r, n in sorted(reasons.items()):
        if counter(st, "dropped_" + r) != n:
            bad.append("dropped_%s %s, want %d" % (r, counter(
                st, "dropped_" + r), n))
    if st:
        drops = sum(v for k, v in st.items() if k.startswith("dropped_"))
        if st["rx_packets"] != st["tx_packets"] + st["tx_dropped"] + \
                st["blocked_packets"] + drops + st["handoff_drops"]:
            bad.append("the invariant: rx %d, tx %d, drops %d" % (
                st["rx_packets"], st["tx_packets"], drops))
        if counter(st, "wrong_direction") != reasons["wrong_direction"]:
            bad.append("wrong_direction %s" % counter(st,
                                                      "wrong_direction"))
        nd_passed = 3
        if counter(st, "nd_passed") != nd_passed:
            bad.append("nd_passed %s, want %d" % (counter(st, "nd_passed"),
                                                  nd_passed))
        unparsed = sum(n for r, n in reasons.items() if r in (
            "vlan_depth", "encapsulated", "non_ip", "tunnel_non_ip"))
        if counter(st, "firewall_unparsed") != unparsed:
            bad.append("firewall_unparsed %s, want %d" % (
                counter(st, "firewall_unparsed"), unparsed))
    assert not bad, "\n".join(bad) + "\n" + log2[-400:]


def test_oracle_agrees_with_table():
    """fw_oracle.py's model (direction, the unparsed policy, neighbour
    discovery) gives each frame of the table it models (no VLAN tags,
    no tunnels) the outcome the table expects."""
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from fw_oracle import FWD, Config, Oracle, Unmodelled, parse_allow
    o = Oracle(Config(roles={0: "inside", 1: "outside"},
                      tx_port={0: 1, 1: 0}, allow=parse_allow(ALLOW)))
    t = 10 ** 9
    for fr in inside_frames(False):
        o.packet(t, 0, bytes(fr))
        t += 10 ** 6
    modelled = wrong = 0
    for name, fr, exp in outside_table(False):
        try:
            d = o.packet(t, 1, bytes(fr))
        except Unmodelled:
            continue
        t += 10 ** 6
        modelled += 1
        got = "pass" if d.action == FWD else d.action
        wrong += got != exp
        assert got == exp, (name, got, exp)
    assert modelled >= 15 and wrong == 0, modelled


@pytest.mark.parametrize("nb", (1, 2), ids=("1 worker", "2 workers"))
def test_unparsed_pass(tmp_path, nb):
    """--firewall-unparsed pass: the frames the parser cannot place pass
    (counted firewall_unparsed), the rest as by default."""
    tmp = str(tmp_path)
    table = outside_table(False)
    unparsed = ("vlan_depth", "encapsulated", "non_ip")
    args = FW + ["--firewall-unparsed", "pass"]
    _, _, log, got, st = restart_pair(tmp, "pass", inside_frames(False),
                                      [fr for _, fr, _ in table], args, nb)
    want = [bytes(fr) for name, fr, exp in table if exp in unparsed or
            (exp == "pass" and name != "allowed ssh")]
    missing = collections.Counter(want) - collections.Counter(got)
    extra = collections.Counter(got) - collections.Counter(want)
    assert not missing and not extra and counter(
        st, "firewall_unparsed") == sum(
            1 for _, _, e in table if e in unparsed), (
        [label_of(f, table) for f in missing],
        [label_of(f, table) for f in extra], counter(st, "firewall_unparsed"),
        log[-300:])


def test_unparsed_option_refused(tmp_path):
    """--firewall-unparsed takes drop or pass, and only in firewall
    mode; [firewall] firewall_unparsed in a config file as well."""
    tmp = str(tmp_path)
    rc, log = run_args(tmp, ["--mode", "forward", "--firewall-unparsed",
                             "pass"])
    assert rc == 1 and "--firewall-unparsed" in log and \
        "only with --inside and --outside" in log, log[-300:]
    rc, log = run_args(tmp, FW + ["--firewall-unparsed", "maybe"])
    assert rc == 1 and "--firewall-unparsed" in log, log[-300:]
    ini = os.path.join(tmp, "fw.ini")
    with open(ini, "w") as f:
        f.write("[firewall]\nfirewall_unparsed = pass\n")
    rc, log = run_args(tmp, ["--mode", "forward", "--cfg", ini])
    assert rc == 1 and "only with --inside and --outside" in log, \
        log[-300:]
    rc, log = run_args(tmp, FW + ["--cfg", ini])
    assert rc == 0, log[-300:]


def run_args(tmp, args):
    """cuckooflow with @args on two empty net_pcap ports, files in
    @tmp: (rc, log)."""
    pre = prefix()
    try:
        e = empty_pcap(os.path.join(tmp, "e.pcap"))
        cmd = [APP, "--lcores", "0@0,1@1", "--no-pci", "--no-huge", "-m",
               "256", "--log-level=lib.*:error", "--file-prefix=" + pre,
               "--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s/t0.pcap" % (e, tmp),
               "--vdev=net_pcap1,rx_pcap=%s,tx_pcap=%s/t1.pcap" % (e, tmp),
               "--", "--clock", "pkt", "--exit-on-eof"] + args
        p = subprocess.run(cmd, capture_output=True, timeout=DEADLINE)
        log = (p.stdout + p.stderr).decode(errors="replace")
        return no_crash(p.returncode, log=log), log
    finally:
        shutil.rmtree("/var/run/dpdk/" + pre, ignore_errors=True)


# ------------------------------------------------------- warm restart

def restart_cases():
    """(name, first run's args, second run's args, the second run's
    refusal message) for tables made under other firewall settings."""
    return {
        # the same table as a firewall's (its 32-bit fingerprints)
        "saved without roles": (["--mode", "forward", "--fp-bits", "32"],
                                FW, "saved without firewall roles"),
        "roles swapped": (["--mode", "forward", "--inside", "1",
                           "--outside", "0"], FW,
                          "saved with other firewall roles"),
        "another allow list": (FW + ["--allow", "ALLOW"],
                               FW + ["--allow", "ALLOW2"],
                               "saved with another allow list"),
        "allow list dropped": (FW + ["--allow", "ALLOW"], FW,
                               "saved with an allow list"),
    }


@pytest.mark.parametrize("nb", (1, 2), ids=("1 worker", "2 workers"))
@pytest.mark.parametrize("case", list(restart_cases()))
def test_restart_settings_refused(tmp_path, case, nb):
    """A flow an outside host opened under other settings (no roles,
    other roles, another allow list) does not pass after a warm
    restart into a firewall run: the saved tables are refused, named;
    the same settings take them over (the control)."""
    tmp = str(tmp_path)
    first, second, why = restart_cases()[case]
    files = {"ALLOW": ALLOW, "ALLOW2": "tcp 198.18.1.21 22\n"}
    for k, text in files.items():
        with open(os.path.join(tmp, k), "w") as f:
            f.write(text)

    def fill(a):
        return [os.path.join(tmp, x) if x in files else x for x in a]
    # The outside host opens a flow to S:22 (no roles: anything opens;
    # roles swapped: port 1 is then inside; allowed: the allow rule).
    state = os.path.join(tmp, "s.state")
    opener = [eth_out() / tcp4(X, S, 9000, 22, "S")]
    rc, log1, _, _, st1 = run(tmp, "first", [], opener,
                              fill(first) + ["--state-file", state], nb)
    assert rc == 0 and st1["flows_new"] == 1, log1[-600:]
    later = [eth_out() / tcp4(X, S, 9000, 22, "A", b"data")]
    rc, log2, got, _, st2 = run(tmp, "second", [], later,
                                fill(second) + ["--state-file", state], nb,
                                t0=T0 + 1)
    assert rc == 0, log2[-600:]
    assert got == [] and st2.get("flows_restored") == 0 and why in log2 \
        and "ignored, starting with empty flow tables" in log2, \
        (len(got), st2.get("flows_restored"), log2[-800:])
    # The control: the second run's own settings, saved and taken over.
    rc, log1, _, _, _ = run(tmp, "first_same", [], opener,
                            fill(second) + ["--state-file", state], nb)
    rc, log2, got, _, st2 = run(tmp, "second_same", [], later,
                                fill(second) + ["--state-file", state], nb,
                                t0=T0 + 1)
    assert rc == 0 and "took over" in log2, log2[-800:]


def save_once(tmp, args=(), nb=1):
    """A first run that opens one flow from the inside and saves; the
    state file's path."""
    state = os.path.join(tmp, "p.state")
    rc, log, _, _, _ = run(tmp, "save", [eth_in() / tcp4(A, X, 40000, 80,
                                                         "S")], [],
                           FW + ["--state-file", state] + list(args), nb)
    assert rc == 0, log[-600:]
    return state


def take_over(tmp, state, args=(), nb=1):
    """A second run with the state file, @nb workers: (log, stats total,
    frames sent out of the inside port)."""
    rc, log, got, _, st = run(
        tmp, "again", [], [eth_out() / tcp4(X, A, 80, 40000, "SA")],
        FW + ["--state-file", state] + list(args), nb, t0=T0 + 1)
    assert rc == 0, log[-600:]
    return log, st, got


@pytest.mark.slow
def test_state_file_private(tmp_path):
    """The state file holds the tables' hash seed: it is created 0600
    (the directory 0755 as it was), and a file others may read or
    write, or owned by another user (as root only), is refused whole
    and replaced by a private one; the one the run wrote is taken over
    (the control)."""
    tmp = str(tmp_path)
    os.chmod(tmp, 0o755)
    state = save_once(tmp)
    mode = stat.S_IMODE(os.stat(state).st_mode)
    assert mode == 0o600, "state file mode %o" % mode
    log, st, got = take_over(tmp, state)
    assert st.get("flows_restored") == 1 and len(got) == 1, log[-600:]
    for chmod in (0o644, 0o640, 0o602):
        state = save_once(tmp)
        os.chmod(state, chmod)
        log, st, got = take_over(tmp, state)
        assert st.get("flows_restored") == 0 and got == [] and \
            "readable or writable by others" in log, (oct(chmod),
                                                      log[-600:])
        # replaced at exit by a private one
        assert stat.S_IMODE(os.stat(state).st_mode) == 0o600
    if os.geteuid() != 0:
        return      # another owner needs chown
    nobody = pwd.getpwnam("nobody")
    state = save_once(tmp)
    os.chown(state, nobody.pw_uid, nobody.pw_gid)
    log, st, got = take_over(tmp, state)
    assert st.get("flows_restored") == 0 and "owned by uid %d" % \
        nobody.pw_uid in log, log[-600:]


def test_state_fixed_seed_not_adopted(tmp_path):
    """A table saved under a fixed --hash-seed (a known seed) is not
    taken over by a run without one, which keeps its seed secret; with
    the same --hash-seed it is."""
    tmp = str(tmp_path)
    state = save_once(tmp, ["--hash-seed", "0x5eed"])
    log, st, got = take_over(tmp, state)
    assert st.get("flows_restored") == 0 and got == [] and \
        "saved with a fixed --hash-seed" in log, log[-600:]
    state = save_once(tmp, ["--hash-seed", "0x5eed"])
    log, st, got = take_over(tmp, state, ["--hash-seed", "0x5eed"])
    assert st.get("flows_restored") == 1 and len(got) == 1, log[-600:]


def test_state_old_version_refused(tmp_path):
    """A state file of a format this build does not read (version 2,
    mode 0644 as that version wrote it) is refused by its version,
    named, even with its checksum right."""
    tmp = str(tmp_path)
    state = save_once(tmp)
    data = bytearray(open(state, "rb").read())
    version = struct.unpack_from("<I", data, 8)[0]
    struct.pack_into("<I", data, 8, 2)
    struct.pack_into("<Q", data, len(data) - 8,
                     xxh64(data[:-8]))
    with open(state, "wb") as f:
        f.write(data)
    os.chmod(state, 0o644)      # as the version before wrote it
    log, st, _ = take_over(tmp, state)
    assert version == 4 and st.get("flows_restored") == 0 and \
        "format version 2, this build reads 3 to 4" in log, (version,
                                                             log[-600:])


@pytest.mark.parametrize("nb", [1, 2])
def test_state_version3_taken_over(tmp_path, nb):
    """A state file of version 3, as the build before this one wrote it
    (version 4 without the flow records' keys: no key section before
    the checksum), is taken over: an upgrade keeps its flows (the
    outside reply of the flow the first run opened is admitted and
    forwarded, as it is from a version 4 file)."""
    tmp = str(tmp_path)
    state = save_once(tmp, nb=nb)
    data = bytearray(open(state, "rb").read())
    version = struct.unpack_from("<I", data, 8)[0]
    keys_len = struct.unpack_from("<Q", data, len(data) - 16)[0]
    assert version == 4 and keys_len == 0, (version, keys_len)
    old = data[:-16]                    # without keys_len and checksum
    struct.pack_into("<I", old, 8, 3)
    old += struct.pack("<Q", xxh64(bytes(old)))
    with open(state, "wb") as f:
        f.write(old)
    os.chmod(state, 0o600)
    log, st, got = take_over(tmp, state, nb=nb)
    assert st.get("flows_restored") == 1 and len(got) == 1, log[-600:]



# --------------------------------------------------------- the sweep

SWEEP_SEED = 24005


def sweep_frames(rng):
    """Flows opened from the inside (plain, IPv4 and IPv6, and in
    tunnels between VTEP_IN and VTEP_OUT), then a random mix of the
    outside's frames: (inside frames, [(frame, legit)]). Legit: the
    flows' replies (plain ones behind 0 to 2 tags, tunnelled ones in
    their own tunnel), ARP, neighbour discovery. Everything else is
    built not to reach the inside: the replies behind 3 to 5 tags, in
    MPLS, PPPoE, LLC/SNAP, in another tunnel or none, with a spoofed
    outer source or destination; the inside's direction of each flow;
    unsolicited packets; tunnels of non-IP or cut inner frames."""
    inside, flows = [], []
    kinds = ("plain", "plain6", "vxlan", "geneve", "gre", "gtpu")
    for k in range(24):
        kind = kinds[k % len(kinds)]
        proto = rng.choice(("tcp", "udp"))
        sport = 41000 + k
        dport = rng.choice((80, 443, 53, 8080))
        if kind == "plain6":
            a, x = "2001:db8:1::%x" % (0x100 + k), "2001:db8:ff::%x" % k
        else:
            a, x = "198.18.1.%d" % (100 + k), "203.0.113.%d" % (100 + k)
        flows.append(dict(kind=kind, proto=proto, a=a, x=x, sport=sport,
                          dport=dport))
        inside.append(wrap(kind, True, l4(proto, a, x, sport, dport,
                                          "S")))
    out = []

    def legit(f):
        return wrap(f["kind"], False, l4(f["proto"], f["x"], f["a"],
                                         f["dport"], f["sport"], "SA"),
                    tags=rng.choice(([], [0x8100], [0x88a8, 0x8100]))
                    if f["kind"].startswith("plain") else [])

    for _ in range(400):
        f = rng.choice(flows)
        what = rng.randrange(16)
        rep = l4(f["proto"], f["x"], f["a"], f["dport"], f["sport"], "A")
        fwd = l4(f["proto"], f["a"], f["x"], f["sport"], f["dport"], "A")
        unsol = l4(f["proto"], f["x"], f["a"], rng.randrange(1024, 65535),
                   rng.choice((22, 23, 3389)), "S")
        if what == 0:
            out.append((legit(f), True))
        elif what == 1:
            out.append((rng.choice((arp_frame(), arp_frame(tags=1),
                                    nd("na"), nd("ns"), nd("ra"))), True))
        elif what == 2:         # VLAN depth 3 to 5, any payload
            depth = rng.randrange(3, 6)
            tpids = [rng.choice((0x8100, 0x88a8, 0x9100))] + \
                [0x8100] * (depth - 1)
            out.append((wrap(f["kind"], False, rng.choice((rep, unsol)),
                             tags=tpids) if f["kind"].startswith("plain")
                        else tagged(rep, tpids), False))
        elif what == 3:         # the inside's direction
            out.append((wrap(f["kind"], True, fwd, outside=True), False))
        elif what == 4:         # unsolicited, 0-2 tags or in its tunnel
            out.append((wrap(f["kind"], False, unsol,
                             tags=rng.choice(([], [0x8100]))
                             if f["kind"].startswith("plain") else []),
                        False))
        elif what == 5:         # MPLS, PPPoE, SNAP (IPv4 only)
            ip4 = rep if IP in rep else l4(f["proto"], "203.0.113.9",
                                           "198.18.1.9", 1, 2, "A")
            enc = rng.randrange(3)
            if enc == 0:
                fr = Ether(src=MAC_OUT, dst=MAC_IN, type=0x8847) / \
                    MPLS(label=rng.randrange(16, 1000), s=1, ttl=64) / ip4
            elif enc == 1:
                fr = Ether(src=MAC_OUT, dst=MAC_IN, type=0x8864) / \
                    PPPoE(sessionid=rng.randrange(1, 100)) / \
                    PPP(proto=0x0021) / ip4
            else:
                fr = llc_snap(ip4)
            out.append((fr, False))
        elif what in (6, 7):    # the reply in a tunnel not its own
            kind = rng.choice(("vxlan", "geneve", "gre", "gtpu"))
            osrc, odst = rng.choice(((E, VTEP_IN), (VTEP_OUT, B),
                                     (E, B), (VTEP_OUT, VTEP_IN)))
            if kind == f["kind"] and (osrc, odst) == (VTEP_OUT, VTEP_IN):
                osrc = E
            out.append((tunnel(kind, osrc, odst, rep), False))
        elif what == 8:         # a tunnelled flow's reply, not tunnelled
            if f["kind"].startswith("plain"):
                out.append((tunnel(rng.choice(("vxlan", "gre")), E, B,
                                   rep), False))
            else:
                out.append((tagged(rep, []), False))
        elif what == 9:         # non-IP in a tunnel
            kind = rng.choice(("vxlan", "geneve", "gre"))
            inner = rng.choice((inner_arp(), Ether(
                src="02:cf:00:00:01:01", dst="01:80:c2:00:00:0e",
                type=0x88cc) / Raw(b"\0" * 30)))
            out.append((tunnel(kind, rng.choice((E, VTEP_OUT)),
                               rng.choice((B, VTEP_IN)), inner), False))
        elif what == 10:        # IP behind tags in a tunnel
            inner = tagged(rep, [0x8100] * rng.randrange(3, 6),
                           inner_eth_hdr())
            out.append((tunnel(rng.choice(("vxlan", "geneve")), VTEP_OUT,
                               VTEP_IN, inner), False))
        elif what == 11:        # cut inner frames
            kind = rng.choice(("vxlan", "geneve", "gre", "gtpu"))
            whole = bytes(tunnel(kind, VTEP_OUT, VTEP_IN, rep))
            cut = rng.randrange(len(whole) - len(bytes(rep)) + 1,
                                len(whole) - len(bytes(rep)) + 20)
            out.append((cut_frame(whole, cut), False))
        elif what == 12:        # the tunnelled flow, outer swapped
            if f["kind"].startswith("plain"):
                out.append((tagged(fwd, [0x8100]), False))
            else:
                out.append((tunnel(f["kind"], VTEP_IN, VTEP_OUT, rep),
                            False))
        elif what == 13:        # the other tunnel endpoints
            if f["kind"].startswith("plain"):
                out.append((wrap(f["kind"], False, unsol), False))
            else:
                out.append((tunnel(f["kind"], rng.choice((E, VTEP_OUT)),
                                   rng.choice((B, "198.18.1.2")), rep),
                            False))
        else:                   # more legit traffic
            out.append((legit(f), True))
    return inside, out


def l4(proto, src, dst, sport, dport, flags):
    if ":" in src:
        ip = IPv6(src=src, dst=dst)
    else:
        ip = IP(src=src, dst=dst)
    if proto == "tcp":
        return ip / TCP(sport=sport, dport=dport, flags=flags)
    return ip / UDP(sport=sport, dport=dport) / Raw(b"d")


def wrap(kind, from_inside, pkt, tags=(), outside=False):
    """A flow's packet as its kind carries it: plain (behind @tags), or
    in the tunnel between VTEP_IN and VTEP_OUT, the direction of
    @from_inside; on the outside port if not @from_inside or
    @outside."""
    eth = eth_out() if outside or not from_inside else eth_in()
    if kind.startswith("plain"):
        return tagged(pkt, list(tags), eth)
    osrc, odst = (VTEP_IN, VTEP_OUT) if from_inside else (VTEP_OUT, VTEP_IN)
    return tunnel(kind, osrc, odst, pkt, eth)


def cut_frame(whole, cut):
    """A frame cut to @cut bytes, its IP length fields left as they
    were: what the parser reads is what it got."""
    return whole[:cut]


@pytest.mark.parametrize("nb", (1, 2), ids=("1 worker", "2 workers"))
def test_sweep_random_encapsulations(tmp_path, nb):
    """SWEEP_SEED's frames (sweep_frames()): with --decap all, of the
    outside's, exactly the legitimate ones reach the inside; none of the
    others. Every inside frame goes out."""
    tmp = str(tmp_path)
    rng = random.Random(SWEEP_SEED)
    inside, out = sweep_frames(rng)
    allow = os.path.join(tmp, "allow.txt")
    with open(allow, "w") as f:
        f.write(ALLOW)
    args = FW + ["--allow", allow, "--decap", "all"]
    _, out1, log2, got, st = restart_pair(tmp, "sweep", inside,
                                          [fr for fr, _ in out], args, nb)
    frames = [(bytes(fr), ok) for fr, ok in out]
    want = collections.Counter(fr for fr, ok in frames if ok)
    attack = {fr for fr, ok in frames if not ok}
    assert not attack & set(want), "a frame both legit and not"
    got_c = collections.Counter(got)
    leaked = [fr for fr in got_c if fr in attack]
    lost = want - got_c
    extra = got_c - want
    assert sorted(out1) == sorted(bytes(f) for f in inside), \
        "first run: %d of %d inside frames out" % (len(out1), len(inside))
    assert not leaked and not lost and not extra, \
        "%d attack frames passed (%s), %d legit lost (%s), %d unknown\n%s" % (
            len(leaked), [Ether(f).summary() for f in leaked[:6]],
            sum(lost.values()), [Ether(f).summary() for f in list(lost)[:4]],
            sum(extra.values()), log2[-400:])
    assert sum(want.values()) > 40 and len(attack) > 250, \
        (sum(want.values()), len(attack))
