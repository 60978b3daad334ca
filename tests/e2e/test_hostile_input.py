#!/usr/bin/python3
"""Hostile input, round 3 (issue 24): what a capture or an output path
may do to cuckooflow.

- Frames over 65,535 bytes: net_pcap's jumbo receive takes a record's
  length as 16-bit, so a 70,000-byte record arrives as a 4,464-byte
  mbuf chain with pkt_len 70,000; the worker read past the chain's end
  (SIGSEGV). Now such a frame is dropped unread, counted in
  rx_len_mismatch: pcap and pcapng, 1 and 2 workers, monitor and forward
  (the output frames checked), through a small pool.
- A refused link type without a libpcap name is named by its number.
- Output paths that could block the main lcore: a FIFO with no reader
  at start, a reader that never reads at SIGINT, --events rotated to a
  FIFO, --stats-json a FIFO without reader at exit. Each test waits for
  states with a generous deadline: the failure mode is a hang.
- --ipfix ports out of 1..65535 refused; IPFIX losses said at exit.
- A full disk (a small tmpfs mounted by the test) leaves no part of a
  JSON line, nor of a pcapng block.

usage: [HOSTILE_HANG_S=SECONDS] /usr/bin/python3 -m pytest
           tests/e2e/test_hostile_input.py [--cuckooflow BIN] [--pcaps PCAPS]
Every run has its own --file-prefix and files under pytest's tmp_path.
"""
import json
import os
import re
import struct
import subprocess

import pytest

import dpdk_telemetry
from harness import NO_HUGE_MB
from harness import DEADLINE, free_udp_port, no_crash, polling, stop

APP = PCAPS = None
runs = 0
# One worker, or two on one core (as test_app.py runs them).
WORKER_LCORES = {1: "0@0,1@1", 2: "0@0,1@1,2@1"}
# Long enough for the slowest machine; a hang is the failure mode
# ($HOSTILE_HANG_S: shorter, to see an old binary fail sooner).
HANG = float(os.environ.get("HOSTILE_HANG_S", DEADLINE))


@pytest.fixture(scope="module", autouse=True)
def _paths(cuckooflow, pcaps):
    global APP, PCAPS
    APP, PCAPS = cuckooflow, pcaps


def prefix():
    global runs
    runs += 1
    return "cfhostile%d_%d" % (os.getpid(), runs)


def eal(nb, pfx, vdevs):
    return [APP, "--lcores", WORKER_LCORES[nb], "--no-pci", "--no-huge",
            "-m", NO_HUGE_MB, "--log-level=lib.*:error", "--file-prefix=" + pfx] + \
        ["--vdev=" + v for v in vdevs]


def run(nb, vdevs, args, timeout=HANG):
    """cuckooflow to its end; (rc, stdout + stderr). A run that does not
    end within @timeout fails the test as a hang."""
    cmd = eal(nb, prefix(), vdevs) + ["--"] + list(args)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail("hung: no exit within %d s: %s" % (timeout, " ".join(
            cmd)) + ((e.stderr or b"")[-300:].decode(errors="replace")
                     if isinstance(e.stderr, bytes) else ""))
    log = p.stdout + p.stderr
    return no_crash(p.returncode, log=log), log


class Started:
    """cuckooflow left running, its output in files of @tmp; stopped (and
    waited for) by stop(), killed at the end of the test if still
    running."""

    def __init__(self, tmp, nb, vdevs, args):
        self.prefix = prefix()
        self.out = open(os.path.join(tmp, self.prefix + ".log"), "w+")
        self.proc = subprocess.Popen(
            eal(nb, self.prefix, vdevs) + ["--"] + list(args),
            stdout=self.out, stderr=subprocess.STDOUT)

    def log(self):
        self.out.flush()
        with open(self.out.name) as f:
            return f.read()

    def events(self):
        """/cuckooflow/events, or None (not answering yet, or gone)."""
        try:
            return dpdk_telemetry.query(self.prefix, "/cuckooflow/events", timeout=DEADLINE)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def wait(self, cond, what):
        """Until cond() holds; fails if the process exits first, or
        after DEADLINE (the state never came)."""
        for _ in polling(0.05):
            if cond():
                return
            assert self.proc.poll() is None, "exited (%s) before %s: %s" % (
                self.proc.returncode, what, self.log()[-600:])
        assert cond(), "never %s in %.0f s: %s" % (
            what, DEADLINE, self.log()[-600:])

    def stop(self):
        """SIGINT, then its exit status; a process that does not exit
        within HANG s fails the test as a hang, with its threads'
        stacks (harness.stop())."""
        rc = stop(self.proc, HANG)
        if self.proc.hung:
            pytest.fail("%s%s" % (self.proc.hung, self.log()[-600:]))
        return no_crash(rc, log=self.log())

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.out.close()


@pytest.fixture
def started(tmp_path):
    """started(nb, vdevs, args): a Started, cleaned up after the test."""
    made = []

    def start(nb, vdevs, args):
        made.append(Started(str(tmp_path), nb, vdevs, args))
        return made[-1]
    yield start
    for s in made:
        s.close()


def total_events(ev):
    return ev["events_queued"] + ev["events_dropped"] if ev else 0


# ------------------------------------------------------------- captures

MAC = bytes.fromhex("020000000002" "020000000001")


def udp_frame(size, n):
    """An Ethernet/IPv4/UDP frame of @size bytes, flow @n (its source
    address and port): each frame of a capture different."""
    ip_len = min(size - 14, 65535)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, n & 0xffff, 0, 64,
                     17, 0, bytes((10, 9, (n >> 8) & 255, n & 255)),
                     bytes((192, 0, 2, 1)))
    udp = struct.pack("!HHHH", 1024 + n % 50000, 53, min(size - 34, 65535),
                      0)
    head = MAC + b"\x08\x00" + ip + udp
    return head + bytes((n + i) & 255 for i in range(size - len(head)))


def write_pcap(path, frames, linktype=1, snaplen=262144):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, snaplen,
                            linktype))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1700000000, i, len(fr), len(fr)) +
                    fr)
    return path


def write_pcapng(path, frames):
    """Section header, one Ethernet interface (snaplen 0: none), an
    Enhanced Packet Block a frame."""
    def block(btype, body):
        body += b"\0" * (-len(body) % 4)
        n = 12 + len(body)
        return struct.pack("<II", btype, n) + body + struct.pack("<I", n)
    with open(path, "wb") as f:
        f.write(block(0x0a0d0d0a, struct.pack("<IHHq", 0x1a2b3c4d, 1, 0,
                                              -1)))
        f.write(block(1, struct.pack("<HHI", 1, 0, 0)))
        for i, fr in enumerate(frames):
            ts = (1700000000 * 10**6 + i)
            f.write(block(6, struct.pack("<IIIII", 0, ts >> 32,
                                         ts & 0xffffffff, len(fr), len(fr))
                          + fr))
    return path


def pcap_frames(path):
    """The frames of a pcap written by net_pcap (tx_pcap)."""
    frames = []
    with open(path, "rb") as f:
        data = f.read()
    off = 24
    while off + 16 <= len(data):
        _, _, caplen, _ = struct.unpack_from("<IIII", data, off)
        frames.append(data[off + 16: off + 16 + caplen])
        off += 16 + caplen
    return frames


def stats_of(path):
    with open(path) as f:
        return json.load(f)["total"]


# ------------------------------------------ frames over 65,535 bytes

# 70,000: held as 4,464 bytes; 131,100: as 65,564 (16-bit wrap, then
# the first segment's tailroom), both with pkt_len the whole length
CUT = (70000, 131100)


def big_capture(tmp, name, fmt, sizes, first=0):
    """A capture of short frames with the big ones of @sizes among them:
    (path, its frames, the big frames)."""
    frames, big = [], []
    n = first
    for size in sizes:
        for _ in range(3):
            frames.append(udp_frame(60 + n % 40, n))
            n += 1
        frames.append(udp_frame(size, n))
        big.append(frames[-1])
        n += 1
    frames.append(udp_frame(64, n))
    path = os.path.join(tmp, "%s.%s" % (name, fmt))
    (write_pcap if fmt == "pcap" else write_pcapng)(path, frames)
    return path, frames, big


@pytest.mark.parametrize("fmt", ("pcap", "pcapng"))
@pytest.mark.parametrize("nb", (1, 2))
def test_big_frames_dropped_counted(tmp_path, nb, fmt):
    """Frames of 70,000 and 131,100 bytes (held cut in their chains) and
    one of 65,600 (delivered whole) among short ones, one capture a
    worker: the cut ones are dropped unread, counted in rx_len_mismatch,
    the run exits 3 (packets lost) saying so; everything else is
    tracked, and the check
    named the first big record (file, record number, length). (Before:
    SIGSEGV in rte_pktmbuf_read() from the worker's header copy.)"""
    caps = [big_capture(str(tmp_path), "big%d" % q, fmt, CUT + (65600,),
                        first=100 * q) for q in range(nb)]
    out = os.path.join(str(tmp_path), "stats.json")
    rc, log = run(nb, ["net_pcap0,%s,tx_pcap=/dev/null" % ",".join(
        "rx_pcap=" + c[0] for c in caps)], [
        "--clock", "pkt", "--exit-on-eof", "--stats-json", out])
    assert rc == 3 and "lost %d packets: rx_len_mismatch: frames dropped " \
        "unread" % (2 * nb) in log, log[-800:]
    t = stats_of(out)
    frames = sum(len(c[1]) for c in caps)
    assert t["rx_len_mismatch"] == 2 * nb and t["rx_packets"] == frames \
        and t["packets"] == frames - 2 * nb and t["rx_errors"] == 0 and \
        t["flows_new"] == frames - 2 * nb, t
    for path, _, _ in caps:
        assert re.search(r"%s: record 4 is 70000 bytes \(3 records over "
                         "65535\\)" % re.escape(path), log), log[-800:]


@pytest.mark.parametrize("nb", (1, 2))
def test_big_frames_forward(tmp_path, nb):
    """Forward mode, each worker on its own tx queue (a tx_pcap each):
    every frame but the cut ones is sent, byte for byte; the cut ones
    are neither sent nor read. (Before: SIGSEGV.)"""
    caps = [big_capture(str(tmp_path), "fwd%d" % q, "pcap", CUT,
                        first=100 * q) for q in range(nb)]
    tx = [os.path.join(str(tmp_path), "tx%d.pcap" % q) for q in range(nb)]
    out = os.path.join(str(tmp_path), "stats.json")
    rc, log = run(nb, ["net_pcap0,%s,%s" % (
        ",".join("rx_pcap=" + c[0] for c in caps),
        ",".join("tx_pcap=" + t for t in tx))], [
        "--mode", "forward", "--clock", "pkt", "--exit-on-eof",
        "--stats-json", out])
    assert rc == 3, log[-800:]
    want = sorted(f for c in caps for f in c[1] if f not in c[2])
    got = sorted(f for t in tx for f in pcap_frames(t))
    assert got == want, "%d frames sent, %d expected" % (len(got), len(want))
    t = stats_of(out)
    assert t["tx_packets"] == len(want) and \
        t["rx_len_mismatch"] == 2 * nb and \
        t["rx_packets"] == t["tx_packets"] + t["tx_dropped"] + \
        t["rx_len_mismatch"], t


@pytest.mark.parametrize("nb", (1, 2))
def test_big_frames_small_pool(tmp_path, nb):
    """The big frames through a pool of 96 mbufs (a 131,100-byte record
    takes 33 segments of it): every record is tracked, dropped cut, or
    counted lost by the port; no read past a chain, and the replay exits
    3 (packets lost). (Before: SIGSEGV.)"""
    caps = [big_capture(str(tmp_path), "pool%d" % q, "pcap", CUT * 4,
                        first=100 * q) for q in range(nb)]
    out = os.path.join(str(tmp_path), "stats.json")
    rc, log = run(nb, ["net_pcap0,%s,tx_pcap=/dev/null" % ",".join(
        "rx_pcap=" + c[0] for c in caps)], [
        "--mbufs", "96", "--burst", "8", "--clock", "pkt", "--exit-on-eof",
        "--stats-json", out])
    assert rc == 3, log[-800:]
    t = stats_of(out)
    records = sum(len(c[1]) for c in caps)
    assert t["packets"] + t["rx_len_mismatch"] + t["rx_nombuf"] + \
        t["rx_errors"] == records and t["rx_len_mismatch"] > 0, t


# ------------------------------------------------------------ link types

@pytest.mark.parametrize("linktype", (149, 160, 0x30000095))
def test_link_type_without_name_is_a_number(tmp_path, linktype):
    """A capture of a link type libpcap has no name for is refused with
    its number. (Before: 'link type (null)'.)"""
    path = write_pcap(os.path.join(str(tmp_path), "lt.pcap"),
                      [udp_frame(60, 1)], linktype=linktype)
    rc, log = run(1, ["net_pcap0,rx_pcap=%s,tx_pcap=/dev/null" % path],
                  ["--exit-on-eof"])
    # libpcap keeps the low 26 bits (the others are FCS flags)
    assert rc != 0 and "link type %d;" % (linktype & 0x3ffffff) in log and \
        "(null)" not in log, log[-400:]


# --------------------------------------------- outputs that could block

def mixed_vdev(infinite=False):
    return "net_pcap0,rx_pcap=%s,tx_pcap=/dev/null%s" % (
        os.path.join(PCAPS, "mixed.pcap"), ",infinite_rx=1" if infinite
        else "")


OUTPUTS = ("--events", "--new-flow-pcap", "--stats-json-period",
           "--stats-json")


@pytest.mark.parametrize("opt", OUTPUTS)
def test_fifo_without_reader(tmp_path, opt):
    """An output naming a FIFO that nobody reads is refused, naming it,
    never waited for: at start (--stats-json: at exit, where it is
    written). (Before: open() waited for a reader, for ever.)"""
    fifo = os.path.join(str(tmp_path), "out.fifo")
    os.mkfifo(fifo)
    extra = ["--stats-period", "1"] if opt == "--stats-json-period" else []
    rc, log = run(1, [mixed_vdev()], ["--clock", "pkt", "--exit-on-eof",
                                      opt, fifo] + extra)
    assert rc == 1 and "%s: is a FIFO with no reader" % fifo in log, \
        log[-400:]
    if opt == "--stats-json":
        # the run itself went to its end
        assert "flows_new" in log, log[-400:]


@pytest.mark.parametrize("opt", OUTPUTS)
def test_device_refused(opt):
    """An output naming a device (/dev/null) is refused at start, named:
    a regular file or a FIFO only. (Before: taken.)"""
    extra = ["--stats-period", "1"] if opt == "--stats-json-period" else []
    rc, log = run(1, [mixed_vdev()], ["--clock", "pkt", "--exit-on-eof",
                                      opt, "/dev/null"] + extra)
    assert rc == 1 and "/dev/null: is a character device, not a regular " \
        "file or FIFO" in log and "flows_new" not in log, log[-400:]


@pytest.mark.parametrize("opt", ("--events", "--new-flow-pcap"))
def test_fifo_reader_never_reads_sigint(tmp_path, started, opt):
    """A FIFO whose reader opened it and never reads: the writes fill
    the pipe, then the output's buffer, and records are dropped,
    counted; SIGINT ends the run at once, exit 0 (a live run), the loss
    said. (Before: the main lcore blocked in write() and SIGINT did
    nothing.)"""
    fifo = os.path.join(str(tmp_path), "out.fifo")
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        app = started(1, [mixed_vdev(infinite=True)], [opt, fifo])
        # far more events than a pipe and 1 MiB hold
        app.wait(lambda: total_events(app.events()) > 100000,
                 "100 000 events")
        rc = app.stop()
        log = app.log()
    finally:
        os.close(reader)
    assert rc == 0 and re.search(r"lost \d+ records: %s: %s \w+ not written "
                                 r"\(write errors, or a FIFO's reader "
                                 r"behind\)" % (
                                     {"--events": "json_lines_lost",
                                      "--new-flow-pcap": "pcapng_lost"}[opt],
                                     opt), log), log[-600:]


def test_stats_json_fifo_without_reader_after_sigint(tmp_path, started):
    """--stats-json naming a FIFO without reader, a run stopped by
    SIGINT: the counters are refused at once, exit 1. (Before: the exit
    waited in open() for a reader, and a second SIGINT did nothing.)"""
    fifo = os.path.join(str(tmp_path), "stats.fifo")
    os.mkfifo(fifo)
    app = started(1, [mixed_vdev(infinite=True)], ["--stats-json", fifo])
    app.wait(lambda: stats_answer(app), "packets counted")
    rc = app.stop()
    assert rc == 1 and "--stats-json %s: is a FIFO with no reader" % fifo \
        in app.log(), app.log()[-400:]


def stats_answer(app):
    try:
        s = dpdk_telemetry.query(app.prefix, "/cuckooflow/stats", timeout=DEADLINE)
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return bool(s) and s["packets"] > 0


def json_lines(path):
    """Every line of @path, parsed: the file must end on a whole line."""
    with open(path, "rb") as f:
        data = f.read()
    assert data.endswith(b"\n"), "ends in part of a line: %r" % data[-80:]
    return [json.loads(line) for line in data.splitlines()]


def test_events_rotated_to_fifo(tmp_path, started):
    """--events moved away and a FIFO without reader made in its place
    (a rotation gone wrong): the reopen is refused, said once, and the
    moved file goes on being written; SIGINT ends the run, exit 1 (the
    refusal). (Before: the reopen waited for a reader: events stopped
    within a second, and only SIGKILL ended the run.)"""
    events = os.path.join(str(tmp_path), "events.jsonl")
    moved = events + ".1"
    fifo = os.path.join(str(tmp_path), "new.fifo")
    os.mkfifo(fifo)
    app = started(1, [mixed_vdev(infinite=True)], ["--events", events])
    app.wait(lambda: os.path.exists(events) and
             os.path.getsize(events) > 0, "events written")
    # moved, and the FIFO in its place, at once
    os.link(events, moved)
    os.rename(fifo, events)
    app.wait(lambda: "reopening after rotation" in app.log(),
             "the reopen refused")
    size = os.path.getsize(moved)
    app.wait(lambda: os.path.getsize(moved) > size,
             "the moved file written after the refusal")
    rc = app.stop()
    log = app.log()
    assert rc == 1 and log.count("reopening after rotation") == 1 and \
        "%s: is a FIFO with no reader" % events in log, log[-600:]
    assert all(e["event"] in ("new", "close") for e in json_lines(moved))


def test_events_rotated_to_fifo_with_reader(tmp_path, started):
    """--events rotated to a FIFO that has a reader: the lines go to the
    FIFO from then on, whole lines only; SIGINT ends the run, exit 0."""
    events = os.path.join(str(tmp_path), "events.jsonl")
    fifo = os.path.join(str(tmp_path), "new.fifo")
    os.mkfifo(fifo)
    app = started(1, [mixed_vdev(infinite=True)], ["--events", events])
    app.wait(lambda: os.path.exists(events) and
             os.path.getsize(events) > 0, "events written")
    # the reader first, then the FIFO in the file's place, at once
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    os.link(events, events + ".1")
    os.rename(fifo, events)
    got = b""
    try:
        def read_some():
            nonlocal got
            try:
                got += os.read(reader, 1 << 16)
            except BlockingIOError:
                pass
            return got.count(b"\n") >= 1000
        app.wait(read_some, "1000 lines through the FIFO")
        rc = app.stop()
    finally:
        os.close(reader)
    assert rc == 0, app.log()[-600:]
    lines = got[: got.rindex(b"\n") + 1].splitlines()
    assert all(json.loads(line)["event"] in ("new", "close")
               for line in lines)


# ----------------------------------------------------------------- IPFIX

@pytest.mark.parametrize("port", ("70000", "0", "65536", "-1", "x"))
def test_ipfix_port_out_of_range(port):
    """--ipfix HOST:PORT takes ports 1 to 65535 only, the option named.
    (Before: 70000 was taken for 4464, 0 and 65536 accepted.)"""
    rc, log = run(1, [mixed_vdev()], ["--clock", "pkt", "--exit-on-eof",
                                      "--ipfix", "127.0.0.1:" + port])
    assert rc == 1 and "--ipfix 127.0.0.1:%s: port %s: want a number from " \
        "1 to 65535" % (port, port) in log, log[-400:]


def test_ipfix_losses_said_at_exit():
    """IPFIX to a port nobody listens on: the socket refuses messages
    (ICMP port unreachable); the records lost are said on stderr at
    exit, and the replay exits 4 (records lost: docs/usage.md, Losses
    and exit status). (Before: nothing said, then exit 0.)"""
    port = free_udp_port()
    rc, log = run(1, [mixed_vdev()], ["--clock", "pkt", "--exit-on-eof",
                                      "--ipfix", "127.0.0.1:%d" % port])
    m = re.search(r"--ipfix 127.0.0.1:%d: (\d+) of (\d+) records lost in "
                  r"(\d+) messages the socket did not take" % port, log)
    assert rc == 4 and m and 0 < int(m.group(1)) <= int(m.group(2)), \
        log[-400:]
    assert log.count("--ipfix 127.0.0.1:%d: Connection refused (messages "
                     "the socket does not take are lost" % port) == 1, \
        log[-400:]


# ------------------------------------------------------------ full disk

@pytest.fixture
def small_disks(tmp_path):
    """Two 64 KiB tmpfs of this test's own (root), unmounted after: one
    for each output, so that each fills on its own."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    disks = []
    try:
        for n in (1, 2):
            disk = os.path.join(str(tmp_path), "disk%d" % n)
            os.mkdir(disk)
            assert subprocess.run(["mount", "-t", "tmpfs", "-o",
                                   "size=64k", "tmpfs", disk]).returncode \
                == 0, "cannot mount a tmpfs on " + disk
            disks.append(disk)
        yield disks
    finally:
        for disk in disks:
            subprocess.run(["umount", "-l", disk], check=False)


def many_flows(path, n):
    return write_pcap(path, [udp_frame(200, i) for i in range(n)])


def pcapng_blocks(path):
    """The block types of a pcapng, which must end on a whole block."""
    with open(path, "rb") as f:
        data = f.read()
    types, off = [], 0
    while off < len(data):
        assert len(data) - off >= 12, "a block cut at %d" % off
        btype, n = struct.unpack_from("<II", data, off)
        assert n >= 12 and off + n <= len(data), \
            "a block cut at %d (%d bytes of %d)" % (off, len(data) - off, n)
        assert struct.unpack_from("<I", data, off + n - 4)[0] == n
        types.append(btype)
        off += n
    return types


def test_full_disk_whole_lines(tmp_path, small_disks):
    """--events and --new-flow-pcap on a full disk: each file ends on a
    whole line or block (a write cut midway is taken back); the lines
    lost are counted and said, the run exits 1 (a write error). (Before:
    stdio left part of a line at the end of the JSON file.)"""
    cap = many_flows(os.path.join(str(tmp_path), "flows.pcap"), 3000)
    events = os.path.join(small_disks[0], "events.jsonl")
    first = os.path.join(small_disks[1], "first.pcapng")
    rc, log = run(1, ["net_pcap0,rx_pcap=%s,tx_pcap=/dev/null" % cap], [
        "--clock", "pkt", "--exit-on-eof", "--events", events,
        "--new-flow-pcap", first])
    assert rc == 1 and "No space left on device" in log, log[-600:]
    lines = json_lines(events)
    m = re.search(r"lost (\d+) records: json_lines_lost: ", log)
    assert m and len(lines) + int(m.group(1)) == 3000, \
        (len(lines), log[-600:])
    assert 0 < len(lines) < 3000
    blocks = pcapng_blocks(first)
    assert blocks[0] == 0x0a0d0d0a and blocks.count(6) < 3000
