"""Helpers of the Python suites (tests/ is on sys.path: conftest.py)."""
import os
import shutil
import signal
import socket
import subprocess
import struct
import time

import pytest

import dpdk_telemetry  # tools/, on sys.path (conftest.py)


def no_crash(rc, what="cuckooflow", log=""):
    """Fail the test if @what was killed by a signal (subprocess's
    negative return code): a crash is a failure whatever the test
    expected of the exit status. Returns @rc."""
    if rc is not None and rc < 0:
        pytest.fail("%s killed by %s: %s" % (
            what, signal.Signals(-rc).name, log.strip()[-400:]))
    return rc


def empty_pcap(path):
    """A pcap file with no packets (Ethernet)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    return path


def hugepages_free():
    """Free hugepages of the default size (/proc/meminfo)."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("HugePages_Free:"):
                return int(line.split()[1])
    return 0


def stats(prefix):
    """cuckooflow's /cuckooflow/stats over telemetry, or None (not up,
    not answering yet)."""
    try:
        return dpdk_telemetry.query(prefix, "/cuckooflow/stats")
    except (OSError, ValueError, KeyError, TypeError):
        return None


def wait_packets(prefix, want, proc, timeout=10.0):
    """Until /cuckooflow/stats counts @want packets (or more), or @proc
    exits; returns the last stats seen."""
    end = time.monotonic() + timeout
    st = None
    while time.monotonic() < end and proc.poll() is None:
        st = stats(prefix) or st
        if st and st["packets"] >= want:
            return st
        time.sleep(0.02)
    return st


def links_up(prefix, ports, tries=100):
    """Wait (up to tries x 0.1 s) until the ports of the DPDK process
    with --file-prefix @prefix are up, as its telemetry shows: memif and
    vhost-user links come up asynchronously once both sides have
    started. Returns whether they did."""
    for _ in range(tries):
        time.sleep(0.1)
        try:
            if all(dpdk_telemetry.query(prefix, "/ethdev/link_status,%d" %
                                        i)["status"] == "UP" for i in ports):
                return True
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return False


def memif_peer_argv(testpmd, prefix, sock, side0, side1):
    """dpdk-testpmd, interactive, io mode, 2 queues a port, as the memif
    client of the links at sock[0] and sock[1]: its port 0, a net_pcap
    of side0 = ([rx capture a queue], [tx file a queue]), forwards to
    link 0 (port 1) and back; port 2 (link 1) to and from port 3, the
    net_pcap of side1. --no-flush-rx: testpmd would drain the captures
    before it forwards."""
    def pcap_vdev(n, side):
        return "--vdev=net_pcap%d,%s" % (n, ",".join(
            ["rx_pcap=" + r for r in side[0]] +
            ["tx_pcap=" + t for t in side[1]]))
    return [testpmd, "-l", "0,1", "--no-pci", "--no-huge", "-m", "512",
            "--log-level=lib.*:error", "--file-prefix=%s_peer" % prefix,
            pcap_vdev(0, side0)] + \
        ["--vdev=net_memif%d,role=client,socket=%s" % (i, sock[i])
         for i in (0, 1)] + \
        [pcap_vdev(1, side1), "--", "-i", "--forward-mode=io",
         "--total-num-mbufs=16384", "--rxq=2", "--txq=2", "--rxd=1024",
         "--txd=1024", "--no-flush-rx"]


# ------------------------------------------------- an IPFIX collector


def udp_row(port):
    """/proc/net/udp's row of a socket bound to 127.0.0.1:port, or None."""
    local = "0100007F:%04X" % port
    with open("/proc/net/udp") as f:
        for line in f.readlines()[1:]:
            cols = line.split()
            if cols[1] == local:
                return cols
    return None


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(cond, what, timeout=10):
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "timed out: " + what
        time.sleep(0.02)


class nfcapd:
    """Debian's nfcapd on 127.0.0.1 and a free port, in a directory of
    @tmp_path, for a with block (skips the test without nfdump): .port
    inside; .files, the flow files it wrote, after. On leaving, it
    waits until every datagram is read, then stops it."""

    def __init__(self, tmp_path):
        for tool in ("nfcapd", "nfdump"):
            if shutil.which(tool) is None:
                pytest.skip(tool + " not installed (Debian: nfdump)")
        self.dir = os.path.join(str(tmp_path), "flows")
        os.makedirs(self.dir, exist_ok=True)
        self.port = free_udp_port()
        self.files = []

    def __enter__(self):
        self.logpath = os.path.join(self.dir, "..", "nfcapd.log")
        self.log = open(self.logpath, "w+")
        self.proc = subprocess.Popen(
            ["nfcapd", "-w", self.dir, "-b", "127.0.0.1", "-p",
             str(self.port)], stdout=self.log, stderr=subprocess.STDOUT)
        wait_for(lambda: self.proc.poll() is not None or
                 udp_row(self.port), "nfcapd to bind port %d" % self.port)
        assert self.proc.poll() is None, "nfcapd exited: " + \
            open(self.logpath).read()
        return self

    def __exit__(self, *exc):
        try:
            if exc[0] is None:
                # Every datagram read (rx_queue 0), then a moment to
                # write.
                wait_for(lambda: int(udp_row(self.port)[4].split(":")[1],
                                     16) == 0, "nfcapd to read")
                time.sleep(0.2)
        finally:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=10)
            self.log.close()
        self.files = sorted(os.path.join(self.dir, p)
                            for p in os.listdir(self.dir)
                            if p.startswith("nfcapd.2"))
        if exc[0] is None:
            assert self.files, "nfcapd wrote no file: " + \
                open(self.logpath).read()
        return False


def nfdump_flows(files):
    """nfdump -o raw's records: (src, dst, sport, dport, proto, tcp
    flags, input, first ms, last ms, bytes, packets, end reason) (raw:
    nfdump 1.7.1's %ter prints the milliseconds modulo 100)."""
    flows = []
    for path in files:
        out = subprocess.run(["nfdump", "-r", path, "-q", "-o", "raw"],
                             capture_output=True, text=True, timeout=30,
                             check=True).stdout
        for block in out.split("Flow Record:")[1:]:
            f = {}
            for line in block.splitlines():
                if "=" in line:
                    k, v = line.split("=", 1)
                    f[k.strip()] = v.split()[0] if v.split() else ""
            flows.append((
                f["src addr"], f["dst addr"], int(f.get("src port", 0)),
                int(f.get("dst port", 0)), int(f["proto"]),
                int(f["tcp flags"], 16), int(f["input"]), int(f["first"]),
                int(f["last"]), int(f["in bytes"]), int(f["in packets"]),
                int(f["end reason"], 16)))
    return flows


def sequence_failures(files):
    """nfdump -I's count of IPFIX sequence number gaps."""
    n = 0
    for path in files:
        out = subprocess.run(["nfdump", "-r", path, "-I"],
                             capture_output=True, text=True, timeout=30,
                             check=True).stdout
        line = [x for x in out.splitlines()
                if x.startswith("Sequence failures:")]
        assert line, out
        n += int(line[0].split(":")[1])
    return n
