#!/usr/bin/python3
"""The examples of docs/usage.md and README.md, run as written, and the
memory figures of usage.md against the application's own.

usage: /usr/bin/python3 -m pytest tests/e2e/test_docs.py
           [--cuckooflow BIN] [--cuckooflow-filter BIN] [--pcaps DIR]

A fenced block whose info string is `sh` is a list of commands (a `\\`
ends a continued line, `#` starts a comment, `&&` separates two). An
HTML comment on the line before a block (blank lines between allowed)
says what the test does with it (docs/usage.md, Examples):

    <!-- doc-test: skip REASON -->   not run, and not a test (a reason
        that names a NIC: a test skipped for want of the hardware)
    <!-- doc-test: status N -->      run; each command must exit N
    <!-- doc-test: serve [stats N][; FILE = COUNTER]...[; peer first] -->
        long-running commands: those of a DPDK program are started in
        the background, in order, each cuckooflow answering telemetry
        before the next starts (the others run to their end); an
        interactive dpdk-testpmd (-i) is driven as usage.md says (`show
        port summary all` until its memif or virtio-user ports are up,
        `start`; once cuckooflow's COUNTER has every frame of each FILE
        that exists before the run (the captures sent) and testpmd has
        sent on all it received, `stop`); with `stats N`, until N
        --stats-period snapshots are printed; then SIGINT to each
        cuckooflow, `quit` to testpmd, in the order started (`peer
        first`: testpmd first); each must exit 0. No fixed waits.
        FILE = COUNTER: the capture FILE then has as many frames as
        cuckooflow's final COUNTER.
    <!-- doc-test: file NAME -->     the block is written to NAME
    <!-- doc-test: output [exact] --> what the run block before it
        prints: each line but "..." must be a line of its output, any
        number standing for a number (exact: as written, but spaces)
    <!-- doc-test: keys FILE -->     every "key": of the block is a key
        of the last JSON object in FILE (written by any example of the
        page; checked once all have run)

A `sh` block without a comment is run; each command must exit 0. An
unknown comment fails. A block with a DPDK program on hugepages (no
--no-huge) is skipped where fewer than 256 are free. What the test changes in a command, and nothing
else: `cuckooflow` and `cuckooflow-filter` are the binaries under test;
`build/`, `pcaps/`, `config/` and `tools/` are, through symbolic links,
their build directory and the tree's folders, in a fresh directory of
each page's own where the commands run (relative outputs land there);
each DPDK program (cuckooflow, dpdk-testpmd) gets a `--file-prefix` of
its own, in place of the example's, so that it meets no other DPDK
process of the machine. The files the examples take as the reader's own
are made in that directory: in.pcap (pcaps/mixed.pcap), empty.pcap (no
packets) and block.cf (usage.md's list.txt, compiled).
"""
import collections
import fcntl
import glob
import json
import os
import pty
import re
import select
import shlex
import shutil
import signal
import struct
import subprocess
import threading

import pytest

import dpdk_telemetry
from harness import NO_HUGE_MB
from harness import (DEADLINE, empty_pcap, hugepages_free, no_crash,
                     polling, wait_until)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DOCS = ("docs/usage.md", "docs/install.md", "docs/tools.md", "docs/api.md",
        "README.md")

# The examples run as written, with usage.md's own paths (the memif and
# vhost-user sockets under /run/cf, the outputs in each page's
# directory): they share them, so they run on one xdist worker, in order.
pytestmark = pytest.mark.xdist_group("docs")
# ... and one test run of the machine at a time (a lock beside them)
RUN_LOCK = "/run/cf.lock"
FENCE = re.compile(r"^```(\S*)\s*$")
MARK = re.compile(r"^<!--\s*doc-test:\s*(.*?)\s*-->\s*$")
DPDK = ("cuckooflow", "dpdk-testpmd")
runs = 0


class Skip(Exception):
    """An example this machine cannot run (no hugepages)."""


class Block:
    def __init__(self, doc, line, info, text, mark):
        self.doc, self.line, self.info = doc, line, info
        self.text, self.mark = text, mark
        self.name = "%s:%d" % (os.path.basename(doc), line)
        m = re.match(r"(\w*)(.*)", mark or "")
        self.kind = m.group(1) if mark is not None else \
            ("run" if info == "sh" else None)
        self.arg = m.group(2).strip()


def blocks(doc):
    """The fenced blocks of @doc (relative to the tree) with the
    doc-test comment before each, if any."""
    with open(os.path.join(ROOT, doc)) as f:
        lines = f.read().splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mark = MARK.match(lines[k]) if k >= 0 else None
        out.append(Block(doc, i + 1, m.group(1), "\n".join(lines[i + 1:j]) +
                         "\n", mark.group(1) if mark else None))
        i = j + 1
    return out


def acted(doc):
    """The blocks of @doc the test does something with."""
    return [b for b in blocks(doc) if b.kind is not None]


def commands(text):
    """Each command of a sh block: (environment, argv); `a && b` is two.
    Other shell syntax (pipes, redirections, `;`) is refused."""
    out = []
    for line in re.sub(r"\\\n", " ", text).splitlines():
        words = shlex.split(line, comments=True)
        bad = [w for w in words if w in ("|", "||", ";", "&", ">", ">>",
                                          "<", "2>", "2>&1")]
        if bad:
            raise AssertionError("%r: shell syntax the test does not run: "
                                 "%s" % (line, bad))
        while words:
            argv = words[:words.index("&&")] if "&&" in words else words
            words = words[len(argv) + 1:]
            env = {}
            while argv and re.match(r"^[A-Za-z_]\w*=", argv[0]):
                k, v = argv.pop(0).split("=", 1)
                env[k] = v
            if argv:
                out.append((env, argv))
    return out


def frames(path):
    """The records of a pcap file (microsecond or nanosecond, either
    byte order)."""
    with open(path, "rb") as f:
        data = f.read()
    magic = data[:4]
    order = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") \
        else ">"
    n, off = 0, 24
    while off + 16 <= len(data):
        caplen = struct.unpack(order + "I", data[off + 8:off + 12])[0]
        off += 16 + caplen
        n += 1
    return n


def final_counters(log):
    """The counters of cuckooflow's summary at exit, its "counters not 0"
    (those it leaves out are 0): name -> total; {} without one."""
    part = log.split("cuckooflow: counters not 0")
    if len(part) < 2:
        return {}
    listed = part[-1].split("cuckooflow: lost")[0]
    counters = collections.defaultdict(int)
    counters.update((m.group(1), int(m.group(2))) for m in re.finditer(
        r"(\w+) (\d+)", listed))
    return counters


def json_keys(obj):
    if isinstance(obj, dict):
        return set(obj) | {k for v in obj.values() for k in json_keys(v)}
    if isinstance(obj, list):
        return {k for v in obj for k in json_keys(v)}
    return set()


def line_pattern(line, exact):
    """A regular expression for a line of a shown output: spaces as any,
    with exact false each number as any number."""
    words = []
    for w in line.split():
        parts = re.split(r"(\d+(?:\.\d+)?)", w)
        words.append("".join(
            re.escape(p) if exact or i % 2 == 0 else r"[0-9]+(?:\.[0-9]+)?"
            for i, p in enumerate(parts)))
    return r"^\s*" + r"\s+".join(words) + r"\s*$"


class Page:
    """Runs the examples of one page in order, in a directory of its own;
    results[block name] = (outcome, message, output): outcome "ok",
    "fail" or "skip"."""

    def __init__(self, doc, work, progs):
        self.doc, self.work, self.progs = doc, work, progs
        self.results = {}
        self.last_run = None  # the output of the last run block
        self.deferred = []

    # -- one command

    def argv(self, argv):
        """@argv as run here, and its --file-prefix (DPDK programs)."""
        global runs
        prog = argv[0]
        if prog in self.progs:
            argv = [self.progs[prog]] + argv[1:]
        elif "/" not in prog:
            found = shutil.which(prog)
            if found is None:
                raise AssertionError("%s: not installed" % prog)
            argv = [found] + argv[1:]
        if prog not in DPDK:
            return argv, None
        if "--no-huge" not in argv and (
                hugepages_free() < 256 or
                not os.path.ismount("/dev/hugepages")):
            raise Skip("no hugepages reserved (HugePages_Free < 256; "
                       "tools/test.sh reserves them)")
        runs += 1
        prefix = "cfdocs%d_%d" % (os.getpid(), runs)
        eal = argv[1:argv.index("--")] if "--" in argv else argv[1:]
        rest = argv[1 + len(eal):]
        kept, skip = [], False
        for a in eal:
            if skip:
                skip = False
            elif a == "--file-prefix":
                skip = True
            elif not a.startswith("--file-prefix="):
                kept.append(a)
        return [argv[0], "--file-prefix=" + prefix] + kept + rest, prefix

    def env(self, extra):
        env = dict(os.environ)
        env.update(extra)
        return env

    # -- the kinds of block

    def run(self, b, status=0):
        out = []
        for env, argv in commands(b.text):
            cmd, _ = self.argv(argv)
            p = subprocess.run(cmd, cwd=self.work, env=self.env(env),
                               capture_output=True, text=True, timeout=DEADLINE)
            log = p.stdout + p.stderr
            no_crash(p.returncode, shlex.join(argv), log)
            out.append(log)
            if p.returncode != status:
                raise AssertionError("%s: exit %d, want %d: %s" % (
                    shlex.join(argv), p.returncode, status, log[-600:]))
        self.last_run = "\n".join(out)
        return self.last_run

    def serve(self, b):
        parts = [p.strip() for p in b.arg.split(";")]
        m = re.fullmatch(r"(?:stats (\d+))?", parts[0])
        if m is None:
            raise AssertionError("serve: want 'stats N' or nothing first, "
                                 "not %r" % parts[0])
        snapshots = int(m.group(1) or 0)
        checks = [tuple(x.strip() for x in p.split("=")) for p in parts[1:]
                  if "=" in p]
        peer_first = "peer first" in parts[1:]
        if len(checks) + peer_first != len(parts) - 1:
            raise AssertionError("serve: unknown words in %r" % b.arg)
        # the captures the run reads (there before it starts): cuckooflow
        # has its counter of each once it has handled them
        inputs = [(f, c) for f, c in checks
                  if os.path.exists(os.path.join(self.work, f))]
        procs = []  # (argv, Popen, prefix, tty)
        try:
            for env, argv in commands(b.text):
                cmd, prefix = self.argv(argv)
                if prefix is None:
                    p = subprocess.run(cmd, cwd=self.work, env=self.env(env),
                                       capture_output=True, text=True,
                                       timeout=DEADLINE)
                    if p.returncode != 0:
                        raise AssertionError("%s: exit %d: %s" % (
                            shlex.join(argv), p.returncode, p.stderr))
                    continue
                procs.append(self.start(argv, cmd, prefix, env))
                if argv[0] == "cuckooflow":  # up before its peer starts
                    self.wait_telemetry(procs[-1])
            cf = [x for x in procs if x[0][0] == "cuckooflow"]
            peers = [x for x in procs if x[0][0] == "dpdk-testpmd" and
                     "-i" in x[0]]
            if peers and not inputs:
                raise AssertionError("serve with a peer: name the capture "
                                     "it sends (FILE = COUNTER)")
            for x in peers:
                self.links_up(x)
                x[3].send("start\n")
            for f, counter in inputs:
                self.counter_reaches(cf, counter,
                                     frames(os.path.join(self.work, f)))
            for x in peers:
                self.peer_forwarded(x, cf)
            for x in cf:
                self.snapshots(x, snapshots)
            for x in peers:
                stopped = len(x[3].text())
                x[3].send("stop\n")
                wait_until(lambda: "Done." in x[3].text()[stopped:],
                           "testpmd to stop")
            # in the order started (cuckooflow first), or the peers first
            for x in sorted(procs, key=lambda x: peer_first and
                            x[0][0] == "cuckooflow"):
                if x[0][0] == "dpdk-testpmd":
                    x[3].send("quit\n")
                else:
                    x[1].send_signal(signal.SIGINT)
                x[1].wait(timeout=DEADLINE)
            logs = []
            for x in procs:
                log = x[3].text()
                logs.append(log)
                no_crash(x[1].returncode, shlex.join(x[0]), log)
                if x[1].returncode != 0:
                    raise AssertionError("%s: exit %d: %s" % (
                        shlex.join(x[0]), x[1].returncode, log[-600:]))
            self.last_run = "\n".join(logs)
            counters = final_counters(logs[procs.index(cf[0])]) if cf else {}
            for name, counter in checks:
                got = frames(os.path.join(self.work, name))
                if got != counters.get(counter):
                    raise AssertionError("%s: %d frames, cuckooflow's %s %s"
                                         % (name, got, counter,
                                            counters.get(counter)))
            return self.last_run
        finally:
            for x in procs:
                if x[1].poll() is None:
                    x[1].kill()
                    x[1].wait()
                for f in glob.glob("/dev/hugepages/%s*" % x[2]):
                    os.unlink(f)

    def start(self, argv, cmd, prefix, env):
        """A DPDK program in the background, its output through a
        terminal (so that testpmd's prompt answers line by line)."""
        master, slave = pty.openpty()
        p = subprocess.Popen(cmd, cwd=self.work, env=self.env(env),
                             stdin=subprocess.PIPE, stdout=slave,
                             stderr=slave, text=True)
        os.close(slave)
        return (argv, p, prefix, Tty(master, p))

    def wait_telemetry(self, x):
        for _ in polling(0.1):
            if x[1].poll() is not None:
                raise AssertionError("%s: exit %d: %s" % (
                    shlex.join(x[0]), x[1].returncode, x[3].text()[-600:]))
            try:
                if dpdk_telemetry.query(x[2], "/cuckooflow/stats", timeout=DEADLINE):
                    return
            except (OSError, ValueError):
                pass
        raise AssertionError("%s: no telemetry after %.0f s" % (
            x[0][0], DEADLINE))

    def links_up(self, x):
        """testpmd: `show port summary all` until its memif and
        virtio-user ports say up (usage.md)."""
        for _ in polling(0.2):
            x[3].send("show port summary all\n")
            text = x[3].text()
            if "Number of available ports" not in text:
                continue
            last = text.rsplit("Number of available ports", 1)[1]
            links = [ln for ln in last.splitlines()
                     if re.search(r"net_(memif|virtio_user)", ln)]
            if links and all(re.search(r"\bup\b", ln) for ln in links):
                return
        raise AssertionError("testpmd: links not up after %.0f s: %s" % (
            DEADLINE, x[3].text()[:3000]))

    def counter_reaches(self, cf, counter, want):
        """Until cuckooflow's @counter (/cuckooflow/stats) is @want."""
        def reached():
            try:
                return all(dpdk_telemetry.query(x[2], "/cuckooflow/stats",
                                                timeout=DEADLINE)[counter]
                           >= want for x in cf)
            except (OSError, ValueError, TypeError, KeyError):
                return False
        wait_until(reached, "cuckooflow's %s to reach %d" % (counter, want))

    def peer_forwarded(self, x, cf):
        """Until testpmd's ports have sent on (TX) all that they received
        (RX), among them all cuckooflow forwarded (its tx_packets): what
        is in flight has landed in its captures."""
        def stats():
            start = len(x[3].text())
            x[3].send("show port stats all\n")
            last = sum(1 for a in x[0] if a.startswith("--vdev")) - 1

            def shown():
                return re.search(r"NIC statistics for port %d\b.*?Tx-bps"
                                 r"[^\n]*\n\s*#{20,}" % last,
                                 x[3].text()[start:], re.S)
            try:
                wait_until(shown, "testpmd's port statistics")
            except BaseException:
                print(x[3].text()[start:][-1500:])
                raise
            text = x[3].text()[start:]
            rx = sum(int(n) for n in re.findall(r"RX-packets: +(\d+)",
                                                text))
            tx = sum(int(n) for n in re.findall(r"TX-packets: +(\d+)",
                                                text))
            return rx, tx

        def landed():
            sent = sum(dpdk_telemetry.query(c[2], "/cuckooflow/stats",
                                            timeout=DEADLINE)["tx_packets"]
                       for c in cf)
            rx, tx = stats()
            # every packet testpmd received went out again; cuckooflow's
            # are among them, and testpmd's own capture's
            return rx == tx and rx >= sent
        wait_until(landed, "testpmd to forward what it received")

    def snapshots(self, x, n):
        """Until cuckooflow has printed @n --stats-period snapshots."""
        wait_until(lambda: x[3].text().count("cuckooflow: stats ") >= n,
                   "%d snapshots" % n)

    def output(self, b, exact):
        if self.last_run is None:
            raise AssertionError("no run block before this output")
        missing = [ln for ln in b.text.splitlines()
                   if ln.strip() and ln.strip() != "..." and
                   not re.search(line_pattern(ln, exact), self.last_run,
                                 re.M)]
        if missing:
            raise AssertionError("not printed: %r\noutput: %s" % (
                missing, self.last_run[-1500:]))

    def keys(self, b):
        path = os.path.join(self.work, b.arg)
        with open(path) as f:
            obj = json.loads(f.read().splitlines()[-1])
        want = set(re.findall(r'"(\w+)"\s*:', b.text))
        missing = sorted(want - json_keys(obj))
        if not want or missing:
            raise AssertionError("%s: no keys %s (has %s)" % (
                b.arg, missing, sorted(json_keys(obj))))

    # -- the page

    def run_all(self):
        for b in acted(self.doc):
            try:
                if b.kind == "skip":
                    self.results[b.name] = ("skip", b.arg or "skip", "")
                    continue
                if b.kind == "keys":
                    self.deferred.append(b)
                    continue
                if b.kind == "file":
                    with open(os.path.join(self.work, b.arg), "w") as f:
                        f.write(b.text)
                elif b.kind == "run" and b.info == "sh":
                    self.run(b)
                elif b.kind == "status" and b.info == "sh":
                    self.run(b, int(b.arg))
                elif b.kind == "serve" and b.info == "sh":
                    self.serve(b)
                elif b.kind == "output":
                    self.output(b, b.arg == "exact")
                else:
                    raise AssertionError("unknown doc-test comment %r "
                                         "(or not on a sh block)" % b.mark)
                self.results[b.name] = ("ok", "", "")
            except Skip as e:
                self.results[b.name] = ("skip", str(e), "")
            except (Exception, pytest.fail.Exception) as e:
                self.results[b.name] = ("fail", "%s: %s" % (
                    type(e).__name__, e), "")
        for b in self.deferred:
            try:
                self.keys(b)
                self.results[b.name] = ("ok", "", "")
            except (Exception, pytest.fail.Exception) as e:
                self.results[b.name] = ("fail", "%s: %s" % (
                    type(e).__name__, e), "")


class Tty:
    """What a program writes to its terminal, read as it comes; commands
    to its stdin."""

    def __init__(self, fd, proc):
        self.fd, self.proc, self.buf = fd, proc, []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        while True:
            r, _, _ = select.select([self.fd], [], [], 0.2)
            if not r:
                if self.proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                break
            if not data:
                break
            with self.lock:
                self.buf.append(data.decode(errors="replace"))
        os.close(self.fd)

    def send(self, line):
        self.proc.stdin.write(line)
        self.proc.stdin.flush()

    def text(self):
        if self.proc.poll() is not None:
            self.thread.join(timeout=DEADLINE)
        with self.lock:
            return "".join(self.buf).replace("\r\n", "\n")


@pytest.fixture(scope="module")
def pages(cuckooflow, cuckooflow_filter, pcaps, tmp_path_factory):
    """Every page's examples, run once: doc -> Page."""
    progs = {"cuckooflow": cuckooflow, "cuckooflow-filter": cuckooflow_filter}
    build = os.path.dirname(os.path.dirname(cuckooflow))
    out = {}
    # /run/cf is the machine's: another test run on it (another
    # worktree's, on a shared machine) waits here until these are done
    # (flock: released with the file, also when this process dies)
    os.makedirs(os.path.dirname(RUN_LOCK), exist_ok=True)
    lock = open(RUN_LOCK, "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        run_pages(progs, build, pcaps, tmp_path_factory, cuckooflow_filter,
                  out)
    finally:
        lock.close()
    return out


def run_pages(progs, build, pcaps, tmp_path_factory, cuckooflow_filter,
              out):
    for doc in DOCS:
        work = str(tmp_path_factory.mktemp("docs"))
        for name, target in (("build", build), ("pcaps", pcaps),
                             ("config", os.path.join(ROOT, "config")),
                             ("tools", os.path.join(ROOT, "tools"))):
            os.symlink(target, os.path.join(work, name))
        shutil.copy(os.path.join(pcaps, "mixed.pcap"),
                    os.path.join(work, "in.pcap"))
        empty_pcap(os.path.join(work, "empty.pcap"))
        lists = [b for b in blocks("docs/usage.md")
                 if b.kind == "file" and b.arg == "list.txt"]
        assert lists, "usage.md has no list.txt block"
        with open(os.path.join(work, "block.txt"), "w") as f:
            f.write(lists[0].text)
        subprocess.run([cuckooflow_filter, "build", "block.txt", "-o",
                        "block.cf"], cwd=work, check=True,
                       capture_output=True)
        page = Page(doc, work, progs)
        page.run_all()
        out[doc] = page


def hardware(b):
    """A block that needs hardware this machine may lack (a NIC)."""
    return b.kind == "skip" and "NIC" in b.arg


@pytest.mark.parametrize("doc,name", [
    pytest.param(doc, b.name, id="%s %s" % (b.name, b.kind))
    for doc in DOCS for b in acted(doc)
    # a block not run for another reason (a schema, an install into
    # /usr, minutes) is no test: test_every_command_block_is_run_or_
    # skipped checks that it gives its reason
    if b.kind != "skip" or hardware(b)])
def test_example(pages, doc, name):
    """One example of a page, as its doc-test comment says."""
    outcome, message, _ = pages[doc].results[name]
    if outcome == "skip":
        pytest.skip("hardware: " + message)
    assert outcome == "ok", message


def test_every_command_block_is_run_or_skipped():
    """usage.md runs most of its sh blocks: at least the memif pair, the
    periodic snapshot and a replay; every doc-test comment is one the
    test knows."""
    kinds = [b.kind for b in acted("docs/usage.md")]
    assert kinds.count("serve") >= 3 and kinds.count("run") >= 3 and \
        "output" in kinds and "keys" in kinds, kinds
    for doc in DOCS:
        bad = [b.name for b in acted(doc) if b.kind not in (
            "run", "status", "serve", "skip", "file", "output", "keys")]
        assert not bad, bad
        # a block not run says why, in words
        mute = [b.name for b in acted(doc)
                if b.kind == "skip" and len(b.arg.split()) < 2]
        assert not mute, "skipped without a reason: %s" % mute
        for b in acted(doc):
            if b.kind == "skip":
                print("not run: %s: %s" % (b.name, b.arg))


def usage_section(title):
    """A section of usage.md, its white space folded."""
    with open(os.path.join(ROOT, "docs/usage.md")) as f:
        text = f.read()
    return re.sub(r"\s+", " ", text.split("\n### %s\n" % title, 1)[1]
                  .split("\n### ", 1)[0])


def figure(pattern, text):
    m = re.search(pattern, text)
    assert m, "usage.md's Memory section no longer says %r: update " \
        "test_memory_figures with it" % pattern
    return m.groups()


def app_run(cuckooflow, pcaps, args, eal=(), serve=None):
    """cuckooflow on mixed.pcap: (exit status, output), or with @serve a
    function called with its --file-prefix while it runs (its result
    instead of the output)."""
    global runs
    runs += 1
    prefix = "cfdocs%d_%d" % (os.getpid(), runs)
    cmd = [cuckooflow, "--file-prefix=" + prefix, "--no-pci",
           "--log-level=lib.*:error"] + list(eal) + [
        "--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=/dev/null" %
        os.path.join(pcaps, "mixed.pcap"), "--"] + list(args)
    if serve is None:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=DEADLINE)
        return no_crash(p.returncode, log=p.stderr), p.stdout + p.stderr
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    try:
        for _ in polling(0.1):
            try:
                if dpdk_telemetry.query(prefix, "/cuckooflow/stats", timeout=DEADLINE):
                    break
            except (OSError, ValueError):
                continue
        got = serve(prefix)
        p.send_signal(signal.SIGINT)
        p.wait(timeout=DEADLINE)
        return no_crash(p.returncode, log=p.stderr.read()), got
    finally:
        if p.poll() is None:
            p.kill()


def test_memory_figures(cuckooflow, pcaps, tmp_path):
    """usage.md's Memory figures are the application's: the mbuf pool
    of 1 port, 1 queue and 2 lcores (telemetry's /mempool/info), bytes
    per slot and the MiB of a table of the default 1 M flows with and
    without --exact-size (--stats-json's "bytes"), their bits per flow
    (the counters' schema), and -m 512 enough for 16 M flows on one
    worker."""
    text = usage_section("Memory")
    k_mbufs, mib_pool = figure(
        r"with 1 port, 1 queue and 2 lcores, ~([\d.]+) k mbufs \(about "
        r"(\d+) MiB", text)
    (per_slot,) = figure(r"Each flow table has ([\d.]+) bytes per slot "
                         r"with the default", text)
    flows, mib, mib_exact = figure(
        r"the default 1 M flows \((\d+)\) take ([\d.]+) MiB per worker "
        r"lcore, ([\d.]+) MiB with `--exact-size`", text)
    mem, big, mib_big = figure(r"`-m (\d+)` is plenty up to (\d+) M flows "
                               r"on one worker \((\d+) MiB of table\)", text)
    milli, milli_exact = figure(
        r"at any load: (\d+) \(\d+ bits\) for the default 1 M flows, "
        r"(\d+) with `--exact-size`", usage_section("The counters' schema"))
    eal = ["-l", "0,1", "--no-huge", "-m", NO_HUGE_MB]

    def pool(prefix):
        name = dpdk_telemetry.query(prefix, "/mempool/list", timeout=DEADLINE)[0]
        return dpdk_telemetry.query(prefix, "/mempool/info," + name, timeout=DEADLINE)

    rc, info = app_run(cuckooflow, pcaps, [], eal, serve=pool)
    assert rc == 0
    size = info["size"]
    bytes_ = size * (info["header_size"] + info["elt_size"] +
                     info["trailer_size"])
    assert "%.1f" % (size / 1000) == k_mbufs and \
        round(bytes_ / 2 ** 20) == int(mib_pool), (size, bytes_ / 2 ** 20)

    for args, want, bits in (([], mib, milli),
                             (["--exact-size"], mib_exact, milli_exact)):
        out = str(tmp_path / "mem.json")
        rc, log = app_run(cuckooflow, pcaps, ["--clock", "pkt",
                                              "--exit-on-eof",
                                              "--stats-json", out] + args,
                          eal)
        assert rc == 0, log[-400:]
        with open(out) as f:
            table = json.load(f)["table"]["lcore_1"]
        assert table["capacity"] == int(flows), table
        assert "%.1f" % (table["bytes"] / 2 ** 20) == want, (args, table)
        assert abs(table["bytes"] / table["slots"] - float(per_slot)) < \
            0.01, (args, table)
        assert table["bits_per_flow_milli"] == int(bits), (args, table)

    out = str(tmp_path / "big.json")
    rc, log = app_run(cuckooflow, pcaps, [
        "--clock", "pkt", "--exit-on-eof", "--flows",
        str(int(big) << 20), "--stats-json", out],
        ["-l", "0,1", "--no-huge", "-m", mem])
    assert rc == 0, log[-400:]
    with open(out) as f:
        table = json.load(f)["table"]["lcore_1"]
    assert round(table["bytes"] / 2 ** 20) == int(mib_big), table
