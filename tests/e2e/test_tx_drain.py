#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Forward mode's tx buffers and their drain timer (issue 29), live.

A worker keeps the packets it forwards in a buffer per egress port and
sends a buffer when it holds a full burst (32 packets) or when the drain
timer (APP_TX_DRAIN_US, 100 us) expires. A few packets, fewer than a
burst, must therefore leave while cuckooflow runs, not only when it
stops: three frames (IPv4 UDP, IPv6 UDP, IPv6 TCP: the parser's fast
paths) go in on the inside veth, and the test waits until all three have
come out of the other port, cuckooflow still running, then compares them
byte for byte with what was sent (the truth is scapy's frames) and
checks that telemetry counts them as three new flows and three sent
packets. 1 and 2 workers (af_packet with a queue pair a worker). Without
the timer the frames wait in the buffer until the stop and the wait
fails.

Env: CUCKOOFLOW_APP (default build/app/cuckooflow).
"""

import os
import sys

import pytest

from harness import NO_HUGE_MB
from harness import DEADLINE, need_tool, stats, wait_until

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fw_scenarios as S  # noqa: E402
from test_firewall import (APP, TMP, WORKER_LCORES, Netns,  # noqa: E402
                           captured, ours, stop)


def frames():
    """Three frames of three flows from the inside MAC to the outside
    one: IPv4 UDP, IPv6 UDP, IPv6 TCP SYN."""
    from scapy.all import IP, TCP, UDP, Ether, IPv6, Raw
    eth = Ether(src=S.MAC_IN, dst=S.MAC_OUT)
    return [bytes(p) for p in (
        eth / IP(src="10.0.0.1", dst="10.0.1.1") / UDP(sport=1111,
                                                       dport=53) /
        Raw(b"v4 udp"),
        eth / IPv6(src="2001:db8::1", dst="2001:db8:1::1") /
        UDP(sport=2222, dport=53) / Raw(b"v6 udp"),
        eth / IPv6(src="2001:db8::2", dst="2001:db8:1::2") /
        TCP(sport=3333, dport=443, flags="S", seq=7))]


@pytest.mark.parametrize("nb", (1, 2))
def test_partial_burst_leaves_while_running(nb):
    need_tool("tcpreplay", "tcpreplay")
    need_tool("tcpdump", "tcpdump")
    from scapy.all import Ether, wrpcap
    sent = frames()
    ns = Netns()
    rid = ns.name
    d = os.path.join(TMP, rid)
    os.makedirs(d)
    procs = []
    try:
        cap = os.path.join(d, "out.pcap")
        log = open(os.path.join(d, "tcpdump.log"), "w")
        procs.append((ns.popen(["tcpdump", "-i", "vethOb", "-Q", "in", "-n",
                                "-s", "0", "-U", "--immediate-mode", "-w",
                                cap], log), log))

        def listening():
            with open(log.name) as f:
                return "listening on" in f.read()
        wait_until(listening, "tcpdump listening", proc=procs[0][0])
        applog = open(os.path.join(d, "app.log"), "w")
        app = ns.popen(
            [APP, "--lcores", WORKER_LCORES[nb], "--no-pci", "--no-huge",
             "-m", NO_HUGE_MB, "--log-level=lib.*:error", "--file-prefix=" + rid,
             "--vdev=net_af_packet0,iface=vethIa,qpairs=%d" % nb,
             "--vdev=net_af_packet1,iface=vethOa,qpairs=%d" % nb,
             "--", "--mode", "forward", "--clock", "tsc"], applog)
        procs.append((app, applog))
        wait_until(lambda: stats(rid), "cuckooflow's telemetry", proc=app)
        path = os.path.join(d, "in.pcap")
        wrpcap(path, [Ether(f) for f in sent])
        ns.ex("tcpreplay", "-q", "--intf1=vethIb", path, timeout=DEADLINE)

        # fewer than a burst: out by the drain timer, cuckooflow running
        wait_until(lambda: len(ours(captured(cap))) >= len(sent),
                   "the %d frames on the other port while cuckooflow "
                   "runs" % len(sent), proc=app)
        st = wait_until(lambda: (lambda s: s if s and s["tx_packets"] >=
                                 len(sent) else None)(stats(rid)),
                        "tx_packets counting them", proc=app)
        got = ours(captured(cap))
        rc = stop(app)
        with open(applog.name) as f:
            applog_text = f.read()
        assert rc == 0, "cuckooflow rc %d: %s" % (rc, applog_text[-600:])
        # byte for byte; 2 workers may send the three flows in any order
        assert sorted(got) == sorted(sent), "forwarded %r, sent %r" % (
            got, sent)
        assert st["tx_packets"] == len(sent) and \
            st["flows_new"] == len(sent) and st["packets"] == len(sent), st
    finally:
        for p, f in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
            f.close()
        ns.delete()
