#!/usr/bin/python3
"""End-to-end tests of the cuckooflow binary on net_pcap vdevs.

usage: test_app.py CUCKOOFLOW PCAP_DIR
Prints TAP. Each run uses its own --file-prefix, and --no-huge unless the
test is about hugepages.
"""
import glob
import ipaddress
import json
import re
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

APP, PCAPS = sys.argv[1], sys.argv[2]
EXPORTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "..", "tools", "cuckooflow_exporter.py")
TMP = tempfile.mkdtemp(prefix="cuckooflow-e2e-")
results = []
runs = 0


def app(pcap=None, args=(), huge=False, tx=None, vdev=None, timeout=60):
    """Run the binary; return (exit code, stdout+stderr)."""
    global runs
    runs += 1
    eal = ["-l", "0,1", "--no-pci", "--log-level=lib.*:error",
           "--file-prefix=cfe2e%d_%d" % (os.getpid(), runs)]
    eal += [] if huge else ["--no-huge", "-m", "512"]
    if vdev is None and pcap is not None:
        vdev = "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (
            pcap, tx or os.path.join(TMP, "tx.pcap"))
    for v in [vdev] if isinstance(vdev, str) else vdev or []:
        eal += ["--vdev", v]
    p = subprocess.run([APP] + eal + ["--"] + list(args), capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def case(name, ok, detail=""):
    results.append((name, ok, detail))


def skip(name, why):
    results.append((name, None, why))


def counters(pcap, fp_bits, huge=False, extra=()):
    out = os.path.join(TMP, "stats.json")
    if os.path.exists(out):
        os.unlink(out)
    rc, log = app(pcap, ["--clock", "pkt", "--exit-on-eof", "--fp-bits",
                         str(fp_bits), "--hash-seed", "7", "--flows", "65536",
                         "--stats-json", out] + list(extra), huge=huge)
    if rc != 0:
        raise RuntimeError("exit %d: %s" % (rc, log.strip()[-400:]))
    with open(out) as f:
        return json.load(f)


def differences(got, want, exact=True):
    return {k: (got.get(k), v) for k, v in want.items()
            if (exact or k not in ("flows_new", "flows_seen", "active",
                                   "flows_expired", "flows_closed"))
            and got.get(k) != v}


def pcap_frames(path):
    with open(path, "rb") as f:
        data = f.read()
    frames, off = [], 24
    while off + 16 <= len(data):
        incl = struct.unpack_from("<I", data, off + 8)[0]
        frames.append(data[off + 16: off + 16 + incl])
        off += 16 + incl
    return frames


def test_truth():
    for truth in sorted(glob.glob(os.path.join(PCAPS, "*.truth.json"))):
        pcap = truth[: -len(".truth.json")] + ".pcap"
        name = os.path.basename(pcap)
        with open(truth) as f:
            want = json.load(f)
        try:
            got = counters(pcap, 32)
            diff = differences(got["total"], want)
            case("truth %s fp32" % name, not diff, str(diff))
        except RuntimeError as e:
            case("truth %s fp32" % name, False, str(e))
        # 12-bit fingerprints: a new flow may match another's entry (at
        # most 8 compared, in a table of 2^16 slots), so flows may only
        # be lost, a few at most for these captures.
        got = counters(pcap, 12)
        g, lost = got["total"], want["flows_new"] - got["total"]["flows_new"]
        case("truth %s fp12 within the FPR bound" % name,
             not differences(g, want, exact=False) and 0 <= lost <= 3 and
             "lcore_1" in got["filter"], "lost %d, %s" % (
                 lost, differences(g, want, exact=False)))
    # The compact table: 16-bit state, exact size (not a power of two).
    with open(os.path.join(PCAPS, "mixed.truth.json")) as f:
        want = json.load(f)
    name = "truth mixed.pcap fp32, --age-bits 16 --exact-size"
    try:
        got = counters(os.path.join(PCAPS, "mixed.pcap"), 32, extra=[
            "--age-bits", "16", "--exact-size", "--flows", "50000"])
        diff = differences(got["total"], want)
        case(name, not diff and got["filter"]["lcore_1"]["slots"] ==
             13021 * 4, "%s %s" % (diff, got["filter"]["lcore_1"]))
    except RuntimeError as e:
        case(name, False, str(e))


def hugepages_free():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("HugePages_Free:"):
                return int(line.split()[1])
    return 0


def test_hugepages():
    name = "truth mixed.pcap on hugepages, no files left behind"
    if hugepages_free() < 128 or not os.path.ismount("/dev/hugepages"):
        skip(name, "no hugepages reserved (HugePages_Free < 128)")
        return
    before = set(os.listdir("/dev/hugepages"))
    with open(os.path.join(PCAPS, "mixed.truth.json")) as f:
        want = json.load(f)
    try:
        got = counters(os.path.join(PCAPS, "mixed.pcap"), 32, huge=True)
        diff = differences(got["total"], want)
    except RuntimeError as e:
        diff = str(e)
    left = set(os.listdir("/dev/hugepages")) - before
    case(name, not diff and not left, "%s left %s" % (diff, sorted(left)))


def test_forward():
    out = os.path.join(TMP, "fwd.pcap")
    pcap = os.path.join(PCAPS, "mixed.pcap")
    rc, log = app(pcap, ["--mode", "forward", "--clock", "pkt",
                         "--exit-on-eof"], tx=out)
    sent = pcap_frames(out) if rc == 0 else []
    case("forward: same packets, bytes and count", rc == 0 and
         sent == pcap_frames(pcap), "rc %d, %d of %d frames" % (
             rc, len(sent), len(pcap_frames(pcap))))


BAD_OPTIONS = [
    (["--burst", "0"], "--burst"),
    (["--burst", "65"], "--burst"),
    (["--burst", "x"], "--burst"),
    (["--rxq", "0"], "--rxq"),
    (["--mbufs", "x"], "--mbufs"),
    (["--mode", "bridge"], "--mode"),
    (["--fp-bits", "3"], "--fp-bits"),
    (["--fp-bits", "33"], "--fp-bits"),
    (["--flows", "0"], "--flows"),
    (["--hash", "crc"], "--hash"),
    (["--hash-seed", "-1"], "--hash-seed"),
    (["--clock", "wall"], "--clock"),
    (["--idle-timeout", "0"], "--idle-timeout"),
    (["--close-linger", "-5"], "--close-linger"),
    (["--full-policy", "drop"], "--full-policy"),
    (["--stats-period", "100000"], "--stats-period"),
    (["--portmask", "0x4"], "--portmask"),
    (["--portmask", "0"], "--portmask"),
    (["--no-such-option"], "--no-such-option"),
    (["--burst"], "--burst"),
    (["stray"], "stray"),
    (["--cfg", "/nonexistent.ini"], "/nonexistent.ini"),
]


def test_bad_options():
    pcap = os.path.join(PCAPS, "tcp.pcap")
    for args, word in BAD_OPTIONS:
        rc, log = app(pcap, args)
        case("rejects %s" % " ".join(args), rc != 0 and word in log,
             "rc %d: %s" % (rc, log.strip()[-200:]))
    bad_ini = [("[flows]\nfp_bits = 40\n", "fp_bits"),
               ("[flows]\nno_such_key = 1\n", "no_such_key"),
               ("[timeouts]\ntcp = soon\n", "tcp"),
               ("[ports]\nmode = inline\n", "mode"),
               ("not an ini file [[[\n", "line 1"),
               ("[flows]\n= 3\n", "line 2")]
    for text, word in bad_ini:
        path = os.path.join(TMP, "bad.ini")
        with open(path, "w") as f:
            f.write(text)
        rc, log = app(pcap, ["--cfg", path], timeout=20)
        case("rejects config %r" % text.strip(), rc != 0 and word in log,
             "rc %d: %s" % (rc, log.strip()[-200:]))


def test_config_file_and_override():
    path = os.path.join(TMP, "ok.ini")
    with open(path, "w") as f:
        f.write("[flows]\nfp_bits = 16\nclose_linger = 0\n"
                "[run]\nexit_on_eof = 1\n")
    out = os.path.join(TMP, "cfg.json")
    rc, log = app(os.path.join(PCAPS, "tcp.pcap"),
                  ["--cfg", path, "--clock", "pkt", "--fp-bits", "32",
                   "--stats-json", out])
    ok = rc == 0 and os.path.exists(out)
    case("config file read, command line overrides it", ok, log[-300:])


def test_documented_config():
    ini = os.path.join(os.path.dirname(PCAPS.rstrip("/")), "config",
                       "cuckooflow.ini")
    out = os.path.join(TMP, "doc.json")
    rc, log = app(os.path.join(PCAPS, "tcp.pcap"),
                  ["--cfg", ini, "--exit-on-eof", "--clock", "pkt",
                   "--stats-json", out])
    case("config/cuckooflow.ini is accepted as shipped", rc == 0 and
         os.path.exists(out), log[-300:])


def test_two_lcores():
    q0 = os.path.join(PCAPS, "mixed.q0.pcap")
    q1 = os.path.join(PCAPS, "mixed.q1.pcap")
    out = os.path.join(TMP, "two.json")
    global runs
    runs += 1
    p = subprocess.run(
        [APP, "--lcores", "0@0,1@1,2@1", "--no-pci", "--no-huge", "-m", "512",
         "--log-level=lib.*:error", "--file-prefix=cfe2e%d_%d" %
         (os.getpid(), runs), "--vdev",
         "net_pcap0,rx_pcap=%s,rx_pcap=%s,tx_pcap=/dev/null" % (q0, q1),
         "--", "--rxq", "2", "--clock", "pkt", "--exit-on-eof",
         "--fp-bits", "32", "--hash-seed", "7", "--stats-json", out],
        capture_output=True, text=True, timeout=60)
    with open(os.path.join(PCAPS, "mixed.truth.json")) as f:
        want = json.load(f)
    if p.returncode != 0:
        case("two lcores, two rx_pcap queues sum to the truth", False,
             p.stderr[-300:])
        return
    with open(out) as f:
        got = json.load(f)
    lcores = got["lcores"]
    sums = {k: sum(lc[k] for lc in lcores) for k in want
            if isinstance(want[k], int)}
    diff = {k: (sums[k], want[k]) for k in sums if sums[k] != want[k]}
    busy = [lc["packets"] for lc in lcores]
    case("two lcores, two rx_pcap queues sum to the truth",
         len(lcores) == 2 and min(busy) > 0 and not diff,
         "per lcore packets %s, %s" % (busy, diff))


def telemetry(prefix, cmd):
    path = "/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    s.connect(path)
    json.loads(s.recv(16384).decode())
    s.send(cmd.encode())
    raw = s.recv(1 << 17).decode()
    s.close()
    return json.loads(raw)


def test_telemetry_and_exporter():
    global runs
    runs += 1
    prefix = "cfe2e%d_%d" % (os.getpid(), runs)
    out = os.path.join(TMP, "tel.json")
    pcap = os.path.join(PCAPS, "mixed.pcap")
    proc = subprocess.Popen(
        [APP, "-l", "0,1", "--no-pci", "--no-huge", "-m", "512",
         "--log-level=lib.*:error", "--file-prefix=" + prefix, "--vdev",
         "net_pcap0,rx_pcap=%s,tx_pcap=/dev/null" % pcap, "--", "--clock",
         "pkt", "--fp-bits", "32", "--hash-seed", "7", "--stats-json", out],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    name = "telemetry: every command bare, ,0 and ,z; final stats = JSON"
    try:
        stats = None
        for _ in range(100):  # until the capture is read and swept
            time.sleep(0.1)
            try:
                stats = telemetry(prefix, "/cuckooflow/stats")[
                    "/cuckooflow/stats"]
            except (OSError, ValueError, KeyError, TypeError):
                continue
            if stats and stats["packets"] == 796 and stats["active"] == 0:
                break
        commands = telemetry(prefix, "/")["/"]
        bad = []
        for cmd in commands:
            for suffix in ("", ",0", ",z"):
                try:
                    telemetry(prefix, cmd + suffix)
                except Exception as e:
                    bad.append("%s%s: %r" % (cmd, suffix, e))
        alive = proc.poll() is None
        ours = [c for c in commands if c.startswith("/cuckooflow/")]
        # The exporter, on a free port of this host's loopback.
        port = free_port()
        exp = subprocess.Popen([EXPORTER, "--file-prefix", prefix,
                                "--port", str(port)],
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
        metrics = ""
        for _ in range(50):
            time.sleep(0.1)
            try:
                metrics = urllib.request.urlopen(
                    "http://127.0.0.1:%d/metrics" % port,
                    timeout=5).read().decode()
                break
            except OSError:
                continue
        exp.terminate()
        exp.wait(timeout=10)
        families = {f.name: f for f in
                    text_string_to_metric_families(metrics)}
        packets = families.get("cuckooflow_packets")
        exported = packets and {s.labels["lcore"]: s.value
                                for s in packets.samples
                                if s.name == "cuckooflow_packets_total"}
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=20)
        with open(out) as f:
            final = json.load(f)["total"]
        diff = {k: (v, final.get(k)) for k, v in stats.items()
                if k in final and not isinstance(final[k], dict)
                and final[k] != v}
        case(name, not bad and alive and len(ours) == 6 and not diff and
             proc.returncode == 0, "bad %s alive %s cmds %s diff %s rc %s" %
             (bad[:3], alive, ours, diff, proc.returncode))
        case("prometheus exporter: /metrics parses, counters match",
             exported == {"all": 796.0, "1": 796.0},
             "exported %r, %d families" % (exported, len(families)))
    finally:
        if proc.poll() is None:
            proc.kill()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_port_counters():
    out = os.path.join(TMP, "port.json")
    rc, log = app(os.path.join(PCAPS, "mixed.pcap"),
                  ["--exit-on-eof", "--clock", "pkt", "--stats-json", out])
    total = json.load(open(out))["total"] if rc == 0 else {}
    case("port counters rx_nombuf and rx_missed are exported",
         total.get("rx_nombuf") == 0 and total.get("rx_missed") == 0 and
         total.get("rx_packets") == 796, "rc %d, %s" % (rc, {
             k: total.get(k) for k in ("rx_nombuf", "rx_missed",
                                        "rx_packets")}))


def test_missing_pcap():
    rc, log = app("/nonexistent/capture.pcap", ["--exit-on-eof"])
    case("missing pcap: clean failure", rc != 0 and "rx_pcap" in log or
         "nonexistent" in log, "rc %d: %s" % (rc, log.strip()[-200:]))


def test_mbuf_exhaustion():
    """net_pcap reads a packet, then takes an mbuf: with 16 mbufs and
    bursts of 32, every 17th packet of a burst finds none and is lost.
    The loss must show in rx_nombuf, and the run must still end."""
    out = os.path.join(TMP, "nombuf.json")
    rc, log = app(os.path.join(PCAPS, "mixed.pcap"),
                  ["--mbufs", "16", "--burst", "32", "--exit-on-eof",
                   "--clock", "pkt", "--stats-json", out])
    total = json.load(open(out))["total"] if rc == 0 else {}
    case("mbuf exhaustion is counted in rx_nombuf, nothing else lost",
         total.get("rx_nombuf", 0) > 0 and
         total["rx_nombuf"] + total["packets"] == 796,
         "rc %d, %s" % (rc, {k: total.get(k) for k in ("rx_nombuf",
                                                        "packets")}))


BLOCKLIST = """# addresses, prefixes and a flow seen in mixed.pcap
10.0.0.4
10.0.3.0/24
2001:db8::3e8:0/112
tcp 10.0.0.10 20005 10.0.0.11 443
"""


def oracle_kind(frame, entries):
    """Which entry kind blocks a frame, by scapy and ipaddress alone:
    the shortest listed prefix of the source, then of the destination,
    then the flow (either direction)."""
    from scapy.all import Ether, IP, IPv6, IPv6ExtHdrFragment, TCP, UDP
    try:
        pkt = Ether(frame)
        l3 = pkt.getlayer(IP) or pkt.getlayer(IPv6)
    except Exception:  # too damaged for scapy: not an IP packet
        return None
    if l3 is None:
        return None
    # Non-first fragments carry no ports and are never matched.
    if pkt.haslayer(IP) and pkt[IP].frag != 0:
        return None
    if pkt.haslayer(IPv6ExtHdrFragment) and \
            pkt[IPv6ExtHdrFragment].offset != 0:
        return None
    for addr in (l3.src, l3.dst):
        a = ipaddress.ip_address(addr)
        hits = [n for n in entries["nets"] if a.version == n.version and
                a in n]
        if hits:
            n = min(hits, key=lambda n: n.prefixlen)
            return "address" if n.prefixlen == n.max_prefixlen else "prefix"
    l4 = pkt.getlayer(TCP) or pkt.getlayer(UDP)
    if l4 is not None:
        proto = 6 if pkt.haslayer(TCP) else 17
        for fp, fs, fsp, fd, fdp in entries["flows"]:
            if proto == fp and ({(l3.src, l4.sport), (l3.dst, l4.dport)} ==
                                {(fs, fsp), (fd, fdp)}):
                return "flow"
    return None


def blocklist_entries(text):
    entries = {"nets": [], "flows": []}
    for line in text.splitlines():
        w = line.split("#")[0].split()
        if len(w) == 1:
            entries["nets"].append(ipaddress.ip_network(w[0]))
        elif len(w) == 5:
            entries["flows"].append((6 if w[0] == "tcp" else 17, w[1],
                                     int(w[2]), w[3], int(w[4])))
    return entries


def test_blocklist_forward():
    """Two net_pcap ports, forwarding to each other: each one's tx_pcap
    holds exactly the other's unmatched packets, by the oracle."""
    path = os.path.join(TMP, "block.txt")
    with open(path, "w") as f:
        f.write(BLOCKLIST)
    entries = blocklist_entries(BLOCKLIST)
    rx = [os.path.join(PCAPS, "mixed.q%d.pcap" % i) for i in (0, 1)]
    tx = [os.path.join(TMP, "blocked_out%d.pcap" % i) for i in (0, 1)]
    frames = [pcap_frames(p) for p in rx]
    kinds = [[oracle_kind(fr, entries) for fr in f] for f in frames]
    want_out = [[fr for fr, k in zip(f, ks) if k is None]
                for f, ks in zip(frames, kinds)]
    stats = os.path.join(TMP, "blocked.json")
    rc, log = app(None, ["--mode", "forward", "--blocklist", path,
                         "--clock", "pkt", "--exit-on-eof", "--stats-json",
                         stats],
                  vdev=["net_pcap%d,rx_pcap=%s,tx_pcap=%s" % (i, rx[i], tx[i])
                        for i in (0, 1)])
    got = [pcap_frames(t) if rc == 0 else [] for t in tx]
    total = json.load(open(stats))["total"] if rc == 0 else {}
    all_kinds = kinds[0] + kinds[1]
    want = {"blocked_" + k: all_kinds.count(k)
            for k in ("address", "prefix", "flow")}
    counts = {k: total.get(k) for k in want}
    nb_frames = len(all_kinds)
    nb_out = len(want_out[0]) + len(want_out[1])
    case("blocklist, two ports: each tx_pcap holds exactly the other "
         "port's unmatched packets",
         rc == 0 and got == [want_out[1], want_out[0]] and
         all(0 < len(w) < len(f) for w, f in zip(want_out, frames)),
         "rc %d, %s frames out, oracle %s of %s" % (
             rc, [len(g) for g in got], [len(w) for w in want_out],
             [len(f) for f in frames]))
    case("blocklist: counters agree with the oracle, by kind",
         counts == want and min(want.values()) > 0 and
         total.get("blocked_packets") == nb_frames - nb_out and
         total.get("tx_packets") == nb_out and
         total.get("blocked_bytes") == sum(
             len(fr) for f, ks in zip(frames, kinds)
             for fr, k in zip(f, ks) if k is not None),
         "%s vs oracle %s" % (total, want))
    pcap = os.path.join(PCAPS, "mixed.pcap")
    want_mixed = [fr for fr in pcap_frames(pcap)
                  if oracle_kind(fr, entries) is None]
    out = os.path.join(TMP, "blocked_out.pcap")
    # The same list compiled by cuckooflow-filter gives the same output.
    cli = os.path.join(os.path.dirname(APP), "..", "cuckooflow-filter")
    compiled = os.path.join(TMP, "block.cf")
    crc = subprocess.run([cli, "build", path, "-o", compiled],
                         capture_output=True).returncode
    rc, log = app(pcap, ["--mode", "forward", "--blocklist", compiled,
                         "--clock", "pkt", "--exit-on-eof"], tx=out)
    case("blocklist: a compiled filter file drops the same packets",
         crc == 0 and rc == 0 and pcap_frames(out) == want_mixed,
         log[-200:])
    bad = os.path.join(TMP, "badlist.txt")
    with open(bad, "w") as f:
        f.write("10.0.0.1\n10.0.0.0/99\n")
    rc, log = app(pcap, ["--blocklist", bad, "--exit-on-eof"])
    case("a bad blocklist line stops the start, naming file:line",
         rc != 0 and "badlist.txt:2:" in log, log[-200:])


def testpmd_port_stats(log):
    """testpmd's per-port forward statistics: [(rx, tx), ...]."""
    rx = [int(x) for x in re.findall(r"RX-packets: +(\d+) +RX-dropped", log)]
    tx = [int(x) for x in re.findall(r"TX-packets: +(\d+) +TX-dropped", log)]
    return list(zip(rx, tx))


# How each kind of software-switch link is set up on the two sides.
# vhost-user shares the peer's memory, so both sides need hugepages (and
# virtio-user one file per segment); memif copies, so --no-huge will do.
SWITCH_LINKS = {
    "memif": {
        "huge": False,
        "ours": "net_memif%d,role=server,socket=%s",
        "peer": "net_memif%d,role=client,socket=%s",
        "peer_eal": [],
    },
    "vhost": {
        "huge": True,
        "ours": "net_vhost%d,iface=%s,queues=1",
        # The capture arrives in one go: a ring that holds all of it.
        "peer": "net_virtio_user%d,path=%s,queue_size=1024",
        # (testpmd leaves its hugepage files: removed after the run)
        "peer_eal": ["--single-file-segments"],
    },
}


def test_switch_links():
    for kind in SWITCH_LINKS:
        switch_link_case(kind)


def switch_link_case(kind):
    """cuckooflow inline between two links of @kind, with dpdk-testpmd on
    the far side: testpmd replays mixed.pcap into link 0 (net_pcap0 ->
    link 0) and writes what comes back on link 1 to a pcap (link 1 ->
    net_pcap1)."""
    link = SWITCH_LINKS[kind]
    name = "%s: testpmd peer gets exactly the unmatched packets back" % kind
    testpmd = shutil.which("dpdk-testpmd")
    if testpmd is None:
        skip(name, "dpdk-testpmd not installed (Debian package dpdk)")
        return
    if link["huge"] and (hugepages_free() < 256 or
                         not os.path.ismount("/dev/hugepages")):
        skip(name, "no hugepages reserved (HugePages_Free < 256)")
        return
    global runs
    runs += 1
    prefix = "cfe2e%d_%d" % (os.getpid(), runs)
    mem = ["-m", "256"] if link["huge"] else ["--no-huge", "-m", "512"]
    sock = [os.path.join(TMP, "%s%d.sock" % (kind, i)) for i in (0, 1)]
    path = os.path.join(TMP, "switch_block.txt")
    with open(path, "w") as f:
        f.write(BLOCKLIST)
    pcap = os.path.join(PCAPS, "mixed.pcap")
    frames = pcap_frames(pcap)
    entries = blocklist_entries(BLOCKLIST)
    want_out = [fr for fr in frames if oracle_kind(fr, entries) is None]
    # virtio drops (and counts as rx errors) frames shorter than an
    # Ethernet header; cuckooflow forwards them as malformed.
    want_recv = [fr for fr in want_out if kind != "vhost" or len(fr) >= 14]
    empty = os.path.join(TMP, "empty.pcap")
    with open(empty, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    back, recv = (os.path.join(TMP, n) for n in ("back.pcap", "recv.pcap"))
    stats = os.path.join(TMP, "switch.json")
    for f in sock + [stats]:
        if os.path.exists(f):
            os.unlink(f)
    cf = subprocess.Popen(
        [APP, "-l", "0,1", "--no-pci", "--log-level=lib.*:error",
         "--file-prefix=" + prefix] + mem +
        ["--vdev=" + link["ours"] % (i, sock[i]) for i in (0, 1)] +
        ["--", "--mode", "forward", "--blocklist", path, "--stats-json",
         stats], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    tp = None
    try:
        for _ in range(100):
            if all(os.path.exists(s) for s in sock) or cf.poll() is not None:
                break
            time.sleep(0.1)
        tp = subprocess.Popen(
            [testpmd, "-l", "0,1", "--no-pci", "--log-level=lib.*:error",
             "--file-prefix=%s_peer" % prefix] + mem + link["peer_eal"] +
            ["--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (pcap, back)] +
            ["--vdev=" + link["peer"] % (i, sock[i]) for i in (0, 1)] +
            ["--vdev=net_pcap1,rx_pcap=%s,tx_pcap=%s" % (empty, recv),
             "--", "-i", "--forward-mode=io", "--total-num-mbufs=8192",
             "--rxd=1024", "--txd=1024",
             # testpmd drains every rx queue before it starts forwarding:
             # that would swallow the capture.
             "--no-flush-rx"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        # The links come up asynchronously once both sides started.
        up = False
        for _ in range(100):
            time.sleep(0.1)
            try:
                up = all(telemetry(prefix, "/ethdev/link_status,%d" % i)[
                    "/ethdev/link_status"]["status"] == "UP" for i in (0, 1))
            except (OSError, ValueError, KeyError):
                continue
            if up:
                break
        tp.stdin.write("start\n")
        tp.stdin.flush()
        for _ in range(100):  # until cuckooflow has handled every packet
            time.sleep(0.1)
            cur = telemetry(prefix, "/cuckooflow/stats")["/cuckooflow/stats"]
            if cur["rx_packets"] >= len(frames) and \
                    cur["tx_packets"] + cur["blocked_packets"] >= len(frames):
                break
        time.sleep(0.5)  # let testpmd write what it received
        log, _ = tp.communicate("stop\nquit\n", timeout=30)
        cf.send_signal(signal.SIGINT)
        cf.wait(timeout=30)
        total = json.load(open(stats))["total"]
        ports = testpmd_port_stats(log)
        got = pcap_frames(recv)
        blocked = len(frames) - len(want_out)
        # testpmd prints ports 0-3, then the sum of all.
        ok = (up and cf.returncode == 0 and got == want_recv and
              len(ports) >= 4 and ports[1][1] == len(frames) and
              ports[2][0] == len(want_recv) and
              ports[3][1] == len(want_recv) and
              total["rx_packets"] == len(frames) and
              total["blocked_packets"] == blocked and
              total["tx_packets"] == len(want_out) and blocked > 0)
        case(name, ok, "link up %s, rc %s, recv %d of %d; testpmd (rx, tx) "
             "%s; cuckooflow %s" % (
                 up, cf.returncode, len(got), len(want_recv), ports,
                 {k: total.get(k) for k in ("rx_packets", "blocked_packets",
                                            "tx_packets")}))
    except Exception as e:
        case(name, False, repr(e) + (cf.stderr.read()[-300:]
                                     if cf.poll() is not None else ""))
    finally:
        for p in (tp, cf):
            if p is not None and p.poll() is None:
                p.kill()
        for f in glob.glob("/dev/hugepages/%s_peermap_*" % prefix):
            os.unlink(f)


def test_blocklist_reload_under_traffic():
    """The capture loops (infinite_rx) while the list is reloaded 120
    times through telemetry, alternating two lists, plus one bad path:
    no crash, the bad reload keeps the old list, and every packet was
    handled by one list or the other."""
    a = os.path.join(TMP, "list_a.txt")
    b = os.path.join(TMP, "list_b.txt")
    with open(a, "w") as f:
        f.write(BLOCKLIST)
    with open(b, "w") as f:
        f.write("10.0.0.0/16\n2001:db8::/32\n")
    global runs
    runs += 1
    prefix = "cfe2e%d_%d" % (os.getpid(), runs)
    out = os.path.join(TMP, "reload.json")
    proc = subprocess.Popen(
        [APP, "-l", "0,1", "--no-pci", "--no-huge", "-m", "512",
         "--log-level=lib.*:error", "--file-prefix=" + prefix, "--vdev",
         "net_pcap0,rx_pcap=%s,tx_pcap=/dev/null,infinite_rx=1" %
         os.path.join(PCAPS, "mixed.pcap"), "--", "--blocklist", a,
         "--stats-json", out], stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    name = "blocklist: 120 reloads under traffic, totals add up"
    try:
        info = None
        for _ in range(100):  # the socket exists before our commands
            time.sleep(0.1)
            try:
                info = telemetry(prefix, "/cuckooflow/blocklist")[
                    "/cuckooflow/blocklist"]
            except (OSError, ValueError, KeyError):
                continue
            if info is not None:
                break
        failed = []
        for n in range(120):
            r = telemetry(prefix, "/cuckooflow/blocklist/reload,%s" %
                          (a if n % 2 else b))["/cuckooflow/blocklist/reload"]
            if r["result"] != "reloaded":
                failed.append(r)
        bad = telemetry(prefix, "/cuckooflow/blocklist/reload,/nonexistent"
                        )["/cuckooflow/blocklist/reload"]
        state = telemetry(prefix, "/cuckooflow/blocklist")[
            "/cuckooflow/blocklist"]
        during = telemetry(prefix, "/cuckooflow/stats")["/cuckooflow/stats"]
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        total = json.load(open(out))["total"]
        ok = (info is not None and not failed and
              bad["result"].startswith("failed") and
              "/nonexistent" in bad["last_error"] and
              state["reloads"] == 120 and state["source"] == a and
              state["entries"] == 4 and proc.returncode == 0 and
              during["blocked_packets"] > 0 and
              total["rx_packets"] == total["packets"] +
              total["blocked_packets"] and total["rx_packets"] > 796)
        case(name, ok, "failed %s bad %s state %s rc %s totals %s" % (
            failed[:2], bad, state, proc.returncode,
            {k: total.get(k) for k in ("rx_packets", "packets",
                                       "blocked_packets")}))
    except Exception as e:
        case(name, False, repr(e) + (proc.stderr.read()[-300:]
                                     if proc.poll() is not None else ""))
    finally:
        if proc.poll() is None:
            proc.kill()


def test_non_ethernet_capture():
    rc, log = app(os.path.join(PCAPS, "raw_ip.pcap"), ["--exit-on-eof"])
    case("a raw-IP capture is refused, naming its link type",
         rc != 0 and "RAW" in log and "raw_ip.pcap" in log, log[-200:])


def test_help():
    rc, log = app(None, ["--help"], vdev="net_null0")
    case("--help lists every option with its default", rc == 0 and
         all(o in log for o in ("--portmask", "--flows", "--clock",
                                "--exit-on-eof", "--stats-json", "--cfg",
                                "default")), log[-200:])


def main():
    for t in (test_truth, test_hugepages, test_forward, test_bad_options,
              test_config_file_and_override, test_documented_config,
              test_two_lcores, test_telemetry_and_exporter,
              test_port_counters, test_mbuf_exhaustion, test_blocklist_forward,
              test_blocklist_reload_under_traffic, test_switch_links,
              test_non_ethernet_capture,
              test_missing_pcap, test_help):
        try:
            t()
        except Exception as e:  # a crash of the harness is a failure too
            case(t.__name__, False, repr(e))
    shutil.rmtree(TMP, ignore_errors=True)
    print("1..%d" % len(results))
    failed = 0
    for n, (name, ok, detail) in enumerate(results, 1):
        if ok is None:
            print("ok %d - %s # SKIP %s" % (n, name, detail))
            continue
        if not ok:
            failed += 1
            print("# " + detail.replace("\n", "\n# "))
        print("%s %d - %s" % ("ok" if ok else "not ok", n, name))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
