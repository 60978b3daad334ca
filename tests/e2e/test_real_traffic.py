#!/usr/bin/python3
"""Real traffic through cuckooflow's firewall (issue 26), on net_tap
ports: the kernel's own TCP, UDP, ICMP, ping, traceroute and curl, IPv4
and IPv6, between network namespaces made by the test (realnet.py has
the topology and the checks).

The firewall's namespace holds two bridges: brI joins the client's link
(fi) and cuckooflow's inside tap, brO the router's link (fo) and its
outside tap. cuckooflow runs there in forward mode, --inside 0
--outside 1, with an allow list opening one UDP service of the client.
The kernel gives the taps whole frames with their checksums (the veths'
offloads are off: what a wire carries). With 2 workers each port has 2
queues, the kernel spreads packets over them, and each reaches its
flow's owner by software handoff.

Checked from the inside: ping, an HTTP GET of 1 MB, UDP request and
response (100 bytes and a 3000-byte one: fragments both ways), UDP to a
closed port (ECONNREFUSED arrives), traceroute (time exceeded and port
unreachable arrive), 1 MB of TCP up across the router's hop of MTU 1280
(frag-needed / packet too big arrive, the transfer completes, the client
has the path MTU). From the outside: ping, a TCP SYN, UDP and a
fragmented datagram to the client are dropped, the allowed service's
fragmented datagram arrives whole. The final counters add up (rx =
tx + drops) and show each feature at work.
"""
import os

import pytest

from harness import NO_HUGE_MB
from harness import polling, query
from realnet import ALLOW, IP, Net, sh, tools, traffic_checks

WORKER_LCORES = {1: "0@0,1@1", 2: "0@0,1@1,2@1"}
_runs = [0]


def tag():
    _runs[0] += 1
    return "cfrt%d_%d" % (os.getpid(), _runs[0])


def wait_forwarding(ns, dev):
    """Until the bridge forwards to @dev."""
    for _ in polling(0.05):
        r = sh("bridge", "-n", ns, "-j", "link", "show", "dev", dev,
               check=False)
        if r.returncode == 0 and '"state":"forwarding"' in \
                r.stdout.replace(" ", ""):
            return True
    return False


def start_fw(cuckooflow, net, nb, prefix, out, allow):
    """cuckooflow in the firewall's namespace, its taps in the bridges."""
    fw = net.fw_ns
    for br, dev in (("brI", net.peer_in), ("brO", net.peer_out)):
        sh(IP, "-n", fw, "link", "add", br, "type", "bridge",
           "mcast_snooping", "0")
        sh(IP, "-n", fw, "link", "set", dev, "master", br)
        sh(IP, "-n", fw, "link", "set", br, "up")
    args = [cuckooflow, "--lcores", WORKER_LCORES[nb], "--no-pci",
            "--no-huge", "-m", NO_HUGE_MB, "--log-level=lib.*:error",
            "--file-prefix=" + prefix,
            "--vdev", "net_tap0,iface=cfti", "--vdev", "net_tap1,iface=cfto",
            "--", "--mode", "forward", "--inside", "0", "--outside", "1",
            "--allow", allow, "--clock", "tsc", "--stats-json", out]
    if nb == 2:
        # a tap has as many rx as tx queues (a tx queue a worker): queue
        # i of both ports on worker i; the kernel picks a tap queue by the
        # packet's hash (a fragment's, an ICMP error's by its addresses:
        # every fragment of a datagram on one queue), and each packet
        # goes to its flow's owner by software handoff (the tap says it
        # has RSS: auto would trust it, docs/firewall.md, Workers)
        args += ["--rxq", "2", "--affinity", "handoff"]
    proc = net.spawn(fw, args, "cuckooflow")
    for _ in polling(0.05):
        if proc.poll() is not None or query(prefix, "/cuckooflow/run"):
            break
    if proc.poll() is not None:
        return proc, "cuckooflow exited rc %s" % proc.returncode
    for br, tap in (("brI", "cfti"), ("brO", "cfto")):
        for _ in polling(0.05):
            if sh(IP, "-n", fw, "link", "show", tap,
                  check=False).returncode == 0:
                break
        sh(IP, "-n", fw, "link", "set", tap, "master", br)
        sh(IP, "-n", fw, "link", "set", tap, "up")
        if not wait_forwarding(fw, tap):
            return proc, "%s never forwarding" % tap
    return proc, None


def real_run(cuckooflow, tmp, nb):
    """One run: problems."""
    t = tag()
    net = Net(t, str(tmp), fw_ns=t + "f")
    prefix = t
    out = os.path.join(str(tmp), "stats.json")
    allow = os.path.join(str(tmp), "allow.txt")
    with open(allow, "w") as f:
        f.write(ALLOW)
    try:
        proc, why = start_fw(cuckooflow, net, nb, prefix, out, allow)
        if why:
            return [why]
        return traffic_checks(net, prefix, proc, out)
    finally:
        net.delete()
        sh("rm", "-rf", "/var/run/dpdk/" + prefix, check=False)


def can_run():
    if os.geteuid() != 0:
        return "not root: cannot create network namespaces"
    return None


@pytest.mark.slow
@pytest.mark.parametrize("nb", (1, 2))
def test_real_traffic_tap(cuckooflow, tmp_path, nb):
    why = can_run()
    if why:
        pytest.skip(why)
    tools()
    bad = real_run(cuckooflow, tmp_path, nb)
    assert not bad, "\n".join(bad)


def test_real_traffic_nothing_left():
    """No namespace or DPDK runtime directory of this run is left."""
    if can_run():
        pytest.skip(can_run())
    mine = "cfrt%d_" % os.getpid()
    left = [n for n in sh(IP, "netns", "list").stdout.split()
            if n.startswith(mine)]
    dirs = [n for n in os.listdir("/var/run/dpdk")
            if n.startswith(mine)] if os.path.isdir("/var/run/dpdk") else []
    assert not left and not dirs, (left, dirs)
