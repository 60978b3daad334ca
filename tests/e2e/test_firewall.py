"""End-to-end tests of the inline flow filter (issue 14) against an
independent model (fw_oracle.py: scapy and plain Python, no app or
lib/cuckoo code).

Two harnesses:

- live: a network namespace of the test's own with two veth pairs,
  inside (vethIa <-> vethIb) and outside (vethOa <-> vethOb), IPv6 off,
  no addresses, no route. cuckooflow runs inside it in forward mode on
  net_af_packet ports vethIa (port 0, inside) and vethOa (port 1,
  outside), --clock tsc; the test sends each phase of a scenario into
  vethIb or vethOb (an AF_PACKET socket of its own in the namespace,
  harness.netns_socket()) and the next phase waits until the app's telemetry
  counts it (causality across ports: the inside open is processed before
  the outside reply). tcpdump -Q in on vethIb / vethOb records what the
  app transmitted on port 0 / port 1. The model runs on the phases'
  measured start times, each phase's packets known to within that
  phase's own duration, from just before its send to the count (it
  raises Ambiguous when that leaves an outcome open, the token counts
  too; the longest duration is the slack of the end's count only; an
  undecided run is run again);
- pcap: net_pcap0 (inside) and net_pcap1 (outside) forwarding to each
  other, and a mirror port net_pcap2, --clock pkt: the model on the
  captures' times, exactly. For what needs no causality across ports
  (the two rx captures are read in no set order), and for fragments (the
  af_packet PMD's PACKET_FANOUT_FLAG_DEFRAG keeps a lone non-first
  fragment in the kernel's reassembly queue: it never reaches the app).

Each egress port's frames must equal the model's: the same multiset, and
each stream (flow and direction) in the same order (two workers may
interleave flows). Counters: the tracker's flow counters, rx and tx, and
the feature's counters where the stats JSON has them.

Env: CUCKOOFLOW_APP (default build/app/cuckooflow), CUCKOOFLOW_PCAPS
(default pcaps; unused so far: the captures are generated). Root needed
for the live cases (skipped otherwise). Run:
  /usr/bin/python3 -m pytest -v tests/e2e/test_firewall.py
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from harness import NO_HUGE_MB
from harness import (DEADLINE, IP, need_tool, netns_socket, polling,
                     send_frames, stats, stop, veth_netns, wait_packets)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fw_scenarios as S  # noqa: E402
from fw_oracle import NS, Ambiguous, Oracle, compare_frames, parse  # noqa: E402

APP = os.environ.get("CUCKOOFLOW_APP", "build/app/cuckooflow")
PCAPS = os.environ.get("CUCKOOFLOW_PCAPS", "pcaps")
WORKER_LCORES = {1: "0@0,1@1", 2: "0@0,1@1,2@1"}
TMP = tempfile.mkdtemp(prefix="cuckooflow-fw-")
MIRROR_PORT = 2
# The model's counters -> the stats JSON's.
FLOW_KEYS = {"flows_new": "flows_new", "flows_seen": "flows_seen",
             "flows_closed": "flows_closed", "orphan_close": "orphan_close",
             "reused": "reused", "non_ip": "non_ip",
             "fragments": "fragments", "malformed": "malformed_total",
             "packets": "packets", "forwarded": "tx_packets"}
# The inline filter's counters, the same names in the model and the JSON.
FEATURE_KEYS = ("unsolicited", "not_syn", "new_flow_limited", "mirrored",
                "related", "unrelated")
_seq = [0]


def run_id():
    _seq[0] += 1
    return "cffw%d_%d" % (os.getpid(), _seq[0])


def sh(*args, check=True, timeout=DEADLINE):
    p = subprocess.run(list(args), capture_output=True, text=True,
                       timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError("%s: rc %d: %s" % (" ".join(args), p.returncode,
                                              p.stderr.strip()))
    return p


def wrpcap(path, pkts):
    from scapy.all import wrpcap as w
    w(path, pkts, linktype=1)


def read_frames(path):
    from scapy.all import rdpcap
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return []
    return [bytes(p) for p in rdpcap(path)]


def captured(path):
    """The whole frames of a pcap that tcpdump may still be writing (a
    record cut at the end is left for later)."""
    import struct
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return []
    if len(data) < 24:
        return []
    endian = "<" if data[:4] == b"\xd4\xc3\xb2\xa1" else ">"
    frames, off = [], 24
    while off + 16 <= len(data):
        caplen = struct.unpack(endian + "I", data[off + 8:off + 12])[0]
        if off + 16 + caplen > len(data):
            break
        frames.append(data[off + 16:off + 16 + caplen])
        off += 16 + caplen
    return frames


def ours(frames):
    """Only frames from the test's MACs (the kernel's own, if any, out)."""
    macs = {bytes.fromhex(m.replace(":", "")) for m in S.TEST_MACS}
    return [f for f in frames if f[6:12] in macs]


def stats_json(path):
    with open(path) as f:
        return json.load(f)["total"]


def check_counters(total, res, expired_end=None):
    """Problems between the app's final counters and the model's."""
    bad = []
    want = dict(res.counters)
    for k, j in FLOW_KEYS.items():
        if j not in total:
            bad.append("stats JSON has no %s" % j)
        elif total[j] != want[k]:
            bad.append("%s %d, model %d" % (j, total[j], want[k]))
    if expired_end is not None and \
            total.get("flows_expired") != want["flows_expired"] + expired_end:
        bad.append("flows_expired %s, model %d" % (
            total.get("flows_expired"), want["flows_expired"] + expired_end))
    for k in FEATURE_KEYS:
        if k not in total:
            bad.append("stats JSON has no %s" % k)
        elif total[k] != want[k]:
            bad.append("%s %d, model %d" % (k, total[k], want[k]))
    for r, n in res.drops.items():
        k = "dropped_" + r
        if k not in total:
            bad.append("stats JSON has no %s" % k)
        elif total[k] != n:
            bad.append("%s %d, model %d" % (k, total[k], n))
    return bad


# ------------------------------------------------------------ pcap

def pcap_run(scn, nb, firewall, owners=None, plain_tx=None):
    """One run of a TimedScenario on net_pcap ports; returns (problems,
    command line). @owners: {flow key: worker} for the model's per-worker
    admission buckets; @plain_tx: a list that receives each port's tx
    files per worker."""
    rid = run_id()
    d = os.path.join(TMP, rid)
    os.makedirs(d)
    rx = [os.path.join(d, "rx%d.pcap" % p) for p in (0, 1)]
    wrpcap(rx[0], scn.packets(0))
    wrpcap(rx[1], scn.packets(1))
    empty = os.path.join(d, "empty.pcap")
    wrpcap(empty, [])
    mirror = firewall and scn.opts.get("mirror-first")
    ports = 3 if mirror else 2
    tx = [[os.path.join(d, "p%d_w%d.pcap" % (p, w)) for w in range(nb)]
          for p in range(ports)]
    vdevs = ["net_pcap%d,rx_pcap=%s,%s" % (
        p, rx[p] if p < 2 else empty, ",".join("tx_pcap=" + t
                                              for t in tx[p]))
        for p in range(ports)]
    allow = os.path.join(d, "allow.txt")
    if scn.allow:
        with open(allow, "w") as f:
            f.write(scn.allow)
    out = os.path.join(d, "stats.json")
    cmd = [APP, "--lcores", WORKER_LCORES[nb], "--no-pci", "--no-huge",
           "-m", NO_HUGE_MB, "--log-level=lib.*:error", "--file-prefix=" + rid] + \
        ["--vdev=" + v for v in vdevs] + \
        ["--", "--clock", "pkt", "--exit-on-eof", "--hash-seed", "7",
         "--stats-json", out] + \
        scn.args(firewall, allow, MIRROR_PORT if mirror else None)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=DEADLINE)
    shutil.rmtree("/var/run/dpdk/" + rid, ignore_errors=True)
    if p.returncode != 0:
        return ["rc %d: %s" % (p.returncode, (p.stdout + p.stderr)[-600:])], \
            cmd
    if plain_tx is not None:
        plain_tx.extend(tx)
    cfg = scn.config(firewall, mirror_port=MIRROR_PORT if mirror else None)
    if owners is not None:
        cfg.owner = owners.__getitem__
    o = Oracle(cfg)
    res = o.run(scn.events())
    bad = []
    for port in (0, 1):
        got = sum((read_frames(t) for t in tx[port]), [])
        bad += ["port %d: %s" % (port, b)
                for b in compare_frames(got, res.out[port])]
    if mirror:
        got = sum((read_frames(t) for t in tx[2]), [])
        bad += ["mirror: %s" % b for b in compare_frames(got, res.mirror)]
    try:
        _, expired_end = o.finish(o.last_t)
    except Ambiguous:
        expired_end = None
    bad += check_counters(stats_json(out), res, expired_end)
    return bad, cmd


def learn_owners(scn, nb):
    """Admission is per worker, so the model needs each flow's owner: a
    run in plain forward mode (no limit, every frame forwarded by the
    worker that owns its flow, on that worker's tx queue) with the same
    hash seed tells it. Every flow of the scenario must appear."""
    tx = []
    bad, cmd = pcap_run(scn, nb, False, plain_tx=tx)
    assert not bad, "the owners' run: %s" % "\n".join(bad)
    owners = {}
    for files in tx:
        for w, f in enumerate(files):
            for fr in read_frames(f):
                p = parse(fr)
                if p["kind"] == "ip":
                    assert owners.setdefault(p["key"], w) == w, \
                        "a flow on two workers"
    assert len(set(owners.values())) == nb, "a worker owns no flow"
    return owners


@pytest.mark.parametrize("nb", (1, 2))
@pytest.mark.parametrize("firewall", (False, True),
                         ids=("plain", "firewall"))
@pytest.mark.parametrize("make", S.PCAP, ids=[m.__name__ for m in S.PCAP])
def test_pcap(make, firewall, nb):
    if not os.access(APP, os.X_OK):
        pytest.skip("no cuckooflow at %s (CUCKOOFLOW_APP)" % APP)
    scn = make()
    owners = None
    if firewall and nb > 1 and scn.opts.get("new-flow-rate"):
        owners = learn_owners(scn, nb)
    bad, cmd = pcap_run(scn, nb, firewall, owners)
    assert not bad, "%s\ncommand: %s" % ("\n".join(bad), " ".join(cmd))


# ------------------------------------------------------------ live

def can_netns():
    if os.geteuid() != 0:
        return "not root: cannot create a network namespace"
    need_tool("tcpdump", "tcpdump")
    return None


class Netns:
    DEVS = (("vethIa", "vethIb"), ("vethOa", "vethOb"))

    def __init__(self):
        self.name = run_id()
        veth_netns(self.name, self.DEVS)

    def ex(self, *args, **kw):
        return sh(IP, "netns", "exec", self.name, *args, **kw)

    def popen(self, args, log):
        return subprocess.Popen([IP, "netns", "exec", self.name] + args,
                                stdout=log, stderr=subprocess.STDOUT)

    def delete(self):
        sh(IP, "netns", "del", self.name, check=False)


UNDECIDED = "the run's timing leaves the outcome open"


def live_run(scn, nb, firewall):
    """Returns (problems, command line, info)."""
    ns = Netns()
    rid = ns.name
    d = os.path.join(TMP, rid)
    os.makedirs(d)
    procs = []
    socks = {}
    bad, info = [], {}
    allow = os.path.join(d, "allow.txt")
    if scn.allow:
        with open(allow, "w") as f:
            f.write(scn.allow)
    out = os.path.join(d, "stats.json")
    vdevs = ["net_af_packet%d,iface=%s,qpairs=%d" % (p, dev, nb)
             for p, dev in enumerate(("vethIa", "vethOa"))]
    cmd = [APP, "--lcores", WORKER_LCORES[nb], "--no-pci", "--no-huge",
           "-m", NO_HUGE_MB, "--log-level=lib.*:error", "--file-prefix=" + rid] + \
        ["--vdev=" + v for v in vdevs] + \
        ["--", "--clock", "tsc", "--hash-seed", "7", "--stats-json",
         out] + scn.args(firewall, allow)

    try:
        # each phase leaves its veth from this process (no tool started
        # per phase): its packets are known to within the send and the
        # count, not a process start in the namespace besides
        socks = {S.INSIDE: netns_socket(rid, "vethIb"),
                 S.OUTSIDE: netns_socket(rid, "vethOb")}
        caps = {}
        for port, dev in ((0, "vethIb"), (1, "vethOb")):
            caps[port] = os.path.join(d, "cap%d.pcap" % port)
            log = open(os.path.join(d, "tcpdump%d.log" % port), "w")
            p = ns.popen(["tcpdump", "-i", dev, "-Q", "in", "-n", "-s", "0",
                          "-U", "--immediate-mode", "-B", "4096", "-w",
                          caps[port]], log)
            procs.append((p, log))
        for p, log in procs:
            for _ in polling(0.05):
                with open(log.name) as f:
                    if "listening on" in f.read():
                        break
        applog = open(os.path.join(d, "app.log"), "w")
        app = ns.popen(cmd[:1] + cmd[1:], applog)
        procs.append((app, applog))
        for _ in polling(0.05):
            if app.poll() is not None or stats(rid):
                break
        if app.poll() is not None:
            with open(applog.name) as f:
                return ["cuckooflow exited: %s" % f.read()[-600:]], cmd, info
        sent, spans = 0, []
        t0 = time.monotonic()
        for i, ph in enumerate(scn.phases):
            if ph.sleep:
                time.sleep(ph.sleep)
            start = send_frames(socks[ph.port], ph.frames)
            sent += len(ph.frames)
            st = wait_packets(rid, sent, app)
            spans.append((start - t0, time.monotonic() - start))
            if not st or st["packets"] < sent:
                bad.append("phase %d: telemetry counts %s of %d packets" % (
                    i, st and st["packets"], sent))
        # the last transmissions reach the captures: every frame
        # cuckooflow sent is in one of them
        def landed():
            st = stats(rid)
            return st is not None and sum(
                len(ours(captured(caps[p]))) for p in (0, 1)) >= \
                st["tx_packets"]
        for _ in polling(0.05):
            if landed():
                break
        t_stop = time.monotonic() - t0
        rc = stop(app)
        # its final counters are of when it stopped, some time before
        # stop() returned: a loaded machine took seconds
        t_stopped = time.monotonic() - t0
        for p, log in procs[:-1]:
            stop(p)
        for _, log in procs:
            log.close()
        with open(applog.name) as f:
            info["log"] = f.read()
        if rc != 0:
            return bad + ["cuckooflow rc %d: %s" % (rc, info["log"][-600:])],\
                cmd, info
        slack = int((max(s for _, s in spans) + 0.05) * NS)
        info["spans"] = spans
        o = Oracle(scn.config(firewall, slack_ns=slack))
        base = 10 * NS
        try:
            # each phase's packets were met between its replay's start
            # and the telemetry's count of them: its own span, so a
            # slow first phase does not blur the later phases' gaps
            res = o.run(scn.events([base + int(s * NS) for s, _ in spans],
                                   spans_ns=[int((d + 0.05) * NS)
                                             for _, d in spans]))
        except Ambiguous as e:
            return [UNDECIDED + " (phases took up to %.3f s): %s" % (
                slack / NS, e)], cmd, info
        for port in (0, 1):
            got = ours(read_frames(caps[port]))
            bad += ["egress port %d: %s" % (port, b)
                    for b in compare_frames(got, res.out[port])]
        try:
            _, expired_end = o.finish(base + int(t_stop * NS), int(
                (t_stopped - t_stop) * NS) + slack)
        except Ambiguous:
            expired_end = None
        total = stats_json(out)
        bad += check_counters(total, res, expired_end)
        if total.get("rx_missed") or total.get("handoff_drops") or \
                total.get("tx_dropped"):
            bad.append("lost: rx_missed %s handoff_drops %s tx_dropped %s" %
                       (total.get("rx_missed"), total.get("handoff_drops"),
                        total.get("tx_dropped")))
        info["res"] = res
        return bad, cmd, info
    finally:
        for sock in socks.values():
            sock.close()
        for p, log in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            if not log.closed:
                log.close()
        ns.delete()
        shutil.rmtree("/var/run/dpdk/" + rid, ignore_errors=True)


def live_cases():
    """(scenario, firewall, workers) of the live runs. Not admission with
    2 workers in firewall mode: af_packet spreads a phase over both
    queues (qpairs sets rx and tx queues alike, and forward mode needs a
    tx queue a worker), so the order in which a worker meets a phase's
    flows, and which of them take its bucket's last tokens, is not the
    order sent; test_pcap[admission_pcap-firewall-2] checks 2 workers
    exactly."""
    cases = []
    for make in S.LIVE:
        limited = bool(make().opts.get("new-flow-rate"))
        for firewall in (False, True):
            for nb in (1, 2):
                if firewall and nb > 1 and limited:
                    continue
                cases.append(pytest.param(
                    make, firewall, nb, id="%s-%s-%d" % (
                        make.__name__, "firewall" if firewall else "plain",
                        nb)))
    return cases


@pytest.mark.slow
@pytest.mark.parametrize("make,firewall,nb", live_cases())
def test_live(make, firewall, nb):
    why = can_netns()
    if why:
        pytest.skip(why)
    scn = make()
    # A run whose phases took so long that the model cannot tell what
    # the timeouts made of them (Ambiguous) decided nothing: it is run
    # again until one decides, for up to DEADLINE, rather than judged (a
    # machine loaded to 30 runnable threads stretched a phase to 47 s;
    # CI's loaded run had three undecided runs in a row when a fixed 3
    # runs were the bound).
    end, runs = time.monotonic() + DEADLINE, 0
    while True:
        bad, cmd, info = live_run(scn, nb, firewall)
        runs += 1
        if not (len(bad) == 1 and bad[0].startswith(UNDECIDED)) or \
                time.monotonic() > end:
            break
    assert not bad, "%s\nrun %d; phases (start, duration) s: %s\n" \
        "command: %s" % ("\n".join(bad), runs, info.get("spans"),
                         " ".join(cmd))


def test_live_nothing_left():
    """No namespace or DPDK runtime directory of this run is left."""
    why = can_netns()
    if why:
        pytest.skip(why)
    mine = "cffw%d_" % os.getpid()
    left = [n for n in sh(IP, "netns", "list").stdout.split()
            if n.startswith(mine)]
    dirs = [n for n in os.listdir("/var/run/dpdk")
            if n.startswith(mine)] if os.path.isdir("/var/run/dpdk") else []
    assert not left and not dirs, (left, dirs)
