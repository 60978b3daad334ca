"""Helpers of the Python suites (tests/ is on sys.path: conftest.py).

The rules they serve (docs/testing.md): a test waits for a state (a
counter, a file, a link), polled until DEADLINE, never for a fixed time,
and asserts no wall-clock bound; a tool tools/setup.sh installs is
required (need_tool()), never a reason to skip.
"""
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import struct
import threading
import time

import pytest

import dpdk_telemetry  # tools/, on sys.path (conftest.py)

# How long a test waits for a state before it fails: generous, so that a
# loaded machine (sanitizers, parallel tests, stress-ng beside them) is
# slow, not failing; $CUCKOOFLOW_DEADLINE (seconds) overrides it.
DEADLINE = float(os.environ.get("CUCKOOFLOW_DEADLINE", "180"))
# The EAL's memory (-m, MiB) of a run without hugepages: it is mapped and
# touched at start (0.4 s a start at 512, 0.1 s at 128, about a thousand
# starts a tree); a test that needs more says so where it runs the app.
NO_HUGE_MB = "128"


def help_options(text):
    """{option: {"arg", "key", "default", "line"}} of cuckooflow's --help
    (@text): each option's argument as --help spells it ("N", "FILE",
    "tsc|pkt"; "" for none), its --cfg key "section.key" (None: the
    command line only) and its default, as the program prints them
    (app/config.c's option table); -h and --version with neither."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"  (?:-h, )?(--[a-z0-9-]+)(?: (\S+))?\s", line)
        if not m:
            continue
        d = re.search(r" \((?:(\w+\.\w+); )?default (.*)\)$", line)
        out[m.group(1)] = {"arg": m.group(2) or "",
                           "key": d.group(1) if d else None,
                           "default": d.group(2) if d else None,
                           "line": line}
    if "-h, --help" in text:
        out["-h"] = dict(out["--help"])
    return out


def ini_keys(path):
    """{"section.key": value} of an INI file such as
    config/cuckooflow.ini: the keys set and those shown commented out
    ("; key = value", "# key = value")."""
    keys, section = {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            m = re.match(r"\[(\w+)\]", line)
            if m:
                section = m.group(1)
            m = re.match(r"[;#]?\s*(\w+) = (.*)", line)
            if m and section:
                keys[section + "." + m.group(1)] = m.group(2).strip()
    return keys


def need_tool(name, package):
    """The path of @name. Missing, it fails the test: tools/setup.sh
    installs @package (Debian), so a missing tool is a missing install
    step, not a reason to skip."""
    path = shutil.which(name)
    if path is None:
        pytest.fail("%s not found: tools/setup.sh installs it (Debian "
                    "package %s)" % (name, package))
    return path


def wait_until(cond, what, timeout=None, proc=None, interval=0.02):
    """Poll cond() until it returns a true value, and return it. Fails the
    test, naming @what, after @timeout seconds (DEADLINE), or as soon as
    @proc (a Popen) has exited. @what may be a function, called for the
    message: the state last seen, when the test fails."""
    end = time.monotonic() + (timeout or DEADLINE)
    while True:
        value = cond()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            err = proc.stderr.read()[-600:] if proc.stderr else ""
            pytest.fail("exited (%s) while waiting for %s: %s" % (
                proc.returncode, what() if callable(what) else what, err))
        if time.monotonic() > end:
            pytest.fail("still waiting for %s after %.0f s" % (
                what() if callable(what) else what, timeout or DEADLINE))
        time.sleep(interval)


def polling(interval=0.05, timeout=None):
    """The turns of a polling loop, @interval apart, for up to DEADLINE:
    the loop breaks once its state is reached, and the assertion after
    it fails if it never was."""
    end = time.monotonic() + (timeout or DEADLINE)
    while True:
        yield
        if time.monotonic() > end:
            return
        time.sleep(interval)


def query(prefix, cmd):
    """The reply to telemetry command @cmd of the DPDK process with
    --file-prefix @prefix, or None (not up, not answering yet). The
    client waits DEADLINE for an answer: a loaded machine is slow."""
    try:
        return dpdk_telemetry.query(prefix, cmd, timeout=DEADLINE)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def run_ended(prefix, proc=None):
    """Wait until every worker of the cuckooflow run @prefix has read all
    its input and made the end-of-run sweep (/cuckooflow/run): its
    counters are final. Returns /cuckooflow/stats then."""
    def ended():
        r = query(prefix, "/cuckooflow/run")
        return r is not None and r["workers"] > 0 and \
            r["end_swept"] == r["workers"]
    wait_until(ended, "the end of the replay (/cuckooflow/run)",
               proc=proc)
    return query(prefix, "/cuckooflow/stats")


def lookup(prefix, params, proc=None):
    """/cuckooflow/flow,@params on the cuckooflow run @prefix: the reply,
    asked again while it says a worker did not answer within the 2 s it
    waits (a loaded machine; a lookup changes nothing, docs/usage.md)."""
    def answered():
        r = query(prefix, "/cuckooflow/flow," + params)
        if r is None or re.search(r"did not answer|not answered yet",
                                  r.get("error", "")):
            return None
        return r
    return wait_until(answered, "/cuckooflow/flow," + params, proc=proc)


def flush(prefix, proc=None):
    """/cuckooflow/flush on the cuckooflow run @prefix, every worker's
    answer waited for: a worker that took the request but had not
    answered within the 2 s the reply waits (a loaded machine) flushes
    when it gets to it, counted in flushes (docs/usage.md); then the
    flows it removed are read from flows_flushed. Returns the reply, as
    if every worker had answered in time: {flushed, workers,
    in_progress} (and error, if one did not take it)."""
    before = wait_until(lambda: query(prefix, "/cuckooflow/stats"),
                        "the counters", proc=proc)
    r = wait_until(lambda: query(prefix, "/cuckooflow/flush"), "the flush",
                   proc=proc)
    if not r.get("in_progress"):
        return r
    want = before["flushes"] + r["workers"] + r["in_progress"]

    def served():
        s = query(prefix, "/cuckooflow/stats")
        return s if s and s["flushes"] >= want else None
    after = wait_until(served, "the late workers' flush (flushes)",
                       proc=proc)
    r = dict(r, flushed=after["flows_flushed"] - before["flows_flushed"],
             workers=r["workers"] + r["in_progress"], in_progress=0)
    if r["workers"] == (query(prefix, "/cuckooflow/run") or {}).get(
            "workers"):
        r.pop("error", None)
    return r


def stacks(pid):
    """Every thread's stack of process @pid (gdb, tools/setup.sh installs
    it), for the message of a test that found the process hung: what it
    waits for, before it is killed."""
    try:
        p = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx", "-ex",
                            "thread apply all bt 12"], capture_output=True,
                           text=True, timeout=DEADLINE)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "(no stacks: %r)" % e
    return "\n".join(l for l in p.stdout.splitlines()
                     if l.startswith(("#", "Thread")))


def stop(proc, timeout=None, sig=signal.SIGINT):
    """Signal @proc (SIGINT: the application's clean stop) and wait up to
    @timeout s (DEADLINE) for its exit; one that has not exited by then
    is killed, after every thread's stack is kept in proc.hung (and
    printed, for the failure's report). Returns its exit status."""
    proc.hung = ""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        proc.wait(timeout=timeout or DEADLINE)
    except subprocess.TimeoutExpired:
        proc.hung = "hung %d s after %s; its threads:\n%s\n" % (
            timeout or DEADLINE, signal.Signals(sig).name, stacks(proc.pid))
        print(proc.hung)
        proc.kill()
        proc.wait()
    return proc.returncode


def no_crash(rc, what="cuckooflow", log=""):
    """Fail the test if @what was killed by a signal (subprocess's
    negative return code): a crash is a failure whatever the test
    expected of the exit status. Returns @rc."""
    if rc is not None and rc < 0:
        pytest.fail("%s killed by %s: %s" % (
            what, signal.Signals(-rc).name, log.strip()[-400:]))
    return rc


def run_replay(app, lcores, prefix, vdevs, args, stats_json,
               timeout=None, ok_rc=(0,)):
    """cuckooflow on @lcores (no PCI, no hugepages, NO_HUGE_MB, telemetry
    prefix @prefix) with @vdevs, replayed to the end of its input
    (--clock pkt --exit-on-eof, 32-bit fingerprints, hash seed 7), plus
    @args; (rc, stdout + stderr, its @stats_json or None: an exit status
    not in @ok_rc)."""
    p = subprocess.run(
        [app, "--lcores", lcores, "--no-pci", "--no-huge", "-m", NO_HUGE_MB,
         "--log-level=lib.*:error", "--file-prefix=" + prefix] +
        ["--vdev=" + v for v in vdevs] +
        ["--", "--clock", "pkt", "--exit-on-eof", "--fp-bits", "32",
         "--hash-seed", "7", "--stats-json", stats_json] + list(args),
        capture_output=True, text=True, timeout=timeout or DEADLINE)
    no_crash(p.returncode, log=p.stdout + p.stderr)
    stats = None
    if p.returncode in ok_rc and os.path.exists(stats_json):
        with open(stats_json) as f:
            stats = json.load(f)
    return p.returncode, p.stdout + p.stderr, stats


def empty_pcap(path):
    """A pcap file with no packets (Ethernet)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    return path


def timed_pcap(path, frames, t0=1700000000.0, gap=0.001):
    """Write a capture (Ethernet) of @frames, in their order: scapy
    packets, @gap seconds apart from @t0, or (time, packet) pairs.
    Returns @path as a string."""
    from scapy.all import wrpcap
    pkts = []
    for k, fr in enumerate(frames):
        t, p = fr if isinstance(fr, tuple) else (t0 + k * gap, fr)
        p = p.copy()
        p.time = t
        pkts.append(p)
    wrpcap(str(path), pkts, linktype=1)
    return str(path)


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
    return query(prefix, "/cuckooflow/stats")


def wait_packets(prefix, want, proc, timeout=None):
    """Until /cuckooflow/stats counts @want packets (or more), or @proc
    exits, or DEADLINE; returns the last stats seen."""
    end = time.monotonic() + (timeout or DEADLINE)
    st = None
    while time.monotonic() < end and proc.poll() is None:
        st = stats(prefix) or st
        if st and st["packets"] >= want:
            return st
        time.sleep(0.02)
    return st


IP = shutil.which("ip") or "/usr/sbin/ip"


def veth_netns(ns, pairs):
    """Network namespace @ns (ip netns add), IPv6 off (before any
    interface: new ones inherit "default") and no IGMP reports for
    link-local groups, with a veth pair up for each (a, b) of @pairs: a
    quiet wire for a test's own frames. Deleted again if a step fails."""
    def ip(*args):
        p = subprocess.run([IP] + list(args), capture_output=True,
                           text=True, timeout=DEADLINE)
        if p.returncode != 0:
            raise RuntimeError("ip %s: rc %d: %s" % (
                " ".join(args), p.returncode, p.stderr.strip()))

    ip("netns", "add", ns)
    try:
        ip("netns", "exec", ns, "sysctl", "-qw",
           "net.ipv6.conf.all.disable_ipv6=1",
           "net.ipv6.conf.default.disable_ipv6=1",
           "net.ipv4.igmp_link_local_mcast_reports=0")
        for a, b in pairs:
            ip("-n", ns, "link", "add", a, "type", "veth", "peer", "name",
               b)
            for dev in (a, b):
                ip("-n", ns, "link", "set", dev, "up")
    except Exception:
        subprocess.run([IP, "netns", "del", ns], capture_output=True)
        raise


def netns_socket(ns, dev):
    """A raw AF_PACKET socket bound to interface @dev of network
    namespace @ns (ip netns add): frames sent on it leave @dev now, from
    this process, without a tool started per batch (a process start in
    the namespace took up to 1 s on a loaded machine, and the time a
    live test knows its packets to is the span from before the send to
    the count). Receives nothing (protocol 0)."""
    out = {}

    def make():
        # setns() moves the calling thread only: a thread of its own
        libc = ctypes.CDLL(None, use_errno=True)
        with open("/run/netns/" + ns) as f:
            if libc.setns(f.fileno(), 0x40000000) != 0:     # CLONE_NEWNET
                out["err"] = OSError(ctypes.get_errno(), "setns " + ns)
                return
        try:
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
            s.bind((dev, 0))
            out["sock"] = s
        except OSError as e:
            out["err"] = e
    t = threading.Thread(target=make)
    t.start()
    t.join()
    if "err" in out:
        raise out["err"]
    return out["sock"]


def send_frames(sock, frames):
    """Each of @frames (bytes) out of @sock (netns_socket()), in order;
    the monotonic time just before the first left."""
    t = time.monotonic()
    for fr in frames:
        sock.send(fr)
    return t


def links_up(prefix, ports, timeout=None, proc=None):
    """Wait (up to DEADLINE) until the ports of the DPDK process with
    --file-prefix @prefix are up, as its telemetry shows: memif and
    vhost-user links come up asynchronously once both sides have
    started. Returns whether they did (False at once if @proc, the
    process, has exited)."""
    end = time.monotonic() + (timeout or DEADLINE)
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            return False
        st = [query(prefix, "/ethdev/link_status,%d" % i) for i in ports]
        if all(x is not None and x.get("status") == "UP" for x in st):
            return True
        time.sleep(0.05)
    return False


class Testpmd:
    """dpdk-testpmd in interactive mode (-i in @argv), driven through its
    console: cmd() sends a command and returns what it printed up to the
    next prompt; port_stats() reads a port's counters, so that a test
    waits until testpmd has received what it should, rather than for a
    time. close() quits it and returns everything it printed."""

    __test__ = False  # not a pytest class
    PROMPT = "testpmd> "

    def __init__(self, argv):
        # its output through a terminal: line-buffered, as at a console
        # (into a pipe, stdio would hold the answers back)
        import pty
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                     stdout=slave, stderr=slave)
        os.close(slave)
        self.out = bytearray()
        self.lock = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self._until_prompt(0)

    def _read(self):
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: the terminal's other end closed
                chunk = b""
            with self.lock:
                if not chunk:
                    self.eof = True
                    self.lock.notify_all()
                    return
                self.out += chunk
                self.lock.notify_all()

    def _until(self, start, pattern):
        """What testpmd printed from @start until @pattern matched it
        (the match's end)."""
        end = time.monotonic() + DEADLINE
        with self.lock:
            while True:
                text = bytes(self.out[start:]).decode(errors="replace")
                m = re.search(pattern, text, re.S)
                if m is not None:
                    return text[:m.end()]
                if getattr(self, "eof", False):
                    raise OSError("testpmd exited: " + self.log()[-600:])
                if not self.lock.wait(max(0.0, end - time.monotonic())):
                    raise OSError("testpmd: no %r after %.0f s: %s" % (
                        pattern, DEADLINE, self.log()[-600:]))

    def _until_prompt(self, start):
        return self._until(start, re.escape(self.PROMPT))

    def log(self):
        return bytes(self.out).decode(errors="replace")

    def cmd(self, text, until=None):
        """Send @text; return its output up to @until (a regex), or up to
        the next prompt. (testpmd's prompt may come before the output of
        a command: a command whose output matters names its end.)"""
        with self.lock:
            start = len(self.out)
        self.proc.stdin.write((text + "\n").encode())
        self.proc.stdin.flush()
        if until is None:
            return self._until_prompt(start)
        return self._until(start, until)

    def stop(self):
        """stop forwarding; its statistics (up to "Done.")."""
        return self.cmd("stop", until=r"\nDone\.")

    def port_stats(self, port):
        """(RX-packets, RX-missed, RX-errors, TX-packets) of @port."""
        out = self.cmd("show port stats %d" % port,
                       until=r"NIC statistics for port %d\s.*?\n\s*#{20,}"
                       % port)
        def num(name):
            m = re.search(name + r":\s+(\d+)", out)
            if m is None:
                raise OSError("testpmd: no %s in: %s" % (name, out))
            return int(m.group(1))
        return (num("RX-packets"), num("RX-missed"), num("RX-errors"),
                num("TX-packets"))

    def wait_rx(self, port, want, what, more=None, proc=None):
        """Until @port has received @want packets (or more), or @proc
        (the other side's process) has exited. Failing, the message has
        every port's counters as last read, and @more(), if given (the
        other side's counters: where the packets stopped)."""
        last = {}

        def received():
            last[port] = self.port_stats(port)
            return last[port][0] >= want

        def seen():
            for p in range(self.nb_ports()):
                try:
                    last.setdefault(p, self.port_stats(p))
                except OSError as e:
                    last.setdefault(p, repr(e))
            return "testpmd port %d to receive %d packets (%s); testpmd's " \
                "(RX-packets, RX-missed, RX-errors, TX-packets) by port: " \
                "%s%s" % (port, want, what, last,
                          "; " + more() if more is not None else "")
        return wait_until(received, seen, proc=proc)

    def _vdevs(self):
        """Its --vdev devices, in port order (no PCI device: ports are
        the vdevs in the order given)."""
        return [a.split("=", 1)[1] for a in self.proc.args
                if a.startswith("--vdev=")]

    def nb_ports(self):
        return len(self._vdevs())

    def start_forwarding(self):
        """`start`, once no frame can be lost to its links' coming up.
        Its links (every port but its net_pcap ones: memif, virtio-user)
        are up on its own side, as its telemetry shows: the server side
        of a memif link (cuckooflow) is up before its client (testpmd),
        and testpmd's io forwarding drops what a link not yet up refuses.
        Then it forwards once with its captures held back (their rx
        queues stopped: testpmd skips them), which polls every link: a
        memif client's receive posts the buffers on the ring towards it,
        and until it has, a frame cuckooflow forwards finds no free slot
        and is dropped (tx_dropped). Then the captures go."""
        argv = self.proc.args
        prefix = [a.split("=", 1)[1] for a in argv
                  if a.startswith("--file-prefix=")][0]
        nq = ([int(a.split("=", 1)[1]) for a in argv
               if a.startswith("--rxq=")] or [1])[0]
        vdevs = self._vdevs()
        links = [p for p, v in enumerate(vdevs)
                 if not v.startswith("net_pcap")]
        held = ["port %d rxq %d" % (p, q) for p, v in enumerate(vdevs)
                if v.startswith("net_pcap") for q in range(nq)]
        if not links_up(prefix, links):
            raise OSError("testpmd: ports %s not up on its side after %.0f "
                          "s" % (links, DEADLINE))
        for q in held:
            self.cmd(q + " stop")
        self.cmd("start")
        polled = self.stop()
        m = re.search(r"Accumulated forward statistics.*?RX-packets:\s+(\d+)",
                      polled, re.S)
        if m is None or int(m.group(1)) != 0:
            raise OSError("testpmd: its captures were not held back: %s" %
                          polled[-600:])
        for q in held:
            self.cmd(q + " start")
        self.cmd("start")

    def close(self):
        """quit, and everything testpmd printed."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(b"quit\n")
                self.proc.stdin.flush()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=DEADLINE)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(timeout=DEADLINE)
        os.close(self.master)
        return self.log()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
            self.reader.join(timeout=DEADLINE)
            os.close(self.master)


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
    return [testpmd, "-l", "0,1", "--no-pci", "--no-huge", "-m", NO_HUGE_MB,
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


def wait_for(cond, what, timeout=None):
    wait_until(cond, what, timeout=timeout)


class nfcapd:
    """Debian's nfcapd on 127.0.0.1 and a free port, in a directory of
    @tmp_path, for a with block (nfdump is required: tools/setup.sh
    installs it): .port inside; .files, the flow files it wrote, after.
    On leaving, it waits until every datagram is read, then stops it.

    Two races of nfcapd 1.7.1 are waited out, by states:
    - its bookkeeping record is keyed by its directory's inode (ftok()),
      and a collector of another test run beside it (the other build
      tree's) can hold the same key: the second exits at once, "Another
      collector with pid N is already running". It is started again on
      a new directory (a new inode), until one runs.
    - it reads SIGTERM's flag only when a datagram or its rotation alarm
      (300 s) wakes its receive: a SIGTERM that lands while it handles
      the last datagram left it waiting past DEADLINE (CI). After the
      signal it is woken with an empty datagram, polling, until it
      exits."""

    def __init__(self, tmp_path):
        for tool in ("nfcapd", "nfdump"):
            need_tool(tool, "nfdump")
        self.tmp = str(tmp_path)
        self.port = free_udp_port()
        self.files = []
        self.tries = 0

    def _start(self):
        """nfcapd on a new directory: True once it is bound, False if it
        exited for another collector's record."""
        self.tries += 1
        self.dir = os.path.join(self.tmp, "flows" if self.tries == 1
                                else "flows%d" % self.tries)
        os.makedirs(self.dir)
        self.log = open(self.logpath, "w+")
        self.proc = subprocess.Popen(
            ["nfcapd", "-w", self.dir, "-b", "127.0.0.1", "-p",
             str(self.port)], stdout=self.log, stderr=subprocess.STDOUT)
        wait_for(lambda: self.proc.poll() is not None or
                 udp_row(self.port), "nfcapd to bind port %d" % self.port)
        if self.proc.poll() is None:
            return True
        self.log.close()
        text = open(self.logpath).read()
        assert "Another collector" in text, "nfcapd exited: " + text
        return False

    def __enter__(self):
        self.logpath = os.path.join(self.tmp, "nfcapd.log")
        for _ in polling(0.05):
            if self._start():
                return self
        raise AssertionError("nfcapd never ran (%d tries): %s" % (
            self.tries, open(self.logpath).read()))

    def __exit__(self, *exc):
        try:
            if exc[0] is None:
                # Every datagram read from the socket (rx_queue 0):
                # nfcapd handles the one it holds before it looks at
                # SIGTERM's flag, then writes its file and exits.
                wait_for(lambda: int(udp_row(self.port)[4].split(":")[1],
                                     16) == 0, "nfcapd to read")
        finally:
            self.proc.send_signal(signal.SIGTERM)
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                for _ in polling(0.1):
                    if self.proc.poll() is not None:
                        break
                    s.sendto(b"", ("127.0.0.1", self.port))
            if self.proc.poll() is None:
                where = stacks(self.proc.pid)
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("nfcapd still running %.0f s after "
                                     "SIGTERM; its threads:\n%s" % (
                                         DEADLINE, where))
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
    flags, input, first ms, last ms, bytes, packets, end reason, ICMP
    (type, code) or None) (raw: nfdump 1.7.1's %ter prints the
    milliseconds modulo 100; an ICMP flow has type.code, no ports)."""
    flows = []
    for path in files:
        out = subprocess.run(["nfdump", "-r", path, "-q", "-o", "raw"],
                             capture_output=True, text=True, timeout=DEADLINE,
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
                int(f["end reason"], 16),
                tuple(int(x) for x in f["ICMP"].split(".")) if "ICMP" in f
                else None))
    return flows


def sequence_failures(files):
    """nfdump -I's count of IPFIX sequence number gaps."""
    n = 0
    for path in files:
        out = subprocess.run(["nfdump", "-r", path, "-I"],
                             capture_output=True, text=True, timeout=DEADLINE,
                             check=True).stdout
        line = [x for x in out.splitlines()
                if x.startswith("Sequence failures:")]
        assert line, out
        n += int(line[0].split(":")[1])
    return n


RUNTIME_DIR = "/var/run/dpdk"


def _in_use(path):
    """Whether a DPDK process still owns the runtime directory @path: a
    primary process holds a write lock on its `config` file for its
    whole life (secondaries a read lock). A directory without one
    (--in-memory keeps only the telemetry socket there) counts as in use
    until it has not changed for half an hour."""
    config = os.path.join(path, "config")
    try:
        fd = os.open(config, os.O_RDWR)
    except FileNotFoundError:
        try:
            return time.time() - os.stat(path).st_mtime < 1800
        except FileNotFoundError:
            return False
    except OSError:
        return True
    try:
        import fcntl
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def sweep_runtime_dirs(prefix="cf", min_age=30):
    """Remove the EAL runtime directories (/var/run/dpdk/@prefix...) that
    no process owns any more, and return how many. The EAL leaves one
    behind per run, memseg lists included (a few MiB each with
    --no-huge); a test command starts about two thousand, and where
    /run is not a tmpfs they filled the disk. A directory younger than
    @min_age seconds is left alone: its process may not hold its lock
    yet."""
    removed = 0
    try:
        names = os.listdir(RUNTIME_DIR)
    except FileNotFoundError:
        return 0
    now = time.time()
    for name in names:
        if not name.startswith(prefix):
            continue
        path = os.path.join(RUNTIME_DIR, name)
        try:
            if now - os.stat(path).st_mtime < min_age:
                continue
        except FileNotFoundError:
            continue
        if not os.path.isdir(path) or _in_use(path):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed += 1
    return removed
