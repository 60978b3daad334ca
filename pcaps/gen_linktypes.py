#!/usr/bin/python3
"""Generate cuckooflow's captures of link types other than Ethernet.

One capture per link type cflow_parse() takes (enum cflow_link_type):
Linux cooked v1 and v2, raw IP, raw IPv4, raw IPv6, BSD loopback (DLT_NULL)
in either byte order and OpenBSD loopback (DLT_LOOP). Each has TCP flows
opened and closed by FIN (one closed by RST), UDP flows (one idle past
its timeout and back), an ICMP flow, packets that are not IP and link
headers cut short. Their ground truth comes from the plan with
gen_pcaps.py's truth(), the tracker's contract, never from the tracker.

All files are named pcaps/link_*: the application reads Ethernet only
until it maps the port's link type, so its e2e test can tell these apart.
pcaps/link_ieee802_11.pcap (one 802.11 frame, no truth) is a link type
the parser refuses.

usage: pcaps/gen_linktypes.py [--out DIR]
Runs under Debian's /usr/bin/python3 (python3-scapy).
"""
import argparse
import json
import os
import random
import struct

from scapy.all import ICMP, IP, TCP, UDP, ICMPv6EchoRequest, IPv6

from gen_pcaps import Plan, canon, ip4, ip6, truth, write_pcap

# pcap LINKTYPE_ values written in the file headers.
LINKTYPE = {"LINUX_SLL": 113, "LINUX_SLL2": 276, "RAW": 101, "IPV4": 228,
            "IPV6": 229, "NULL": 0, "LOOP": 108, "IEEE802_11": 105}

ARPHRD_ETHER = 1
# DLT_NULL / DLT_LOOP address families (BSDs and macOS).
AF_INET = 2
AF_INET6 = (24, 28, 30)  # NetBSD/OpenBSD, FreeBSD, macOS
AF_ISO = 7


class Link:
    """How one capture's frames start."""

    def __init__(self, name, linktype, v4=True, v6=True, typed=False,
                 order=">", af6=AF_INET6):
        self.name = name
        self.linktype = linktype
        self.v4 = v4          # carries IPv4
        self.v6 = v6          # carries IPv6
        self.typed = typed    # has an ethertype: VLAN tags, ARP
        self.order = order    # NULL/LOOP family byte order
        self.af6 = af6        # NULL/LOOP AF_INET6 values used in turn

    def header(self, ethertype, n=0):
        """The link header for a payload of that ethertype."""
        if self.linktype == LINKTYPE["LINUX_SLL"]:
            # packet type (0 to us, 4 outgoing), ARPHRD, address length,
            # address (8 bytes), protocol
            return struct.pack("!HHH8sH", 4 * (n % 2), ARPHRD_ETHER, 6,
                               bytes([2, 0, 0, 0, 0, n % 256]), ethertype)
        if self.linktype == LINKTYPE["LINUX_SLL2"]:
            # protocol, reserved, interface index, ARPHRD, packet type,
            # address length, address (8 bytes)
            return struct.pack("!HHIHBB8s", ethertype, 0, 3, ARPHRD_ETHER,
                               4 * (n % 2), 6, bytes([2, 0, 0, 0, 0,
                                                      n % 256]))
        if self.linktype in (LINKTYPE["NULL"], LINKTYPE["LOOP"]):
            af = (AF_INET if ethertype == 0x0800 else
                  self.af6[n % len(self.af6)])
            return struct.pack(self.order + "I", af)
        return b""

    def frame(self, l3, n=0, vlan=None):
        """An IP packet (scapy) under this link, behind a tag if vlan."""
        raw = bytes(l3)
        ethertype = 0x86dd if raw[0] >> 4 == 6 else 0x0800
        if vlan is not None:
            return self.header(0x8100, n) + struct.pack(
                "!HH", vlan, ethertype) + raw
        return self.header(ethertype, n) + raw

    def cut_header(self):
        """A frame shorter than the link header, and its status."""
        if self.linktype == LINKTYPE["LINUX_SLL"]:
            return self.header(0x0800)[:10], "trunc_l2"
        if self.linktype == LINKTYPE["LINUX_SLL2"]:
            return self.header(0x0800)[:12], "trunc_l2"
        if self.linktype in (LINKTYPE["NULL"], LINKTYPE["LOOP"]):
            return self.header(0x0800)[:2], "trunc_l2"
        # No link header to cut: an empty frame has no IP header.
        return b"", "trunc_l3"

    def not_ip(self):
        """Frames that are not IP under this link, and their statuses."""
        if self.typed:
            arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1,
                              b"\x02\0\0\0\0\x01", bytes([10, 0, 0, 1]),
                              b"\0" * 6, bytes([10, 0, 0, 2]))
            return [(self.header(0x0806) + arp, "non_ip"),
                    (self.header(0x88cc) + b"\0" * 40, "non_ip"),
                    (self.header(0x8100) + struct.pack("!HH", 5, 0x0806) +
                     arp, "non_ip")]
        v4 = bytes(IP(src=ip4(60000), dst=ip4(60001)) / UDP())
        if self.linktype in (LINKTYPE["NULL"], LINKTYPE["LOOP"]):
            other = ">" if self.order == "<" else "<"
            frames = [(struct.pack(self.order + "I", AF_ISO) + v4, "non_ip"),
                      # Linux's AF_INET6 is no BSD family
                      (struct.pack(self.order + "I", 10) + v4, "non_ip")]
            if self.linktype == LINKTYPE["LOOP"]:
                # DLT_LOOP is big-endian only.
                frames.append((struct.pack(other + "I", AF_INET) + v4,
                               "non_ip"))
            return frames
        # Headerless links carry nothing but IP: the nearest is an IP
        # version the link does not carry.
        if self.linktype == LINKTYPE["RAW"]:
            return [(bytes([0x55]) + v4[1:], "bad_version")]
        if self.linktype == LINKTYPE["IPV4"]:
            return [(bytes(IPv6(src=ip6(60000), dst=ip6(60001)) / UDP()),
                     "bad_version")]
        return [(v4, "bad_version")]


LINKS = [
    Link("sll", LINKTYPE["LINUX_SLL"], typed=True),
    Link("sll2", LINKTYPE["LINUX_SLL2"], typed=True),
    Link("raw", LINKTYPE["RAW"]),
    Link("ipv4", LINKTYPE["IPV4"], v6=False),
    Link("ipv6", LINKTYPE["IPV6"], v4=False),
    Link("null_le", LINKTYPE["NULL"], order="<"),
    Link("null_be", LINKTYPE["NULL"], order=">"),
    Link("loop", LINKTYPE["LOOP"], order=">"),
]


def families(link):
    return [f for f, ok in ((4, link.v4), (6, link.v6)) if ok]


def tcp_flow(plan, rng, link, n, t, family, close="F", vlan=None):
    """Handshake, data, then a FIN exchange or an RST."""
    a, b = ((ip6(2 * n), ip6(2 * n + 1)) if family == 6 else
            (ip4(2 * n), ip4(2 * n + 1)))
    sport, dport = 20000 + n, 443
    ipl = IPv6 if family == 6 else IP
    key = canon(family, a, b, sport, dport, 6)
    seq = [(True, "S"), (False, "SA"), (True, "A")]
    seq += [(rng.random() < 0.5, "PA") for _ in range(rng.randint(1, 4))]
    seq += ([(True, "FA"), (False, "FA"), (True, "A")] if close == "F" else
            [(False, "R")])
    for fwd, flags in seq:
        l3 = (ipl(src=a, dst=b) / TCP(sport=sport, dport=dport, flags=flags)
              if fwd else
              ipl(src=b, dst=a) / TCP(sport=dport, dport=sport, flags=flags))
        plan.flow(key, "tcp", t, link.frame(l3, n, vlan), flags)
        t += rng.uniform(0.001, 0.3)


def udp_flow(plan, link, n, t, family, idle=False, vlan=None):
    """A query and answers; if idle, back after its timeout (60 s)."""
    a, b = ((ip6(2 * n), ip6(2 * n + 1)) if family == 6 else
            (ip4(2 * n), ip4(2 * n + 1)))
    ipl = IPv6 if family == 6 else IP
    sport = 40000 + n
    key = canon(family, a, b, sport, 53, 17)
    times = [t, t + 0.5, t + 1]
    if idle:  # expired on its next packet, then new
        times += [t + 90, t + 90.5]
    for k, tt in enumerate(times):
        l3 = (ipl(src=a, dst=b) / UDP(sport=sport, dport=53) if k % 2 == 0
              else ipl(src=b, dst=a) / UDP(sport=53, dport=sport))
        plan.flow(key, "udp", tt, link.frame(l3, n + k, vlan))


def icmp_flow(plan, link, n, t, family):
    """Echo request and reply, twice: one flow of zero ports."""
    a, b = ((ip6(2 * n), ip6(2 * n + 1)) if family == 6 else
            (ip4(2 * n), ip4(2 * n + 1)))
    key = canon(family, a, b, 0, 0, 58 if family == 6 else 1)
    for k in range(4):
        src, dst = (a, b) if k % 2 == 0 else (b, a)
        if family == 6:
            l3 = IPv6(src=src, dst=dst) / ICMPv6EchoRequest()
        else:
            l3 = IP(src=src, dst=dst) / ICMP(type=8 if k % 2 == 0 else 0)
        plan.flow(key, "icmp", t + k * 0.2, link.frame(l3, n + k))


def scenario(link, rng):
    plan = Plan()
    fams = families(link)
    t = 0.0
    for n in range(8):
        tcp_flow(plan, rng, link, 100 + n, t, fams[n % len(fams)],
                 close="R" if n == 7 else "F")
        t += rng.uniform(0.05, 0.2)
    if link.typed:  # one tag, and two (the SLL header holds the first)
        tcp_flow(plan, rng, link, 120, t, 4, vlan=100)
        udp_flow(plan, link, 121, t, 6, vlan=200)
    for n in range(5):
        udp_flow(plan, link, 200 + n, t + n * 0.1, fams[n % len(fams)],
                 idle=n == 0)
    for n, family in enumerate(fams):
        icmp_flow(plan, link, 300 + n, t + 2, family)
    for k, (frame, kind) in enumerate(link.not_ip()):
        plan.other(t + 3 + k * 0.01, frame, kind)
    frame, kind = link.cut_header()
    plan.other(t + 3.5, frame, kind)
    # An IP header cut short behind a whole link header.
    l3 = bytes(IP(src=ip4(400), dst=ip4(401)) / UDP()) if link.v4 else \
        bytes(IPv6(src=ip6(400), dst=ip6(401)) / UDP())
    plan.other(t + 3.6, link.header(0x0800 if link.v4 else 0x86dd) +
               l3[:12], "trunc_l3")
    return plan


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(
        __file__)))
    args = ap.parse_args()
    for link in LINKS:
        plan = scenario(link, random.Random("link_" + link.name))
        plan.linktype = link.linktype
        base = os.path.join(args.out, "link_" + link.name)
        write_pcap(base + ".pcap", plan, linktype=link.linktype)
        with open(base + ".truth.json", "w") as f:
            json.dump(truth(plan), f, indent=1, sort_keys=True)
            f.write("\n")
    # A link type cflow_parse() does not take: refused, no truth.
    wifi = Plan()
    wifi.other(0, b"\x08\x00" + b"\0" * 22, "non_ip")
    write_pcap(os.path.join(args.out, "link_ieee802_11.pcap"), wifi,
               linktype=LINKTYPE["IEEE802_11"])


if __name__ == "__main__":
    main()
