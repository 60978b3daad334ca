"""Helpers of the Python suites (tests/ is on sys.path: conftest.py)."""
import signal
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
