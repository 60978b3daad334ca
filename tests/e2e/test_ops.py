#!/usr/bin/python3
"""cuckooflow run as an operator runs it (issue 28): losses seen and in
the exit status, logs a journal can use, link changes, DPDK's own tools
on a live instance, the CLI without the EAL and the EAL's failures
explained, readiness for systemd, the state saved while running, output
files that follow logrotate, replay progress and the end summary.

usage: /usr/bin/python3 -m pytest tests/e2e/test_ops.py [--cuckooflow BIN]
Each run owns its --file-prefix (the pid and a counter) and the test's
tmp_path; those that use hugepages (multi-process) need tools/test.sh's
reservation.
"""
import json
import os
import re
import signal
import socket
import subprocess
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families
from scapy.utils import RawPcapReader

import dpdk_telemetry  # tools/, on sys.path (conftest.py)
from harness import NO_HUGE_MB
from harness import (DEADLINE, IP, Testpmd, hugepages_free, need_tool,
                     netns_socket, no_crash, polling, query, run_ended,
                     send_frames, stop, veth_netns, wait_until)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXPORTER = os.path.join(ROOT, "tools", "cuckooflow_exporter.py")
WORKER_LCORES = {1: "0@0,1@1", 2: "0@0,1@1,2@1"}
APP = PCAPS = MIXED = None
runs = 0


@pytest.fixture(scope="module", autouse=True)
def _paths(cuckooflow, pcaps):
    global APP, PCAPS, MIXED
    APP, PCAPS = cuckooflow, pcaps
    MIXED = os.path.join(PCAPS, "mixed.pcap")


def prefix():
    global runs
    runs += 1
    return "cfops%d_%d" % (os.getpid(), runs)


# Where a primary that a DPDK secondary attaches to (dpdk-dumpcap,
# dpdk-proc-info) maps its memory: the secondary must map it at the same
# addresses. The EAL's default (4 GiB up) is inside ASan's shadow, so a
# sanitizer build's primary mapped it among the shared libraries
# (0x7f...), where the secondary's own libraries land by chance: "Cannot
# preallocate VA space" (test_proc_info_reads_running_instance[2] failed
# so in one fresh-clone run, and a dumpcap case hung at exit after such a
# failed attach in another). 32 TiB is above the shadow and below the
# libraries in both trees' processes.
SECONDARY_BASE = "--base-virtaddr=0x200000000000"


def eal(nb, pre, huge=False):
    # -m on hugepages too: with --legacy-mem and no -m the EAL maps every
    # free hugepage, and the tests beside it found none
    return ["--lcores", WORKER_LCORES[nb], "--no-pci",
            "--log-level=lib.*:error", "--file-prefix=" + pre, "-m",
            "512"] + ([SECONDARY_BASE] if huge else ["--no-huge"])


def run(nb, vdevs, args=(), huge=False, env=None):
    """cuckooflow to its end: (exit status, stdout, stderr)."""
    p = subprocess.run([APP] + eal(nb, prefix(), huge) +
                       ["--vdev=" + v for v in vdevs] + ["--"] + list(args),
                       capture_output=True, text=True, timeout=DEADLINE,
                       env=env)
    no_crash(p.returncode, log=p.stdout + p.stderr)
    return p.returncode, p.stdout, p.stderr


class Live:
    """cuckooflow running in the background, its output to files."""

    def __init__(self, tmp, nb, vdevs, args=(), huge=False, env=None,
                 lcores=None, cwd=None, wrap=(), pre=None):
        self.prefix = pre or prefix()
        self.out = os.path.join(str(tmp), self.prefix + ".out")
        self.err = os.path.join(str(tmp), self.prefix + ".err")
        argv = [APP] + eal(nb, self.prefix, huge) + \
            ["--vdev=" + v for v in vdevs] + ["--"] + list(args)
        if lcores is not None:
            argv[2] = lcores
        # @wrap: e.g. ip netns exec NS, which execs the application (its
        # pid is the application's)
        with open(self.out, "w") as o, open(self.err, "w") as e:
            self.proc = subprocess.Popen(list(wrap) + argv, stdout=o, stderr=e, env=env,
                                         cwd=cwd)

    def text(self):
        with open(self.out) as o, open(self.err) as e:
            return o.read() + e.read()

    def wait(self, cond, what):
        return wait_until(cond, what, proc=self.proc)

    def up(self):
        return self.wait(lambda: query(self.prefix, "/cuckooflow/stats"),
                         "cuckooflow's telemetry")

    def stop(self, sig=signal.SIGINT):
        if getattr(self, "killed", False):
            return self.proc.returncode
        rc = stop(self.proc, sig=sig)
        if sig != signal.SIGKILL:
            if self.proc.hung:
                pytest.fail("cuckooflow " + self.proc.hung +
                            self.text()[-400:])
            no_crash(rc, log=self.text())
        return rc


def secondary_ran(app, p, tool):
    """@p: the finished run of DPDK secondary @tool attached to @app. A
    secondary killed by a signal fails the test at once, named, and
    @app is killed rather than stopped: DPDK 22.11's dpdk-dumpcap, whose
    EAL could not map the primary's memory at its addresses ("Cannot
    reserve ... please use '--base-virtaddr'"), crashed (SIGSEGV) in its
    own EAL cleanup holding the shared memory hotplug lock, and the
    primary then spun in rte_mcfg_mem_read_lock() at its exit
    (rte_eal_cleanup()'s rte_memseg_walk()) until the test's DEADLINE:
    2 such crashes in 15 attaches to a sanitizer build without
    SECONDARY_BASE, both hung."""
    if p.returncode is not None and p.returncode < 0:
        app.stop(signal.SIGKILL)
        app.killed = True
        pytest.fail("%s killed by %s (the application, which cannot exit "
                    "past the memory lock a crashed secondary holds, is "
                    "killed): %s" % (tool, signal.Signals(-p.returncode).name,
                                     (p.stdout + p.stderr)[-600:]))


def frames_of(path):
    r = RawPcapReader(path)
    try:
        return [f for f, _ in r]
    finally:
        r.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port):
    for _ in polling(0.1):
        try:
            return urllib.request.urlopen(
                "http://127.0.0.1:%d/metrics" % port, timeout=5).read(
                ).decode()
        except OSError:
            continue
    return ""


# ------------------------------------------------------------ losses


@pytest.mark.parametrize("nb", (1, 2))
def test_lost_packets_exit_status(nb, tmp_path):
    """A replay that loses packets (16 mbufs, bursts of 32: every burst
    runs out, counted in rx_nombuf) exits 3, says on stderr which
    counter lost how many and why, and its summary says what was lost.
    (Before: exit 1 for the ports' losses, but exit 0 for every other
    loss: handoff_drops, events, IPFIX.)"""
    out = str(tmp_path / "s.json")
    rc, stdout, stderr = run(nb, ["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (
        MIXED, os.devnull)], ["--mbufs", "16", "--burst", "32", "--clock",
                              "pkt", "--exit-on-eof", "--stats-json", out])
    t = json.load(open(out))["total"]
    m = re.search(r"cuckooflow: warning: lost (\d+) packets: rx_nombuf: no "
                  r"mbuf to receive them into \(raise --mbufs\)", stderr)
    assert rc == 3 and m and int(m.group(1)) == t["rx_nombuf"] > 0, \
        (rc, stderr[-600:])
    assert "cuckooflow: lost: %d packets\n" % t["rx_nombuf"] in stdout, \
        stdout[-600:]


@pytest.mark.parametrize("nb", (1, 2))
def test_lost_records_exit_status(nb, tmp_path):
    """IPFIX to a port nobody listens on: the records the socket refused
    make the replay exit 4 (records lost, no packet), said at exit.
    (Before: exit 0.)"""
    port = free_port()
    rc, stdout, stderr = run(nb, ["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (
        MIXED, os.devnull)], ["--clock", "pkt", "--exit-on-eof", "--ipfix",
                              "127.0.0.1:%d" % port])
    m = re.search(r"lost (\d+) records: ipfix_records_lost: IPFIX messages "
                  r"the socket did not take", stderr)
    assert rc == 4 and m and int(m.group(1)) > 0, (rc, stderr[-600:])
    assert re.search(r"cuckooflow: lost: \d+ records\n", stdout)


@pytest.mark.parametrize("nb", (1, 2))
def test_losses_live(nb, tmp_path):
    """A live run (a capture replayed in a loop, its flows closing and
    opening again) that keeps losing records (IPFIX to a port nobody
    listens on): the loss is logged as it starts, once (the next line a
    minute later at most), /cuckooflow/losses counts it as
    /cuckooflow/events does, the exporter serves it as
    cuckooflow_records_lost_total{reason="ipfix_records_lost"}; stopped,
    it says the total and exits 0 (a live run reports its losses, a
    replay fails on them). (Before: only /cuckooflow/events had it.)"""
    app = Live(tmp_path, nb, ["net_pcap0,rx_pcap=%s,tx_pcap=%s,"
                              "infinite_rx=1" % (MIXED, os.devnull)],
               ["--ipfix", "127.0.0.1:%d" % free_port()])
    port = free_port()
    exp = None
    try:
        app.wait(lambda: "losing records: ipfix_records_lost" in app.text(),
                 "the loss logged")
        lost = query(app.prefix, "/cuckooflow/losses")
        ev = query(app.prefix, "/cuckooflow/events")
        assert set(lost) == {"packets", "events", "records"} and \
            0 < lost["records"]["ipfix_records_lost"] <= \
            ev["ipfix_records_lost"] and not any(
                lost["packets"].values()), (lost, ev)
        exp = subprocess.Popen([EXPORTER, "--file-prefix", app.prefix,
                                "--port", str(port)],
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        fams = {f.name: f for f in
                text_string_to_metric_families(scrape(port))}
        served = {s.labels["reason"]: s.value for s in
                  fams["cuckooflow_records_lost"].samples
                  if s.name.endswith("_total")}
        assert served["ipfix_records_lost"] >= \
            lost["records"]["ipfix_records_lost"], served
    finally:
        if exp is not None:
            exp.terminate()
            exp.wait(timeout=DEADLINE)
        rc = app.stop()
    log = app.text()
    assert rc == 0 and log.count("losing records: ipfix_records_lost") == \
        1 and re.search(r"warning: lost \d+ records: ipfix_records_lost",
                        log), log[-800:]


@pytest.mark.parametrize("nb", (1, 2))
def test_exporter_keeps_its_connection(nb, tmp_path):
    """DPDK 22.11 serves at most 10 telemetry clients at once
    (MAX_CONNECTIONS) and closes any further one at once. The exporter
    made a connection for each of a scrape's dozen queries, so clients
    left open (a stuck script, a dpdk-telemetry.py session) locked it
    out: cuckooflow_up 0. Now it keeps one connection: with every other
    slot taken (a client more is refused: the premise, checked), its
    scrapes are whole; once cuckooflow has restarted under the same file
    prefix, it connects again. (Before: cuckooflow_up 0 with the slots
    taken.)"""
    vdev = ["net_pcap0,rx_pcap=%s,tx_pcap=%s,infinite_rx=1" % (
        MIXED, os.devnull)]
    app = Live(tmp_path, nb, vdev)
    port = free_port()
    exp = app2 = None
    idle = []

    def metrics():
        fams = {f.name: f for f in
                text_string_to_metric_families(scrape(port))}
        up = fams.get("cuckooflow_up")
        return fams if up and up.samples[0].value == 1 else None

    try:
        app.up()
        exp = subprocess.Popen([EXPORTER, "--file-prefix", app.prefix,
                                "--port", str(port)],
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        wait_until(metrics, "a whole scrape", proc=exp)
        client = dpdk_telemetry.Telemetry.of_prefix(app.prefix, DEADLINE)
        for _ in range(10):
            try:
                idle.append(client.connect()[0])
            except ConnectionRefusedError:
                break           # every slot is taken
        with pytest.raises(ConnectionRefusedError):
            dpdk_telemetry.query(app.prefix, "/cuckooflow/stats")
        for _ in range(3):
            fams = metrics()
            assert fams and sum(
                s.value for s in fams["cuckooflow_packets"].samples
                if s.name == "cuckooflow_packets_total") > 0, sorted(
                    fams or ())
        for s in idle:
            s.close()
        assert app.stop() == 0, app.text()[-400:]
        app2 = Live(tmp_path, nb, vdev, pre=app.prefix)
        app2.up()
        fams = wait_until(metrics, "a whole scrape after the restart",
                          proc=exp)
        assert fams["cuckooflow_start_time_seconds"].samples[0].value > 0
    finally:
        for s in idle:
            s.close()
        if exp is not None:
            exp.terminate()
            exp.wait(timeout=DEADLINE)
        app.stop()
        if app2 is not None:
            assert app2.stop() == 0, app2.text()[-400:]


# -------------------------------------------------------------- logs


@pytest.mark.parametrize("nb", (1, 2))
def test_banner_and_journal_levels(nb, tmp_path):
    """The start banner states every setting not at its default, the
    timeouts, the lists and the outputs; under systemd (stderr is the
    journal's: $JOURNAL_STREAM names it) each warning starts with its
    syslog priority, <4>, and the notices on stdout with <5>; stdout is
    line-buffered. (Before: the banner had none of it; no priorities.)"""
    lst = tmp_path / "block.txt"
    lst.write_text("192.0.2.1\n198.51.100.0/24\n")
    err = tmp_path / "err"
    with open(err, "w") as e:
        st = os.fstat(e.fileno())
        env = dict(os.environ, JOURNAL_STREAM="%d:%d" % (st.st_dev,
                                                         st.st_ino))
        p = subprocess.run(
            [APP, "--lcores", "0@0,1@1,2@1" if nb == 2 else "0@0,1@1",
             "--no-pci", "--no-huge", "-m", NO_HUGE_MB, "--log-level=lib.*:error",
             "--file-prefix=" + prefix(), "--vdev=net_pcap0,rx_pcap=%s,"
             "tx_pcap=%s" % (MIXED, os.devnull), "--", "--clock", "pkt",
             "--exit-on-eof", "--flows", "65536", "--blocklist", str(lst),
             "--timeout-udp", "33", "--events", str(tmp_path / "ev.json")],
            stdout=subprocess.PIPE, stderr=e, text=True, env=env,
            timeout=DEADLINE)
    out, log = p.stdout, err.read_text()
    assert p.returncode == 0, log
    assert "settings: flows.flows=65536 flows.clock=pkt " \
        "timeouts.udp=33 run.exit_on_eof=1 events.json=%s " \
        "blocklist.blocklist=%s\n" % (tmp_path / "ev.json", lst) in out, out
    assert "timeouts: tcp 300 s, udp 33 s, icmp 30 s, other 60 s, close " \
        "linger 10 s\n" in out and "blocklist: %s, 2 entries (1 " \
        "addresses, 1 prefixes, 0 flows)\n" % lst in out and \
        "outputs: events %s, top sources every 60 s\n" % (
            tmp_path / "ev.json") in out, out
    # stdout is a pipe: not the journal's, no prefix
    assert "<5>" not in out
    if nb == 2:
        assert log.startswith("<4>cuckooflow: warning: worker lcores 1 "
                              "and 2 share CPU 1"), log


@pytest.mark.parametrize("nb", (1, 2))
def test_lcore_sharing_warning(nb):
    """Two busy-polling workers on one CPU (--lcores 0@0,1@1,2@1, the
    layout the docs used) are warned of at start; workers on CPUs of
    their own, or a worker beside the main lcore (which sleeps), are
    not. (Before: no warning, the replay at a tenth of its speed.)"""
    def warned(lcores):
        p = subprocess.run(
            [APP, "--lcores", lcores, "--no-pci", "--no-huge", "-m", NO_HUGE_MB,
             "--log-level=lib.*:error", "--file-prefix=" + prefix(),
             "--vdev=net_pcap0,rx_pcap=%s,tx_pcap=%s" % (MIXED, os.devnull),
             "--", "--exit-on-eof"], capture_output=True, text=True,
            timeout=DEADLINE)
        assert p.returncode == 0, p.stderr
        return re.findall(r"worker lcores (\d+) and (\d+) share CPU (\d+)",
                          p.stderr)
    if nb == 1:
        assert warned("0@0,1@1") == [] and warned("0@1,1@1") == []
    else:
        assert warned("0@0,1@1,2@1") == [("1", "2", "1")]
        assert warned("0@1,1@0,2@1") == []


# Links whose peer leaves and returns: vhost-user. Not memif: DPDK
# 22.11's memif PMD unmaps a link's memory when its peer leaves without
# waiting for the lcores inside a burst on it (docs/usage.md, "Known
# limitation of DPDK's memif PMD"); on this shared machine a worker is
# preempted inside a burst often enough to crash (2 runs in 9 with two
# workers, 1 in about 15 with one). cuckooflow's side is the same for
# both drivers: the LSC interrupt each declares (RTE_ETH_DEV_INTR_LSC).
LINK_CASES = [("vhost", 1), ("vhost", 2)]


@pytest.mark.parametrize("kind,nb", LINK_CASES,
                         ids=["%s-%d" % c for c in LINK_CASES])
def test_link_changes_logged(kind, nb, tmp_path):
    """Two vhost-user links (memif: see LINK_CASES), dpdk-testpmd the
    peer (virtio-user): each link's coming up, going down when the peer
    quits and coming up when it returns is logged, one line a change a
    port, from the driver's link state interrupt. (Before: nothing
    logged; the banner alone said down.)"""
    testpmd = need_tool("dpdk-testpmd", "dpdk")
    huge = kind == "vhost"
    if huge:
        need_hugepages(256)
    socks = [os.path.join(str(tmp_path), "%s%d.sock" % (kind, i))
             for i in (0, 1)]
    ours = {"memif": "net_memif%d,role=server,socket=%s",
            "vhost": "net_vhost%d,iface=%s,queues=" + str(nb)}[kind]
    peer_dev = {"memif": "net_memif%d,role=client,socket=%s",
                "vhost": "net_virtio_user%d,path=%s,queues=" + str(nb)}[kind]
    app = Live(tmp_path, nb, [ours % (i, socks[i]) for i in (0, 1)],
               ["--mode", "forward"], huge=huge)

    def changes():
        return re.findall(r"cuckooflow: (?:warning: )?port (\d) "
                          r"\(net_(?:memif|vhost)\d\): Link (up|down)",
                          app.text())
    try:
        app.up()
        for turn in range(2):
            peer = [testpmd, "-l", "0,1", "--no-pci",
                    "--log-level=lib.*:error",
                    "--file-prefix=%s_peer%d" % (app.prefix, turn)] + (
                ["-m", "256", "--single-file-segments"] if huge else
                ["--no-huge", "-m", "256"]) + [
                "--vdev=" + peer_dev % (i, socks[i]) for i in (0, 1)] + [
                "--", "-i", "--total-num-mbufs=2048",
                "--rxq=%d" % nb, "--txq=%d" % nb]
            tp = Testpmd(peer)
            app.wait(lambda: changes().count(("0", "up")) == turn + 1 and
                     changes().count(("1", "up")) == turn + 1,
                     "both links up (turn %d)" % turn)
            tp.close()
            app.wait(lambda: changes().count(("0", "down")) == turn + 1
                     and changes().count(("1", "down")) == turn + 1,
                     "both links down (turn %d)" % turn)
    finally:
        rc = app.stop()
        # testpmd leaves its hugepage files
        for f in os.listdir("/dev/hugepages") if huge else ():
            if f.startswith(app.prefix + "_peer"):
                os.unlink(os.path.join("/dev/hugepages", f))
    got = changes()
    assert rc == 0 and sorted(got) == sorted(
        [(p, s) for p in "01" for s in ("up", "down")] * 2), got


@pytest.mark.parametrize("nb", (1, 2))
def test_reload_logged_and_no_list_no_failure(nb, tmp_path):
    """SIGHUP with a blocklist: the reload and what is now in force are
    logged; SIGHUP without one is no failed reload (reload_failures 0,
    which an alert reads: it fired on every logrotate). (Before: nothing
    logged on success; without a list, reload_failures 1 and an error
    line.)"""
    lst = tmp_path / "block.txt"
    lst.write_text("192.0.2.1\n")
    vdev = ["net_pcap0,rx_pcap=%s,tx_pcap=%s,infinite_rx=1" % (MIXED,
                                                                 os.devnull)]
    lines = str(tmp_path / "stats.jsonl")
    app = Live(tmp_path, nb, vdev, ["--blocklist", str(lst)])
    # no list; an output, whose reopen says the SIGHUP was taken
    bare = Live(tmp_path, nb, vdev, ["--stats-period", "1",
                                     "--stats-json-period", lines])
    try:
        app.up()
        bare.up()
        lst.write_text("192.0.2.1\n10.0.0.0/8\n")
        app.proc.send_signal(signal.SIGHUP)
        bare.proc.send_signal(signal.SIGHUP)
        app.wait(lambda: "SIGHUP: blocklist reloaded: %s, 2 entries" % lst
                 in app.text(), "the reload logged")
        bl = query(app.prefix, "/cuckooflow/blocklist")
        bare.wait(lambda: "reopened (SIGHUP)" in bare.text(),
                  "the bare run's SIGHUP taken")
        nolist = query(bare.prefix, "/cuckooflow/blocklist")
    finally:
        rc = (app.stop(), bare.stop())
    assert rc == (0, 0) and bl["reloads"] == 1 and \
        bl["reload_failures"] == 0 and nolist["reload_failures"] == 0 and \
        nolist["last_error"] == "" and "SIGHUP reload" not in bare.text(), \
        (bl, nolist, bare.text()[-400:])


# ----------------------------------------------- DPDK's tools attached


def need_hugepages(n=128):
    if hugepages_free() < n or not os.path.ismount("/dev/hugepages"):
        pytest.fail("fewer than %d hugepages free, or no hugetlbfs on "
                    "/dev/hugepages: tools/test.sh reserves them" % n)


@pytest.mark.parametrize("nb", (1, 2))
def test_dumpcap_captures_running_instance(nb, tmp_path):
    """dpdk-dumpcap attaches to a running cuckooflow (hugepages, its file
    prefix; the EAL's hugepage files kept while it runs: no
    --huge-unlink) and captures its port's packets (rte_pdump): 200 or
    more of them are, byte for byte and in order, a stretch of what the
    test sends. No hugepage file is left after cuckooflow exits. (Before:
    "is primary process running?": dumpcap could not attach.)

    The port is an af_packet one on a veth pair in a namespace of the
    test's own, and the test sends the capture's frames in batches, each
    counted by cuckooflow before the next, until dumpcap has written 200;
    then, the port quiet, dumpcap is stopped. DPDK 22.11's pdump removes
    its rx callback at the detach without waiting for a worker inside it,
    and dumpcap then frees the pool the callback copies into: detaching
    from a port under traffic (net_pcap's infinite_rx, as this test did)
    crashed cuckooflow in rte_pktmbuf_free_bulk in 3 of 80 cases under
    load (docs/usage.md; later DPDK waits, pdump_cb_wait). An idle port's
    callback copies nothing."""
    dumpcap = need_tool("dpdk-dumpcap", "dpdk")
    need_hugepages()
    if os.geteuid() != 0:
        pytest.skip("not root: cannot create a network namespace")
    from scapy.all import IP as IPv4, UDP, Ether, Raw

    def frame(i):
        # untagged (the af_packet PMD hands a VLAN tag the kernel took
        # off as metadata), numbered
        return bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") /
                     IPv4(src="198.18.0.%d" % (1 + i % 200), dst="198.19.0.1") /
                     UDP(sport=40000 + i % 1000, dport=5000) /
                     Raw(b"frame %08d" % i + b"." * (i % 64)))
    ns = "cfops%d_%s" % (os.getpid(), os.path.basename(str(tmp_path)))
    veth_netns(ns, [("vdA", "vdB")])
    app = None
    try:
        sock = netns_socket(ns, "vdB")
        app = Live(tmp_path, nb, ["net_af_packet0,iface=vdA"], huge=True,
                   wrap=[IP, "netns", "exec", ns])
        app.up()
        cap = str(tmp_path / "cap.pcapng")
        log = open(str(tmp_path / "dumpcap.log"), "w")
        dc = subprocess.Popen([dumpcap, "-i", "0", "-w", cap,
                               "--file-prefix", app.prefix, "-q"],
                              stdout=log, stderr=subprocess.STDOUT,
                              cwd=tmp_path)
        sent, i, got = 0, 0, []
        for _ in polling(0.0):
            if dc.poll() is not None:
                break
            batch = [frame(i + k) for k in range(50)]
            i += len(batch)
            send_frames(sock, batch)
            sent += len(batch)
            app.wait(lambda: (lambda st: st and st["rx_packets"] >= sent)(
                query(app.prefix, "/cuckooflow/stats")), "%d frames" % sent)
            got = frames_of(cap) if os.path.exists(cap) and \
                os.path.getsize(cap) else []
            if len(got) >= 200:
                break
        # the port is quiet: every frame sent is counted
        dc.send_signal(signal.SIGINT)
        try:
            dc.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            dc.kill()
            dc.wait()
        log.close()
        with open(log.name) as f:
            out = f.read()
        secondary_ran(app, subprocess.CompletedProcess(dc.args, dc.returncode,
                                                      out, ""),
                      "dpdk-dumpcap")
        sock.close()
    finally:
        rc = app.stop() if app else None
        subprocess.run([IP, "netns", "del", ns])
    got = frames_of(cap) if os.path.exists(cap) else []
    assert dc.returncode == 0 and len(got) >= 200, (dc.returncode, out)
    sent_frames = [frame(j) for j in range(i)]
    starts = [j for j in range(i) if sent_frames[j] == got[0]]
    assert len(starts) == 1 and \
        sent_frames[starts[0]:starts[0] + len(got)] == got, \
        "not a stretch of the frames sent"
    # its own files (other tests' runs may have theirs meanwhile)
    left = [f for f in os.listdir("/dev/hugepages")
            if f.startswith(app.prefix + "map_")]
    assert rc == 0 and not left, (rc, sorted(left))


@pytest.mark.parametrize("nb", (1, 2))
def test_proc_info_reads_running_instance(nb, tmp_path):
    """dpdk-proc-info --file-prefix P -- --stats reads a running
    cuckooflow's port counters (a net_null port: DPDK 22.11's net_pcap
    crashes a secondary at its exit): RX-packets at least what
    cuckooflow had received before. (Before: it could not attach.)"""
    proc_info = need_tool("dpdk-proc-info", "dpdk")
    need_hugepages()
    app = Live(tmp_path, nb, ["net_null0"], huge=True)
    try:
        app.up()
        seen = app.wait(lambda: (lambda s: s["rx_packets"] if s and
                                 s["rx_packets"] > 0 else None)(
            query(app.prefix, "/cuckooflow/stats")), "packets")
        p = subprocess.run([proc_info, "--file-prefix", app.prefix,
                            "--log-level=lib.*:error", "--", "--stats"],
                           capture_output=True, text=True, timeout=DEADLINE)
        secondary_ran(app, p, "dpdk-proc-info")
    finally:
        rc = app.stop()
    m = re.search(r"NIC statistics for port 0 +#+\n +RX-packets: +(\d+)",
                  p.stdout)
    assert p.returncode == 0 and m and int(m.group(1)) >= seen, \
        p.stdout[-600:] + p.stderr[-600:]
    assert rc == 0



@pytest.mark.parametrize("nb", (1, 2))
@pytest.mark.parametrize("memory", ("--single-file-segments", "--legacy-mem"))
def test_memory_choice_kept(memory, nb, tmp_path):
    """The EAL's memory options are the user's: cuckooflow adds none of
    its own. With --single-file-segments (what vhost-user and
    virtio-user peers need) a hugepage replay forwards every frame,
    byte for byte, exits 0 and
    leaves none of its hugepage files; --legacy-mem likewise. (Before:
    main.c added --huge-unlink, which the EAL refuses beside
    --single-file-segments: "not compatible", exit 1.)"""
    need_hugepages()
    frames = frames_of(MIXED)
    tx = [str(tmp_path / ("fwd%d.pcap" % w)) for w in range(nb)]
    pre = prefix()
    p = subprocess.run(
        [APP] + eal(nb, pre, huge=True) + [memory, "--vdev=net_pcap0,rx_pcap="
                                           + MIXED + "," + ",".join(
                                               "tx_pcap=" + t for t in tx),
                                           "--", "--mode", "forward",
                                           "--exit-on-eof"],
        capture_output=True, text=True, timeout=DEADLINE)
    no_crash(p.returncode, log=p.stdout + p.stderr)
    assert p.returncode == 0, (p.stdout + p.stderr)[-800:]
    outs = [frames_of(t) for t in tx]
    # every frame, byte for byte (not in the capture's order: a later
    # fragment that comes before its first is held and sent behind it)
    assert sorted(sum(outs, [])) == sorted(frames)
    left = [f for f in os.listdir("/dev/hugepages")
            if f.startswith(pre + "map_")]
    assert not left, sorted(left)


# ------------------------------------------------ the CLI without EAL


def no_eal_env(tmp):
    """A shell line that hides hugepages and PCI from what follows, in a
    mount namespace of its own: hugetlbfs unmounted, /sys/bus/pci and
    /var/run/dpdk empty tmpfs."""
    return ("for m in $(awk '$3 == \"hugetlbfs\" {print $2}' /proc/mounts);"
            " do umount -l $m; done; mount -t tmpfs none /sys/bus/pci; "
            "mkdir -p /var/run/dpdk; mount -t tmpfs none /var/run/dpdk; ")


def test_version_and_help_without_eal(tmp_path):
    """--version and --help, after "--" or alone, answer without the
    EAL: no hugepages, no PCI, nothing made under /var/run/dpdk; both
    programs. (Before: -- --help started the EAL: probed PCI, made
    /var/run/dpdk/rte, and failed without hugepages.)"""
    filt = os.path.join(os.path.dirname(APP), "..", "cli",
                        "cuckooflow-filter")
    script = no_eal_env(tmp_path) + (
        "%s --version; echo rc=$?; %s -- --help | head -1; echo rc=$?; "
        "%s -l 0 --file-prefix x -- --version; echo rc=$?; %s --help | "
        "tail -1; echo rc=$?; %s --version; echo rc=$?; ls /var/run/dpdk "
        "| wc -l" % (APP, APP, APP, APP, filt))
    p = subprocess.run(["unshare", "-m", "sh", "-c", script],
                       capture_output=True, text=True, timeout=DEADLINE)
    lines = p.stdout.splitlines()
    assert re.fullmatch(r"cuckooflow \d+\.\d+\.\d+ \(DPDK \d+\.\d+\.\d+\)",
                        lines[0]) and lines[1] == "rc=0" and \
        lines[2] == "usage: cuckooflow [EAL options] -- [options]" and \
        lines[3] == "rc=0" and lines[4] == lines[0] and \
        lines[5] == "rc=0" and "cuckooflow.ini" in lines[6] and \
        lines[7] == "rc=0" and \
        re.fullmatch(r"cuckooflow-filter \d+\.\d+\.\d+", lines[8]) and \
        lines[9] == "rc=0" and lines[10] == "0", p.stdout + p.stderr


def test_eal_failures_explained(tmp_path):
    """The EAL's common failures in one line with the fix, exit 1: a
    second instance with the same --file-prefix (the holder's pid and
    name), no hugetlbfs mounted, a device argument its driver does not
    take (its keys listed), an option of cuckooflow before "--". (Before:
    "rte_eal_init: Success", "Permission denied", "see the driver's
    message above" with none there, the EAL's usage.)"""
    pcap = "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (MIXED, os.devnull)
    first = Live(tmp_path, 1, [pcap + ",infinite_rx=1"])
    try:
        first.up()
        p = subprocess.run([APP, "-l", "0,1", "--no-pci", "--no-huge",
                            "--log-level=*:error", "--file-prefix=" +
                            first.prefix, "--vdev=" + pcap, "--"],
                           capture_output=True, text=True, timeout=DEADLINE)
    finally:
        first.stop()
    assert p.returncode == 1 and "cuckooflow: the EAL did not start: " \
        "--file-prefix %s is in use by another DPDK process, cuckooflow " \
        "(pid %d): give this run a --file-prefix of its own" % (
            first.prefix, first.proc.pid) in p.stderr, p.stderr
    p = subprocess.run(["unshare", "-m", "sh", "-c", no_eal_env(tmp_path) +
                        "%s -l 0,1 --no-pci --log-level=*:error "
                        "--file-prefix=%s --vdev=%s --" % (
                            APP, prefix(), pcap)],
                       capture_output=True, text=True, timeout=DEADLINE)
    assert p.returncode == 1 and "cuckooflow: the EAL did not start: no " \
        "hugetlbfs is mounted: mount one (dpdk-hugepages.py --mount" in \
        p.stderr, p.stderr
    rc, out, err = run(1, [pcap.replace("rx_pcap", "rx_pcapp")],
                       ["--exit-on-eof"])
    assert rc == 1 and "device net_pcap0 did not start: key rx_pcapp is " \
        "not net_pcap's (its parameters, as DPDK lists them: rx_pcap=" \
        "<string> tx_pcap=<string> " in err, err
    p = subprocess.run([APP, "-l", "0,1", "--no-pci", "--no-huge",
                        "--vdev=" + pcap, "--exit-on-eof"],
                       capture_output=True, text=True, timeout=DEADLINE)
    assert p.returncode == 1 and p.stderr == "cuckooflow: --exit-on-eof " \
        "is an option of cuckooflow, not of the EAL: put it after \"--\" " \
        "(cuckooflow [EAL options] -- [options])\n", p.stderr


# ----------------------------------------------------------- service


# What $NOTIFY_SOCKET receives from a reload, then SIGTERM.
RELOAD_STOP = ["RELOADING=1", "READY=1\nSTATUS=running (reloaded)",
               "STOPPING=1"]


def reload_then_stop(app, sock):
    """The notify messages of a reload asked for (RELOADING=1, READY=1),
    then of SIGTERM sent once it is made (STOPPING=1)."""
    msgs = [sock.recv(4096).decode(), sock.recv(4096).decode()]
    app.proc.send_signal(signal.SIGTERM)
    return msgs + [sock.recv(4096).decode()]


@pytest.mark.parametrize("nb", (1, 2))
def test_notify_ready_reload_stop(nb, tmp_path):
    """Type=notify: with $NOTIFY_SOCKET (systemd's, here the test's),
    READY=1 and a STATUS once its ports are started and the workers run
    (telemetry answers then), RELOADING=1 then READY=1 around a SIGHUP,
    STOPPING=1 at SIGTERM. (Before: nothing: Type=simple.)"""
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(DEADLINE)
    msgs = []
    try:
        app = Live(tmp_path, nb, ["net_pcap0,rx_pcap=%s,tx_pcap=%s,"
                                  "infinite_rx=1" % (MIXED, os.devnull)],
                   env=dict(os.environ, NOTIFY_SOCKET=path))
        try:
            msgs.append(sock.recv(4096).decode())
            ready_answers = query(app.prefix, "/cuckooflow/stats")
            app.proc.send_signal(signal.SIGHUP)
            msgs += reload_then_stop(app, sock)
        finally:
            rc = app.stop()
    finally:
        sock.close()
    assert msgs[0] == "READY=1\nSTATUS=running: %d worker%s, 1 port" % (
        nb, "s" if nb > 1 else "") and ready_answers is not None, msgs
    assert msgs[1:] == RELOAD_STOP and rc == 0, msgs


@pytest.mark.parametrize("nb", (1, 2))
def test_sighup_during_start_is_a_reload(nb, tmp_path):
    """SIGHUPs from the moment the EAL starts (its runtime directory
    made) until READY=1: each asks for a reload, made once the run goes
    (RELOADING=1, READY=1), none ends the process; SIGTERM then stops it,
    exit 0. (Before: a SIGHUP during the EAL's start, before the handler
    was set, ended it: killed by SIGHUP, as `systemctl reload` or
    logrotate's postrotate would have it at a start.)"""
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    msgs, hups = [], 0
    try:
        app = Live(tmp_path, nb, ["net_pcap0,rx_pcap=%s,tx_pcap=%s,"
                                  "infinite_rx=1" % (MIXED, os.devnull)],
                   env=dict(os.environ, NOTIFY_SOCKET=path))
        try:
            # the EAL starting: its runtime directory made (main() runs:
            # before it, the loader's and the libraries' constructors)
            app.wait(lambda: os.path.isdir("/var/run/dpdk/" + app.prefix),
                     "the EAL's runtime directory")
            sock.settimeout(0.002)
            while not msgs:
                assert app.proc.poll() is None, (
                    "ended by SIGHUP %d: rc %s" % (hups, app.proc.returncode))
                app.proc.send_signal(signal.SIGHUP)
                hups += 1
                try:
                    msgs.append(sock.recv(4096).decode())
                except socket.timeout:
                    pass
            sock.settimeout(DEADLINE)
            msgs += reload_then_stop(app, sock)
        finally:
            rc = app.stop()
    finally:
        sock.close()
    assert hups > 1 and msgs[0].startswith("READY=1\n"), (hups, msgs)
    assert msgs[1:] == RELOAD_STOP and rc == 0, msgs


@pytest.mark.parametrize("seed", ("given", "secret"))
@pytest.mark.parametrize("nb", (1, 2))
def test_state_checkpoint_survives_sigkill(nb, seed, tmp_path):
    """--state-interval 1: the tables are saved while the run goes on, so
    that a SIGKILL (no exit, no save at exit) loses nothing saved: the
    next run takes over the flows open at the last save, with a
    --hash-seed given and with the secret random one (no --hash-seed),
    and forwards every frame. The replay is over (its flows final)
    before the save waited for; the flows taken over are those a run to
    its end saves. (Before: no --state-interval: a crash lost every
    flow. Then, without --hash-seed, the periodic saves wrote seed 0,
    not the tables' seed: the next run refused the file, "worker 0's
    table: saved with another seed (--hash-seed): ignored, starting with
    empty flow tables".)"""
    state = str(tmp_path / "flows.state")
    ref_state = str(tmp_path / "ref.state")
    vdev = ["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (MIXED, os.devnull)]
    common = ["--clock", "pkt"] + (["--hash-seed", "7"] if seed == "given"
                                   else [])
    # the reference: a run to its end, saving at exit
    rc, out, _ = run(nb, vdev, common + ["--exit-on-eof", "--state-file",
                                         ref_state])
    want = int(re.search(r"saved (\d+) open flows", out).group(1))
    app = Live(tmp_path, nb, vdev, common + ["--state-file", state,
                                             "--state-interval", "1"])
    try:
        run_ended(app.prefix, app.proc)
        first = query(app.prefix, "/cuckooflow/state")["saves"]
        # a save begun after the replay's end
        app.wait(lambda: query(app.prefix, "/cuckooflow/state")["saves"] >=
                 first + 2, "two more saves")
        st = query(app.prefix, "/cuckooflow/state")
    finally:
        app.stop(signal.SIGKILL)
    assert rc == 0 and want > 0 and st["last_flows"] == want and \
        st["save_failures"] == 0 and st["last_error"] == "", (want, st)
    tx = [str(tmp_path / ("fwd%d.pcap" % w)) for w in range(nb)]
    rc, out, err = run(nb, ["net_pcap0,rx_pcap=%s,%s" % (
        MIXED, ",".join("tx_pcap=" + t for t in tx))], common + [
            "--exit-on-eof", "--mode", "forward", "--state-file", state])
    m = re.search(r"took over (\d+) open flows of %d workers" % nb, out)
    assert rc == 0 and m and int(m.group(1)) == want, out + err
    assert sorted(sum((frames_of(t) for t in tx), [])) == \
        sorted(frames_of(MIXED))


@pytest.mark.parametrize("nb", (1, 2))
def test_stats_json_follows_rename_and_sighup(nb, tmp_path):
    """--stats-json-period follows logrotate: moved away, the lines go to
    a new file at the path within a second or two; on SIGHUP the path is
    opened anew at once (logrotate's create, copytruncate's peers), said
    in the log. Every line is whole JSON, and none is lost. (Before: the
    moved file went on being written, forever.)"""
    path = tmp_path / "stats.jsonl"
    app = Live(tmp_path, nb, ["net_pcap0,rx_pcap=%s,tx_pcap=%s,"
                              "infinite_rx=1" % (MIXED, os.devnull)],
               ["--stats-period", "1", "--stats-json-period", str(path)])

    def lines(p):
        try:
            with open(p) as f:
                return [json.loads(x) for x in f]
        except FileNotFoundError:
            return []
    try:
        app.wait(lambda: len(lines(path)) >= 1, "a line")
        os.rename(path, str(path) + ".1")
        app.wait(lambda: len(lines(path)) >= 1, "a line in a new file")
        os.rename(path, str(path) + ".2")
        path.write_text("")      # logrotate's create
        app.proc.send_signal(signal.SIGHUP)
        app.wait(lambda: "--stats-json-period %s: reopened (SIGHUP)" % path
                 in app.text(), "the reopen logged")
        app.wait(lambda: len(lines(path)) >= 1, "a line after SIGHUP")
    finally:
        rc = app.stop()
    parts = [lines(str(path) + ".1"), lines(str(path) + ".2"), lines(path)]
    times = [o["time_ns"] for part in parts for o in part]
    assert rc == 0 and all(parts) and times == sorted(times), \
        [len(p) for p in parts]


def test_dry_run_receives_nothing(tmp_path):
    """cuckooflow.env's dry run, as written: its port receives nothing
    (before: net_null0, a 12 Mpps generator)."""
    with open(os.path.join(ROOT, "config", "cuckooflow.env")) as f:
        m = re.search(r'^# A dry run.*?\n#CUCKOOFLOW_EAL="([^"]+)"', f.read(),
                      re.M | re.S)
    eal_opts = m.group(1).split()
    pre = prefix()
    app = subprocess.Popen([APP, "--lcores", "0@0,1@1",
                            "--log-level=lib.*:error", "--file-prefix=" + pre]
                           + eal_opts + ["--", "--stats-period", "1"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    try:
        wait_until(lambda: query(pre, "/cuckooflow/stats"), "telemetry",
                   proc=app)
        # the link's up, the worker polls: two periods' lines
        lines = []
        for _ in polling(0.1):
            lines.append(app.stdout.readline())
            if sum("cuckooflow: stats" in x for x in lines) >= 2:
                break
        st = query(pre, "/cuckooflow/stats")
    finally:
        app.send_signal(signal.SIGINT)
        app.communicate(timeout=DEADLINE)
    assert app.returncode == 0 and st["rx_packets"] == 0 and \
        sum("cuckooflow: stats" in x for x in lines) >= 2, (st, lines)


# ------------------------------------------------------------ replays


@pytest.mark.parametrize("nb", (1, 2))
def test_replay_summary(nb, tmp_path):
    """The end of a replay: one summary, not the table of 60 rows: the
    time it ran and its rates, the capture's span by its own timestamps
    (scapy's), each port's packets, the flows, every counter that is not
    0 with its value (as --stats-json has it), what was lost; the top
    sources under the packet clock over the capture's time (not "last
    0.0 s"). The whole table with --stats-all."""
    out = str(tmp_path / "s.json")
    rc, stdout, stderr = run(nb, ["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (
        MIXED, os.devnull)], ["--clock", "pkt", "--exit-on-eof",
                              "--stats-json", out])
    total = json.load(open(out))["total"]
    r = RawPcapReader(MIXED)
    ts = [m.sec + m.usec / 1e6 for _, m in r]
    r.close()
    span = max(ts) - min(ts)
    m = re.search(r"cuckooflow: replay 100\.0%: (\d+) of (\d+) packets; "
                  r"capture (\S+) to (\S+) \(([\d.]+) s\)", stdout)
    assert rc == 0 and m and int(m.group(1)) == int(m.group(2)) == \
        len(ts) and abs(float(m.group(5)) - span) < 1e-3, stdout[-800:]
    assert "cuckooflow: port 0 (net_pcap0): rx %d, tx 0; not received: " \
        "missed 0, nombuf 0, errors 0; not sent: 0\n" % len(ts) in stdout
    nonzero = dict(re.findall(r"(\w+) (\d+)", stdout.split(
        "counters not 0")[1].split("cuckooflow: lost")[0]))
    want = {k: v for k, v in total.items() if isinstance(v, int) and v}
    want.update(("malformed_" + k, v) for k, v in total["malformed"].items()
                if v)
    assert {k: int(v) for k, v in nonzero.items()} == want
    assert "cuckooflow: lost: none\n" in stdout and \
        "counter " not in stdout, stdout[-800:]
    top = re.search(r"top sources of new flows, last ([\d.]+) s of capture "
                    r"time:", stdout)
    assert top and abs(float(top.group(1)) - span) <= 0.05, stdout[-400:]


@pytest.mark.parametrize("nb", (1, 2))
def test_replay_progress(nb, tmp_path):
    """A replay's progress by packets and by the capture's own clock:
    each --stats-period line of a replay says how far it is, never
    backwards, and once it is over "replay 100.0%" with the capture's
    last time. (Before: no progress at all.)"""
    app = Live(tmp_path, nb, ["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (
        MIXED, os.devnull)], ["--clock", "pkt", "--stats-period", "1"])
    pat = re.compile(r"replay ([\d.]+)%, (\d+) of (\d+) packets; capture "
                     r"time (\S+), ([\d.]+) of its ([\d.]+) s\n")
    try:
        run_ended(app.prefix, app.proc)
        app.wait(lambda: [g[0] for g in pat.findall(app.text())].count(
            "100.0") >= 2, "two progress lines after the end")
    finally:
        rc = app.stop()
    got = pat.findall(app.text())
    frames = len(frames_of(MIXED))
    done = [float(g[0]) for g in got]
    assert rc == 0 and done == sorted(done) and got[-1][0] == "100.0" and \
        int(got[-1][1]) == int(got[-1][2]) == frames and \
        got[-1][4] == got[-1][5], got


# ------------------------------------------------- lists being written

def prefix_list(first, n):
    """@n /24 prefixes 10.1.I.0/24 from I = @first, a line each."""
    return "".join("10.1.%d.0/24\n" % i for i in range(first, first + n))


@pytest.mark.parametrize("nb", (1, 2))
def test_list_being_written_not_reloaded(nb, tmp_path):
    """A reload (telemetry, then SIGHUP) of a list its writer has
    truncated and half written, the file still open (a download or
    `cat > list` at work, pausing): not read, the old list kept, the
    reason named; once the writer closes it, the whole list reloads; a
    list renamed over it reloads. (Before: the half list was put in
    force as if whole, "reloaded", about 100 of 200 entries: the
    addresses of the rest passed.)"""
    lst = tmp_path / "block.txt"
    full = prefix_list(0, 200)
    lst.write_text(full)
    app = Live(tmp_path, nb, ["net_pcap0,rx_pcap=%s,tx_pcap=%s,infinite_rx=1"
                              % (MIXED, os.devnull)], ["--blocklist", str(lst)])
    try:
        app.up()
        with open(str(lst), "r+") as w:
            w.truncate(0)
            w.write(full[:len(full) // 2])
            w.flush()
            half = query(app.prefix, "/cuckooflow/blocklist/reload")
            assert half["result"].startswith("failed"), half
            app.proc.send_signal(signal.SIGHUP)
            app.wait(lambda: "SIGHUP reload: " in app.text(),
                     "the SIGHUP reload's failure logged")
            w.write(full[len(full) // 2:])
        whole = query(app.prefix, "/cuckooflow/blocklist/reload")
        new = tmp_path / "block.txt.new"
        new.write_text(prefix_list(0, 50))
        os.rename(str(new), str(lst))
        renamed = query(app.prefix, "/cuckooflow/blocklist/reload")
        stats = query(app.prefix, "/cuckooflow/stats")
    finally:
        rc = app.stop()
    log = app.text()
    assert half["result"].startswith("failed") and \
        half["entries"] == 200 and "being written" in half["last_error"], half
    assert re.search(r"SIGHUP reload: .*block\.txt: being written .*"
                     r"\(previous list kept\)", log), log[-600:]
    assert whole["result"] == "reloaded" and whole["entries"] == 200 and \
        renamed["result"] == "reloaded" and renamed["entries"] == 50 and \
        renamed["reload_failures"] == 2, (whole, renamed)
    assert rc == 0 and stats["rx_packets"] > 0, (rc, log[-400:])


@pytest.mark.parametrize("nb", (1, 2))
def test_list_being_written_refused_at_start(nb, tmp_path):
    """A start whose --blocklist is being written (truncated, half
    written, still open) is refused, naming why: never a run with half
    the list. Once written, a forward replay sends exactly the frames
    the whole list does not match. (Before: the run went with the
    first half of the list, and forwarded 96 frames of the rest's
    prefixes.)"""
    from scapy.all import IP as IPv4, UDP, Ether, wrpcap
    frames = [Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") /
              IPv4(src="10.%d.%d.1" % (net, i), dst="192.0.2.9") /
              UDP(sport=1000 + i, dport=53)
              for net in (1, 2) for i in range(200)]
    cap = str(tmp_path / "in.pcap")
    wrpcap(cap, frames)
    want = sorted(bytes(f) for f in frames if f[IPv4].src.startswith("10.2."))
    lst = tmp_path / "block.txt"
    full = prefix_list(0, 200)
    tx = [str(tmp_path / ("out%d.pcap" % w)) for w in range(nb)]
    vdev = ["net_pcap0,rx_pcap=%s,%s" % (cap, ",".join("tx_pcap=" + t
                                                        for t in tx))]
    args = ["--mode", "forward", "--exit-on-eof", "--blocklist", str(lst)]
    with open(str(lst), "w") as w:
        w.write(full[:len(full) // 2])
        w.flush()
        rc, out, err = run(nb, vdev, args)
        outs = sorted(sum((frames_of(t) for t in tx if os.path.exists(t)),
                          []))
        assert rc != 0 and "block.txt: being written" in err, \
            "rc %d, %d frames out (%d of them listed): %s" % (
                rc, len(outs), len(outs) - len(set(outs) & set(want)),
                (out + err)[-400:])
        w.write(full[len(full) // 2:])
    rc, out, err = run(nb, vdev, args)
    outs = sorted(sum((frames_of(t) for t in tx), []))
    assert rc == 0 and outs == want, (rc, len(outs), (out + err)[-400:])


def udp_flows_pcap(path, n):
    """A capture of @n UDP flows, one frame each (10.X.Y.Z:1024 to
    192.0.2.9:53), written directly (scapy takes seconds for many)."""
    import struct
    eth = bytes.fromhex("020000000002020000000001") + b"\x08\x00"
    with open(str(path), "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i in range(n):
            ip = struct.pack("!BBHHHBBHII", 0x45, 0, 28, 0, 0, 64, 17, 0,
                             0x0a000000 | i, 0xc0000209)
            fr = eth + ip + struct.pack("!HHHH", 1024, 53, 8, 0)
            f.write(struct.pack("<IIII", 1700000000, i, len(fr), len(fr)) +
                    fr)
    return str(path)


FAILED_SAVE = "(the file saved before stays"


@pytest.mark.parametrize("nb", (1, 2))
def test_sigterm_during_periodic_save(nb, tmp_path):
    """SIGTERM while a --state-interval save is being written (its
    temporary file there; with 2 workers, worker 0's table being
    written, worker 1's not yet asked): the save under way is left off
    (a notice, no failure), the exit saves every flow, exit 0, no
    temporary file left; the next run takes them all over. The first
    run forwards every frame. (Before: the save asked a worker already
    stopped, waited 2 s for it and logged an error, "--state-interval:
    ...: Connection timed out (the file saved before stays; tried again
    each interval)", at every such stop; the 1-worker case rarely hits
    that window.)"""
    n = 20000
    cap = udp_flows_pcap(tmp_path / "flows.pcap", n)
    state = str(tmp_path / "flows.state")
    tx = [str(tmp_path / ("fwd%d.pcap" % w)) for w in range(nb)]
    common = ["--hash-seed", "7", "--flows", "8388608", "--timeout-udp",
              "3600", "--state-file", state]
    app = Live(tmp_path, nb, ["net_pcap0,rx_pcap=%s,%s" % (
        cap, ",".join("tx_pcap=" + t for t in tx))],
        common + ["--mode", "forward", "--state-interval", "1"])
    try:
        run_ended(app.prefix, app.proc)
        tmp = state + ".tmp.%d." % app.proc.pid

        def saving():
            for f in os.listdir(str(tmp_path)):
                p = str(tmp_path / f)
                if p.startswith(tmp) and (nb == 1 or os.path.getsize(p) >
                                          104):
                    return True
            return False
        app.wait(saving, "a save being written")
        # A save before may have failed on a loaded machine (a worker
        # not answering within 2 s: said once, tried again each
        # interval): the SIGTERM's save must add no failure.
        before = app.text().count(FAILED_SAVE)
        app.proc.send_signal(signal.SIGTERM)
    finally:
        rc = app.stop()
    log = app.text()
    left = [f for f in os.listdir(str(tmp_path)) if ".tmp." in f]
    assert rc == 0 and log.count(FAILED_SAVE) == before and \
        "saved %d open flows of %d workers" % (n, nb) in log and \
        not left, (rc, left, log[-800:])
    assert sorted(sum((frames_of(t) for t in tx), [])) == \
        sorted(frames_of(cap))
    rc, out, err = run(nb, ["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (
        MIXED, os.devnull)], common + ["--exit-on-eof"])
    assert rc == 0 and "took over %d open flows of %d workers" % (n, nb) \
        in out, out + err


# ------------------------------------------------- hostile telemetry

COMMANDS = ["/cuckooflow/" + c for c in (
    "blocklist", "blocklist/reload", "state", "flow", "flush", "events",
    "losses", "stats", "lcore", "table", "counters", "config", "run", "info",
    "top_new_sources")]
HOSTILE_PARAMS = [
    b"A" * 1000, b"x\x00yz", b"\xff\xfe\xc3\x28", b'"\\\n{\t',
    b"99999999999999999999999999", b"-1", b"0x10", b"," * 900,
    b"tcp" + b",1.2.3.4" * 120, b"tcp,1.2.3.4,99999,5.6.7.8,-1",
    b"tcp,1.2.3.4,0x50,5.6.7.8,80", b"\xff,1.2.3.4,1,5.6.7.8,2",
    b"udp,::1,1,1.2.3.4,2", b"%s%n%x", b"/dev/zero", b"/proc/self/status",
    b"/nonexistent/\xff\xfe.txt", b"18446744073709551617", b"101"]


def telemetry_raw(pre, msg):
    """The reply to @msg (bytes, sent as is) on the telemetry socket of
    the run with --file-prefix @pre, as bytes."""
    s, _ = dpdk_telemetry.Telemetry.of_prefix(pre, DEADLINE).connect()
    try:
        s.send(msg)
        return s.recv(1 << 20)
    finally:
        s.close()


@pytest.mark.parametrize("nb", (1, 2))
def test_telemetry_hostile_requests(nb, tmp_path):
    """Every /cuckooflow/* command given hostile parameters (1000 bytes,
    a NUL, bytes that are not UTF-8, quotes and control characters,
    numbers out of range, negative, hex, 900 commas, a format string,
    devices and /proc files as a list), then 20 clients at once that
    never read: every reply is JSON (strict UTF-8), the run answers
    after, its list unchanged, exits 0, and forwarded every frame.
    (Before: a reload of a path with bytes of 0x80 or more, failed or
    not, put them in last_error, and DPDK's JSON writer, indexing a
    table by the signed char, wrote no JSON: the reply, and every
    /cuckooflow/blocklist after it, failed to decode.)"""
    lst = tmp_path / "block.txt"
    lst.write_text("203.0.113.250\n")
    tx = [str(tmp_path / ("fwd%d.pcap" % w)) for w in range(nb)]
    app = Live(tmp_path, nb, ["net_pcap0,rx_pcap=%s,%s" % (
        MIXED, ",".join("tx_pcap=" + t for t in tx))],
        ["--mode", "forward", "--blocklist", str(lst), "--blocklist-unparsed",
         "pass", "--state-file", str(tmp_path / "flows.state"),
         "--state-interval", "1"])
    bad = []
    try:
        run_ended(app.prefix, app.proc)
        for cmd in COMMANDS:
            for prm in HOSTILE_PARAMS:
                msg = cmd.encode() + b"," + prm
                try:
                    json.loads(telemetry_raw(app.prefix, msg).decode())
                except ValueError as e:
                    bad.append((msg[:60], repr(e)[:200]))
        # 20 clients at once, none reading (DPDK serves 10)
        idle = []
        for _ in range(20):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            idle.append(s)
            try:
                s.connect(dpdk_telemetry.socket_path(app.prefix))
                s.send(b"/cuckooflow/counters")
            except OSError:
                pass    # past DPDK's 10: closed by the server
        for s in idle:
            s.close()
        bl = app.wait(lambda: query(app.prefix, "/cuckooflow/blocklist"),
                      "an answer once the clients are gone")
        flow = json.loads(telemetry_raw(
            app.prefix, b"/cuckooflow/flow,\xff,1.2.3.4,1,5.6.7.8,2"))
        reload = json.loads(telemetry_raw(
            app.prefix, b"/cuckooflow/blocklist/reload,/nonexistent/\xff"))
    finally:
        rc = app.stop()
    assert not bad, bad[:5]
    assert bl["entries"] == 1 and bl["source"] == str(lst), bl
    assert "\\xff" in flow["/cuckooflow/flow"]["error"] and \
        "/nonexistent/\\xff" in \
        reload["/cuckooflow/blocklist/reload"]["last_error"], (flow, reload)
    assert rc == 0, app.text()[-400:]
    assert sorted(sum((frames_of(t) for t in tx), [])) == \
        sorted(frames_of(MIXED))


@pytest.mark.parametrize("nb", (1, 2))
def test_list_of_repeated_short_prefixes(nb, tmp_path):
    """A list of a million lines repeating two short prefixes
    (128.0.0.0/1, 10.0.0.0/8: 12 MB, a merged feed's duplicates) loads
    at the start and reloads over telemetry, as 2 entries; a forward
    replay sends exactly the frames neither matches. (Before: each line
    wrote its prefix again into all its cells of the IPv4 length index,
    2^23 for a /1: the start took hours, holding the reload lock; here
    it never came up before the test's deadline.)"""
    from scapy.all import IP as IPv4, UDP, Ether, wrpcap
    frames = [Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") /
              IPv4(src=src % i, dst="100.64.0.9") / UDP(sport=1000 + i,
                                                         dport=53)
              for src in ("10.1.0.%d", "200.0.0.%d", "100.1.0.%d")
              for i in range(50)]
    cap = str(tmp_path / "in.pcap")
    wrpcap(cap, frames)
    want = sorted(bytes(f) for f in frames
                  if f[IPv4].src.startswith("100.1."))
    lst = tmp_path / "block.txt"
    lst.write_text("128.0.0.0/1\n10.0.0.0/8\n" * 500000)
    tx = [str(tmp_path / ("out%d.pcap" % w)) for w in range(nb)]
    app = Live(tmp_path, nb, ["net_pcap0,rx_pcap=%s,%s" % (
        cap, ",".join("tx_pcap=" + t for t in tx))],
        ["--mode", "forward", "--blocklist", str(lst)])
    try:
        run_ended(app.prefix, app.proc)
        bl = query(app.prefix, "/cuckooflow/blocklist/reload")
    finally:
        rc = app.stop()
    assert rc == 0 and bl["result"] == "reloaded" and \
        bl["entries"] == 2 and bl["prefix_lengths_v4"] == 2, bl
    assert sorted(sum((frames_of(t) for t in tx), [])) == want


@pytest.mark.parametrize("nb", (1, 2))
def test_sighup_reload_of_a_big_list_keeps_draining(nb, tmp_path):
    """A SIGHUP reload of a list of two million addresses (a second or
    more to read and build) while new flows stream in with --records:
    the main lcore goes on writing the event lines meanwhile (json_lines
    grows between RELOADING=1 and READY=1 on $NOTIFY_SOCKET), the list
    is replaced (logged), the run exits 0. (Before: the reload ran on
    the main lcore, which drains the event rings every millisecond: no
    line was written until the list was in place, and the rings
    overflowed meanwhile: 155,930 events and 77,964 records dropped by
    hand, at mixed.pcap's rate.) The events go to a FIFO that cat
    drains; how many are dropped depends on the machine's load (the
    main lcore formats every line), so only the writing is checked."""
    lst = tmp_path / "block.txt"
    lst.write_text("192.0.2.1\n")
    big = tmp_path / "block.new"
    big.write_text("".join("%d.%d.%d.%d\n" % (
        11 + i % 200, (i >> 16) & 255, (i >> 8) & 255, i & 255)
        for i in range(2000000)))
    fifo = str(tmp_path / "events.fifo")
    os.mkfifo(fifo)
    cat = subprocess.Popen(["cat", fifo], stdout=subprocess.DEVNULL)
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(DEADLINE)
    grew, msgs = None, []
    try:
        app = Live(tmp_path, nb, ["net_pcap0,rx_pcap=%s,tx_pcap=%s,"
                                  "infinite_rx=1" % (MIXED, os.devnull)],
                   ["--blocklist", str(lst), "--records", "on", "--events",
                    fifo], env=dict(os.environ, NOTIFY_SOCKET=path))
        try:
            msgs.append(sock.recv(4096).decode())
            app.wait(lambda: (query(app.prefix, "/cuckooflow/events") or
                              {}).get("json_lines", 0) > 1000,
                     "event lines written")
            os.rename(str(big), str(lst))
            app.proc.send_signal(signal.SIGHUP)
            msgs.append(sock.recv(4096).decode())       # RELOADING=1
            first = query(app.prefix, "/cuckooflow/events")["json_lines"]
            sock.setblocking(False)
            for _ in polling(0.01):
                n = query(app.prefix, "/cuckooflow/events")["json_lines"]
                try:
                    msgs.append(sock.recv(4096).decode())
                    break           # READY=1: the reload is done
                except BlockingIOError:
                    pass
                if n > first:
                    # written, and READY=1 not sent before it was
                    grew = n - first
                    break
            sock.setblocking(True)
            app.wait(lambda: "SIGHUP: blocklist reloaded: %s, 2000000 "
                     "entries" % lst in app.text(), "the reload logged")
        finally:
            rc = app.stop()
    finally:
        sock.close()
        cat.kill()
        cat.wait()
    assert msgs[1] == "RELOADING=1" and grew, (msgs, grew)
    assert rc == 0, app.text()[-400:]
