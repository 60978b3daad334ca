#!/usr/bin/python3
"""Generate cuckooflow's tunnel captures, for --decap (docs/tunnels.md).

One Ethernet capture per tunnel cflow_parse() decapsulates: VXLAN, Geneve,
GRE and GTP-U. Between two tunnel endpoints (IPv4, and IPv6 for some
flows), each carries TCP flows opened and closed by FIN (one by RST), UDP
flows (one idle past its timeout and back), an ICMP flow, all keyed by
their INNER 5-tuple; then the edge cases: a tunnel header cut short
(trunc_l4), a tunnel with nothing inside (trunc_l2 behind an inner
Ethernet header, trunc_l3 behind an inner IP one), an inner packet that
is not IP (non_ip), inner IP and TCP headers cut short, a tunnel inside
the tunnel (one level only: keyed by the inner packet's own 5-tuple, the
nested tunnel's outer one), and a packet of the tunnel's protocol that
is not decapsulated (another message type or version: the outer flow).
Each kind is exercised in its own options: GRE with and without key and
sequence number, Geneve with options, GTP-U with extension headers.

The tunnel headers are built byte by byte (struct), as the RFCs lay them
out; scapy builds the outer and inner packets. The ground truth comes
from the plan with gen_pcaps.py's truth(), the tracker's contract, never
from the tracker. Each truth file holds "args": the options it holds for
(--decap NAME), which cflow_replay (tests/replay/check_truth.py) and the
application's e2e test_truth pass on.

usage: pcaps/gen_tunnels.py [--out DIR]
Runs under Debian's /usr/bin/python3 (python3-scapy).
"""
import argparse
import json
import os
import random
import struct

from scapy.all import ICMP, IP, TCP, UDP, ICMPv6EchoRequest, IPv6, Ether

from gen_pcaps import Plan, canon, ip4, ip6, truth, write_pcap

# The tunnel endpoints.
OUTER4 = ("198.51.100.1", "198.51.100.2")
OUTER6 = ("2001:db8:ffff::1", "2001:db8:ffff::2")
MAC = ("02:00:00:00:00:01", "02:00:00:00:00:02")


def vxlan_hdr(vni, flags=0x08):
    return struct.pack("!B3sI", flags, b"\0\0\0", vni << 8)


def geneve_hdr(vni, proto, opts=b""):
    assert len(opts) % 4 == 0
    return struct.pack("!BBHI", len(opts) // 4, 0, proto, vni << 8) + opts


def gre_hdr(proto, key=None, seq=None, csum=False, version=0):
    flags = version
    extra = b""
    if csum:
        flags |= 0x8000
        extra += b"\0\0\0\0"  # checksum and reserved1 (not verified)
    if key is not None:
        flags |= 0x2000
        extra += struct.pack("!I", key)
    if seq is not None:
        flags |= 0x1000
        extra += struct.pack("!I", seq)
    return struct.pack("!HH", flags, proto) + extra


def gtpu_hdr(teid, payload_len, exts=(), seq=None, msg=255):
    """GTP-U v1; exts: (type, content) extension headers, content padded
    to 4n - 2 bytes (length byte and next-type byte around it)."""
    flags = 0x30
    opt = b""
    if exts or seq is not None:
        flags |= (0x04 if exts else 0) | (0x02 if seq is not None else 0)
        opt = struct.pack("!HBB", seq or 0, 0, exts[0][0] if exts else 0)
        for k, (_, content) in enumerate(exts):
            nxt = exts[k + 1][0] if k + 1 < len(exts) else 0
            assert (len(content) + 2) % 4 == 0
            opt += bytes([(len(content) + 2) // 4]) + content + bytes([nxt])
    return struct.pack("!BBHI", flags, msg, len(opt) + payload_len,
                       teid) + opt


class Tunnel:
    """One tunnel kind: how an inner packet is wrapped between the
    endpoints (fwd: from endpoint 0 to 1)."""

    def __init__(self, name):
        self.name = name
        self.n = 0

    def outer(self, fwd, v6, proto_payload):
        """The outer Ethernet/IP packet around an L4 payload (scapy)."""
        a, b = OUTER6 if v6 else OUTER4
        if not fwd:
            a, b = b, a
        ipl = IPv6 if v6 else IP
        eth = Ether(src=MAC[0], dst=MAC[1])
        return eth / ipl(src=a, dst=b) / proto_payload

    def wrap(self, inner, fwd=True, v6=False, variant=0):
        """Frame bytes: inner (scapy IP packet, or bytes) in the tunnel."""
        self.n += 1
        raw = bytes(inner)
        ip_type = 0x86dd if raw and raw[0] >> 4 == 6 else 0x0800
        eth_inner = bytes(Ether(src=MAC[1], dst=MAC[0],
                                type=ip_type)) + raw
        sport = 49152 + self.n % 1000  # entropy, as VXLAN senders do
        if self.name == "vxlan":
            pl = UDP(sport=sport, dport=4789) / (vxlan_hdr(100) + eth_inner)
        elif self.name == "geneve":
            if variant % 2 == 0:
                # Options: a class 0x0102 type 0x80 option of 8 bytes.
                opts = struct.pack("!HBB", 0x0102, 0x80, 2) + b"\x11" * 8
                pl = UDP(sport=sport, dport=6081) / (
                    geneve_hdr(200, 0x6558, opts) + eth_inner)
            else:
                pl = UDP(sport=sport, dport=6081) / (
                    geneve_hdr(200, ip_type) + raw)
        elif self.name == "gre":
            if variant % 3 == 0:
                hdr = gre_hdr(ip_type)
                body = raw
            elif variant % 3 == 1:
                hdr = gre_hdr(ip_type, key=7, seq=self.n)
                body = raw
            else:
                hdr = gre_hdr(0x6558, key=9, csum=True)
                body = eth_inner
            a, b = OUTER6 if v6 else OUTER4
            if not fwd:
                a, b = b, a
            ip = (IPv6(src=a, dst=b, nh=47) if v6 else
                  IP(src=a, dst=b, proto=47))
            return bytes(Ether(src=MAC[0], dst=MAC[1]) / ip / (hdr + body))
        elif self.name == "gtpu":
            exts = ()
            if variant % 2 == 1:
                # PDU session container (0x85), 4 bytes.
                exts = ((0x85, b"\x00\x09"),)
            if variant % 4 == 3:
                exts += ((0x40, b"\x00\x01\x02\x03\x04\x05"),)
            pl = UDP(sport=2152, dport=2152) / (
                gtpu_hdr(0x1000 + variant, len(raw), exts) + raw)
        return bytes(self.outer(fwd, v6, pl))

    def header_only(self):
        """A tunnel packet whose tunnel header is cut short: trunc_l4."""
        f = self.wrap(IP(src=ip4(900), dst=ip4(901)) / UDP())
        eth_ip_udp = 14 + 20 + 8
        if self.name == "gre":
            return f[:14 + 20 + 2]
        if self.name == "gtpu":
            # E set, the extension chain cut.
            return bytes(self.outer(True, False, UDP(
                sport=2152, dport=2152) / gtpu_hdr(1, 0, ((
                    0x85, b"\x00\x09"),))[:14]))
        return f[:eth_ip_udp + 5]

    def empty(self):
        """A whole tunnel header and nothing behind: the inner packet's
        first header is cut, so trunc_l2 or trunc_l3."""
        if self.name == "vxlan":
            return bytes(self.outer(True, False, UDP(dport=4789) /
                                    vxlan_hdr(5))), "trunc_l2"
        if self.name == "geneve":
            return bytes(self.outer(True, False, UDP(dport=6081) /
                                    geneve_hdr(5, 0x6558))), "trunc_l2"
        if self.name == "gre":
            f = Ether() / IP(src=OUTER4[0], dst=OUTER4[1], proto=47)
            return bytes(f / gre_hdr(0x0800, key=1)), "trunc_l3"
        return bytes(self.outer(True, False, UDP(sport=2152, dport=2152) /
                                gtpu_hdr(5, 0))), "trunc_l3"

    def not_ip(self):
        """An inner packet that is not IP, or None where there is no
        inner Ethernet to say so."""
        arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1,
                          b"\x02\0\0\0\0\x01", bytes([10, 0, 0, 1]),
                          b"\0" * 6, bytes([10, 0, 0, 2]))
        eth_arp = bytes(Ether(src=MAC[1], dst="ff:ff:ff:ff:ff:ff",
                              type=0x0806)) + arp
        if self.name == "vxlan":
            return bytes(self.outer(True, False, UDP(dport=4789) /
                                    (vxlan_hdr(5) + eth_arp)))
        if self.name == "geneve":
            return bytes(self.outer(True, False, UDP(dport=6081) /
                                    (geneve_hdr(5, 0x6558) + eth_arp)))
        if self.name == "gre":
            f = Ether() / IP(src=OUTER4[0], dst=OUTER4[1], proto=47)
            return bytes(f / (gre_hdr(0x6558) + eth_arp))
        return None

    def not_decapsulated(self):
        """A packet of the tunnel's protocol that is not decapsulated,
        and its outer key and class: keyed as without --decap."""
        a, b = OUTER4
        if self.name == "vxlan":  # no I flag
            pl = UDP(sport=1234, dport=4789) / (vxlan_hdr(5, flags=0) +
                                                 b"\0" * 60)
            return bytes(self.outer(True, False, pl)), canon(
                4, a, b, 1234, 4789, 17), "udp"
        if self.name == "geneve":  # version 1
            pl = UDP(sport=1234, dport=6081) / (
                bytes([0x40]) + geneve_hdr(5, 0x6558)[1:] + b"\0" * 60)
            return bytes(self.outer(True, False, pl)), canon(
                4, a, b, 1234, 6081, 17), "udp"
        if self.name == "gre":  # version 1 (PPTP's enhanced GRE)
            f = Ether() / IP(src=a, dst=b, proto=47)
            return bytes(f / (gre_hdr(0x880b, version=1) + b"\0" * 8 +
                              b"\0" * 20)), canon(4, a, b, 0, 0, 47), \
                "other"
        # GTP-U echo request (message type 1)
        pl = UDP(sport=2152, dport=2152) / gtpu_hdr(0, 0, seq=1, msg=1)
        return bytes(self.outer(True, False, pl)), canon(
            4, a, b, 2152, 2152, 17), "udp"


def tcp_flow(plan, rng, tun, n, t, family, close="F", v6_outer=False):
    """Handshake, data, then a FIN exchange or an RST, inside the
    tunnel: replies come back from the other endpoint."""
    a, b = ((ip6(2 * n), ip6(2 * n + 1)) if family == 6 else
            (ip4(2 * n), ip4(2 * n + 1)))
    sport, dport = 20000 + n, 443
    ipl = IPv6 if family == 6 else IP
    key = canon(family, a, b, sport, dport, 6)
    seq = [(True, "S"), (False, "SA"), (True, "A")]
    seq += [(rng.random() < 0.5, "PA") for _ in range(rng.randint(1, 4))]
    seq += ([(True, "FA"), (False, "FA"), (True, "A")] if close == "F" else
            [(False, "R")])
    for k, (fwd, flags) in enumerate(seq):
        l3 = (ipl(src=a, dst=b) / TCP(sport=sport, dport=dport, flags=flags)
              if fwd else
              ipl(src=b, dst=a) / TCP(sport=dport, dport=sport, flags=flags))
        plan.flow(key, "tcp", t, tun.wrap(l3, fwd, v6_outer, n + k), flags)
        t += rng.uniform(0.001, 0.3)


def udp_flow(plan, tun, n, t, family, idle=False):
    """A query and answers; if idle, back after its timeout (60 s)."""
    a, b = ((ip6(2 * n), ip6(2 * n + 1)) if family == 6 else
            (ip4(2 * n), ip4(2 * n + 1)))
    ipl = IPv6 if family == 6 else IP
    sport = 40000 + n
    key = canon(family, a, b, sport, 53, 17)
    times = [t, t + 0.5, t + 1]
    if idle:
        times += [t + 90, t + 90.5]
    for k, tt in enumerate(times):
        fwd = k % 2 == 0
        l3 = (ipl(src=a, dst=b) / UDP(sport=sport, dport=53) if fwd
              else ipl(src=b, dst=a) / UDP(sport=53, dport=sport))
        plan.flow(key, "udp", tt, tun.wrap(l3, fwd, False, n + k))


def icmp_flow(plan, tun, n, t, family):
    a, b = ((ip6(2 * n), ip6(2 * n + 1)) if family == 6 else
            (ip4(2 * n), ip4(2 * n + 1)))
    key = canon(family, a, b, 0, 0, 58 if family == 6 else 1)
    for k in range(4):
        fwd = k % 2 == 0
        src, dst = (a, b) if fwd else (b, a)
        if family == 6:
            l3 = IPv6(src=src, dst=dst) / ICMPv6EchoRequest()
        else:
            l3 = IP(src=src, dst=dst) / ICMP(type=8 if fwd else 0)
        plan.flow(key, "icmp", t + k * 0.2, tun.wrap(l3, fwd, False, k))


def scenario(tun, rng):
    plan = Plan()
    t = 0.0
    for n in range(8):
        tcp_flow(plan, rng, tun, 100 + n, t, 6 if n % 3 == 1 else 4,
                 close="R" if n == 7 else "F", v6_outer=n % 4 == 2)
        t += rng.uniform(0.05, 0.2)
    for n in range(5):
        udp_flow(plan, tun, 200 + n, t + n * 0.1, 6 if n % 2 else 4,
                 idle=n == 0)
    icmp_flow(plan, tun, 300, t + 2, 4)
    icmp_flow(plan, tun, 301, t + 2, 6)
    # One level only: a VXLAN packet inside the tunnel is keyed by its
    # own outer 5-tuple (a UDP flow to 4789), however deep it goes.
    nested = (IP(src=ip4(500), dst=ip4(501)) / UDP(sport=5555, dport=4789) /
              (vxlan_hdr(9) + bytes(Ether() / IP(src=ip4(502),
                                                   dst=ip4(503)) / TCP())))
    key = canon(4, ip4(500), ip4(501), 5555, 4789, 17)
    plan.flow(key, "udp", t + 3, tun.wrap(nested, True, False, 1))
    plan.flow(key, "udp", t + 3.1, tun.wrap(nested, True, False, 2))
    # Broken tunnels and inner packets.
    plan.other(t + 3.5, tun.header_only(), "trunc_l4")
    frame, kind = tun.empty()
    plan.other(t + 3.6, frame, kind)
    frame = tun.not_ip()
    if frame is not None:
        plan.other(t + 3.7, frame, "non_ip")
    v4 = bytes(IP(src=ip4(600), dst=ip4(601)) / TCP(sport=1, dport=2))
    plan.other(t + 3.8, tun.wrap(v4[:12]), "trunc_l3")
    plan.other(t + 3.9, tun.wrap(v4[:30]), "trunc_l4")
    frame, key, cls = tun.not_decapsulated()
    plan.flow(key, cls, t + 4, frame)
    plan.flow(key, cls, t + 4.1, frame)
    return plan


TUNNELS = ("vxlan", "geneve", "gre", "gtpu")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(
        __file__)))
    args = ap.parse_args()
    for name in TUNNELS:
        plan = scenario(Tunnel(name), random.Random("tunnel_" + name))
        base = os.path.join(args.out, "tunnel_" + name)
        write_pcap(base + ".pcap", plan)
        want = truth(plan)
        want["args"] = ["--decap", name]
        with open(base + ".truth.json", "w") as f:
            json.dump(want, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
