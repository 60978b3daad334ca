#!/usr/bin/python3
"""cuckooflow's firewall inside Open vSwitch with DPDK (issue 26): the
software switch users run, Debian's openvswitch-switch-dpdk (OVS 3.1 on
DPDK 22.11), with the real traffic of test_real_traffic.py (realnet.py)
through it.

Each run starts its own ovsdb-server and ovs-vswitchd-dpdk in its own
run directory (never the system's service or database), with its own
DPDK --file-prefix, in memory (--in-memory: no hugepage files), 256 MB
of the hugepages the test run reserved. ovs-vswitchd runs in a network
namespace of the run's own: its netdev datapath makes a tap device
named ovs-netdev in its namespace, and two instances in one namespace
(the two runs side by side, or two trees' runs) collided there ("creating
tap device failed: Device or resource busy"), the second's bridge made
only once the first had gone: br0.mgmt not there for 180 s, the run
failed or took 197 s instead of 12. Its netdev bridge has four
ports: the client's and the router's veth peers (kernel interfaces in
that namespace, named after the run) and two dpdkvhostuserclient
ports whose sockets cuckooflow serves (virtio-user, server=1: the
vhost-user frontend). OpenFlow rules steer the traffic through
cuckooflow:

    in_port=<client's veth>,actions=output:vhu0   (cuckooflow's inside)
    in_port=vhu0,actions=output:<client's veth>
    in_port=<router's veth>,actions=output:vhu1   (its outside)
    in_port=vhu1,actions=output:<router's veth>

cuckooflow: --mode forward --inside 0 --outside 1, 1 and 2 workers (2
queue pairs a port, software handoff). The checks are
test_real_traffic.py's.
"""
import os

import pytest

from harness import DEADLINE, need_tool, polling, query
from realnet import ALLOW, IP, Net, sh, tools, traffic_checks

VSWITCHD = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"
WORKER_LCORES = {1: "0@0,1@1", 2: "0@0,1@1,2@1"}
_runs = [0]


def tag():
    _runs[0] += 1
    return "cfov%d_%d" % (os.getpid() % 100000, _runs[0])


class Ovs:
    """ovsdb-server and ovs-vswitchd-dpdk of one run, in @d; ovs-vswitchd
    in network namespace @ns (its datapath's ovs-netdev tap is there)."""

    def __init__(self, d, prefix, ns):
        self.d = d
        self.env = dict(os.environ, OVS_RUNDIR=d, OVS_LOGDIR=d,
                        OVS_DBDIR=d)
        self.db = "unix:%s/db.sock" % d
        self.started = []
        try:
            self._start(prefix, ns)
        except Exception:
            self.stop()
            raise

    def _start(self, prefix, ns):
        d = self.d
        sh("ovsdb-tool", "create", d + "/conf.db", SCHEMA, env=self.env)
        sh("ovsdb-server", "--remote=punix:%s/db.sock" % d,
           "--pidfile=%s/ovsdb.pid" % d, "--unixctl=%s/ovsdb.ctl" % d,
           "--log-file=%s/ovsdb.log" % d, "--detach", d + "/conf.db",
           env=self.env)
        self.started.append("ovsdb")
        self.vsctl("--no-wait", "init")
        # its own DPDK: a prefix of its own, in memory, 256 MB; its PMD
        # sleeps when idle (a shared machine)
        self.vsctl("--no-wait", "set", "Open_vSwitch", ".",
                   "other_config:dpdk-init=true",
                   "other_config:dpdk-extra=--no-pci --file-prefix=%s "
                   "--in-memory" % prefix,
                   "other_config:dpdk-socket-mem=256",
                   "other_config:pmd-maxsleep=50")
        sh(IP, "netns", "exec", ns, VSWITCHD, self.db,
           "--pidfile=%s/vswitchd.pid" % d,
           "--unixctl=%s/vswitchd.ctl" % d,
           "--log-file=%s/vswitchd.log" % d, "--detach", env=self.env,
           timeout=DEADLINE)
        self.started.append("vswitchd")
        self.vsctl("add-br", "br0", "--", "set", "bridge", "br0",
                   "datapath_type=netdev")
        # its OpenFlow socket, once the bridge is made
        for _ in polling(0.05):
            if os.path.exists(d + "/br0.mgmt"):
                break
        else:
            raise RuntimeError("no bridge br0 (no br0.mgmt): %s" %
                               self.log())

    def vsctl(self, *args, timeout=DEADLINE):
        return sh("ovs-vsctl", "--db=" + self.db, *args, env=self.env,
                  timeout=timeout)

    def ofctl(self, *args):
        return sh("ovs-ofctl", "-O", "OpenFlow13", *args[:1],
                  "unix:%s/br0.mgmt" % self.d, *args[1:], env=self.env)

    def link_up(self, port):
        r = sh("ovs-vsctl", "--db=" + self.db, "get", "Interface", port,
               "link_state", env=self.env, check=False)
        return r.stdout.strip() == "up"

    def stop(self):
        for name in reversed(self.started):
            sh("ovs-appctl", "-t", "%s/%s.ctl" % (self.d, name), "exit",
               env=self.env, check=False, timeout=DEADLINE)
        self.started = []

    def log(self):
        try:
            with open(self.d + "/vswitchd.log") as f:
                return f.read()[-1500:]
        except OSError:
            return ""


def ovs_run(cuckooflow, tmp, nb):
    """One run: problems."""
    t = tag()
    d = str(tmp)
    ovs = net = None
    prefix = t
    out = os.path.join(d, "stats.json")
    allow = os.path.join(d, "allow.txt")
    with open(allow, "w") as f:
        f.write(ALLOW)
    vin, vout = t + "i", t + "o"
    try:
        net = Net(t, d, fw_ns=t + "f", peers=(vin, vout))
        ovs = Ovs(d, t + "s", net.fw_ns)
        ovs.vsctl("add-port", "br0", vin)
        ovs.vsctl("add-port", "br0", vout)
        for k in (0, 1):
            ovs.vsctl("add-port", "br0", "vhu%d" % k, "--", "set",
                      "Interface", "vhu%d" % k, "type=dpdkvhostuserclient",
                      "options:vhost-server-path=%s/cf%d.sock" % (d, k))
        ovs.ofctl("del-flows")
        for a, b in ((vin, "vhu0"), ("vhu0", vin), (vout, "vhu1"),
                     ("vhu1", vout)):
            ovs.ofctl("add-flow", "in_port=%s,actions=output:%s" % (a, b))
        q = ",queues=2" if nb == 2 else ""
        proc = net.spawn(None, [
            cuckooflow, "--lcores", WORKER_LCORES[nb], "--no-pci",
            "--file-prefix=" + prefix, "-m", "256", "--in-memory",
            "--single-file-segments", "--log-level=lib.*:error",
            "--vdev", "net_virtio_user0,path=%s/cf0.sock,server=1,"
            "queue_size=1024%s" % (d, q),
            "--vdev", "net_virtio_user1,path=%s/cf1.sock,server=1,"
            "queue_size=1024%s" % (d, q),
            "--", "--mode", "forward", "--inside", "0", "--outside", "1",
            "--allow", allow, "--flows", "65536", "--clock", "tsc",
            "--stats-json", out], "cuckooflow")
        for _ in polling(0.1):
            if proc.poll() is not None or (
                    query(prefix, "/cuckooflow/run") and
                    ovs.link_up("vhu0") and ovs.link_up("vhu1")):
                break
        if proc.poll() is not None or not (ovs.link_up("vhu0") and
                                           ovs.link_up("vhu1")):
            return ["cuckooflow (rc %s) or its vhost-user links not up: %s"
                    % (proc.poll(), ovs.log())]
        return traffic_checks(net, prefix, proc, out)
    finally:
        # the switch first: its namespace goes with the others
        if ovs is not None:
            ovs.stop()
        if net is not None:
            net.delete()
        sh("rm", "-rf", "/var/run/dpdk/" + prefix, "/var/run/dpdk/" + t +
           "s", check=False)


def can_run():
    if os.geteuid() != 0:
        return "not root: cannot create network namespaces"
    return None


@pytest.mark.slow
@pytest.mark.parametrize("nb", (1, 2))
def test_ovs_dpdk(cuckooflow, tmp_path, nb):
    why = can_run()
    if why:
        pytest.skip(why)
    tools()
    for tool in ("ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-ofctl",
                 "ovs-appctl"):
        need_tool(tool, "openvswitch-switch-dpdk")
    if not os.access(VSWITCHD, os.X_OK):
        pytest.fail("%s not found: tools/setup.sh installs it (Debian "
                    "package openvswitch-switch-dpdk)" % VSWITCHD)
    bad = ovs_run(cuckooflow, tmp_path, nb)
    assert not bad, "\n".join(bad)
