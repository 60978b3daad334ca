#!/usr/bin/python3
"""Generate cuckooflow's test captures and their ground truth.

Each capture comes from a plan: flows and their packets at chosen times,
plus packets that must not be tracked. The ground truth JSON beside each
pcap is computed from that plan with the tracker's contract (lib/cflow,
default timeouts), never by running the tracker. Every age the contract
tests (from a flow's last packet, open or closed) is at least MARGIN
away from its timeout or linger, so the answer is unambiguous.

usage:
  pcaps/gen_pcaps.py [--out DIR]          the committed captures
  pcaps/gen_pcaps.py --large FILE [--flows N] [--packets N]
                                         a big capture, not committed
Runs under Debian's /usr/bin/python3 (python3-scapy).
"""
import argparse
import hashlib
import json
import os
import random
import struct
import sys

from scapy.all import (ARP, ICMP, IP, TCP, UDP, Dot1AD, Dot1Q, Ether, IPv6,
                       ICMPv6DestUnreach, ICMPv6EchoReply, ICMPv6EchoRequest,
                       ICMPv6PacketTooBig, IPv6ExtHdrDestOpt,
                       IPv6ExtHdrFragment, IPv6ExtHdrHopByHop,
                       IPv6ExtHdrRouting, Raw, fragment, fragment6)

# lib/cflow defaults (cflow_track.h), in seconds.
TIMEOUT = {"tcp": 300, "udp": 60, "icmp": 30, "other": 60}
LINGER = 10
BASE = 1_700_000_000  # capture start, seconds since the epoch

MALFORMED = ("trunc_l2", "trunc_l3", "trunc_l4", "bad_version",
             "bad_hdrlen", "bad_length", "bad_ext", "bad_embedded")
# A fragmented datagram is followed this long from its first fragment
# (cflow_frag.h's default; the plans keep well within it).
FRAG_TIMEOUT = 30


class Plan:
    """Packets of one capture, with what each one should count as, and
    the capture's link type (pcap's LINKTYPE_)."""

    def __init__(self, linktype=1):
        self.packets = []  # (time_us, frame bytes, event)
        self.linktype = linktype

    def add(self, t, frame, event):
        self.packets.append((round((BASE + t) * 1e6), bytes(frame), event))

    def flow(self, key, cls, t, frame, flags=""):
        self.add(t, frame, {"kind": "track", "key": key, "cls": cls,
                            "flags": flags})

    def other(self, t, frame, kind):
        self.add(t, frame, {"kind": kind})

    def related(self, t, frame, key):
        """An ICMP error about a packet of flow @key (its key as the
        quoted packet would have it): related if that flow is tracked
        and live, else unrelated; it changes nothing."""
        self.add(t, frame, {"kind": "related", "key": key})

    def fragments(self, key, cls, t, frames, datagram, flags=""):
        """The fragments of one datagram, in order: the first is a packet
        of flow @key, the others follow it (lib/cflow's cflow_frag), each
        a fragment of the flow if it is live then, else a fragment of no
        flow. @datagram names it (addresses, id, protocol)."""
        first, later = frames[0], frames[1:]
        self.add(t, first, {"kind": "track", "key": key, "cls": cls,
                            "flags": flags, "datagram": datagram})
        for k, frame in enumerate(later):
            self.add(t + 0.001 * (k + 1), frame,
                     {"kind": "frag_later", "datagram": datagram})

    def ordered(self):
        return sorted(self.packets, key=lambda p: p[0])


MARGIN = 5  # seconds every age keeps from the threshold it is tested on


def past(age, limit):
    """age > limit, refusing a plan that comes near the edge."""
    if abs(age - limit) < MARGIN:
        raise ValueError("plan has an age of %.3f s near %d s" %
                         (age, limit))
    return age > limit


# Link types with a header and a type field: (its offset, the header's
# length); VLAN tags may follow. NULL and LOOP: 4 bytes; the others none.
TYPED_LINKS = {1: (12, 14), 113: (14, 16), 276: (0, 20)}


def ip_bytes(frame, linktype=1):
    """RFC 7012's octets of a tracked packet: its outermost IP header's
    length (IPv4 total length, IPv6 40 + payload length), what its flow
    records count (docs/usage.md, Flow records)."""
    if linktype in TYPED_LINKS:
        at, off = TYPED_LINKS[linktype]
        etype = struct.unpack("!H", frame[at:at + 2])[0]
        while etype in (0x8100, 0x88A8, 0x9100):
            etype = struct.unpack("!H", frame[off + 2:off + 4])[0]
            off += 4
    else:
        off = 4 if linktype in (0, 108) else 0
    ip = frame[off:]
    if ip[0] >> 4 == 4:
        return struct.unpack("!H", ip[2:4])[0]
    return 40 + struct.unpack("!H", ip[4:6])[0]


def truth(plan):
    """The tracker's contract applied to the plan, on exact times. Also
    record_bytes: the IP octets of the tracked packets (new, seen, the
    closing ones), which flow records sum to: a fragmented datagram by its
    first fragment (fragments_seen are not in a record, as the tracker
    counts the datagram once), an ICMP error related to a flow not in its
    record (as conntrack's accounting: it neither opens nor refreshes the
    flow)."""
    c = {k: 0 for k in ("packets", "bytes", "non_ip", "fragments",
                        "flows_new", "flows_seen", "flows_closed",
                        "flows_expired", "flows_evicted", "insert_failed",
                        "orphan_close", "reused", "active", "related",
                        "unrelated", "fragments_seen", "record_bytes")}
    malformed = {k: 0 for k in MALFORMED}
    table = {}  # key -> [closing, cls, last_us]
    datagrams = {}  # datagram -> (key, time_us of its first fragment)
    now = 0

    def live(key):
        """The flow is tracked and not stale (a packet would find it)."""
        e = table.get(key)
        if e is None:
            return False
        age = (now - e[2]) / 1e6
        return not past(age, LINGER if e[0] else TIMEOUT[e[1]])

    for t, frame, ev in plan.ordered():
        c["packets"] += 1
        c["bytes"] += len(frame)
        now = max(now, t)
        kind = ev["kind"]
        if kind == "non_ip":
            c["non_ip"] += 1
            continue
        if kind == "fragment":
            c["fragments"] += 1
            continue
        if kind in malformed:
            malformed[kind] += 1
            continue
        if kind == "unrelated":
            c["unrelated"] += 1
            continue
        if kind == "related":
            c["related" if live(ev["key"]) else "unrelated"] += 1
            continue
        if kind == "frag_later":
            d = datagrams.get(ev["datagram"])
            if d is not None and past((now - d[1]) / 1e6, FRAG_TIMEOUT):
                raise ValueError("plan: a fragment after its datagram's "
                                 "timeout")
            c["fragments_seen" if d is not None and live(d[0])
              else "fragments"] += 1
            continue
        key, cls, flags = ev["key"], ev["cls"], ev["flags"]
        ipb = ip_bytes(frame, plan.linktype)
        if "datagram" in ev and ev["datagram"] not in datagrams:
            datagrams[ev["datagram"]] = (key, now)
        close = cls == "tcp" and ("F" in flags or "R" in flags)
        syn = cls == "tcp" and "S" in flags and "A" not in flags
        e = table.get(key)
        if e is not None:
            closing, ecls, last = e
            age = (now - last) / 1e6
            if not closing and past(age, TIMEOUT[ecls]):
                del table[key]
                c["flows_expired"] += 1
                c["active"] -= 1
            elif not closing:
                if close:
                    c["flows_closed"] += 1
                    c["active"] -= 1
                    table[key] = [True, ecls, now]
                else:
                    e[2] = now
                    c["flows_seen"] += 1
                c["record_bytes"] += ipb
                continue
            elif past(age, LINGER):
                del table[key]
            elif syn:
                del table[key]
                c["reused"] += 1
                table[key] = [False, cls, now]
                c["flows_new"] += 1
                c["active"] += 1
                c["record_bytes"] += ipb
                continue
            else:
                # The linger restarts: it runs from the last packet.
                e[2] = now
                c["flows_seen"] += 1
                c["record_bytes"] += ipb
                continue
        if close:
            c["orphan_close"] += 1
            continue
        table[key] = [False, cls, now]
        c["flows_new"] += 1
        c["active"] += 1
        c["record_bytes"] += ipb
    # The final full sweep at the last packet's time.
    for key, (closing, cls, last) in list(table.items()):
        age = (now - last) / 1e6
        if not closing and past(age, TIMEOUT[cls]):
            c["flows_expired"] += 1
            c["active"] -= 1
    c["malformed"] = malformed
    c["malformed_total"] = sum(malformed.values())
    return c


def ip4(n):
    return "10.%d.%d.%d" % ((n >> 16) & 255, (n >> 8) & 255, n & 255)


def ip6(n):
    return "2001:db8::%x:%x" % ((n >> 16) & 0xffff, n & 0xffff)


def canon(family, a, b, sport, dport, proto):
    """The canonical key as the plan names it (lower endpoint first)."""
    ends = sorted([(a, sport), (b, dport)])
    return "%s/%s|%s|%d" % (family, ends[0], ends[1], proto)


def tcp_session(plan, rng, n, t, v6=False, close="F", vlans=()):
    """Handshake, data, then a FIN exchange or an RST."""
    a, b = (ip6(2 * n), ip6(2 * n + 1)) if v6 else (ip4(2 * n), ip4(2 * n + 1))
    sport, dport = 20000 + n % 40000, 443
    key = canon(6 if v6 else 4, a, b, sport, dport, 6)
    ipl = IPv6 if v6 else IP

    def pkt(fwd, flags):
        eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
        for i, vid in enumerate(vlans):
            eth = eth / (Dot1AD(vlan=vid) if i == 0 and len(vlans) == 2
                         else Dot1Q(vlan=vid))
        if fwd:
            l3 = ipl(src=a, dst=b) / TCP(sport=sport, dport=dport,
                                          flags=flags)
        else:
            l3 = ipl(src=b, dst=a) / TCP(sport=dport, dport=sport,
                                          flags=flags)
        return eth / l3

    seq = [(True, "S"), (False, "SA"), (True, "A")]
    seq += [(rng.random() < 0.5, "PA") for _ in range(rng.randint(1, 6))]
    if close == "F":
        seq += [(True, "FA"), (False, "FA"), (True, "A")]
    elif close == "R":
        seq += [(False, "R")]
    for fwd, flags in seq:
        plan.flow(key, "tcp", t, pkt(fwd, flags), flags)
        t += rng.uniform(0.001, 0.5)
    return key, pkt, t


def scenario_tcp(plan, rng):
    t = 0.0
    for n in range(40):
        tcp_session(plan, rng, n, t, close="F" if n % 4 else "R")
        t += rng.uniform(0.01, 0.3)
    # Orphan closes: FIN and RST of flows never seen.
    for n in range(100, 105):
        a, b = ip4(2 * n), ip4(2 * n + 1)
        plan.flow(canon(4, a, b, 5555, 80, 6), "tcp", t,
                  Ether() / IP(src=a, dst=b) / TCP(sport=5555, dport=80,
                                                   flags="R" if n % 2 else "FA"),
                  "R" if n % 2 else "FA")
        t += 0.1
    # Reuse: a new SYN 2 s into the linger; a late packet 25 s after.
    for n in range(200, 206):
        key, pkt, end = tcp_session(plan, rng, n, t)
        plan.flow(key, "tcp", end + 2, pkt(True, "S"), "S")
        plan.flow(key, "tcp", end + 2.2, pkt(False, "SA"), "SA")
        t = end + 0.5
    key, pkt, end = tcp_session(plan, rng, 300, t)
    plan.flow(key, "tcp", end + 25, pkt(True, "A"), "A")
    # A long-idle TCP flow: expired on its next packet.
    key, pkt, end = tcp_session(plan, rng, 301, t, close="")
    plan.flow(key, "tcp", end + 400, pkt(True, "PA"), "PA")


def scenario_udp_icmp(plan, rng):
    t = 0.0
    for n in range(30):
        a, b = ip4(1000 + 2 * n), ip4(1001 + 2 * n)
        sp = 40000 + n
        key = canon(4, a, b, sp, 53, 17)
        times = [t, t + 1, t + 2]
        if n % 3 == 0:  # idle past 60 s, then back: expired, then new
            times += [t + 2 + 80, t + 83]
        for k, tt in enumerate(times):
            fwd = k % 2 == 0
            frame = Ether() / (IP(src=a, dst=b) / UDP(sport=sp, dport=53)
                               if fwd else
                               IP(src=b, dst=a) / UDP(sport=53, dport=sp))
            plan.flow(key, "udp", tt, frame)
        t += rng.uniform(0.01, 0.5)
    for n in range(10):
        a, b = ip4(3000 + 2 * n), ip4(3001 + 2 * n)
        # echo keyed by its identifier on the requester's side
        key = canon(4, a, b, 100 + n, 0, 1)
        for k, tt in enumerate([t, t + 1, t + 50, t + 51]):
            icmp = ICMP(type=8 if k % 2 == 0 else 0, id=100 + n)
            frame = Ether() / (IP(src=a, dst=b) if k % 2 == 0 else
                               IP(src=b, dst=a)) / icmp
            plan.flow(key, "icmp", tt, frame)
        t += 0.2
    # Other protocols: GRE and SCTP-less raw protocol 99, zero ports.
    a, b = ip4(4000), ip4(4001)
    for k in range(3):
        plan.flow(canon(4, a, b, 0, 0, 47), "other", t + k,
                  Ether() / IP(src=a, dst=b, proto=47) / Raw(b"\0" * 8))
    # UDP still active at the end: stays active.
    a, b = ip4(5000), ip4(5001)
    for k in range(3):
        plan.flow(canon(4, a, b, 7, 7, 17), "udp", t + 100 + k,
                  Ether() / IP(src=a, dst=b) / UDP(sport=7, dport=7))


def scenario_ipv6(plan, rng):
    t = 0.0
    for n in range(10):
        tcp_session(plan, rng, 500 + n, t, v6=True,
                    close="F" if n % 2 else "R")
        t += 0.3
    exts = [IPv6ExtHdrHopByHop(), IPv6ExtHdrRouting(),
            IPv6ExtHdrDestOpt(), IPv6ExtHdrFragment(offset=0, m=1)]
    for n in range(8):
        a, b = ip6(7000 + 2 * n), ip6(7001 + 2 * n)
        chain = IPv6(src=a, dst=b)
        for e in exts[: 1 + n % 4]:
            chain = chain / e.copy()
        key = canon(6, a, b, 3000 + n, 53, 17)
        for k in range(3):
            plan.flow(key, "udp", t + k * 0.5,
                      Ether() / chain.copy() / UDP(sport=3000 + n, dport=53))
        t += 0.1
    a, b = ip6(7100), ip6(7101)
    plan.flow(canon(6, a, b, 0, 0, 58), "icmp", t,
              Ether() / IPv6(src=a, dst=b) / ICMPv6EchoRequest())
    # Non-first fragments: counted, never tracked.
    for n in range(4):
        plan.other(t + n * 0.1, Ether() / IPv6(src=a, dst=b) /
                   IPv6ExtHdrFragment(offset=100 + n, m=1, nh=17) /
                   Raw(b"\0" * 16), "fragment")


def quoted(pkt, cut=None):
    """The bytes of @pkt an ICMP error quotes: all, or the first @cut."""
    b = bytes(pkt)
    return Raw(b if cut is None else b[:cut])


def scenario_icmp(plan, rng):
    """ICMP keyed by identifier, ICMP errors related to the flow they
    quote or not, fragments of a flow's datagram (issue 26).

    Echo a -> b id 7 and its reply: one flow; b's request to a with the
    same id, and a reply of id 8: two flows more. Errors about the UDP
    flow a -> b:53 (port unreachable from b, frag-needed from a router),
    about the echo (time exceeded from the router): related; about an
    untracked flow, sent to another host than the quoted source: not;
    one quoting a cut header: bad_embedded; one about the UDP flow once
    it has expired: not. IPv6 likewise (too big about a TCP flow). Three
    fragmented UDP datagrams (IPv4 on a live flow and on a new one, IPv6
    on a new one): the first fragment is a packet of its flow, the later
    ones follow it; two later fragments whose first never comes.
    """
    a, b, c, r = ip4(6000), ip4(6001), ip4(6002), ip4(6099)
    a6, b6, r6 = ip6(6100), ip6(6101), ip6(6199)
    e = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    k7 = canon(4, a, b, 7, 0, 1)
    plan.flow(k7, "icmp", 0.0, e / IP(src=a, dst=b) / ICMP(type=8, id=7))
    plan.flow(k7, "icmp", 0.1, e / IP(src=b, dst=a) / ICMP(type=0, id=7))
    plan.flow(canon(4, b, a, 7, 0, 1), "icmp", 0.2,
              e / IP(src=b, dst=a) / ICMP(type=8, id=7))
    plan.flow(canon(4, a, b, 8, 0, 1), "icmp", 0.3,
              e / IP(src=b, dst=a) / ICMP(type=0, id=8))
    udp = IP(src=a, dst=b, id=1) / UDP(sport=40000, dport=53) / Raw(b"q" * 20)
    ku = canon(4, a, b, 40000, 53, 17)
    plan.flow(ku, "udp", 1.0, e / udp)
    plan.flow(ku, "udp", 1.1, e / IP(src=b, dst=a) /
              UDP(sport=53, dport=40000) / Raw(b"a" * 20))
    plan.related(2.0, e / IP(src=b, dst=a) / ICMP(type=3, code=3) /
                 quoted(udp), ku)
    plan.related(2.1, e / IP(src=r, dst=a) /
                 ICMP(type=3, code=4, nexthopmtu=1400) / quoted(udp, 28), ku)
    plan.related(2.2, e / IP(src=r, dst=a) / ICMP(type=11) /
                 quoted(IP(src=a, dst=b, ttl=1) / ICMP(type=8, id=7)), k7)
    plan.related(2.3, e / IP(src=b, dst=a) / ICMP(type=3, code=3) /
                 quoted(IP(src=a, dst=b) / UDP(sport=40001, dport=53)),
                 canon(4, a, b, 40001, 53, 17))
    plan.add(2.4, e / IP(src=b, dst=c) / ICMP(type=3, code=3) / quoted(udp),
             {"kind": "unrelated"})
    plan.other(2.5, e / IP(src=b, dst=a) / ICMP(type=3, code=3) /
               quoted(udp, 12), "bad_embedded")
    # IPv6: echo, TCP, too big about it, unreachable about nothing
    k9 = canon(6, a6, b6, 9, 0, 58)
    plan.flow(k9, "icmp", 3.0, e / IPv6(src=a6, dst=b6) /
              ICMPv6EchoRequest(id=9))
    plan.flow(k9, "icmp", 3.1, e / IPv6(src=b6, dst=a6) /
              ICMPv6EchoReply(id=9))
    syn = IPv6(src=a6, dst=b6) / TCP(sport=40002, dport=443, flags="S")
    kt = canon(6, a6, b6, 40002, 443, 6)
    plan.flow(kt, "tcp", 3.15, e / syn, "S")
    plan.related(3.2, e / IPv6(src=r6, dst=a6) / ICMPv6PacketTooBig(mtu=1280) /
                 quoted(syn), kt)
    plan.related(3.3, e / IPv6(src=b6, dst=a6) / ICMPv6DestUnreach(code=4) /
                 quoted(IPv6(src=a6, dst=b6) / UDP(sport=5, dport=6)),
                 canon(6, a6, b6, 5, 6, 17))
    # fragmented datagrams: on the live UDP flow, a new one, IPv6
    for t, src, sport, dg in ((5.0, a, 40000, 0x1234), (6.0, c, 5000, 0x1235)):
        frags = fragment(IP(src=src, dst=b, id=dg) /
                         UDP(sport=sport, dport=53) / Raw(b"x" * 3000),
                         fragsize=1400)
        plan.fragments(canon(4, src, b, sport, 53, 17), "udp", t,
                       [e / f for f in frags], (4, src, b, dg, 17))
    whole = IPv6(src=a6, dst=b6) / IPv6ExtHdrFragment(id=0x5678) / \
        UDP(sport=40003, dport=53) / Raw(b"y" * 3000)
    plan.fragments(canon(6, a6, b6, 40003, 53, 17), "udp", 7.0,
                   [e / f for f in fragment6(whole, 1400)],
                   (6, a6, b6, 0x5678, 17))
    # later fragments whose first never comes: not followed
    for k, off in enumerate((175, 350)):
        plan.other(8.0 + 0.1 * k, e / IP(src=c, dst=b, id=0x4321, proto=17,
                                         flags="MF" if k == 0 else 0,
                                         frag=off) / Raw(b"z" * 64),
                   "fragment")
    # the UDP flow idle for 70 s (past 60): an error about it is not
    # related any more
    plan.related(75.0, e / IP(src=b, dst=a) / ICMP(type=3, code=3) /
                 quoted(udp), ku)


def scenario_vlan(plan, rng):
    t = 0.0
    for n in range(6):
        vlans = [(100 + n,), (200, 300 + n)][n % 2]
        tcp_session(plan, rng, 800 + n, t, vlans=vlans)
        t += 0.2


def scenario_malformed(plan, rng):
    t = 0.0
    good = Ether() / IP(src=ip4(9000), dst=ip4(9001)) / TCP(sport=1, dport=2)
    raw = bytes(good)
    cases = [
        ("trunc_l2", raw[:10]),
        ("trunc_l3", raw[:14 + 12]),
        ("trunc_l4", raw[:14 + 20 + 10]),
        ("bad_version", raw[:14] + bytes([0x55]) + raw[15:]),
        ("bad_hdrlen", raw[:14] + bytes([0x44]) + raw[15:]),
        ("bad_length", raw[:16] + struct.pack("!H", 12) + raw[18:]),
        ("bad_ext", bytes(Ether() / IPv6(src=ip6(9100), dst=ip6(9101)) /
                          IPv6ExtHdrDestOpt() / IPv6ExtHdrDestOpt() /
                          IPv6ExtHdrDestOpt() / IPv6ExtHdrDestOpt() /
                          IPv6ExtHdrDestOpt() / IPv6ExtHdrDestOpt() /
                          IPv6ExtHdrDestOpt() / IPv6ExtHdrDestOpt() /
                          IPv6ExtHdrDestOpt() / UDP())),
        ("non_ip", bytes(Ether() / ARP())),
        ("non_ip", bytes(Ether(type=0x88cc) / Raw(b"\0" * 40))),
        ("fragment", bytes(Ether() / IP(src=ip4(9002), dst=ip4(9003),
                                        frag=100, proto=17) / Raw(b"\0" * 20))),
    ]
    for k, (kind, frame) in enumerate(cases * 3):
        plan.other(t + k * 0.01, frame, kind)


def scenario_linger(plan, rng):
    """Closed flows whose packets go on: the linger runs from each one.

    In turn: the server's FIN retransmitted every 3 s for 12 s, then the
    client's FIN (one flow, closed once, no orphan close); a half-closed
    connection whose client sends data every 2 s for 11 s after the
    server's FIN, then closes (one flow, closed once); a SYN 3 s after
    the last of such packets, 13 s after the FIN (reused); a packet 20 s
    after the last one (the linger is over: a new flow).
    """
    t = 0.0
    for n in range(12):
        kind = n % 4
        key, pkt, end = tcp_session(plan, rng, 1300 + n, t, v6=n % 3 == 2,
                                    close="")
        fin = end + rng.uniform(0.1, 0.5)
        plan.flow(key, "tcp", fin, pkt(False, "FA"), "FA")
        if kind == 0:
            last = fin
            for k in range(1, 5):
                last = fin + 3 * k + rng.uniform(0, 0.05)
                plan.flow(key, "tcp", last, pkt(False, "FA"), "FA")
            plan.flow(key, "tcp", last + 0.2, pkt(True, "FA"), "FA")
            plan.flow(key, "tcp", last + 0.3, pkt(False, "A"), "A")
        elif kind == 1:
            for dt in (2, 4, 6, 8, 10, 11):
                last = fin + dt + rng.uniform(0, 0.05)
                plan.flow(key, "tcp", last, pkt(True, "PA"), "PA")
            plan.flow(key, "tcp", last + 0.2, pkt(True, "FA"), "FA")
            plan.flow(key, "tcp", last + 0.3, pkt(False, "A"), "A")
        elif kind == 2:
            for dt in (2, 4, 6, 8, 10):
                last = fin + dt
                plan.flow(key, "tcp", last, pkt(False, "FA"), "FA")
            plan.flow(key, "tcp", last + 3, pkt(True, "S"), "S")
            plan.flow(key, "tcp", last + 3.1, pkt(False, "SA"), "SA")
        else:
            last = fin + 4
            plan.flow(key, "tcp", last, pkt(True, "A"), "A")
            plan.flow(key, "tcp", last + 20, pkt(True, "A"), "A")
        t += rng.uniform(0.5, 3)


def split_queue(event):
    """Queue of a packet: by flow key (an ICMP error's: the quoted
    packet's; a later fragment's: its datagram's, so that it comes on
    the queue of its first fragment, after it); others on queue 0."""
    if "datagram" in event:
        return int(hashlib.sha1(repr(event["datagram"]).encode())
                   .hexdigest(), 16) % 2
    if event["kind"] not in ("track", "related"):
        return 0
    return int(hashlib.sha1(event["key"].encode()).hexdigest(), 16) % 2


SCENARIOS = {
    "tcp": scenario_tcp,
    "udp_icmp": scenario_udp_icmp,
    "ipv6": scenario_ipv6,
    "vlan": scenario_vlan,
    "malformed": scenario_malformed,
    "linger": scenario_linger,
    "icmp": scenario_icmp,
}


def write_pcap(path, plan, linktype=1):
    """Classic pcap, microsecond timestamps (what net_pcap delivers)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535,
                            linktype))
        for t_us, frame, _ in plan.ordered():
            f.write(struct.pack("<IIII", t_us // 1000000, t_us % 1000000,
                                len(frame), len(frame)))
            f.write(frame)


def write(out, name, plan):
    write_pcap(os.path.join(out, name + ".pcap"), plan)
    with open(os.path.join(out, name + ".truth.json"), "w") as f:
        json.dump(truth(plan), f, indent=1, sort_keys=True)
        f.write("\n")


def large(path, flows, packets, seed):
    """Many UDP/TCP flows, packets spread over them; truth from the plan."""
    rng = random.Random(seed)
    plan = Plan()
    templates = []
    for n in range(flows):
        a, b = ip4(n), ip4(n + (1 << 23))
        if n % 2:
            frame = bytes(Ether() / IP(src=a, dst=b) /
                          UDP(sport=1024 + n % 50000, dport=53))
            templates.append((canon(4, a, b, 1024 + n % 50000, 53, 17),
                              "udp", frame))
        else:
            frame = bytes(Ether() / IP(src=a, dst=b) /
                          TCP(sport=1024 + n % 50000, dport=80, flags="A"))
            templates.append((canon(4, a, b, 1024 + n % 50000, 80, 6),
                              "tcp", frame))
    t = 0.0
    for k in range(packets):
        key, cls, frame = templates[k % flows if k < flows
                                    else rng.randrange(flows)]
        plan.flow(key, cls, t, frame, "A" if cls == "tcp" else "")
        t += 20e-6
    write_pcap(path, plan)
    with open(path + ".truth.json", "w") as f:
        json.dump(truth(plan), f, indent=1, sort_keys=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(
        __file__)))
    ap.add_argument("--large", metavar="FILE")
    ap.add_argument("--flows", type=int, default=100000)
    ap.add_argument("--packets", type=int, default=1000000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.large:
        if args.flows < 1 or args.packets < args.flows:
            sys.exit("gen_pcaps: want 1 <= --flows <= --packets")
        large(args.large, args.flows, args.packets, args.seed)
        return
    everything = Plan()
    for name, build in SCENARIOS.items():
        plan = Plan()
        build(plan, random.Random(name))
        write(args.out, name, plan)
        # The combined capture shifts each scenario to its own hour.
        shift = 3600 * list(SCENARIOS).index(name)
        everything.packets += [(t + shift * 1000000, f, e)
                               for t, f, e in plan.packets]
    write(args.out, "mixed", everything)
    # The same packets over two rx queues, split by flow (each flow's
    # key is symmetric), as a symmetric RSS would: two lcores must sum
    # to the one-lcore counters.
    for q in (0, 1):
        half = Plan()
        half.packets = [p for p in everything.packets
                        if split_queue(p[2]) == q]
        write_pcap(os.path.join(args.out, "mixed.q%d.pcap" % q), half)
    # Raw IP (link type 101): no Ethernet header, to be refused.
    raw = Plan()
    raw.other(0, IP(src=ip4(1), dst=ip4(2)) / UDP(), "non_ip")
    write_pcap(os.path.join(args.out, "raw_ip.pcap"), raw, linktype=101)


if __name__ == "__main__":
    main()
