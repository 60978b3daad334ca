#!/usr/bin/python3
"""End-to-end tests of cuckooflow on live kernel interfaces.

usage: /usr/bin/python3 -m pytest tests/e2e/test_live.py [--cuckooflow BIN]
Needs root (network namespaces) and tcpreplay; without them every test
is skipped, visibly.

Each run builds its own network namespace, cfl<pid>_<n>, holding a veth
pair with both ends inside it, no route out (no default route, nothing
bridged or routed to the host), IPv6 off in the namespace before any
interface exists (no ND, router or MLD traffic of the kernel's own), and
only addresses the test assigns, from the benchmark range 198.18.0.0/15.
cuckooflow runs inside the namespace (`ip netns exec`) and tracks one end
(vethA); tcpreplay, also inside it, sends frames generated here with
scapy into the other end (vethB). Every frame is addressed to and from
198.18.0.0/16, the subnet assigned to the namespace's interfaces, with
locally administered MACs no interface has, so the kernel on vethA drops
them (not for this host) and never answers. The namespace is deleted in
any case, with everything in it; the test checks nothing is left.

Cases:
- net_af_packet, qpairs=2 (the kernel's PACKET_FANOUT spreads flows over
  the 2 sockets), 2 workers, --clock tsc, 3 runs;
- net_tap, 1 worker: the tap and vethA are ports of a bridge in the
  namespace, so what is sent into vethB is flooded into the tap;
- a throughput probe (af_packet, 1 and 2 workers, rings of 2 frames,
  monitor and forward): tcpreplay --topspeed; every frame vethA took in
  is read or counted lost, the rings' drops (the kernel's
  PACKET_STATISTICS, which DPDK 22.11's driver does not read) in
  rx_missed; forwarded, every frame read is captured beyond the second
  port, byte for byte one of those replayed;
- forwarding TCP between two af_packet ports (1 and 2 workers), a client
  and a server in namespaces of their own beyond them: veth tx checksum
  offload on, the SYN arrives with a wrong checksum and no connection;
  `ethtool -K ... tx off` on both ends (docs/live.md), every segment
  right, the answer arrives.

The traffic plan is the 90-flow idea of test_app.py's workers_capture(),
in three phases replayed one after the other, each waited for in
cuckooflow's /cuckooflow/stats telemetry before the next: every flow's
first packet, then the middles (shuffled), then the FINs of the 60 TCP
flows. Within a phase the order of packets across the two queues cannot
change a counter, so the truth is fixed by the plan: 90 new flows, 60
closed, 0 orphan closes, 30 (UDP) still active, no timeout crossed (300 s
TCP, 60 s UDP, a run lasts seconds).
"""
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess

import pytest

from harness import NO_HUGE_MB
from harness import (DEADLINE, IP, need_tool, polling, stats, veth_netns,
                     wait_packets, wait_until)
from harness import stop as harness_stop

APP = TMP = None
runs = 0
namespaces = []     # every namespace this run created
prefixes = []       # every DPDK --file-prefix this run used

# The test's addresses: all in 198.18.0.0/16 (RFC 2544 benchmark range).
NET = "198.18.0.0/16"
ADDR_A, ADDR_B = "198.18.0.1/16", "198.18.0.2/16"
MAC_SRC, MAC_DST = "02:00:00:00:00:01", "02:00:00:00:00:02"
WORKER_LCORES = {1: "0@0,1@1", 2: "0@0,1@1,2@1"}


@pytest.fixture(scope="module", autouse=True)
def _setup(cuckooflow, tmp_path_factory):
    global APP, TMP
    APP = cuckooflow
    TMP = str(tmp_path_factory.mktemp("cuckooflow-live"))
    why = can_netns()
    if why is not None:
        pytest.skip(why)


def sh(*args, check=True, timeout=DEADLINE):
    p = subprocess.run(list(args), capture_output=True, text=True,
                       timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError("%s: rc %d: %s" % (" ".join(args), p.returncode,
                                              p.stderr.strip()))
    return p


def in_ns(ns, *args, **kw):
    return sh(IP, "netns", "exec", ns, *args, **kw)


# ------------------------------------------------------------ the plan

def plan():
    """Three phases of frames, and the truth counted from the plan:
    (phases, truth). Flows as workers_capture(): f % 3 == 0 TCP, the
    client opens with a SYN and closes with a FIN; 1 TCP, the server
    speaks first (picked up mid-connection) and closes; 2 UDP both ways,
    never closed."""
    from scapy.all import Ether, IP as IPv4, TCP, UDP, Raw
    rng = random.Random(12)
    e = Ether(src=MAC_SRC, dst=MAC_DST)
    first, middle, last = [], [], []
    flows = set()
    closed = 0
    for f in range(90):
        c = "198.18.1.%d" % (f + 1)
        s = "198.18.2.%d" % (f % 7 + 1)
        cp, sp = 20000 + f, 80 if f % 3 else 53
        flows.add(tuple(sorted([(c, cp), (s, sp)])))

        def up(fl, p=b""):
            return e / IPv4(src=c, dst=s) / TCP(sport=cp, dport=sp,
                                                flags=fl) / Raw(p)

        def down(fl, p=b""):
            return e / IPv4(src=s, dst=c) / TCP(sport=sp, dport=cp,
                                                flags=fl) / Raw(p)
        kind = f % 3
        if kind == 0:
            first.append(up("S"))
            middle += [down("SA"), up("A")] + [
                d("PA", b"x" * rng.randint(1, 200))
                for d in (up, down) * rng.randint(1, 4)]
            last.append(up("FA"))
            closed += 1
        elif kind == 1:
            first.append(down("PA", b"hello"))
            middle += [up("A"), down("PA", b"more"), up("PA", b"q")]
            last.append(down("FA"))
            closed += 1
        else:
            uu = e / IPv4(src=c, dst=s) / UDP(sport=cp, dport=sp) / Raw(b"u")
            ud = e / IPv4(src=s, dst=c) / UDP(sport=sp, dport=cp) / Raw(b"d")
            first.append(uu)
            middle += [ud, uu, ud]
    rng.shuffle(middle)
    phases = [first, middle, last]
    n = sum(len(p) for p in phases)
    truth = {
        "packets": n,
        "bytes": sum(len(bytes(x)) for p in phases for x in p),
        "flows_new": len(flows), "flows_closed": closed,
        "orphan_close": 0, "active": len(flows) - closed,
        "flows_seen": n - len(flows) - closed, "flows_expired": 0,
        "flows_evicted": 0, "insert_failed": 0, "reused": 0,
        "non_ip": 0, "fragments": 0, "malformed_total": 0,
    }
    # Nothing outside the test's subnet, by construction; checked anyway.
    import ipaddress
    net = ipaddress.ip_network(NET)
    for p in phases:
        for x in p:
            assert ipaddress.ip_address(x[IPv4].src) in net
            assert ipaddress.ip_address(x[IPv4].dst) in net
    return phases, truth


_FILES = []


def plan_files():
    if _FILES:
        return _FILES[0]
    from scapy.all import wrpcap
    phases, truth = plan()
    files = []
    for i, p in enumerate(phases):
        path = os.path.join(TMP, "phase%d.pcap" % i)
        wrpcap(path, p, linktype=1)
        files.append((path, len(p)))
    _FILES.append((files, truth))
    return files, truth


def burst_file(nb_flows=1000):
    """nb_flows one-packet UDP flows (64-byte frames), for --loop."""
    from scapy.all import Ether, IP as IPv4, UDP, Raw, wrpcap
    path = os.path.join(TMP, "burst%d.pcap" % nb_flows)
    pkts = [Ether(src=MAC_SRC, dst=MAC_DST) /
            IPv4(src="198.18.3.%d" % (i % 250 + 1),
                 dst="198.18.4.%d" % (i // 250 + 1)) /
            UDP(sport=30000 + i, dport=9) / Raw(b"\0" * 18)
            for i in range(nb_flows)]
    wrpcap(path, pkts, linktype=1)
    return path, len(pkts)


# ------------------------------------------------------------ namespace

def ns_create(bridge):
    """A namespace with vethA <-> vethB, both inside, IPv6 off, up, with
    the test's addresses (on cfbr0 instead of vethA when @bridge: vethA
    then is a port of cfbr0). Returns its name."""
    global runs
    runs += 1
    ns = "cfl%d_%d" % (os.getpid(), runs)
    # IPv6 off and no IGMP reports for link-local groups (a bridge joins
    # 224.0.0.106 and reports it from its address, seen on vethA and in
    # the tap)
    veth_netns(ns, [("vethA", "vethB")])
    namespaces.append(ns)
    if bridge:
        sh(IP, "-n", ns, "link", "add", "cfbr0", "type", "bridge",
           "mcast_snooping", "0")
        sh(IP, "-n", ns, "link", "set", "vethA", "master", "cfbr0")
        sh(IP, "-n", ns, "addr", "add", ADDR_A, "dev", "cfbr0")
        sh(IP, "-n", ns, "link", "set", "cfbr0", "up")
    else:
        sh(IP, "-n", ns, "addr", "add", ADDR_A, "dev", "vethA")
    sh(IP, "-n", ns, "addr", "add", ADDR_B, "dev", "vethB")
    return ns


def ns_delete(ns):
    sh(IP, "netns", "del", ns, check=False)


def ns_check(ns):
    """Nothing routes out: no default route, and the namespace's only
    IPv4 routes are the test's subnet. Returns the problems."""
    bad = []
    routes = sh(IP, "-n", ns, "-4", "route", "show", "table", "all").stdout
    for line in routes.splitlines():
        if line.startswith("default") or (
                not line.startswith(NET.split("/")[0]) and
                "table local" not in line):
            bad.append(line)
    if sh(IP, "-n", ns, "-6", "route", "show").stdout.strip():
        bad.append("IPv6 routes present")
    return bad


def link_stats(ns, dev):
    j = json.loads(sh(IP, "-n", ns, "-s", "-j", "link", "show", dev).stdout)
    s = j[0]["stats64"]
    return {"rx": s["rx"]["packets"], "tx": s["tx"]["packets"],
            "rx_dropped": s["rx"]["dropped"]}


def wait_link(ns, dev):
    for _ in polling(0.1):
        if sh(IP, "-n", ns, "link", "show", dev, check=False).returncode == 0:
            return True
    return False


# ------------------------------------------------------------ cuckooflow

def start(ns, nb, vdev, prefix, out, extra=(), mode="monitor", wrap=()):
    """cuckooflow in @ns with @nb workers on the port(s) @vdev (one
    --vdev argument, or a list of them), run by the command @wrap (which
    ends by exec'ing its arguments) if one is given."""
    log = open(os.path.join(TMP, prefix + ".log"), "w")
    vdevs = [vdev] if isinstance(vdev, str) else vdev
    cmd = list(wrap) + [IP, "netns", "exec", ns, APP, "--lcores",
                        WORKER_LCORES[nb],
                        "--no-pci", "--no-huge", "-m", NO_HUGE_MB,
                        "--log-level=lib.*:error",
                        "--file-prefix=" + prefix] + \
        [a for v in vdevs for a in ("--vdev", v)] + [
           "--", "--clock", "tsc", "--mode", mode, "--stats-json", out] + \
        list(extra)
    prefixes.append(prefix)
    # `ip netns exec` execs the command: the pid is cuckooflow's.
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), log


def stop(proc, log):
    """SIGINT, wait; returns (rc, log text)."""
    harness_stop(proc)
    log.close()
    with open(log.name) as f:
        return proc.returncode, f.read()


def cleanup(ns, prefix, log, *procs):
    """At a test's end, whatever happened: kill what still runs of
    @procs, close @log, delete @ns and the EAL's runtime dir of
    @prefix."""
    for p in procs:
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()
    if log is not None and not log.closed:
        log.close()
    ns_delete(ns)
    shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)


def wait_ready(prefix, proc):
    for _ in polling(0.05):
        if proc.poll() is not None:
            return False
        if stats(prefix) is not None:
            return True
    return False


def replay(ns, dev, path, extra=()):
    """tcpreplay inside @ns on @dev; returns (rc, output)."""
    p = in_ns(ns, "tcpreplay", "-q", "--intf1=" + dev, *extra, path,
              check=False, timeout=300)
    return p.returncode, p.stdout + p.stderr


def replay_pps(out):
    m = re.search(r"Rated:.*?([\d.]+) pps", out)
    return float(m.group(1)) if m else None


# ------------------------------------------------------------ cases

def live_run(kind, nb):
    """One run of the plan through @kind ("af_packet" or "tap") with @nb
    workers. Returns (problems, info)."""
    files, truth = plan_files()
    bridge = kind == "tap"
    ns = ns_create(bridge)
    prefix = ns
    out = os.path.join(TMP, prefix + ".json")
    proc = log = None
    bad, info = [], {}
    try:
        bad += ["route: " + r for r in ns_check(ns)]
        if kind == "af_packet":
            vdev = "net_af_packet0,iface=vethA,qpairs=%d" % nb
            seen_dev, seen_key = "vethA", "rx"
        else:
            vdev = "net_tap0,iface=cftap0"
            seen_dev, seen_key = "cftap0", "tx"
        proc, log = start(ns, nb, vdev, prefix, out)
        if not wait_ready(prefix, proc):
            bad.append("telemetry never answered")
            return bad, info
        if bridge:
            # The tap exists once cuckooflow has started its port; make
            # it a port of the bridge, so vethB's frames flood into it.
            if not wait_link(ns, "cftap0"):
                bad.append("no cftap0")
                return bad, info
            sh(IP, "-n", ns, "link", "set", "cftap0", "master", "cfbr0")
            sh(IP, "-n", ns, "link", "set", "cftap0", "up")
            # until the bridge forwards to it
            for _ in polling(0.05):
                r = sh("bridge", "-n", ns, "-j", "link", "show", "dev",
                       "cftap0", check=False)
                if r.returncode == 0 and '"state":"forwarding"' in \
                        r.stdout.replace(" ", ""):
                    break
        # The tap is cuckooflow's: its tx counter, from 0, is every frame
        # the kernel gave it. vethA's counts from now.
        before = link_stats(ns, seen_dev) if not bridge else {"tx": 0}
        sent = 0
        st = None
        for i, (path, n) in enumerate(files):
            rc, rout = replay(ns, "vethB", path, ("--topspeed",))
            if rc != 0:
                bad.append("tcpreplay phase %d: rc %d %s" % (i, rc, rout))
                return bad, info
            sent += n
            st = wait_packets(prefix, sent, proc)
            if not st or st["packets"] < sent:
                bad.append("phase %d: telemetry shows %s of %d packets" % (
                    i, st and st["packets"], sent))
                break
        # anything late (the kernel's own) shows too: until cuckooflow
        # has counted every frame the kernel gave its port
        for _ in polling(0.05):
            after = link_stats(ns, seen_dev)
            arrived = after[seen_key] - before[seen_key]
            st = stats(prefix) or st
            if st and st["packets"] >= arrived:
                break
        rc, text = stop(proc, log)
        info["log"] = text
        if rc != 0:
            bad.append("rc %d: %s" % (rc, text[-400:]))
        if not os.path.exists(out):
            bad.append("no --stats-json")
            return bad, info
        with open(out) as f:
            final = json.load(f)
        t = final["total"]
        info["final"] = t
        info["lcores"] = [(lc["lcore"], lc["rx_packets"], lc["packets"])
                          for lc in final["lcores"]]
        extra = t["packets"] - sent
        info["extra"] = extra
        info["arrived"] = arrived
        # Flow counters: the plan's truth, exactly. packets and bytes:
        # at least what was sent; anything more must be what the kernel
        # itself put on the wire (and then it must be counted there).
        for k in ("flows_new", "flows_closed", "orphan_close", "active",
                  "flows_expired", "flows_evicted", "insert_failed",
                  "reused", "fragments", "malformed_total"):
            if t[k] != truth[k]:
                bad.append("%s %d, want %d" % (k, t[k], truth[k]))
        if t["packets"] < sent:
            bad.append("packets %d < sent %d" % (t["packets"], sent))
        if extra == 0:
            for k in ("flows_seen", "bytes", "non_ip"):
                if t[k] != truth[k]:
                    bad.append("%s %d, want %d" % (k, t[k], truth[k]))
        elif arrived != t["packets"]:
            bad.append("%d packets more than sent, and %s %s counted %d: "
                       "not explained" % (extra, seen_dev, seen_key,
                                          arrived))
        if t["rx_missed"] or t["rx_nombuf"] or t["rx_errors"] or \
                t["handoff_drops"]:
            bad.append("lost: missed %d nombuf %d errors %d handoff %d" % (
                t["rx_missed"], t["rx_nombuf"], t["rx_errors"],
                t["handoff_drops"]))
        if nb > 1 and min(lc[1] for lc in info["lcores"]) == 0:
            bad.append("one queue got nothing: %s" % info["lcores"])
        info["sent"] = sent
    finally:
        cleanup(ns, prefix, log, proc)
    return bad, info


@pytest.mark.parametrize("run", (1, 2, 3))
def test_af_packet(run):
    """af_packet qpairs=2, 2 workers, --clock tsc, 3 runs: flows_new,
    flows_closed, orphan_close as the plan, packets >= the plan's."""
    bad, info = live_run("af_packet", 2)
    assert not bad, "%s; per lcore (lcore, rx, tracked) %s; extra %s" % (
        bad, info.get("lcores"), info.get("extra"))


def test_tap():
    """net_tap bridged with the veth, 1 worker, --clock tsc: flows_new,
    flows_closed, orphan_close as the plan, packets >= the plan's."""
    bad, info = live_run("tap", 1)
    assert not bad, "%s; per lcore %s; extra %s" % (
        bad, info.get("lcores"), info.get("extra"))


# A ring of 2 frames a queue (one 4 KiB block of 2048-byte frames,
# net_af_packet's devargs): at tcpreplay --topspeed the kernel drops
# frames at the rings faster than any worker can poll them.
TINY_RING = "blocksz=4096,framesz=2048,framecnt=2"


def pcap_frames(path):
    """The frames of the classic pcap file @path (little-endian, as
    tcpdump writes it here), as bytes: a list. Complete records only (the
    file may still be written to)."""
    with open(path, "rb") as f:
        data = f.read()
    frames, off = [], 24
    while off + 16 <= len(data):
        incl = struct.unpack_from("<I", data, off + 8)[0]
        if off + 16 + incl > len(data):
            break
        frames.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return frames


@pytest.mark.parametrize("mode", ["monitor", "forward"])
@pytest.mark.parametrize("nb", [1, 2])
def test_throughput(nb, mode):
    """tcpreplay --topspeed, looped, into af_packet (@nb workers, one
    queue pair each) with rings of 2 frames: the kernel drops frames at
    the rings (ring full), which DPDK 22.11's af_packet PMD does not
    count; cuckooflow reads them (PACKET_STATISTICS) into rx_missed.
    Every frame vethA took in (its link counters, which count before the
    rings) is then read by cuckooflow or counted lost: packets +
    handoff_drops + rx_missed, waited for in /cuckooflow/stats until it
    adds up (a state: the rings are drained and their drops read), and
    the same at exit in --stats-json. In forward mode cuckooflow sends
    what it read out of a second af_packet port (vethC, rings of the
    default size) to vethD, where tcpdump captures it: every frame read
    is sent or counted tx_dropped, vethD takes in every frame sent, and
    each is one of the frames replayed, byte for byte. The rates are
    printed."""
    path, n = burst_file()
    loops = int(os.environ.get("LIVE_LOOPS", "200"))
    ns = ns_create(False)
    prefix = ns
    out = os.path.join(TMP, prefix + ".json")
    cap = os.path.join(TMP, prefix + ".pcap")
    proc = log = dump = None
    bad, note = [], ""
    vdevs = ["net_af_packet0,iface=vethA,qpairs=%d,%s" % (nb, TINY_RING)]
    try:
        if mode == "forward":
            tcpdump = need_tool("tcpdump", "tcpdump")
            sh(IP, "-n", ns, "link", "add", "vethC", "type", "veth", "peer",
               "name", "vethD")
            for dev in ("vethC", "vethD"):
                sh(IP, "-n", ns, "link", "set", dev, "up")
            vdevs.append("net_af_packet1,iface=vethC,qpairs=%d" % nb)
            with open(cap + ".log", "w") as dl:
                # a buffer of 64 MiB: the 200,000 frames fit
                dump = subprocess.Popen(
                    [IP, "netns", "exec", ns, tcpdump, "-U", "-B", "65536",
                     "-n", "-i", "vethD", "-w", cap],
                    stdout=subprocess.DEVNULL, stderr=dl)
            wait_until(lambda: "listening on" in open(cap + ".log").read(),
                       "tcpdump listening", proc=dump)
        proc, log = start(ns, nb, vdevs, prefix, out, mode=mode)
        if not wait_ready(prefix, proc):
            bad.append("telemetry never answered")
        else:
            before = link_stats(ns, "vethA")
            st0 = stats(prefix)
            rc, rout = replay(ns, "vethB", path,
                              ("--topspeed", "--loop=%d" % loops))
            after = link_stats(ns, "vethA")
            arrived = after["rx"] - before["rx"]

            def seen(st):
                return sum(st[k] - st0[k] for k in (
                    "packets", "handoff_drops", "rx_missed"))
            # every frame vethA took in read or counted lost: a state
            st = None
            for _ in polling(0.05):
                st = stats(prefix) or st
                if st and seen(st) >= arrived or proc.poll() is not None:
                    break
            if mode == "forward" and st is not None:
                # every frame sent, captured: a state
                for _ in polling(0.05):
                    st = stats(prefix) or st
                    if len(pcap_frames(cap)) >= st["tx_packets"] and \
                            link_stats(ns, "vethD")["rx"] >= \
                            st["tx_packets"] or proc.poll() is not None:
                        break
            rc2, text = stop(proc, log)
            with open(out) as f:
                t = json.load(f)["total"]
            sent = n * loops
            m = re.search(r"sent in ([\d.]+) seconds", rout)
            secs = float(m.group(1)) if m else 0
            note = ("%d workers, %s: sent %d in %.3f s (%s pps, tcpreplay); "
                    "vethA rx %d; cuckooflow packets %d (~%.0f pps while "
                    "sending), rx_missed %d, handoff_drops %d, tx_packets "
                    "%d, tx_dropped %d" % (
                        nb, mode, sent, secs, replay_pps(rout), arrived,
                        t["packets"], t["packets"] / secs if secs else 0,
                        t["rx_missed"], t["handoff_drops"], t["tx_packets"],
                        t["tx_dropped"]))
            if rc != 0 or rc2 != 0:
                bad.append("rc tcpreplay %d cuckooflow %d: %s" % (
                    rc, rc2, rout[-200:]))
            if arrived != sent:
                bad.append("vethA took in %d of %d" % (arrived, sent))
            if st is None or seen(st) != arrived:
                bad.append("/cuckooflow/stats: read or lost %s of the %d "
                           "frames vethA took in" % (
                               seen(st) if st else None, arrived))
            # at exit (the JSON's counters from the start: vethA took in
            # nothing before the replay, IPv6 and IGMP off)
            total = t["packets"] + t["handoff_drops"] + t["rx_missed"]
            if total != arrived + sum(st0[k] for k in (
                    "packets", "handoff_drops", "rx_missed")):
                bad.append("--stats-json: read or lost %d of %d" % (
                    total, arrived))
            # the tiny rings did drop frames: else this tests nothing
            if t["rx_missed"] == 0:
                bad.append("no frame dropped at the rings")
            if "lost" not in text or "rx_missed" not in text:
                bad.append("the exit report does not say rx_missed")
            if "AF_PACKET sockets" in text or "rings' drops" in text:
                bad.append("the rings' sockets not all found: %s" % text)
            if mode == "forward":
                dump.send_signal(signal.SIGINT)
                dump.wait(timeout=DEADLINE)
                frames = pcap_frames(cap)
                from scapy.all import rdpcap
                replayed = {bytes(p) for p in rdpcap(path)}
                if t["tx_packets"] + t["tx_dropped"] != t["packets"]:
                    bad.append("forwarded %d + tx_dropped %d of %d read" % (
                        t["tx_packets"], t["tx_dropped"], t["packets"]))
                if len(frames) != t["tx_packets"]:
                    bad.append("vethD: %d frames captured of %d sent" % (
                        len(frames), t["tx_packets"]))
                strange = [f for f in frames if f not in replayed]
                if strange:
                    bad.append("%d frames out not replayed ones: %s" % (
                        len(strange), strange[0].hex()))
    finally:
        cleanup(ns, prefix, log, dump, proc)
    print(note)
    assert not bad, "; ".join(bad + [note])


@pytest.mark.parametrize("nb", [1, 2])
def test_ring_sockets_hidden(nb):
    """cuckooflow's /proc/self/fd an empty directory (a bind mount in a
    mount namespace of its own, over /proc/<its pid>/fd): it cannot find
    the af_packet port's sockets, so it cannot count the rings' drops. It
    says so, naming the port, and runs on: the frames replayed are
    tracked. The replay is fewer frames (400) than one ring holds (512 at
    the default size) or the kernel's backlog (netdev_max_backlog, 1000),
    and cuckooflow is stopped (SIGSTOP) while it runs: the frames wait in
    the rings whatever the machine's load, so none can be dropped, which
    this run could not count. (Its first version replayed 1000 frames
    with cuckooflow running and lost 243 of them in a loaded CI run.)"""
    unshare = need_tool("unshare", "util-linux")
    path, n = burst_file(400)
    ns = ns_create(False)
    prefix = ns
    out = os.path.join(TMP, prefix + ".json")
    empty = os.path.join(TMP, prefix + ".empty")
    os.mkdir(empty)
    proc = log = None
    try:
        # the shell's pid is cuckooflow's: each command execs the next
        proc, log = start(ns, nb, "net_af_packet0,iface=vethA,qpairs=%d" % nb,
                          prefix, out, wrap=(
                              unshare, "-m", "--propagation", "private",
                              "sh", "-c", 'mount --bind "$0" /proc/$$/fd && '
                              'exec "$@"', empty))
        assert wait_ready(prefix, proc), "cuckooflow did not start"
        proc.send_signal(signal.SIGSTOP)
        try:
            rc, rout = replay(ns, "vethB", path)
        finally:
            proc.send_signal(signal.SIGCONT)
        assert rc == 0, rout
        wait_packets(prefix, n, proc)
        rc2, text = stop(proc, log)
    finally:
        cleanup(ns, prefix, log, proc)
    with open(out) as f:
        t = json.load(f)["total"]
    assert rc2 == 0, text[-400:]
    assert re.search(r"warning: port 0 \(net_af_packet0\): 0 AF_PACKET "
                     r"sockets on interface \d+, not one per queue pair "
                     r"\(%d\)" % nb, text), text[-800:]
    assert t["packets"] == n and t["rx_missed"] == 0, t


# ------------------------------------- forwarding between kernel ports

def veth_ns(tag):
    """A namespace of this run's, IPv6 off: its name."""
    global runs
    runs += 1
    ns = "cfl%d_%d%s" % (os.getpid(), runs, tag)
    veth_netns(ns, [])
    namespaces.append(ns)
    return ns


def tcp_checksums_ok(path):
    """Whether each TCP segment of the capture @path (Ethernet) has its
    checksum right, as scapy computes it: a list, in order."""
    from scapy.all import Ether, TCP, rdpcap
    ok = []
    for p in rdpcap(path):
        e = Ether(bytes(p))
        if TCP not in e:
            continue
        got = e[TCP].chksum
        del e[TCP].chksum
        ok.append(Ether(bytes(e))[TCP].chksum == got)
    return ok


SERVER = ("import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET,"
          " socket.SO_REUSEADDR, 1); s.bind(('198.18.3.2', 8080)); "
          "s.listen(); print('listening', flush=True); c, _ = s.accept(); "
          "c.sendall(c.recv(64).upper())")
CLIENT = ("import socket; c = socket.create_connection(('198.18.3.2', 8080),"
          " timeout=600); c.sendall(b'ping'); print(c.recv(64).decode())")


@pytest.mark.parametrize("nb", (1, 2))
def test_veth_checksum_offload(nb):
    """cuckooflow forwarding TCP between two veths (af_packet, --mode
    forward), a client and a server in namespaces of their own beyond
    them: with the veths' tx checksum offload on (the default), the
    client's SYN leaves it with its checksum not filled in (the kernel
    leaves that to a "device" that never does it), af_packet hands
    cuckooflow those bytes, and the server's kernel drops what arrives:
    a bad checksum, no connection. With `ethtool -K DEV tx off` on the
    two ends (docs/live.md), every segment the server sees is right and
    the connection works. The frames are read where they arrive
    (tcpdump on the server's veth) and checked by scapy."""
    ethtool = need_tool("ethtool", "ethtool")
    tcpdump = need_tool("tcpdump", "tcpdump")
    cli, mid, srv = veth_ns("c"), veth_ns("m"), veth_ns("s")
    prefix = mid
    out = os.path.join(TMP, prefix + ".json")
    proc = log = dump = client = None
    caps = [os.path.join(TMP, "%s_%d.pcap" % (prefix, k)) for k in (0, 1)]
    try:
        for end, ns, far in (("cA", cli, "a1"), ("sB", srv, "b1")):
            sh(IP, "link", "add", end, "netns", ns, "type", "veth", "peer",
               "name", far, "netns", mid)
            sh(IP, "-n", mid, "link", "set", far, "up")
            sh(IP, "-n", ns, "link", "set", end, "up")
        sh(IP, "-n", cli, "addr", "add", "198.18.3.1/24", "dev", "cA")
        sh(IP, "-n", srv, "addr", "add", "198.18.3.2/24", "dev", "sB")
        log = open(os.path.join(TMP, prefix + ".log"), "w")
        proc = subprocess.Popen(
            [IP, "netns", "exec", mid, APP, "--lcores", WORKER_LCORES[nb],
             "--no-pci", "--no-huge", "-m", NO_HUGE_MB, "--log-level=lib.*:error",
             "--file-prefix=" + prefix,
             "--vdev", "net_af_packet0,iface=a1,qpairs=%d" % nb,
             "--vdev", "net_af_packet1,iface=b1,qpairs=%d" % nb,
             "--", "--mode", "forward", "--stats-json", out],
            stdout=log, stderr=subprocess.STDOUT)
        prefixes.append(prefix)
        assert wait_ready(prefix, proc), "cuckooflow did not start"
        results = []
        for k, offload in enumerate((True, False)):
            if not offload:
                # docs/live.md: the checksums filled in by the kernel
                in_ns(cli, ethtool, "-K", "cA", "tx", "off")
                in_ns(srv, ethtool, "-K", "sB", "tx", "off")
            dump_log = caps[k] + ".log"
            with open(dump_log, "w") as dl:
                dump = subprocess.Popen(
                    [IP, "netns", "exec", srv, tcpdump, "-U",
                     "--immediate-mode", "-n", "-i", "sB", "-w", caps[k],
                     "tcp port 8080"],
                    stdout=subprocess.DEVNULL, stderr=dl)
            wait_until(lambda: "listening on" in open(dump_log).read(),
                       "tcpdump listening", proc=dump)
            server = subprocess.Popen(
                [IP, "netns", "exec", srv, "/usr/bin/python3", "-c", SERVER],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            # the client once the server listens (its line, or its end)
            assert server.stdout.readline() == "listening\n"
            client = subprocess.Popen(
                [IP, "netns", "exec", cli, "/usr/bin/python3", "-c", CLIENT],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if offload:
                # the SYN's arrival, then its checksum
                wait_until(lambda: os.path.getsize(caps[k]) > 24,
                           "the client's SYN at the server's veth")
                client.kill()
                server.kill()
                answer = None
            else:
                answer, _ = client.communicate(timeout=DEADLINE)
                server.wait(timeout=DEADLINE)
                # the server's answer in the capture: what came before
                # it (the handshake, the request) is there too
                wait_until(lambda: b"PING" in open(caps[k], "rb").read(),
                           "the answer at the server's veth", proc=dump)
            client.wait()
            server.wait()
            dump.send_signal(signal.SIGINT)
            dump.wait(timeout=DEADLINE)
            results.append((tcp_checksums_ok(caps[k]), answer))
        rc, text = stop(proc, log)
    finally:
        for p in (client, dump, proc):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        if log is not None and not log.closed:
            log.close()
        for ns in (cli, mid, srv):
            ns_delete(ns)
        shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)
    (bad_sums, none), (good_sums, answer) = results
    # offload on: the SYN(s) forwarded as the kernel left them, wrong
    assert bad_sums and not any(bad_sums) and none is None, bad_sums
    # offload off: every segment right, the connection made
    assert good_sums and all(good_sums) and answer == "PING\n", \
        (good_sums, answer, text[-400:])
    assert rc == 0, text[-400:]


def test_nothing_left():
    left = [ns for ns in namespaces
            if ns in sh(IP, "netns", "list").stdout.split()]
    host = sh(IP, "-o", "link", "show").stdout
    devs = [d for d in ("vethA", "vethB", "cftap0", "cfbr0")
            if re.search(r"^\d+: %s[@:]" % d, host, re.M)]
    dirs = [p for p in prefixes if os.path.exists("/var/run/dpdk/" + p)]
    assert not left and not devs and not dirs, \
        "namespaces %s, host interfaces %s, dirs %s" % (left, devs, dirs)


def can_netns():
    """None, or why namespaces cannot be made here."""
    if os.geteuid() != 0:
        return "not root: cannot create a network namespace"
    for tool in ("tcpreplay",):
        if shutil.which(tool) is None:
            return "%s not installed (tools/setup.sh)" % tool
    ns = "cfl%d_probe" % os.getpid()
    p = sh(IP, "netns", "add", ns, check=False)
    if p.returncode != 0:
        return "ip netns add: " + p.stderr.strip()
    try:
        p = sh(IP, "-n", ns, "link", "add", "vethA", "type", "veth", "peer",
               "name", "vethB", check=False)
        if p.returncode != 0:
            return "veth: " + p.stderr.strip()
    finally:
        ns_delete(ns)
    return None
