"""Scenarios for the inline flow filter's tests (fw_oracle.py models
them; test_firewall.py sends them through cuckooflow).

A scenario is a list of phases, each a list of frames entering ONE port
(0 inside, 1 outside), sent after an optional sleep: causality across
ports (the inside open before the outside reply) is only kept by phases.
All addresses are in 198.18.0.0/15 (inside hosts 198.18.1.0/24, outside
hosts 198.19.0.0/16) or 2001:db8:cf::/48 (inside 2001:db8:cf:1::/64,
outside 2001:db8:cf:2::/64), all MACs locally administered and the
test's own.
"""
import ipaddress
import random

from fw_oracle import NS, Config, parse_allow

INSIDE, OUTSIDE = 0, 1
MAC_IN, MAC_OUT = "02:cf:00:00:00:01", "02:cf:00:00:00:02"
TEST_MACS = {MAC_IN, MAC_OUT}
NET = ipaddress.ip_network("198.18.0.0/15")
NET6 = ipaddress.ip_network("2001:db8:cf::/48")

ALLOW_TEXT = """# services outside hosts may open (the inside address)
tcp 198.18.1.10 22
udp 198.18.1.0/28 53
1 198.18.1.11 any
"""


class Phase:
    def __init__(self, port, frames, sleep=0.0, note=""):
        self.port, self.frames, self.sleep, self.note = (port, frames, sleep,
                                                         note)


class Scenario:
    """@opts: the firewall's settings, by option name (without --);
    @plain: settings that already exist (timeouts, linger)."""

    def __init__(self, name, phases, opts=None, plain=None, allow=None):
        self.name, self.phases = name, phases
        self.opts = dict(opts or {})
        self.plain = dict(plain or {})
        self.allow = allow
        for ph in phases:
            for fr in ph.frames:
                check_frame(fr)

    def config(self, firewall=True, slack_ns=0, mirror_port=None):
        timeouts = {c: self.plain["timeout-" + c] for c in
                    ("tcp", "udp", "icmp", "other")
                    if "timeout-" + c in self.plain}
        roles = {INSIDE: "inside", OUTSIDE: "outside"} if firewall else \
            {INSIDE: "none", OUTSIDE: "none"}
        o = self.opts if firewall else {}
        return Config(
            roles=roles, tx_port={INSIDE: OUTSIDE, OUTSIDE: INSIDE},
            allow=parse_allow(self.allow) if firewall and self.allow
            else (), tcp_strict=bool(o.get("tcp-strict")), timeouts=timeouts,
            linger=self.plain.get("close-linger", 10),
            new_flow_rate=o.get("new-flow-rate", 0),
            new_flow_burst=o.get("new-flow-burst"),
            mirror_first=o.get("mirror-first", 0) if mirror_port is not None
            else 0, slack_ns=slack_ns)

    def args(self, firewall=True, allow_path=None, mirror_port=None):
        """cuckooflow's options (after --) for this scenario."""
        a = ["--mode", "forward"]
        for k, v in sorted(self.plain.items()):
            a += ["--" + k, str(v)]
        if not firewall:
            return a
        a += ["--inside", str(INSIDE), "--outside", str(OUTSIDE)]
        if self.opts.get("tcp-strict"):
            a.append("--tcp-strict")
        if self.allow:
            a += ["--allow", allow_path]
        for k in ("new-flow-rate", "new-flow-burst"):
            if k in self.opts:
                a += ["--" + k, str(self.opts[k])]
        if mirror_port is not None and self.opts.get("mirror-first"):
            a += ["--mirror-port", str(mirror_port), "--mirror-first",
                  str(self.opts["mirror-first"])]
        return a

    def events(self, times_ns, step_ns=0, spans_ns=None):
        """Oracle input: phase i's frames at times_ns[i], step_ns apart;
        with @spans_ns, each met somewhere in [times_ns[i], times_ns[i] +
        spans_ns[i]] (a live phase: from its replay's start to the app's
        counting it)."""
        ev = []
        for j, (ph, t) in enumerate(zip(self.phases, times_ns)):
            for i, fr in enumerate(ph.frames):
                e = (t + i * step_ns, ph.port, bytes(fr))
                ev.append(e + (spans_ns[j],) if spans_ns else e)
        return ev

    def nominal_times(self, phase_s=0.5):
        """Phase start times as a replay would see them: phase_s per
        phase plus the sleeps."""
        t, out = 10 * NS, []
        for ph in self.phases:
            t += int(ph.sleep * NS)
            out.append(t)
            t += int(phase_s * NS)
        return out

    def needs_causality(self):
        return len({ph.port for ph in self.phases}) > 1


def check_frame(fr):
    from scapy.all import Ether, IP, IPv6
    p = Ether(bytes(fr))
    assert p.src in TEST_MACS, p.src
    for l3, net in ((IP, NET), (IPv6, NET6)):
        if p.haslayer(l3):
            assert ipaddress.ip_address(p[l3].src) in net, p[l3].src
            assert ipaddress.ip_address(p[l3].dst) in net, p[l3].dst


# ------------------------------------------------------------ frames

def _eth(port):
    from scapy.all import Ether
    return Ether(src=MAC_IN, dst=MAC_OUT) if port == INSIDE else \
        Ether(src=MAC_OUT, dst=MAC_IN)


def tcp(port, src, dst, sport, dport, flags, payload=b""):
    from scapy.all import IP, TCP, Raw
    return bytes(_eth(port) / IP(src=src, dst=dst) /
                 TCP(sport=sport, dport=dport, flags=flags, seq=1000,
                     ack=2000 if "A" in flags else 0) / Raw(payload))


def udp(port, src, dst, sport, dport, payload=b"u"):
    from scapy.all import IP, UDP, Raw
    return bytes(_eth(port) / IP(src=src, dst=dst) /
                 UDP(sport=sport, dport=dport) / Raw(payload))


def icmp(port, src, dst, typ, ident=7, seq=1):
    from scapy.all import IP, ICMP, Raw
    return bytes(_eth(port) / IP(src=src, dst=dst) /
                 ICMP(type=typ, id=ident, seq=seq) / Raw(b"ping"))


def icmp6(port, src, dst, typ, ident=9, seq=1):
    """ICMPv6 echo request (128) or reply (129)."""
    from scapy.all import IPv6, ICMPv6EchoRequest, ICMPv6EchoReply, Raw
    m = ICMPv6EchoRequest if typ == 128 else ICMPv6EchoReply
    return bytes(_eth(port) / IPv6(src=src, dst=dst) /
                 m(id=ident, seq=seq) / Raw(b"ping"))


def tcp6(port, src, dst, sport, dport, flags, payload=b""):
    from scapy.all import IPv6, TCP, Raw
    return bytes(_eth(port) / IPv6(src=src, dst=dst) /
                 TCP(sport=sport, dport=dport, flags=flags, seq=1000,
                     ack=2000 if "A" in flags else 0) / Raw(payload))


def udp6(port, src, dst, sport, dport, payload=b"u"):
    from scapy.all import IPv6, UDP, Raw
    return bytes(_eth(port) / IPv6(src=src, dst=dst) /
                 UDP(sport=sport, dport=dport) / Raw(payload))


def icmp_error(port, src, dst, typ, code, quoted, cut=None):
    """An ICMP error (IPv4, or ICMPv6 when @quoted is an IPv6 frame)
    from @src to @dst quoting the IP packet of the frame @quoted (all of
    it, or its first @cut bytes)."""
    from scapy.all import IP, IPv6, ICMP, Ether, Raw
    from scapy.all import (ICMPv6DestUnreach, ICMPv6PacketTooBig,
                           ICMPv6TimeExceeded, ICMPv6ParamProblem)
    ip = bytes(Ether(quoted).payload)
    q = Raw(ip if cut is None else ip[:cut])
    if ip[0] >> 4 == 4:
        return bytes(_eth(port) / IP(src=src, dst=dst) /
                     ICMP(type=typ, code=code, nexthopmtu=1400
                          if (typ, code) == (3, 4) else 0) / q)
    m = {1: ICMPv6DestUnreach, 2: ICMPv6PacketTooBig, 3: ICMPv6TimeExceeded,
         4: ICMPv6ParamProblem}[typ]
    return bytes(_eth(port) / IPv6(src=src, dst=dst) /
                 (m(mtu=1280) if typ == 2 else m(code=code)) / q)


def arp(port, src, dst):
    from scapy.all import ARP
    return bytes(_eth(port) / ARP(psrc=src, pdst=dst, hwsrc=MAC_IN
                                  if port == INSIDE else MAC_OUT))


def fragment(port, src, dst):
    """A non-first IPv4 fragment (offset 185 * 8)."""
    from scapy.all import IP, Raw
    return bytes(_eth(port) / IP(src=src, dst=dst, proto=17, frag=185) /
                 Raw(b"f" * 40))


def bad_tcp(port, src, dst):
    """TCP with a data offset of 4: malformed (bad_hdrlen)."""
    from scapy.all import IP, TCP
    return bytes(_eth(port) / IP(src=src, dst=dst) /
                 TCP(sport=4444, dport=80, flags="S", dataofs=4))


def inside_host(i):
    return "198.18.1.%d" % i


def outside_host(i):
    return "198.19.%d.%d" % (i // 250, i % 250 + 1)


# ------------------------------------------------------------ scenarios

def basic():
    """Inside-opened TCP/UDP/ICMP flows both ways; unsolicited outside
    packets (random and spoof-like); allowed services; non-IP and
    malformed frames both ways; FIN/RST closing and the
    linger's late packets; a FIN/RST of no flow from each side."""
    rng = random.Random(14)
    a, b, c = inside_host(2), inside_host(3), inside_host(4)
    x, y = outside_host(1), outside_host(2)
    ssh, dns = inside_host(10), inside_host(5)
    p1 = [tcp(INSIDE, a, x, 40001, 443, "S"),
          udp(INSIDE, b, y, 40002, 53, b"query"),
          icmp(INSIDE, c, x, 8),
          tcp(INSIDE, a, y, 40003, 80, "SA"),   # picked up mid-way
          tcp(INSIDE, a, y, 40004, 80, "A"),
          arp(INSIDE, a, x), bad_tcp(INSIDE, a, x),
          tcp(INSIDE, a, x, 40009, 443, "R"),   # orphan
          tcp(INSIDE, a, x, 40010, 443, "FA")]  # orphan
    p2 = [tcp(OUTSIDE, x, a, 443, 40001, "SA"),
          udp(OUTSIDE, y, b, 53, 40002, b"answer"),
          icmp(OUTSIDE, x, c, 0),
          tcp(OUTSIDE, y, a, 80, 40003, "A"),
          tcp(OUTSIDE, y, a, 80, 40004, "PA", b"data"),
          # unsolicited: random
          ] + [tcp(OUTSIDE, outside_host(rng.randrange(20, 400)),
                   inside_host(rng.randrange(20, 200)),
                   rng.randrange(1024, 65535), rng.choice((22, 80, 3389)),
                   rng.choice(("S", "A", "PA", "SA")))
               for _ in range(8)] + [
          udp(OUTSIDE, outside_host(rng.randrange(20, 400)),
              inside_host(rng.randrange(20, 200)),
              rng.randrange(1024, 65535), rng.randrange(1, 1024))
          for _ in range(4)] + [
          # spoof-like: the tracked flows' hosts, a port off
          tcp(OUTSIDE, x, a, 443, 40002, "A"),
          tcp(OUTSIDE, x, a, 444, 40001, "SA"),
          udp(OUTSIDE, y, b, 53, 40003, b"answer"),
          icmp(OUTSIDE, y, c, 0),          # ICMP: another host pair
          tcp(OUTSIDE, x, a, 443, 40009, "R"),   # RST of no flow
          tcp(OUTSIDE, x, a, 443, 40010, "FA"),  # FIN of no flow
          icmp(OUTSIDE, x, b, 8),          # ping, not allowed
          # allowed services
          tcp(OUTSIDE, x, ssh, 50001, 22, "S"),
          udp(OUTSIDE, y, dns, 50002, 53, b"q"),
          icmp(OUTSIDE, y, inside_host(11), 8),
          tcp(OUTSIDE, x, ssh, 50003, 23, "S"),  # the wrong port
          udp(OUTSIDE, y, inside_host(17), 50004, 53, b"q"),  # not /28
          # not IP, malformed from outside (no fragments live: the
          # af_packet PMD's PACKET_FANOUT_FLAG_DEFRAG holds a lone
          # non-first fragment in the kernel's reassembly: outside_pcap)
          arp(OUTSIDE, x, a), bad_tcp(OUTSIDE, x, a)]
    p3 = [tcp(INSIDE, a, x, 40001, 443, "A"),
          tcp(INSIDE, a, x, 40001, 443, "PA", b"GET /"),
          tcp(INSIDE, ssh, x, 22, 50001, "SA"),
          udp(INSIDE, dns, y, 53, 50002, b"a"),
          icmp(INSIDE, inside_host(11), y, 0),
          udp(INSIDE, b, y, 40002, 53, b"again")]
    p4 = [tcp(OUTSIDE, x, a, 443, 40001, "PA", b"200 OK"),
          tcp(OUTSIDE, x, a, 443, 40001, "FA"),     # closes
          tcp(OUTSIDE, x, ssh, 50001, 22, "A"),
          tcp(OUTSIDE, y, a, 80, 40004, "R"),       # closes by RST
          udp(OUTSIDE, y, b, 53, 40002, b"more")]
    p5 = [tcp(INSIDE, a, x, 40001, 443, "FA"),      # lingering: seen
          tcp(INSIDE, a, y, 40004, 80, "A")]        # lingering: seen
    p6 = [tcp(OUTSIDE, x, a, 443, 40001, "A"),      # last ACK: seen
          tcp(OUTSIDE, x, a, 443, 40001, "S")]      # no_create SYN: seen
    return Scenario("basic", [Phase(INSIDE, p1), Phase(OUTSIDE, p2),
                              Phase(INSIDE, p3), Phase(OUTSIDE, p4),
                              Phase(INSIDE, p5), Phase(OUTSIDE, p6)],
                    allow=ALLOW_TEXT)


def strict():
    """--tcp-strict: only a SYN without ACK creates a TCP flow; from
    inside (ACK-only, SYN-ACK, data: not_syn, dropped) and from outside
    (allowed service but not SYN: not_syn; not allowed: unsolicited)."""
    a, x = inside_host(2), outside_host(1)
    ssh = inside_host(10)
    p1 = [tcp(INSIDE, a, x, 41001, 443, "S"),
          tcp(INSIDE, a, x, 41002, 443, "A"),
          tcp(INSIDE, a, x, 41003, 443, "SA"),
          tcp(INSIDE, a, x, 41004, 443, "PA", b"mid"),
          tcp(INSIDE, a, x, 41001, 443, "A"),      # after the SYN: seen
          udp(INSIDE, a, x, 41005, 123, b"ntp")]   # not TCP: new
    p2 = [tcp(OUTSIDE, x, a, 443, 41001, "SA"),
          tcp(OUTSIDE, x, a, 443, 41002, "A"),     # no flow: unsolicited
          tcp(OUTSIDE, x, ssh, 51001, 22, "A"),    # allowed, ACK: not_syn
          tcp(OUTSIDE, x, ssh, 51002, 22, "SA"),   # allowed, SYN-ACK
          tcp(OUTSIDE, x, ssh, 51003, 22, "S"),    # allowed SYN: new
          udp(OUTSIDE, x, a, 123, 41005, b"ntp")]
    p3 = [tcp(INSIDE, ssh, x, 22, 51003, "SA"),
          tcp(INSIDE, a, x, 41003, 443, "SA")]    # still no flow
    return Scenario("strict", [Phase(INSIDE, p1), Phase(OUTSIDE, p2),
                               Phase(INSIDE, p3)],
                    opts={"tcp-strict": True}, allow=ALLOW_TEXT)


def expiry(sleep=5.0):
    """--timeout-udp 2 --timeout-icmp 2 --close-linger 2: an inside UDP
    flow answered, then idle past its timeout: the outside packet is
    unsolicited again (and the flow counted expired); the inside opens it
    anew. A TCP flow closed by a FIN: the outside's packets within the
    linger pass; past it, unsolicited. A SYN on a lingering flow from
    inside: reused. Sleep 5 s > 2 + max(1, 2/8) + 1 s.
    (The linger's and timeouts' short gaps need phases well under 1.9 s
    apart: the model raises Ambiguous otherwise.)"""
    a, b, x = inside_host(2), inside_host(3), outside_host(1)
    p1 = [udp(INSIDE, a, x, 42001, 5000, b"hi"),
          icmp(INSIDE, b, x, 8),
          tcp(INSIDE, a, x, 42002, 443, "S"),
          tcp(INSIDE, a, x, 42003, 443, "S"),
          tcp(INSIDE, a, x, 42004, 443, "S")]
    p2 = [udp(OUTSIDE, x, a, 5000, 42001, b"ho"),
          icmp(OUTSIDE, x, b, 0),
          tcp(OUTSIDE, x, a, 443, 42002, "SA"),
          tcp(OUTSIDE, x, a, 443, 42003, "SA"),
          tcp(OUTSIDE, x, a, 443, 42004, "SA"),
          tcp(OUTSIDE, x, a, 443, 42002, "FA"),   # closes 42002
          tcp(OUTSIDE, x, a, 443, 42003, "R")]    # closes 42003
    p3 = [tcp(INSIDE, a, x, 42002, 443, "FA"),    # lingering: seen
          tcp(INSIDE, a, x, 42003, 443, "S"),     # SYN: reused + new
          tcp(INSIDE, a, x, 42004, 443, "A")]
    p4 = [udp(OUTSIDE, x, a, 5000, 42001, b"late"),   # expired
          icmp(OUTSIDE, x, b, 0),                    # expired
          tcp(OUTSIDE, x, a, 443, 42002, "A"),       # linger over
          tcp(OUTSIDE, x, a, 443, 42004, "PA", b"tcp 300 s: alive")]
    p5 = [udp(INSIDE, a, x, 42001, 5000, b"again")]   # new again
    p6 = [udp(OUTSIDE, x, a, 5000, 42001, b"ok")]
    return Scenario("expiry", [Phase(INSIDE, p1), Phase(OUTSIDE, p2),
                               Phase(INSIDE, p3),
                               Phase(OUTSIDE, p4, sleep=sleep),
                               Phase(INSIDE, p5), Phase(OUTSIDE, p6)],
                    plain={"timeout-udp": 2, "timeout-icmp": 2,
                           "close-linger": 2})


def admission(rate=1, burst=5, n=12):
    """--new-flow-rate 1 --new-flow-burst 5, one worker: a burst of @n
    new inside UDP flows: 5 pass, the rest are dropped (limited); the
    admitted flows' next packets pass (no token needed); the outside's
    answers to the limited ones are unsolicited."""
    a, x = inside_host(2), outside_host(1)
    p1 = [udp(INSIDE, a, x, 43000 + i, 7000, b"n") for i in range(n)]
    p2 = [udp(OUTSIDE, x, a, 7000, 43000 + i, b"r") for i in range(n)]
    # Only the admitted flows again: a new flow now would depend on the
    # tokens refilled in the meantime (live times are not exact).
    p3 = [udp(INSIDE, a, x, 43000 + i, 7000, b"m") for i in range(burst)]
    return Scenario("admission", [Phase(INSIDE, p1), Phase(OUTSIDE, p2),
                                  Phase(INSIDE, p3)],
                    opts={"new-flow-rate": rate, "new-flow-burst": burst})


def admission_pcap(rate=10, burst=4):
    """One inside port (pcap, exact times): 10 flows at t0 (4 pass);
    1 ms later the other direction of the 10 (the 4 admitted: seen; the
    6 others try to open from inside: 0.01 tokens, limited); 6 more at
    t0 + 0.25 s (2.5 tokens: 2 pass), then 6 at t0 + 2 s (full again:
    4 pass)."""
    a, x = inside_host(2), outside_host(1)
    frames = []
    for i in range(10):
        frames.append((0, udp(INSIDE, a, x, 44000 + i, 7000, b"n")))
    for i in range(10):
        frames.append((1000, udp(INSIDE, x, a, 7000, 44000 + i, b"r")))
    for i in range(6):
        frames.append((250000, tcp(INSIDE, a, x, 44100 + i, 80, "S")))
    for i in range(6):
        frames.append((2000000, udp(INSIDE, a, x, 44200 + i, 7000, b"z")))
    return TimedScenario("admission_pcap", frames,
                         opts={"new-flow-rate": rate,
                               "new-flow-burst": burst})


def strict_pcap():
    """--tcp-strict from one inside port: SYN-ACK and ACK-only frames of
    no flow dropped (not_syn); a SYN opens; both directions then pass."""
    a, x = inside_host(2), outside_host(1)
    frames = [(0, tcp(INSIDE, a, x, 45001, 80, "SA")),
              (10, tcp(INSIDE, a, x, 45002, 80, "A")),
              (20, tcp(INSIDE, a, x, 45003, 80, "S")),
              (30, tcp(INSIDE, x, a, 80, 45003, "SA")),
              (40, tcp(INSIDE, a, x, 45003, 80, "A")),
              (50, tcp(INSIDE, x, a, 80, 45002, "A")),
              (60, tcp(INSIDE, a, x, 45003, 80, "FA")),
              (70, tcp(INSIDE, x, a, 80, 45003, "FA")),
              (80, tcp(INSIDE, a, x, 45003, 80, "A")),
              (90, udp(INSIDE, a, x, 45004, 9, b"u"))]
    return TimedScenario("strict_pcap", frames, opts={"tcp-strict": True})


def mirror_pcap(first=3):
    """--mirror-first 3 from one inside port: flows of 1 to 8 packets,
    both directions interleaved: each flow's first 3 packets (both
    directions) are mirrored; a flow closed and reopened by a SYN starts
    counting again; untracked frames (non-IP, fragments) never."""
    rng = random.Random(3)
    a, x = inside_host(2), outside_host(1)
    seq = []
    for f in range(8):
        for k in range(f + 1):
            up = k % 2 == 0
            seq.append((f, udp(INSIDE, a if up else x, x if up else a,
                               46000 + f if up else 8000,
                               8000 if up else 46000 + f,
                               b"%d.%d" % (f, k))))
    order = []
    pending = {}
    for f, fr in seq:
        pending.setdefault(f, []).append(fr)
    while pending:
        f = rng.choice(sorted(pending))
        order.append(pending[f].pop(0))
        if not pending[f]:
            del pending[f]
    tcpf = [tcp(INSIDE, a, x, 46100, 80, "S"),
            tcp(INSIDE, x, a, 80, 46100, "SA"),
            tcp(INSIDE, a, x, 46100, 80, "A"),
            tcp(INSIDE, a, x, 46100, 80, "PA", b"x"),
            tcp(INSIDE, a, x, 46100, 80, "FA"),
            tcp(INSIDE, x, a, 80, 46100, "FA"),
            tcp(INSIDE, a, x, 46100, 80, "S"),     # reused: ordinal 1
            tcp(INSIDE, x, a, 80, 46100, "SA"),
            tcp(INSIDE, a, x, 46100, 80, "A"),
            tcp(INSIDE, a, x, 46100, 80, "PA", b"y"),
            arp(INSIDE, a, x), fragment(INSIDE, a, x)]
    frames = [(i * 100, fr) for i, fr in enumerate(order + tcpf)]
    return TimedScenario("mirror_pcap", frames, opts={"mirror-first": first})


def expiry_pcap():
    """Exact times, one port (plain forward mode checks the model's
    timeouts, linger and reuse against today's app): UDP idle 2.5 s
    under --timeout-udp 5 (alive), then 9 s (expired, new again); a
    closed TCP flow's late ACK 0.5 s into a 3 s linger (seen, restarts
    it), then 8 s later (gone: a new flow, picked up mid-way); SYN on a
    lingering flow (reused)."""
    a, x = inside_host(2), outside_host(1)
    ms = 1000
    frames = [(0, udp(INSIDE, a, x, 47001, 5000, b"1")),
              (1 * ms, tcp(INSIDE, a, x, 47002, 443, "S")),
              (2 * ms, tcp(INSIDE, a, x, 47003, 443, "S")),
              (3 * ms, tcp(INSIDE, x, a, 443, 47002, "FA")),
              (4 * ms, tcp(INSIDE, x, a, 443, 47003, "R")),
              (500 * ms, tcp(INSIDE, a, x, 47002, 443, "A")),
              (600 * ms, tcp(INSIDE, a, x, 47003, 443, "S")),
              (2500 * ms, udp(INSIDE, x, a, 5000, 47001, b"2")),
              (8500 * ms, tcp(INSIDE, x, a, 443, 47002, "A")),
              (11500 * ms, udp(INSIDE, a, x, 47001, 5000, b"3")),
              (11600 * ms, tcp(INSIDE, x, a, 443, 47003, "SA"))]
    return TimedScenario("expiry_pcap", frames,
                         plain={"timeout-udp": 5, "close-linger": 3})


def outside_pcap():
    """Frames on both ports whose outcome needs no order across them
    (no flow has packets on both): the outside's unsolicited packets,
    non-first fragments (dropped), malformed (dropped), non-IP
    (forwarded), an allowed service opened and used from outside only;
    the inside's own malformed frames and flows (forwarded), and a later
    fragment whose first never comes (held, then dropped at the end, as
    nf_defrag drops a datagram it never completed)."""
    rng = random.Random(5)
    a, x = inside_host(2), outside_host(1)
    ssh = inside_host(10)
    out = [tcp(OUTSIDE, outside_host(rng.randrange(2, 300)),
               inside_host(rng.randrange(20, 200)),
               rng.randrange(1024, 65535), rng.choice((80, 443, 445)),
               rng.choice(("S", "A", "R", "FA"))) for _ in range(6)] + [
        fragment(OUTSIDE, x, a), bad_tcp(OUTSIDE, x, a), arp(OUTSIDE, x, a),
        tcp(OUTSIDE, x, ssh, 52001, 22, "S"),
        tcp(OUTSIDE, x, ssh, 52001, 22, "A"),
        tcp(OUTSIDE, x, ssh, 52001, 22, "FA"),
        tcp(OUTSIDE, x, ssh, 52001, 22, "A"),
        icmp(OUTSIDE, x, a, 8)]
    ins = [fragment(INSIDE, a, x), bad_tcp(INSIDE, a, x), arp(INSIDE, a, x),
           udp(INSIDE, a, x, 48001, 53, b"q"),
           tcp(INSIDE, a, x, 48002, 80, "S")]
    frames = [(i * 100, fr) for i, fr in enumerate(ins)] + \
        [(i * 100 + 50, OUTSIDE, fr) for i, fr in enumerate(out)]
    return TimedScenario("outside_pcap", frames, allow=ALLOW_TEXT)


class TimedScenario(Scenario):
    """Frames with exact times (us from t0), (t, frame) entering port 0
    (inside) or (t, port, frame): for pcap replays under --clock pkt
    (one rx capture per port; the two ports' order is not kept)."""
    T0 = 1700000000

    def __init__(self, name, frames, opts=None, plain=None, allow=None):
        frames = sorted(((f[0], INSIDE, f[1]) if len(f) == 2 else f
                         for f in frames), key=lambda f: f[0])
        self.timed = frames
        by_port = {}
        for t, port, fr in frames:
            by_port.setdefault(port, []).append(fr)
        Scenario.__init__(self, name, [Phase(port, fr) for port, fr in
                                       sorted(by_port.items())],
                          opts, plain, allow)

    def events(self, times_ns=None, step_ns=None):
        return [(self.T0 * NS + t * 1000, port, bytes(f))
                for t, port, f in self.timed]

    def packets(self, port=INSIDE):
        """scapy packets entering @port, with their capture times."""
        from decimal import Decimal
        from scapy.all import Ether
        out = []
        for t, p_, f in self.timed:
            if p_ != port:
                continue
            p = Ether(f)
            p.time = Decimal(self.T0) + Decimal(t) / 1000000
            out.append(p)
        return out


def inside6(i):
    return "2001:db8:cf:1::%x" % i


def outside6(i):
    return "2001:db8:cf:2::%x" % i


ICMP_ALLOW = """# issue 26: echo requests to one inside host
icmp 198.18.1.12 echo
icmpv6 2001:db8:cf:1::12 echo
"""


def icmp_table():
    """Issue 26's table, IPv4 and IPv6: the inside host c pings x (echo id
    7; v6 id 9), b sends UDP to y:53, a opens TCP to x:443. From the
    outside: the echo reply passes; an echo request from x to c, a reply
    of another id do not (unsolicited); port unreachable about the UDP
    flow, frag-needed / packet too big from a router on the path (r) about
    it and about the TCP flow (quoting its SYN), time exceeded about the
    echo: related, they pass; port unreachable about an untracked flow,
    one to another host than the quoted source: unrelated, dropped; a
    quoted header cut short: malformed. An echo request to the host the
    allow list opens echo to passes, a reply to it does not. From the
    inside, an error about an outside packet of a flow (the reply
    direction) is related; one about nothing is forwarded (inside)
    unrelated. Then the flows go on: no error refreshed or closed them
    (the TCP SYN quoted with an RST flag would not either)."""
    a, b, c, pinged = (inside_host(2), inside_host(3), inside_host(4),
                       inside_host(12))
    x, y, r = outside_host(1), outside_host(2), outside_host(99)
    a6, b6, c6, pinged6 = inside6(2), inside6(3), inside6(4), inside6(0x12)
    x6, y6, r6 = outside6(1), outside6(2), outside6(0x99)
    syn = tcp(INSIDE, a, x, 40001, 443, "S")
    dns = udp(INSIDE, b, y, 40002, 53, b"query")
    ping = icmp(INSIDE, c, x, 8)
    syn6 = tcp6(INSIDE, a6, x6, 40011, 443, "S")
    dns6 = udp6(INSIDE, b6, y6, 40012, 53, b"query")
    ping6 = icmp6(INSIDE, c6, x6, 128)
    p1 = [syn, dns, ping, syn6, dns6, ping6]
    p2 = [icmp(OUTSIDE, x, c, 0),                        # reply: passes
          icmp(OUTSIDE, x, c, 8),                        # request: no
          icmp(OUTSIDE, x, c, 0, ident=8),               # id 8: no
          icmp_error(OUTSIDE, y, b, 3, 3, dns),          # related
          icmp_error(OUTSIDE, r, b, 3, 4, dns, cut=28),  # related
          icmp_error(OUTSIDE, r, a, 3, 4, syn, cut=28),  # related (TCP)
          icmp_error(OUTSIDE, r, c, 11, 0, ping),        # related (echo)
          icmp_error(OUTSIDE, y, b, 3, 3,                # untracked
                     udp(INSIDE, b, y, 40099, 53)),
          icmp_error(OUTSIDE, y, a, 3, 3, dns),          # to another host
          icmp_error(OUTSIDE, y, b, 3, 3, dns, cut=12),  # cut: malformed
          icmp(OUTSIDE, x, pinged, 8, ident=5),          # allowed echo
          icmp(OUTSIDE, x, pinged, 0, ident=6),          # a reply: no
          tcp(OUTSIDE, x, a, 443, 40001, "SA"),
          icmp6(OUTSIDE, x6, c6, 129),
          icmp6(OUTSIDE, x6, c6, 128),
          icmp6(OUTSIDE, x6, c6, 129, ident=8),
          icmp_error(OUTSIDE, y6, b6, 1, 4, dns6),
          icmp_error(OUTSIDE, r6, a6, 2, 0, syn6, cut=48),
          icmp_error(OUTSIDE, r6, c6, 3, 0, ping6),
          icmp_error(OUTSIDE, y6, b6, 1, 4,
                     udp6(INSIDE, b6, y6, 40099, 53)),
          icmp_error(OUTSIDE, y6, b6, 1, 4, dns6, cut=20),
          icmp6(OUTSIDE, x6, pinged6, 128, ident=5),
          tcp6(OUTSIDE, x6, a6, 443, 40011, "SA")]
    p3 = [icmp_error(INSIDE, b, y, 3, 3,                 # the inside's
                     udp(OUTSIDE, y, b, 53, 40002, b"late")),
          icmp_error(INSIDE, b, y, 3, 3,                 # about nothing
                     udp(OUTSIDE, y, b, 53, 40077)),
          icmp(INSIDE, pinged, x, 0, ident=5),
          tcp(INSIDE, a, x, 40001, 443, "A"),
          tcp6(INSIDE, a6, x6, 40011, 443, "A")]
    p4 = [udp(OUTSIDE, y, b, 53, 40002, b"answer"),
          tcp(OUTSIDE, x, a, 443, 40001, "PA", b"data"),
          udp6(OUTSIDE, y6, b6, 53, 40012, b"answer"),
          tcp6(OUTSIDE, x6, a6, 443, 40011, "PA", b"data")]
    return Scenario("icmp_table", [Phase(INSIDE, p1), Phase(OUTSIDE, p2),
                                   Phase(INSIDE, p3), Phase(OUTSIDE, p4)],
                    allow=ICMP_ALLOW)


LIVE = (basic, strict, expiry, admission, icmp_table)
PCAP = (admission_pcap, strict_pcap, mirror_pcap, expiry_pcap, outside_pcap)
