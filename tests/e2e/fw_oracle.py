"""An independent model of cuckooflow's inline flow filter (issue 14:
firewall mode, admission control, first-N mirroring), for the tests.

Plain Python on the frames' bytes: no lib/cuckoo, no app code. Exact
tables: a dict keyed by the canonical 5-tuple (the lower (address, port)
endpoint first, addresses as 16 bytes, IPv4-mapped), so the model never
has a false positive, and any difference from the app is the app's
(or the spec's) to explain.

What it models (docs/firewall.md):
- port roles: "none" (not firewall mode), "inside", "outside"; an outside
  packet that does not match the allow list may only find a flow
  (no_create);
- creation checks for an untracked packet, in order: FIN/RST (no_create:
  unsolicited, else orphan_close), no_create (unsolicited), tcp_strict
  (not SYN-only: not_syn), the token bucket (new_flow_limited), insert
  (never fails here: the tables are exact and unbounded);
- idle timeouts per class, judged at each packet's time: a flow idle
  longer than its timeout is expired when its next packet comes, and
  that packet is a new flow's (subject to the creation checks);
- TCP FIN/RST closes a flow once (closed); the closed flow lingers
  `linger` s after its last packet, every packet of it is seen and
  restarts the linger; a SYN without ACK on it is a new flow (reused and
  new; from an outside port without the allow list it stays a packet of
  the closed flow: seen);
- the admission token bucket (per worker; tokens start at burst and
  refill at rate per second by packet time; one token per flow created,
  new or reused);
- the per-flow packet ordinal (both directions, 1 = the creating
  packet, saturating at 2^count_bits - 1; 0 untracked): mirrored when
  1 <= ordinal <= N;
- direction (issue 24): each flow keeps its inside endpoint (the source
  of the packet that opened it from inside, the destination of one an
  allowed outside packet opened); an outside packet of a live flow whose
  source is that endpoint is wrong_direction and changes nothing;
- ICMP (issue 26): a query (echo, timestamp, information, mask; ICMPv6
  echo) is keyed by its identifier, on the requester's side (the
  responder's port 0); an ICMP error (v4 3, 11, 12; v6 1-4) is about the
  packet it quotes: related if that packet's flow is live and the error
  goes back to its source (from the outside: to the flow's inside
  endpoint), else unrelated; it changes no flow; a quoted packet cut
  short is malformed (bad_embedded); an error about an error or a
  non-first fragment, or to another host than the quoted source, is
  unrelated;
- fragments (issue 26): a later fragment never has its first one here;
  in firewall mode it is held for it and then dropped, inside as well
  (dropped as fragment);
- the action table role x verdict -> forward or drop(reason); from the
  outside, a non-IP frame other than ARP is dropped by
  --firewall-unparsed drop (the default), its reason by its ethertype,
  and unsolicited IPv6 neighbour discovery (ICMPv6 133-137, hop limit
  255) passes.

The app expires a flow no earlier than its timeout and no later than
timeout + max(1 s, timeout / 8) (the sweep), and time is kept in 16.8 ms
ticks: a gap in [timeout - 50 ms, timeout + max(1 s, timeout/8) + 1 s]
(widened by `slack_ns` on both sides, for live runs whose packet times are
only known to within a phase) has no single answer, and the model raises
Ambiguous rather than pick one. A live run that knows each packet's time
to within its own phase gives that span with the packet instead
(packet(t, port, frame, span_ns): the app met it somewhere in
[t, t + span_ns]); an idle gap is then known to within the two packets'
spans, not the run's slowest phase twice. The same for the linger and for a token
count within a hair of 1.
"""
import ipaddress
import struct
from collections import OrderedDict
from fractions import Fraction

NS = 1000000000

TCP, UDP, ICMP, ICMP6, SCTP, UDPLITE = 6, 17, 1, 58, 132, 136
FIN, SYN, RST, ACK = 0x01, 0x02, 0x04, 0x10

# Verdicts (the tracker's) and the actions of the spec's table.
NEW, SEEN, CLOSING = "new", "seen", "closing"
ORPHAN, UNSOLICITED, NOT_SYN, LIMITED = ("orphan", "unsolicited", "not_syn",
                                         "limited")
FULL, NON_IP, MALFORMED, FRAGMENT = "full", "non_ip", "malformed", "fragment"
WRONG_DIR = "wrong_dir"
RELATED, UNRELATED = "related", "unrelated"
VERDICTS = (NEW, SEEN, CLOSING, ORPHAN, UNSOLICITED, NOT_SYN, LIMITED, FULL,
            NON_IP, MALFORMED, FRAGMENT, WRONG_DIR, RELATED, UNRELATED)

FWD = "forward"
# role -> verdict -> FWD or a drop reason; None: cannot happen. The
# outside's NON_IP cell is ARP's: other frames the parser cannot place
# follow --firewall-unparsed (unparsed_reason()), and its UNSOLICITED cell
# lets IPv6 neighbour discovery through (is_nd()); the inside's and no
# role's WRONG_DIR cells cannot be reached (forward, as the app's).
ACTIONS = {
    "none": {NEW: FWD, SEEN: FWD, CLOSING: FWD, ORPHAN: FWD,
             UNSOLICITED: None, NOT_SYN: FWD, LIMITED: FWD, FULL: FWD,
             NON_IP: FWD, MALFORMED: FWD, FRAGMENT: FWD, WRONG_DIR: FWD,
             RELATED: FWD, UNRELATED: FWD},
    "inside": {NEW: FWD, SEEN: FWD, CLOSING: FWD, ORPHAN: FWD,
               UNSOLICITED: None, NOT_SYN: "not_syn", LIMITED: "limited",
               FULL: FWD, NON_IP: FWD, MALFORMED: FWD, FRAGMENT: FWD,
               WRONG_DIR: FWD, RELATED: FWD, UNRELATED: FWD},
    "outside": {NEW: FWD, SEEN: FWD, CLOSING: FWD, ORPHAN: "unsolicited",
                UNSOLICITED: "unsolicited", NOT_SYN: "not_syn",
                LIMITED: "limited", FULL: "table_full", NON_IP: FWD,
                MALFORMED: "malformed", FRAGMENT: "fragment",
                WRONG_DIR: "wrong_direction", RELATED: FWD,
                UNRELATED: "unrelated"},
}
DROP_REASONS = ("unsolicited", "not_syn", "limited", "table_full",
                "malformed", "fragment")
# Issue 24's reasons: in a Result's drops once they happen.
MORE_DROP_REASONS = ("wrong_direction", "vlan_depth", "encapsulated",
                     "tunnel_non_ip", "non_ip", "unrelated")


def unparsed_reason(ethertype):
    """The outside's drop reason of a non-IP frame (not ARP; VLAN tags
    and tunnels are not modelled) under --firewall-unparsed drop."""
    if ethertype in (0x8847, 0x8848, 0x8863, 0x8864, 0x88e7) or \
            ethertype < 0x0600:
        return "encapsulated"
    return "non_ip"

CLASSES = ("tcp", "udp", "icmp", "other")
DEFAULT_TIMEOUTS = {"tcp": 300, "udp": 60, "icmp": 30, "other": 60}
DEFAULT_LINGER = 10
TICK_MARGIN_NS = 50000000   # below a limit: the app's 16.8 ms ticks


class Ambiguous(AssertionError):
    """The spec allows more than one outcome for this input."""


class SpecGap(Ambiguous):
    """docs/firewall.md does not decide this input."""


class Unmodelled(ValueError):
    """A frame the model does not claim to parse as the app does."""


# ------------------------------------------------------------ parsing

def parse(frame):
    """Ethernet frame -> dict: kind "ip" (with key, proto, cls, flags,
    src, dst, sport, dport, family), or kind non_ip / malformed /
    fragment. Only what the scenarios use: Ethernet II, no VLAN, IPv4
    and IPv6 without extension headers (a fragment header is read)."""
    if len(frame) < 14:
        return {"kind": MALFORMED}
    ethertype = struct.unpack_from("!H", frame, 12)[0]
    if ethertype in (0x8100, 0x88a8, 0x9100):
        raise Unmodelled("VLAN tags are not modelled")
    if ethertype == 0x0800:
        return _ipv4(frame, 14)
    if ethertype == 0x86dd:
        return _ipv6(frame, 14)
    return {"kind": NON_IP, "ethertype": ethertype}


def _ipv4(b, o, quoted=False):
    if len(b) < o + 20:
        return {"kind": MALFORMED}
    vihl, _, total, _, frag, _, proto = struct.unpack_from("!BBHHHBB", b, o)
    if vihl >> 4 != 4:
        return {"kind": MALFORMED}
    ihl = (vihl & 15) * 4
    if ihl < 20 or len(b) < o + ihl:
        return {"kind": MALFORMED}
    if total < ihl:
        return {"kind": MALFORMED}
    if not quoted:
        b = b[:o + total]       # Ethernet padding
    if frag & 0x1fff:
        return {"kind": FRAGMENT}
    src = b"\0" * 10 + b"\xff\xff" + b[o + 12:o + 16]
    dst = b"\0" * 10 + b"\xff\xff" + b[o + 16:o + 20]
    return _l4(b, o + ihl, proto, src, dst, 4, quoted)


def _ipv6(b, o, quoted=False):
    if len(b) < o + 40:
        return {"kind": MALFORMED}
    if b[o] >> 4 != 6:
        return {"kind": MALFORMED}
    nh = b[o + 6]
    src, dst = bytes(b[o + 8:o + 24]), bytes(b[o + 24:o + 40])
    hlim = b[o + 7]
    o += 40
    if nh == 44:    # fragment header
        if len(b) < o + 8:
            return {"kind": MALFORMED}
        off = struct.unpack_from("!H", b, o + 2)[0] >> 3
        if off:
            return {"kind": FRAGMENT}
        nh = b[o]
        o += 8
    if nh in (0, 43, 60, 51, 50, 135, 139, 140, 253, 254):
        raise Unmodelled("IPv6 extension headers are not modelled")
    p = _l4(b, o, nh, src, dst, 6, quoted)
    if p["kind"] == "ip" and nh == ICMP6:
        p["nd"] = hlim == 255 and 133 <= b[o] <= 137
    return p


# ICMP queries: request type -> 1, reply type -> -1 (RFC 792, 950; 4443)
ICMP_QUERIES = {ICMP: {8: 1, 13: 1, 15: 1, 17: 1, 0: -1, 14: -1, 16: -1,
                       18: -1},
                ICMP6: {128: 1, 129: -1}}
ICMP_ERRORS = {ICMP: (3, 11, 12), ICMP6: (1, 2, 3, 4)}


def _icmp_error(b, o, family, src, dst, proto):
    """An ICMP error at @o: about the packet it quotes (kind "error",
    with that packet's key and its source endpoint, which the error goes
    back to), or "unrelated", or malformed (bad_embedded)."""
    if len(b) < o + 8:
        return {"kind": MALFORMED, "reason": "bad_embedded"}
    q = (_ipv4 if family == 4 else _ipv6)(b, o + 8, quoted=True)
    if q["kind"] == FRAGMENT or q["kind"] == "error" or \
            q["kind"] == UNRELATED:
        return {"kind": UNRELATED, "src": src, "dst": dst}
    if q["kind"] != "ip":
        return {"kind": MALFORMED, "reason": "bad_embedded"}
    if q["src"] != dst:
        return {"kind": UNRELATED, "src": src, "dst": dst}
    return {"kind": "error", "key": q["key"], "to": (q["src"], q["sport"]),
            "src": src, "dst": dst, "family": family, "proto": proto}


def _l4(b, o, proto, src, dst, family, quoted=False):
    sport = dport = 0
    flags = 0
    # a quoted packet's L4 header may be cut after 8 bytes (RFC 792)
    need = 8 if quoted else None
    if proto == TCP:
        if len(b) < o + (need or 20):
            return {"kind": MALFORMED}
        sport, dport = struct.unpack_from("!HH", b, o)
        if not quoted:
            doff = b[o + 12] >> 4
            if doff < 5 or len(b) < o + doff * 4:
                return {"kind": MALFORMED}
            flags = b[o + 13]
        cls = "tcp"
    elif proto in (UDP, UDPLITE):
        if len(b) < o + 8:
            return {"kind": MALFORMED}
        sport, dport = struct.unpack_from("!HH", b, o)
        if proto == UDP and dport in (4789, 6081, 2152):
            raise Unmodelled("a tunnel's port (--decap would change it)")
        cls = "udp"
    elif proto == SCTP:
        if len(b) < o + (need or 12):
            return {"kind": MALFORMED}
        sport, dport = struct.unpack_from("!HH", b, o)
        cls = "other"
    elif proto in (ICMP, ICMP6):
        if len(b) < o + 8:
            if quoted:
                return {"kind": MALFORMED}
            raise Unmodelled("a short ICMP header")
        typ = b[o]
        if typ in ICMP_ERRORS[proto] and \
                (family == 4) == (proto == ICMP):
            if quoted:
                return {"kind": UNRELATED}
            return _icmp_error(b, o, family, src, dst, proto)
        role = ICMP_QUERIES[proto].get(typ, 0)
        ident = struct.unpack_from("!H", b, o + 4)[0]
        if role > 0:
            sport = ident
        elif role < 0:
            dport = ident
        cls = "icmp"
    else:
        if proto == 47:
            raise Unmodelled("GRE (--decap would change it)")
        cls = "other"
    a, z = (src, sport), (dst, dport)
    lo, hi = (a, z) if a <= z else (z, a)
    return {"kind": "ip", "key": (proto, lo, hi), "proto": proto,
            "cls": cls, "flags": flags, "src": src, "dst": dst,
            "sport": sport, "dport": dport, "family": family,
            "echo_request": cls == "icmp" and (proto, b[o]) in (
                (ICMP, 8), (ICMP6, 128))}


# ------------------------------------------------------------ allow list

def parse_allow(text, name="allow"):
    """The --allow file's lines -> [(proto, network, port or None)]."""
    names = {"tcp": TCP, "udp": UDP, "sctp": SCTP, "icmp": ICMP,
             "icmpv6": ICMP6}
    rules = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        f = line.split()
        if len(f) != 3:
            raise ValueError("%s:%d: want PROTO ADDR[/LEN] PORT" % (name, n))
        proto = names.get(f[0].lower())
        if proto is None:
            proto = int(f[0])
            if not 0 <= proto <= 255:
                raise ValueError("%s:%d: protocol" % (name, n))
        net = ipaddress.ip_network(f[1], strict=False)
        if f[2] == "any":
            port = None
        elif f[2] == "echo" and proto in (ICMP, ICMP6):
            port = "echo"
        else:
            if proto not in (TCP, UDP, SCTP, UDPLITE):
                raise ValueError("%s:%d: port of a protocol without ports" %
                                 (name, n))
            port = int(f[2])
        rules.append((proto, net, port))
    return rules


def _addr(a16, family):
    return ipaddress.ip_address(a16[12:] if family == 4 else a16)


def allowed(rules, p):
    dst = _addr(p["dst"], p["family"])
    for proto, net, port in rules:
        if proto == p["proto"] and dst.version == net.version and \
                dst in net and (port is None or port == p["dport"] or
                                port == "echo" and p["echo_request"]):
            return True
    return False


# ------------------------------------------------------------ the model

class Config:
    """Everything the model needs; field names follow the options."""

    def __init__(self, roles=None, tx_port=None, allow=(), tcp_strict=False,
                 timeouts=None, linger=DEFAULT_LINGER, new_flow_rate=0,
                 new_flow_burst=None, mirror_first=0, count_bits=None,
                 slack_ns=0, mode="forward", owner=None, unparsed="drop"):
        self.roles = dict(roles or {0: "none", 1: "none"})
        ports = sorted(self.roles)
        # The app's pairing: 0<->1, 2<->3 (mirror ports excluded here:
        # give tx_port explicitly then).
        self.tx_port = dict(tx_port) if tx_port else {
            p: ports[i ^ 1] if (i ^ 1) < len(ports) else p
            for i, p in enumerate(ports)}
        self.allow = list(allow)
        self.tcp_strict = tcp_strict
        self.timeouts = dict(DEFAULT_TIMEOUTS)
        self.timeouts.update(timeouts or {})
        self.linger = linger
        self.rate = new_flow_rate
        self.burst = new_flow_burst if new_flow_burst is not None else \
            max(1, new_flow_rate)
        self.mirror_first = mirror_first
        if count_bits is None:
            # The smallest counter that holds N + 1 (so that ordinals past
            # N do not saturate into the mirrored range), at most 8.
            count_bits = 0
            while mirror_first and (1 << count_bits) - 1 <= mirror_first \
                    and count_bits < 8:
                count_bits += 1
        self.count_bits = count_bits
        self.slack_ns = slack_ns
        self.mode = mode
        # --firewall-unparsed: what the outside's non-IP frames but ARP
        # come to
        self.unparsed = unparsed
        # The admission bucket is per worker: @owner maps a flow key to
        # its worker (None: one worker).
        self.owner = owner
        for r in self.roles.values():
            assert r in ACTIONS, r


class Flow:
    __slots__ = ("cls", "last", "span", "closed", "count", "inside")

    def __init__(self, cls, t, span, inside):
        self.cls, self.last, self.closed, self.count = cls, t, False, 1
        self.span = span        # the last packet came in [last, last+span]
        self.inside = inside    # the inside endpoint (address, port)


class Decision:
    __slots__ = ("t", "port", "frame", "verdict", "action", "out_port",
                 "ordinal", "mirrored", "key")

    def __repr__(self):
        return "<%.3f p%d %s %s ord %d%s>" % (
            self.t / NS, self.port, self.verdict, self.action, self.ordinal,
            " mirrored" if self.mirrored else "")


def grace_ns(limit_ns):
    return max(NS, limit_ns // 8)


class Bucket:
    """One worker's admission token bucket."""

    def __init__(self, burst):
        self.tokens = Fraction(burst)
        self.token_t = None
        self.token_span = 0
        self.refilled = False

    def take(self, t, cfg, span=0):
        """A token for a packet met in [t, t + @span] (the last one's
        time is known to within its own span)."""
        burst = Fraction(cfg.burst)
        # The time since the last token's packet is known to within the
        # two packets' spans (one span when both are the same phase's,
        # met in order within it); within 2 ms (and that) of refill from
        # 1 token, the app's clock and rounding decide: no single answer.
        if self.token_t is None or (t, span) == (self.token_t,
                                                 self.token_span):
            width = span
        else:
            width = span + self.token_span
        eps = Fraction(cfg.rate * (2000000 + width), NS)
        if self.token_t is not None and t > self.token_t and \
                self.tokens < burst:
            raw = self.tokens + Fraction(cfg.rate * (t - self.token_t),
                                         NS)
            self.tokens = min(burst, raw)
            # Full again by a margin: exact; else it depends on the clock.
            self.refilled = raw < burst + eps
        if self.token_t is None or t >= self.token_t:
            self.token_t, self.token_span = t, span
        # (Live: packets are up to @width later than the model's times,
        # so a count just under 1 may have been refilled past it.)
        if 1 - eps <= self.tokens < 1 and (self.refilled or width) or \
                self.refilled and 1 <= self.tokens < 1 + eps:
            raise Ambiguous("%.4f tokens at %.3f s: within %.4f of 1" % (
                float(self.tokens), t / NS, float(eps)))
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Oracle:
    def __init__(self, cfg):
        self.cfg = cfg
        self.flows = OrderedDict()
        self.buckets = {}     # worker -> Bucket
        self.last_t = None
        self.c = {k: 0 for k in (
            "packets", "bytes", "flows_new", "flows_seen", "flows_closed",
            "flows_expired", "orphan_close", "reused", "unsolicited",
            "not_syn", "new_flow_limited", "insert_failed", "non_ip",
            "malformed", "fragments", "forwarded", "dropped", "mirrored",
            "wrong_direction", "nd_passed", "related", "unrelated",
            "bad_embedded")}
        self.drops = {r: 0 for r in DROP_REASONS}
        self.log = []

    # -- time
    def _limit_ns(self, f):
        s = self.cfg.linger if f.closed else self.cfg.timeouts[f.cls]
        return int(s * NS)

    def _alive(self, f, t, key, span):
        """True if @f is still in the table at a time in [t, t + span];
        raises Ambiguous when the app may answer either way."""
        age_lo = t - f.last - f.span
        age_hi = t + span - f.last
        limit = self._limit_ns(f)
        lo = limit - TICK_MARGIN_NS
        hi = limit + grace_ns(limit) + NS
        if age_hi < lo:
            return True
        if age_lo > hi:
            return False
        raise Ambiguous("flow %s: idle %.3f to %.3f s against its %s "
                        "%.3f s (undecided from %.3f to %.3f s)" % (
                            fmt_key(key), age_lo / NS, age_hi / NS,
                            "linger" if f.closed else "timeout",
                            limit / NS, lo / NS, hi / NS))

    def _take_token(self, t, key, span=0):
        if not self.cfg.rate:
            return True
        w = self.cfg.owner(key) if self.cfg.owner else 0
        b = self.buckets.get(w)
        if b is None:
            b = self.buckets[w] = Bucket(self.cfg.burst)
        return b.take(t, self.cfg, span)

    # -- one packet
    def packet(self, t, port, frame, span_ns=None):
        """@frame met at @t, or (live) somewhere in [t, t + @span_ns];
        without a span, within the run's slack_ns either side."""
        cfg = self.cfg
        span = cfg.slack_ns if span_ns is None else span_ns
        if self.last_t is not None and t < self.last_t:
            raise ValueError("time goes backwards at %d ns" % t)
        self.last_t = t
        role = cfg.roles[port]
        p = parse(frame)
        verdict, flow, key = None, None, None
        self.c["packets"] += 1
        self.c["bytes"] += len(frame)
        if p["kind"] == "error":
            # about a flow: related if it is live and, from the outside,
            # the error goes to its inside endpoint; nothing changes
            key = p["key"]
            f = self.flows.get(key)
            live = f is not None and self._alive(f, t, key, span)
            if live and role == "outside" and p["to"] != f.inside:
                live = False
            verdict = RELATED if live else UNRELATED
            self.c[verdict] += 1
        elif p["kind"] == UNRELATED:
            verdict = UNRELATED
            self.c["unrelated"] += 1
        elif p["kind"] != "ip":
            verdict = p["kind"]
            self.c[{NON_IP: "non_ip", MALFORMED: "malformed",
                    FRAGMENT: "fragments"}[verdict]] += 1
            if p.get("reason") == "bad_embedded":
                self.c["bad_embedded"] += 1
        else:
            key = p["key"]
            no_create = role == "outside" and not allowed(cfg.allow, p)
            fl = p["flags"] if p["proto"] == TCP else 0
            fin_rst = bool(fl & (FIN | RST))
            syn_only = p["proto"] == TCP and fl & (SYN | ACK) == SYN
            f = self.flows.get(key)
            if f is not None and not self._alive(f, t, key, span):
                del self.flows[key]
                if not f.closed:
                    self.c["flows_expired"] += 1
                f = None
            src_ep = (p["src"], p["sport"])
            if f is not None and role == "outside" and src_ep == f.inside:
                # From the outside, claiming the inside endpoint: not a
                # packet of the flow, which stays as it was.
                verdict = WRONG_DIR
            elif f is not None and f.closed and syn_only and \
                    not no_create:
                # A new connection on a lingering flow: checks 3 (passes:
                # SYN only) and 4, then reused and new.
                if self._take_token(t, key, span):
                    self.c["reused"] += 1
                    del self.flows[key]
                    f = None
                    verdict = NEW
                else:
                    verdict = LIMITED
            elif f is not None:
                f.last, f.span = t, span
                f.count += 1
                flow = f
                if not f.closed and fin_rst:
                    f.closed = True
                    verdict = CLOSING
                    if not cfg.linger:     # 0: removed at the FIN/RST
                        del self.flows[key]
                else:
                    verdict = SEEN
            elif fin_rst:
                # An allowed outside FIN/RST of no flow is counted
                # orphan_close by the tracker and dropped as unsolicited
                # by the action table (the spec's resolution).
                verdict = UNSOLICITED if no_create else ORPHAN
            elif no_create:
                verdict = UNSOLICITED
            elif cfg.tcp_strict and p["proto"] == TCP and not syn_only:
                verdict = NOT_SYN
            elif not self._take_token(t, key, span):
                verdict = LIMITED
            else:
                verdict = NEW
            if verdict == NEW:
                flow = self.flows[key] = Flow(
                    p["cls"], t, span, (p["dst"], p["dport"]) if role == "outside"
                    else src_ep)
            self.c[{NEW: "flows_new", SEEN: "flows_seen",
                    CLOSING: "flows_closed", ORPHAN: "orphan_close",
                    WRONG_DIR: "wrong_direction",
                    UNSOLICITED: "unsolicited", NOT_SYN: "not_syn",
                    LIMITED: "new_flow_limited"}[verdict]] += 1
        d = Decision()
        d.t, d.port, d.frame, d.verdict, d.key = t, port, frame, verdict, key
        if cfg.mode == "monitor":
            d.action = "monitor"
        else:
            d.action = ACTIONS[role][verdict]
            if d.action is None:
                raise AssertionError("verdict %s on a %s port" % (verdict,
                                                                  role))
            if role == "outside" and verdict == NON_IP and \
                    p["ethertype"] != 0x0806 and cfg.unparsed == "drop":
                d.action = unparsed_reason(p["ethertype"])
            if role == "outside" and verdict == UNSOLICITED and \
                    p.get("nd"):
                d.action = FWD
                self.c["nd_passed"] += 1
            if role == "inside" and verdict == FRAGMENT:
                # The model's later fragments have no first fragment:
                # in firewall mode one is held for it, then dropped, on
                # either side, as nf_defrag drops a datagram it never
                # completed (docs/firewall.md, Fragments); the table's
                # inside cell is for those not held (the hold full)
                d.action = "fragment"
        d.out_port = cfg.tx_port[port] if d.action == FWD else None
        if flow is not None:
            cap = (1 << cfg.count_bits) - 1 if cfg.count_bits else 0
            d.ordinal = min(flow.count, cap) if cap else 0
        else:
            d.ordinal = 0
        d.mirrored = bool(cfg.mirror_first) and cfg.mode == "forward" and \
            1 <= d.ordinal <= cfg.mirror_first
        if d.action == FWD:
            self.c["forwarded"] += 1
        elif d.action != "monitor":
            self.c["dropped"] += 1
            self.drops[d.action] = self.drops.get(d.action, 0) + 1
        if d.mirrored:
            self.c["mirrored"] += 1
        self.log.append(d)
        return d

    def finish(self, t, span_ns=None):
        """Flows still open at a time in [t, t + @span_ns] (default: the
        slack): (active, expired by then), or raises Ambiguous if some
        flow's fate is undecided."""
        active = expired = 0
        if span_ns is None:
            span_ns = self.cfg.slack_ns
        for key, f in self.flows.items():
            if self._alive(f, t, key, span_ns):
                active += 0 if f.closed else 1
            elif not f.closed:
                expired += 1
        return active, expired

    def run(self, events):
        """@events: [(time_ns, ingress port, frame bytes[, span_ns])] in
        order. Returns a Result."""
        for ev in events:
            self.packet(ev[0], ev[1], bytes(ev[2]), *ev[3:])
        return Result(self)


class Result:
    def __init__(self, o):
        self.decisions = list(o.log)
        self.out = {}
        for p in o.cfg.roles:
            self.out[p] = []
        for p in o.cfg.tx_port.values():
            self.out.setdefault(p, [])
        for d in o.log:
            if d.out_port is not None:
                self.out[d.out_port].append(d.frame)
        self.mirror = [d.frame for d in o.log if d.mirrored]
        self.counters = dict(o.c)
        self.drops = dict(o.drops)
        self.open_flows = sum(1 for f in o.flows.values() if not f.closed)


def fmt_key(key):
    if key is None:
        return "-"
    proto, lo, hi = key

    def ep(e):
        a = e[0]
        s = str(ipaddress.ip_address(a[12:])) if a[:12] == \
            b"\0" * 10 + b"\xff\xff" else str(ipaddress.ip_address(a))
        return "%s:%d" % (s, e[1])
    return "%d %s %s" % (proto, ep(lo), ep(hi))


# ------------------------------------------------------------ comparing

def stream_of(frame):
    """The (flow key, direction) a frame belongs to: the frames of one
    stream keep their order through the app whatever the workers."""
    try:
        p = parse(frame)
    except Unmodelled:
        return ("unmodelled",)
    if p["kind"] == "error":
        # errors of one flow, going back one way, keep their order
        return (p["key"], "error to", p["to"])
    if p["kind"] == UNRELATED:
        return (UNRELATED, p["src"], p["dst"])
    if p["kind"] != "ip":
        return (p["kind"],)
    return (p["key"], p["src"], p["sport"])


def compare_frames(got, want):
    """Problems (empty if none) between two frame lists of one egress
    port: the same multiset, and each stream (flow and direction) in the
    same order."""
    bad = []
    if sorted(got) != sorted(want):
        from collections import Counter
        cg, cw = Counter(got), Counter(want)
        extra, missing = cg - cw, cw - cg
        bad.append("%d frames, want %d: %d unexpected (%s), %d missing (%s)" %
                   (len(got), len(want), sum(extra.values()),
                    describe(list(extra)[:3]), sum(missing.values()),
                    describe(list(missing)[:3])))
        return bad
    sg, sw = {}, {}
    for fr in got:
        sg.setdefault(stream_of(fr), []).append(fr)
    for fr in want:
        sw.setdefault(stream_of(fr), []).append(fr)
    for k in sw:
        if sg.get(k) != sw[k]:
            bad.append("stream %s out of order" % describe([sw[k][0]]))
    return bad


def describe(frames):
    out = []
    for fr in frames:
        try:
            p = parse(fr)
        except Unmodelled as e:
            out.append("unmodelled: %s" % e)
            continue
        if p["kind"] != "ip":
            out.append(p["kind"])
            continue
        s = str(_addr(p["src"], p["family"]))
        d = str(_addr(p["dst"], p["family"]))
        out.append("%d %s:%d>%s:%d flags %#x len %d" % (
            p["proto"], s, p["sport"], d, p["dport"], p["flags"], len(fr)))
    return "; ".join(out)
