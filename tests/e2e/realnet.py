"""Real traffic through cuckooflow's firewall (issue 26): network
namespaces made by the test, the kernel's own TCP, UDP, ICMP, ping,
traceroute and curl on both sides, IPv4 and IPv6.

    client (inside)            router                 server (outside)
    ci 10.26.1.2 ==[firewall]== r0 10.26.1.1  r1 10.26.2.1 == s0 10.26.2.2
       fd26:1::2                   fd26:1::1     fd26:2::1      fd26:2::2

The firewall is a bump in the wire between ci's peer (the inside link)
and r0's peer (the outside link): cuckooflow in forward mode, --inside
on the client's side. How it is put there is the caller's
(test_real_traffic.py: net_tap ports bridged with the veths;
test_ovs_dpdk.py: Open vSwitch with DPDK and vhost-user). The router
forwards toward the server over a route of MTU 1280 (mtu lock): a
client's full-size packets with DF get frag-needed / packet too big
back from the router, through the firewall (Path MTU discovery).

No route leaves the namespaces: the client's and the server's default
routes are the router, which knows the two subnets only. Each
namespace, interface and file is the run's own (named after the
pytest process and a counter), so runs go side by side.
"""
import hashlib
import json
import os
import subprocess

from harness import DEADLINE, IP, need_tool, polling, stats
from harness import stop as harness_stop

PY = "/usr/bin/python3"

CLIENT4, ROUTER_IN4, ROUTER_OUT4, SERVER4 = ("10.26.1.2", "10.26.1.1",
                                             "10.26.2.1", "10.26.2.2")
CLIENT6, ROUTER_IN6, ROUTER_OUT6, SERVER6 = ("fd26:1::2", "fd26:1::1",
                                             "fd26:2::1", "fd26:2::2")
PATH_MTU = 1280
# The services: on the server an HTTP server (a 1 MB file), a UDP echo,
# a TCP sink answering the digest of what it read; on the client a TCP
# listener and UDP listeners that log what reaches them: ALLOWED_UDP is
# opened to the outside by the allow list, BLOCKED_UDP is not.
HTTP, UDP_ECHO, TCP_SINK, CLOSED = 8000, 5300, 9000, 9
CLIENT_TCP, ALLOWED_UDP, BLOCKED_UDP = 8080, 5353, 5400
ALLOW = """# the client's one service outside hosts may send to (fragmented)
udp %s %d
udp %s %d
""" % (CLIENT4, ALLOWED_UDP, CLIENT6, ALLOWED_UDP)
BIG = 3000          # a UDP datagram of 3000 bytes: 3 fragments


def sh(*args, check=True, timeout=DEADLINE, **kw):
    p = subprocess.run(list(args), capture_output=True, text=True,
                       timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise RuntimeError("%s: rc %d: %s" % (" ".join(args), p.returncode,
                                              p.stderr.strip()[-400:]))
    return p


def tools():
    """The tools these tests run, installed by tools/setup.sh."""
    for name, pkg in (("ping", "iputils-ping"), ("traceroute", "traceroute"),
                      ("curl", "curl"), ("ethtool", "ethtool"),
                      ("ip", "iproute2"), ("bridge", "iproute2")):
        need_tool(name, pkg)


# The peer program: each service and each client operation, run inside
# a namespace as `python3 peer.py OP ARGS`.
PEER = r'''
import hashlib, os, socket, sys, threading

def log(path, line):
    with open(path, "a") as f:
        f.write(line + "\n")

def serve(udp_port, tcp_port, ready):
    u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    u.bind(("::", udp_port))
    t = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    t.bind(("::", tcp_port))
    t.listen(8)
    def echo():
        while True:
            data, peer = u.recvfrom(65535)
            u.sendto(data, peer)
    def sink():
        while True:
            c, _ = t.accept()
            h = hashlib.sha256()
            while True:
                b = c.recv(65536)
                if not b:
                    break
                h.update(b)
            c.sendall(h.hexdigest().encode())
            c.close()
    threading.Thread(target=echo, daemon=True).start()
    threading.Thread(target=sink, daemon=True).start()
    open(ready, "w").close()
    threading.Event().wait()

def listen(tcp_port, udp_ports, path, ready):
    t = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    t.bind(("::", tcp_port))
    t.listen(8)
    def accept():
        while True:
            c, peer = t.accept()
            log(path, "tcp %s" % peer[0])
            c.close()
    def udp(port):
        u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        u.bind(("::", port))
        while True:
            data, peer = u.recvfrom(65535)
            log(path, "udp %d %d %s" % (port, len(data), peer[0]))
    threading.Thread(target=accept, daemon=True).start()
    for p in udp_ports:
        threading.Thread(target=udp, args=(p,), daemon=True).start()
    open(ready, "w").close()
    threading.Event().wait()

def family(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET

def udp_rr(host, port, size, timeout):
    s = socket.socket(family(host), socket.SOCK_DGRAM)
    s.settimeout(timeout)
    s.connect((host, port))
    data = os.urandom(size)
    for attempt in range(3):
        s.send(data)
        try:
            back = s.recv(65535)
            break
        except OSError as e:
            # EMSGSIZE: a packet too big came back (IPv6 fragments at
            # the source): the path MTU is known now, send again
            if e.errno != 90 or attempt == 2:
                raise
            print("emsgsize ", end="")
    print("ok" if back == data else "differs: %d bytes" % len(back))

def udp_closed(host, port, timeout):
    s = socket.socket(family(host), socket.SOCK_DGRAM)
    s.settimeout(timeout)
    s.connect((host, port))
    s.send(b"anyone?")
    try:
        s.recv(100)
        print("an answer")
    except ConnectionRefusedError:
        print("refused")
    except socket.timeout:
        print("timeout")

def tcp_upload(host, port, size, timeout):
    s = socket.create_connection((host, port), timeout=timeout)
    data = os.urandom(size)
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    got = b""
    while True:
        b = s.recv(100)
        if not b:
            break
        got += b
    print("ok" if got.decode() == hashlib.sha256(data).hexdigest()
          else "digest differs")

def udp_send(host, port, size):
    s = socket.socket(family(host), socket.SOCK_DGRAM)
    s.sendto(b"x" * size, (host, port))
    print("sent")

def tcp_connect(host, port, timeout):
    try:
        socket.create_connection((host, port), timeout=timeout).close()
        print("connected")
    except OSError as e:
        print("failed: %s" % e)

op, args = sys.argv[1], sys.argv[2:]
if op == "serve":
    serve(int(args[0]), int(args[1]), args[2])
elif op == "listen":
    listen(int(args[0]), [int(p) for p in args[1].split(",")], args[2],
           args[3])
elif op == "udp_rr":
    udp_rr(args[0], int(args[1]), int(args[2]), float(args[3]))
elif op == "udp_closed":
    udp_closed(args[0], int(args[1]), float(args[2]))
elif op == "tcp_upload":
    tcp_upload(args[0], int(args[1]), int(args[2]), float(args[3]))
elif op == "udp_send":
    udp_send(args[0], int(args[1]), int(args[2]))
elif op == "tcp_connect":
    tcp_connect(args[0], int(args[1]), float(args[2]))
'''


class Net:
    """The client, router and server namespaces of one run, and the two
    links the firewall goes between: the client's peer interface
    (inside) and the router's (outside), in namespace @fw_ns (None: the
    root namespace). @tag names everything."""

    def __init__(self, tag, tmp, fw_ns=None, peers=("fi", "fo")):
        self.tag, self.tmp, self.fw_ns = tag, tmp, fw_ns
        self.ns = {r: "%s%s" % (tag, r) for r in ("c", "r", "s")}
        self.peer_in, self.peer_out = peers
        self.procs = []
        self.peer = os.path.join(tmp, "peer.py")
        with open(self.peer, "w") as f:
            f.write(PEER)
        self.made = []
        try:
            self._make()
        except Exception:
            self.delete()
            raise

    # -- making
    def _ns_add(self, ns):
        sh(IP, "netns", "add", ns)
        self.made.append(ns)

    def _fw(self, *args):
        """ip ARGS in the firewall's namespace."""
        return sh(IP, *(("-n", self.fw_ns) if self.fw_ns else ()), *args)

    def _make(self):
        c, r, s = self.ns["c"], self.ns["r"], self.ns["s"]
        for ns in (c, r, s):
            self._ns_add(ns)
            # no router solicitations, no waiting for DAD
            self.ex(ns, "sysctl", "-qw", "net.ipv6.conf.default.accept_ra=0",
                    "net.ipv6.conf.all.accept_ra=0",
                    "net.ipv6.conf.default.accept_dad=0",
                    "net.ipv6.conf.all.accept_dad=0")
        if self.fw_ns is not None:
            self._ns_add(self.fw_ns)
            # the bump in the wire has no address of its own, and sends
            # nothing (no IPv6: no ND, no MLD of its own)
            self.ex(self.fw_ns, "sysctl", "-qw",
                    "net.ipv6.conf.all.disable_ipv6=1",
                    "net.ipv6.conf.default.disable_ipv6=1",
                    "net.ipv4.igmp_link_local_mcast_reports=0")
        fw = self.fw_ns or "1"      # ip's "netns 1": the root namespace
        sh(IP, "-n", c, "link", "add", "ci", "type", "veth", "peer", "name",
           self.peer_in, "netns", fw)
        sh(IP, "-n", r, "link", "add", "r0", "type", "veth", "peer", "name",
           self.peer_out, "netns", fw)
        sh(IP, "-n", r, "link", "add", "r1", "type", "veth", "peer", "name",
           "s0", "netns", s)
        # the kernel checksums and segments what it sends toward the
        # firewall (a DPDK port takes frames as they are on the wire)
        for ns, dev in ((c, "ci"), (r, "r0")):
            self.ex(ns, "ethtool", "-K", dev, "tx", "off", "tso", "off",
                    "gso", "off", "gro", "off")
        for dev in (self.peer_in, self.peer_out):
            sh(*((IP, "netns", "exec", self.fw_ns) if self.fw_ns else ()),
               "ethtool", "-K", dev, "tx", "off", "tso", "off", "gso",
               "off", "gro", "off")
            self._fw("link", "set", dev, "up")
        for ns, dev, a4, a6 in ((c, "ci", CLIENT4, CLIENT6),
                                (r, "r0", ROUTER_IN4, ROUTER_IN6),
                                (r, "r1", ROUTER_OUT4, ROUTER_OUT6),
                                (s, "s0", SERVER4, SERVER6)):
            sh(IP, "-n", ns, "addr", "add", a4 + "/24", "dev", dev)
            sh(IP, "-n", ns, "addr", "add", a6 + "/64", "dev", dev, "nodad")
            sh(IP, "-n", ns, "link", "set", dev, "up")
            sh(IP, "-n", ns, "link", "set", "lo", "up")
        for ns, gw4, gw6 in ((c, ROUTER_IN4, ROUTER_IN6),
                             (s, ROUTER_OUT4, ROUTER_OUT6)):
            sh(IP, "-n", ns, "route", "add", "default", "via", gw4)
            sh(IP, "-n", ns, "-6", "route", "add", "default", "via", gw6)
        self.ex(r, "sysctl", "-qw", "net.ipv4.ip_forward=1",
                "net.ipv6.conf.all.forwarding=1")
        # every ICMP error the router and the server owe is sent: the
        # kernel's rate limit (1 a second a peer) would hold back a
        # traceroute probe's right after the closed port's
        for ns in (r, s):
            self.ex(ns, "sysctl", "-qw", "net.ipv4.icmp_ratelimit=0",
                    "net.ipv6.icmp.ratelimit=0")
        # the hop toward the server: MTU 1280 (forwarding honours a
        # route's MTU; lock: no PMTU of its own lowers or raises it)
        sh(IP, "-n", r, "route", "replace", "10.26.2.0/24", "dev", "r1",
           "mtu", "lock", str(PATH_MTU))
        # (IPv6: the connected route's own metric, or it stays first)
        sh(IP, "-n", r, "-6", "route", "replace", "fd26:2::/64", "dev", "r1",
           "metric", "256", "mtu", "lock", str(PATH_MTU))

    def delete(self):
        for p, log in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            log.close()
        self.procs = []
        for ns in reversed(self.made):
            sh(IP, "netns", "del", ns, check=False)
        self.made = []

    # -- running
    def ex(self, ns, *args, check=True, timeout=DEADLINE):
        return sh(IP, "netns", "exec", ns, *args, check=check,
                  timeout=timeout)

    def spawn(self, ns, args, name):
        """@args in namespace @ns (None: the root one), logged to
        NAME.log; killed by delete() if still running."""
        log = open(os.path.join(self.tmp, name + ".log"), "w")
        p = subprocess.Popen(([IP, "netns", "exec", ns] if ns else []) +
                             list(args), stdout=log,
                             stderr=subprocess.STDOUT)
        self.procs.append((p, log))
        return p

    def peer_op(self, ns, *args, timeout=None):
        """Run one of peer.py's client operations; its printed word."""
        r = self.ex(ns, PY, self.peer, *[str(a) for a in args],
                    check=False, timeout=timeout or DEADLINE + 30)
        return (r.stdout.strip() or r.stderr.strip()[-300:])

    def services(self):
        """The server's HTTP server (a 1 MB file), UDP echo and TCP sink;
        the client's listeners. Waits until each is up."""
        www = os.path.join(self.tmp, "www")
        os.makedirs(www, exist_ok=True)
        self.file = os.urandom(1 << 20)
        with open(os.path.join(www, "big"), "wb") as f:
            f.write(self.file)
        ready = [os.path.join(self.tmp, n) for n in ("srv.ready",
                                                      "cli.ready")]
        self.heard = os.path.join(self.tmp, "client-heard.log")
        open(self.heard, "w").close()
        self.spawn(self.ns["s"], [PY, "-m", "http.server", "--bind", "::",
                                  "--directory", www, str(HTTP)], "http")
        self.spawn(self.ns["s"], [PY, self.peer, "serve", str(UDP_ECHO),
                                  str(TCP_SINK), ready[0]], "serve")
        self.spawn(self.ns["c"], [PY, self.peer, "listen", str(CLIENT_TCP),
                                  "%d,%d" % (ALLOWED_UDP, BLOCKED_UDP),
                                  self.heard, ready[1]], "listen")
        for _ in polling(0.05):
            if all(os.path.exists(p) for p in ready) and self.ex(
                    self.ns["s"], "curl", "-sf", "-o", "/dev/null",
                    "http://127.0.0.1:%d/big" % HTTP,
                    check=False).returncode == 0:
                return
        raise RuntimeError("the services did not come up")

    def heard_lines(self):
        with open(self.heard) as f:
            return f.read().splitlines()


def counter(prefix, name):
    st = stats(prefix)
    return st.get(name, 0) if st else None


def wait_counter(prefix, name, at_least, proc=None):
    """Until cuckooflow's counter @name reaches @at_least; its value."""
    for _ in polling(0.05):
        v = counter(prefix, name)
        if v is not None and v >= at_least:
            return v
        if proc is not None and proc.poll() is not None:
            break
    return counter(prefix, name)


def inside_checks(net, family):
    """What the client does through the firewall, and what must come of
    it. Returns the problems."""
    c = net.ns["c"]
    server = SERVER4 if family == 4 else SERVER6
    router = ROUTER_IN4 if family == 4 else ROUTER_IN6
    url_host = server if family == 4 else "[%s]" % server
    bad = []
    # first the errors, before any ping: an ICMP flow of the two hosts
    # (the address pair, before issue 26) would let them through
    # UDP to a closed port: the server's port unreachable comes back
    w = net.peer_op(c, "udp_closed", server, CLOSED, DEADLINE)
    if w != "refused":
        bad.append("IPv%d UDP to a closed port: %s, want ECONNREFUSED" %
                   (family, w))
    # traceroute: time exceeded from the router, port unreachable from
    # the server
    r = net.ex(c, "traceroute", "-%d" % family, "-n", "-q", "1", "-m", "4",
               "-w", str(int(DEADLINE)), server, check=False,
               timeout=4 * DEADLINE + 30)
    hops = [l.split() for l in r.stdout.splitlines()[1:]]
    got = [h[1] for h in hops if len(h) > 1]
    if got[:2] != [router, server]:
        bad.append("IPv%d traceroute: hops %s, want %s then %s" % (
            family, got, router, server))
    # ping: echo requests out, replies back by identifier
    r = net.ex(c, "ping", "-%d" % family, "-c", "3", "-i", "0.2", "-W",
               str(int(DEADLINE)), server, check=False)
    if r.returncode != 0:
        bad.append("IPv%d ping: %s" % (family, r.stdout[-300:]))
    # HTTP GET of 1 MB (TCP from the server, through the firewall)
    r = net.ex(c, "curl", "-sf", "--max-time", str(int(DEADLINE)), "-o",
               os.path.join(net.tmp, "got%d" % family),
               "http://%s:%d/big" % (url_host, HTTP), check=False,
               timeout=DEADLINE + 30)
    if r.returncode != 0:
        bad.append("IPv%d curl: rc %d %s" % (family, r.returncode,
                                             r.stderr[-200:]))
    else:
        with open(os.path.join(net.tmp, "got%d" % family), "rb") as f:
            if hashlib.sha256(f.read()).digest() != \
                    hashlib.sha256(net.file).digest():
                bad.append("IPv%d curl: the file differs" % family)
    # UDP request and response; a 3000-byte one both ways: fragments of
    # a flow opened from the inside
    for size in (100, BIG):
        w = net.peer_op(c, "udp_rr", server, UDP_ECHO, size, DEADLINE)
        if not w.endswith("ok"):
            bad.append("IPv%d UDP echo of %d bytes: %s" % (family, size, w))
    # 1 MB up to the server across the hop of MTU 1280: the router's
    # frag-needed / packet too big reaches the client (PMTU discovery)
    w = net.peer_op(c, "tcp_upload", server, TCP_SINK, 1 << 20, DEADLINE)
    if w != "ok":
        bad.append("IPv%d TCP upload across MTU %d: %s" % (family, PATH_MTU,
                                                           w))
    r = net.ex(c, "ip", "route", "get", server, check=False)
    if "mtu %d" % PATH_MTU not in r.stdout:
        bad.append("IPv%d: the client learnt no path MTU: %s" % (
            family, r.stdout.strip()))
    return bad


def outside_checks(net, family, prefix, proc):
    """What the outside sends the client: dropped but the allowed
    service's datagram (fragmented), which arrives whole. Each refusal
    is waited for in cuckooflow's counters, then the client's listeners
    are read. Returns the problems."""
    s = net.ns["s"]
    client = CLIENT4 if family == 4 else CLIENT6
    bad = []
    before = len(net.heard_lines())
    # an allowed service: 3 fragments, the first opens the flow, the
    # others follow it
    seen = counter(prefix, "fragments_seen") or 0
    net.peer_op(s, "udp_send", client, ALLOWED_UDP, BIG)
    wait_counter(prefix, "fragments_seen", seen + 2, proc)
    for _ in polling(0.05):
        if any(l.startswith("udp %d %d" % (ALLOWED_UDP, BIG))
               for l in net.heard_lines()[before:]):
            break
    else:
        bad.append("IPv%d: the allowed service's fragmented datagram did "
                   "not arrive" % family)
    # ping, a TCP SYN, UDP, and fragments to a port not allowed
    unsolicited = counter(prefix, "dropped_unsolicited") or 0
    frags = counter(prefix, "dropped_fragment") or 0
    r = net.ex(s, "ping", "-%d" % family, "-c", "2", "-i", "0.2", "-W", "1",
               client, check=False)
    if r.returncode == 0:
        bad.append("IPv%d: the outside's ping was answered" % family)
    w = net.peer_op(s, "tcp_connect", client, CLIENT_TCP, 1)
    if w == "connected":
        bad.append("IPv%d: the outside's TCP connection went through" %
                   family)
    net.peer_op(s, "udp_send", client, BLOCKED_UDP, 100)
    net.peer_op(s, "udp_send", client, BLOCKED_UDP, BIG)
    # 2 echo requests, a SYN (and its retransmissions), 2 first datagrams
    got = wait_counter(prefix, "dropped_unsolicited", unsolicited + 5, proc)
    if got is None or got < unsolicited + 5:
        bad.append("IPv%d: dropped_unsolicited %s, want %d or more" % (
            family, got, unsolicited + 5))
    got = wait_counter(prefix, "dropped_fragment", frags + 2, proc)
    if got is None or got < frags + 2:
        bad.append("IPv%d: dropped_fragment %s, want %d or more (the "
                   "datagram's later fragments)" % (family, got, frags + 2))
    for line in net.heard_lines()[before:]:
        if not line.startswith("udp %d" % ALLOWED_UDP):
            bad.append("IPv%d: the client heard '%s' from the outside" % (
                family, line))
    return bad


def invariant(total):
    """The forward-mode identity (docs/firewall.md, The invariant) over
    the final counters: problems."""
    dropped = sum(v for k, v in total.items() if k.startswith("dropped_"))
    right = total["tx_packets"] + total["tx_dropped"] + \
        total["blocked_packets"] + dropped + total["handoff_drops"] + \
        total.get("rx_len_mismatch", 0)
    if total["rx_packets"] != right:
        return ["rx_packets %d != tx %d + tx_dropped %d + blocked %d + "
                "dropped %d + handoff_drops %d" % (
                    total["rx_packets"], total["tx_packets"],
                    total["tx_dropped"], total["blocked_packets"], dropped,
                    total["handoff_drops"])]
    return []


def totals_checks(total):
    """The final counters: they add up, and each feature was used."""
    bad = invariant(total)
    for name, why in (("related", "ICMP errors of the flows passed"),
                      ("frag_datagrams", "fragmented datagrams followed"),
                      ("fragments_seen", "later fragments passed"),
                      ("dropped_unsolicited", "the outside refused"),
                      ("nd_passed", "IPv6 neighbour discovery passed")):
        if not total.get(name):
            bad.append("%s is %s: %s" % (name, total.get(name), why))
    # (unrelated errors there may be: the router's packet too big about
    # an IPv6 datagram's later fragments quotes no port, as conntrack
    # finds no flow for it either)
    if total.get("malformed_total"):
        bad.append("malformed_total %s: want none" %
                   total.get("malformed_total"))
    return bad


def traffic_checks(net, prefix, proc, out):
    """The issue's checks through a running firewall (@proc, @prefix):
    from inside and from outside, IPv4 and IPv6, then the counters of
    its --stats-json file @out once it has stopped; the problems found."""
    net.services()
    bad = []
    for family in (4, 6):
        bad += inside_checks(net, family)
    for family in (4, 6):
        bad += outside_checks(net, family, prefix, proc)
    rc = harness_stop(proc)
    if rc != 0:
        return bad + ["cuckooflow rc %s %s" % (rc, proc.hung)]
    with open(out) as f:
        bad += totals_checks(json.load(f)["total"])
    return bad

