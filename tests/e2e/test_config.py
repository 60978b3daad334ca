#!/usr/bin/python3
"""End-to-end tests of cuckooflow's settings through the whole start:
what tests/unit/test_app_config.c (app_config_parse() without the EAL)
cannot show: a FIFO --cfg that must not block the start, FILE:LINE and
--stats-json's checks reaching the user, a --stats-json left untouched
by a run that fails later.

usage: /usr/bin/python3 -m pytest tests/e2e/test_config.py
           [--cuckooflow BIN] [--pcaps DIR]
Each run uses its own --file-prefix and --no-huge, replays tcp.pcap with
--exit-on-eof --clock pkt, and has a timeout.
"""
import json
import os
import subprocess

import pytest

from harness import NO_HUGE_MB
from harness import DEADLINE, no_crash

APP = PCAP = TMP = None
runs = 0


@pytest.fixture(scope="module", autouse=True)
def _paths(cuckooflow, pcaps, tmp_path_factory):
    global APP, PCAP, TMP
    APP, PCAP = cuckooflow, os.path.join(pcaps, "tcp.pcap")
    TMP = str(tmp_path_factory.mktemp("cuckooflow-cfg"))


def app(args=(), timeout=DEADLINE):
    """Run the binary on tcp.pcap; return (exit code, stdout+stderr).
    A run past its timeout counts as exit code None."""
    global runs
    runs += 1
    eal = ["-l", "0,1", "--no-pci", "--no-huge", "-m", NO_HUGE_MB,
           "--log-level=lib.*:error",
           "--file-prefix=cfcfg%d_%d" % (os.getpid(), runs),
           "--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (
               PCAP, os.path.join(TMP, "tx.pcap"))]
    try:
        p = subprocess.run([APP] + eal + ["--", "--exit-on-eof", "--clock",
                                          "pkt"] + list(args),
                           capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"") + (e.stderr or b"")
        return None, "timed out after %d s: %s" % (
            timeout, out.decode(errors="replace"))
    log = (p.stdout + p.stderr).decode(errors="replace")
    return no_crash(p.returncode, log=log), log


def write(name, data):
    path = os.path.join(TMP, name)
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)
    return path


def fresh(name):
    """A path in TMP that does not exist yet."""
    path = os.path.join(TMP, name)
    if os.path.exists(path):
        os.unlink(path)
    return path


def capacity(path):
    """The flow table capacity a run's stats JSON reports, or None."""
    try:
        with open(path) as f:
            return json.load(f)["table"]["lcore_1"]["capacity"]
    except (OSError, ValueError, KeyError):
        return None


def refused(args, words, timeout=DEADLINE):
    """The run fails, before any packet is counted, and its output holds
    every word."""
    rc, log = app(args, timeout=timeout)
    missing = [w for w in words if w not in log]
    assert rc not in (0, None) and not missing and \
        "rx_packets" not in log, "rc %s, missing %s: %s" % (
            rc, missing, log.strip()[-400:])


# Each refusal: a function of no arguments that writes what it needs and
# returns (args, words that the output must hold[, timeout]).

def bad_fp_bits(spelling):
    def build():
        bad = write("spell_bad.ini", "[flows]\nfp_bits = 40\n")
        args = ["--cfg=" + bad] if spelling == "--cfg=" else ["--cf", bad]
        return args, ["%s:2:" % bad, "fp_bits"]
    return build


def fifo_cfg():
    """A FIFO no one writes: opened blocking, the start would hang (the
    run's timeout, DEADLINE, fails it)."""
    fifo = os.path.join(TMP, "fifo.ini")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    return ["--cfg", fifo], [fifo, "a FIFO"]


def json_missing_dir():
    missing = os.path.join(TMP, "no_such_dir", "s.json")
    return ["--stats-json", missing], ["--stats-json", missing]


# What app_config_parse() refuses is tested in C, every case
# (tests/unit/test_app_config.c: options, INI lines, --cfg spellings,
# sections, duplicates, bytes, file kinds, string limits, --stats-json);
# here a few through the whole start, where the EAL is up: a FIFO must
# not block the start, FILE:LINE must reach the user.
REFUSALS = {
    "--cfg=F: a bad value in F is refused with F:line": bad_fp_bits("--cfg="),
    "--cfg FIFO is refused by name, without blocking": fifo_cfg,
    "--stats-json in a missing directory is refused before the run":
        json_missing_dir,
}


@pytest.mark.parametrize("name", REFUSALS)
def test_refused(name):
    refused(*REFUSALS[name]())


def test_cfg_spelling_reads_the_file():
    """--cf=F (an abbreviation with =) reads F through the whole start;
    every spelling is tested in C."""
    out = fresh("spell.json")
    ini = write("spell.ini", "[flows]\nflows = 5000\n[run]\n"
                "stats_json = %s\n" % out)
    rc, log = app(["--cf=" + ini])
    assert rc == 0 and capacity(out) == 5000, \
        "rc %s, capacity %s: %s" % (rc, capacity(out), log[-300:])


def test_stats_json_check_neither_truncates_nor_leaves_a_file():
    """The check neither truncates an existing file (replaced only at the
    run's end) nor leaves a new one behind when the run fails later."""
    keep = write("keep.json", "old")
    missing_list = os.path.join(TMP, "no_such_blocklist.txt")
    rc, log = app(["--stats-json", keep, "--blocklist", missing_list])
    with open(keep) as f:
        kept = f.read()
    new = fresh("new.json")
    rc2, log2 = app(["--stats-json", new, "--blocklist", missing_list])
    assert rc not in (0, None) and kept == "old" and \
        rc2 not in (0, None) and not os.path.exists(new), \
        "rc %s %s, kept %r, new exists %s: %s" % (
            rc, rc2, kept, os.path.exists(new), log2[-200:])
