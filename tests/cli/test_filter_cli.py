#!/usr/bin/python3
"""cuckooflow-filter: build, query and info, their errors and exit codes.

usage: /usr/bin/python3 -m pytest tests/cli/test_filter_cli.py
           [--cuckooflow-filter BIN]
Every run has a timeout: a FIFO used to hang the tool.
"""
import os
import re
import signal
import subprocess
import threading
import time

import pytest

from harness import DEADLINE, no_crash

CLI = TMP = None


@pytest.fixture(scope="module", autouse=True)
def _paths(cuckooflow_filter, tmp_path_factory):
    global CLI, TMP
    CLI, TMP = cuckooflow_filter, str(tmp_path_factory.mktemp("cf-cli"))


class Run:
    """One run: exit code (None if it hung), stdout, stderr, seconds and
    peak RSS in KiB."""

    def __init__(self, args, timeout=DEADLINE):
        start = time.monotonic()
        p = subprocess.Popen([CLI] + list(args), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        timer = threading.Timer(timeout, p.kill)
        timer.start()
        out, err = p.stdout.read(), p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        timer.cancel()
        p.returncode = 0  # reaped here, not by Popen
        self.seconds = time.monotonic() - start
        self.rss_kib = ru.ru_maxrss
        killed = os.WIFSIGNALED(status) and \
            os.WTERMSIG(status) == signal.SIGKILL
        self.rc = None if killed else no_crash(
            os.waitstatus_to_exitcode(status), "cuckooflow-filter",
            (out + err).decode(errors="replace"))
        self.stdout, self.stderr = out.decode(), err.decode()
        self.out = self.stdout + self.stderr

    def __str__(self):
        return "rc %s in %.3f s, %d KiB: %s" % (
            "hung" if self.rc is None else self.rc, self.seconds,
            self.rss_kib, self.out.strip())


def run(*args, timeout=DEADLINE):
    r = Run(args, timeout)
    return r.rc, r.out


def write(name, data, mode="w"):
    path = os.path.join(TMP, name)
    with open(path, mode) as f:
        f.write(data)
    return path


@pytest.fixture(scope="module")
def lst():
    return write("list.txt", "# blocklist\n192.0.2.1\n198.51.100.0/24\n"
                 "2001:db8::/32\nudp 10.0.0.1 53 10.0.0.2 5353\n")


@pytest.fixture(scope="module")
def built(lst):
    """The list compiled to list.cf: (path, exit code, output)."""
    cf = os.path.join(TMP, "list.cf")
    rc, out = run("build", lst, "-o", cf)
    return cf, rc, out


@pytest.fixture
def cf(built):
    return built[0]


# ------------------------------------------------------------ basics

def test_build_reports_entries_and_false_match_rate(built):
    _, rc, out = built
    assert rc == 0 and "4 entries" in out and \
        "expected false matches" in out, out


def test_query_answers_by_kind(cf):
    rc, out = run("query", cf, "192.0.2.1", "198.51.100.77", "203.0.113.9",
                  "2001:db8:1::1", "udp 10.0.0.2 5353 10.0.0.1 53")
    assert rc == 0 and "192.0.2.1: address" in out and \
        "198.51.100.77: prefix" in out and \
        "203.0.113.9: not listed" in out and \
        "2001:db8:1::1: prefix" in out and "5353 10.0.0.1 53: flow" in out, out


def test_info(cf):
    rc, out = run("info", cf)
    assert rc == 0 and "prefix lengths: 2 IPv4, 1 IPv6" in out, out


def test_info_reads_text_lists(lst):
    rc, out = run("info", lst)
    assert rc == 0 and "4 entries" in out, out


def test_fp_bits_16(lst, cf):
    rc, out = run("build", lst, "-o", cf, "--fp-bits", "16")
    assert rc == 0 and "fingerprint bits: 16" in out, out


def test_bad_line_names_file_line_nothing_written():
    bad = write("bad.txt", "192.0.2.1\n192.0.2.300\n")
    rc, out = run("build", bad, "-o", os.path.join(TMP, "x.cf"))
    assert rc == 1 and "bad.txt:2:" in out and not os.path.exists(
        os.path.join(TMP, "x.cf")), out


def damaged(cf, name, how):
    with open(cf, "rb") as f:
        data = f.read()
    if how == "half":
        data = data[: len(data) // 2]
    elif how == "cut":
        data = data[:-3]
    else:
        flipped = bytearray(data)
        flipped[len(data) - 5] ^= 0xff
        data = bytes(flipped)
    return run("info", write(name, data, "wb"))


def test_truncated_filter_file_refused(cf):
    rc, out = damaged(cf, "trunc.cf", "half")
    assert rc == 1 and "trunc.cf: truncated" in out and \
        "the file is damaged" in out, out


def test_filter_cut_short_refused(cf):
    rc, out = damaged(cf, "trunc2.cf", "cut")
    assert rc == 1 and \
        "trunc2.cf: filter truncated: the file is damaged" in out, out


def test_corrupted_filter_checksum_mismatch(cf):
    rc, out = damaged(cf, "flip.cf", "flip")
    assert rc == 1 and \
        "flip.cf: filter checksum mismatch: the file is damaged" in out, out


def test_missing_file_named():
    rc, out = run("info", "/nonexistent.cf")
    assert rc == 1 and "/nonexistent.cf" in out, out


# ------------------------------------------------------------ exit codes

def test_help_usage_on_stdout_exit_0():
    r = Run(["--help"])
    assert r.rc == 0 and r.stdout.startswith("usage:") and \
        r.stderr == "" and "like grep" in r.stdout, r


def test_version_on_stdout_exit_0():
    """--version: the version, exit 0. (Before: an unknown command.)"""
    r = Run(["--version"])
    assert r.rc == 0 and re.fullmatch(r"cuckooflow-filter \d+\.\d+\.\d+\n",
                                      r.stdout) and r.stderr == "", r


@pytest.mark.parametrize("args", [
    ["frobnicate", "x"], ["build", "LIST"],
    ["build", "LIST", "-o", "CF", "--fp-bits", "4"], ["info"],
    ["query", "CF"], []], ids=lambda a: " ".join(a) or "no arguments")
def test_usage_error_stderr_exit_2(args, lst, cf):
    r = Run([{"LIST": lst, "CF": cf}.get(a, a) for a in args])
    assert r.rc == 2 and r.stdout == "" and r.stderr != "", r


@pytest.mark.parametrize("args,says", [
    (["frobnicate", "x"], "frobnicate: unknown command (want build, "
     "query or info)"),
    ([], "no command"),
    (["build"], "build: no LIST"),
    (["build", "LIST"], "build: -o FILE is missing"),
    (["build", "LIST", "-o"], "build: -o needs a value"),
    (["build", "LIST", "-o", "CF", "-z"], "build: -z: unexpected argument"),
    (["info"], "info: want one FILE"),
    (["query", "CF"], "query: want a FILE and at least one ENTRY")],
    ids=lambda a: " ".join(a) if isinstance(a, list) else "")
def test_usage_error_says_what(args, says, lst, cf):
    """A usage error's first line says what is wrong, before the usage
    (it printed the usage alone)."""
    r = Run([{"LIST": lst, "CF": cf}.get(a, a) for a in args])
    first = r.stderr.splitlines()[0] if r.stderr else ""
    assert r.rc == 2 and first.startswith("cuckooflow-filter: ") and \
        says in first, r


def test_query_listed_exit_0(cf):
    r = Run(["query", cf, "192.0.2.1"])
    assert r.rc == 0 and r.stdout == "192.0.2.1: address\n", r


def test_query_not_listed_exit_1(cf):
    r = Run(["query", cf, "203.0.113.9"])
    assert r.rc == 1 and r.stdout == "203.0.113.9: not listed\n" and \
        r.stderr == "", r


def test_query_one_of_two_listed_exit_0(cf):
    r = Run(["query", cf, "203.0.113.9", "192.0.2.1"])
    assert r.rc == 0, r


def test_query_bad_entry_exit_2(cf):
    r = Run(["query", cf, "10.0.0.0/40"])
    assert r.rc == 2 and "prefix length" in r.stderr, r


def test_query_error_wins_over_listed_exit_2(cf):
    r = Run(["query", cf, "192.0.2.1", "10.0.0.0/40"])
    assert r.rc == 2, r


def test_query_missing_file_exit_2():
    r = Run(["query", "/nonexistent.cf", "192.0.2.1"])
    assert r.rc == 2 and "/nonexistent.cf" in r.stderr, r


def test_info_output_write_error(cf):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        p = subprocess.run([CLI, "info", cf], stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=DEADLINE)
    no_crash(p.returncode, "cuckooflow-filter", p.stderr)
    assert p.returncode == 1 and "standard output" in p.stderr, p.stderr


# ------------------------------------------------------------ odd files
#
# A FIFO, a directory, a character device: refused by type, at once, in
# every role (list, compiled file, output).

def odd_file(kind):
    if kind == "FIFO":
        path = os.path.join(TMP, "fifo")
        if not os.path.exists(path):
            os.mkfifo(path)
        return path, "is a FIFO"
    if kind == "directory":
        path = os.path.join(TMP, "dir")
        os.makedirs(path, exist_ok=True)
        return path, "is a directory"
    return "/dev/zero", "is a character device"


ODD = ("FIFO", "directory", "character device")


@pytest.fixture(scope="module")
def compiled_before(built):
    with open(built[0], "rb") as f:
        return f.read()


@pytest.mark.parametrize("kind", ODD)
@pytest.mark.parametrize("role", ("build", "info", "query"))
def test_odd_file_refused(role, kind, compiled_before):
    path, what = odd_file(kind)
    out = os.path.join(TMP, "x.cf")
    args = {"build": ["build", path, "-o", out], "info": ["info", path],
            "query": ["query", path, "192.0.2.1"]}[role]
    r = Run(args)
    want = 2 if role == "query" else 1
    assert r.rc == want and "%s: %s" % (path, what) in r.stderr and \
        not os.path.exists(out), "want exit %d: %s" % (want, r)


@pytest.mark.parametrize("kind", ODD)
def test_build_output_odd_file_refused(kind, lst, compiled_before):
    path, what = odd_file(kind)
    r = Run(["build", lst, "-o", path])
    assert r.rc == 1 and "%s: %s" % (path, what) in r.stderr, r


def test_compiled_file_not_touched(cf, compiled_before):
    with open(cf, "rb") as f:
        assert f.read() == compiled_before


def test_fifo_output_stays_a_fifo():
    fifo, _ = odd_file("FIFO")
    assert os.path.exists(fifo) and not os.path.isfile(fifo)


# ------------------------------------------------------------ big files
#
# Files above the size limits: refused from their size, in a few MiB
# (the whole file used to be read first). The 2 TiB file is what shows
# the size decides: reading it would not end before DEADLINE (no
# wall-clock bound here: a loaded machine or the sanitizers are slow).

@pytest.mark.parametrize("size,name", ((1 << 30, "sparse1g.txt"),
                                       (2 << 40, "sparse2t.txt")))
@pytest.mark.parametrize("cmd", ("build", "info"))
def test_refused_by_size_fast_small(cmd, size, name):
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.truncate(size)
    try:
        args = ["build", path, "-o", os.path.join(TMP, "x.cf")] \
            if cmd == "build" else ["info", path]
        r = Run(args)
    finally:
        os.unlink(path)
    print("%s %s: %.3f s, peak RSS %d KiB" % (cmd, name, r.seconds,
                                               r.rss_kib))
    assert r.rc == 1 and name in r.stderr and "limit" in r.stderr and \
        r.rss_kib < 64 * 1024, r


def test_nul_byte_file_line():
    nul = write("nul.txt", "192.0.2.1\n198.51.100.7\0\n", "w")
    r = Run(["build", nul, "-o", os.path.join(TMP, "x.cf")])
    assert r.rc == 1 and "nul.txt:2: NUL byte" in r.stderr, r


def test_not_a_list_file_line_not_content():
    secret = write("secret.txt", "root:x:0:0:hunter2:/root:/bin/sh\n")
    r = Run(["info", secret])
    assert r.rc == 1 and "secret.txt:1: " in r.stderr and \
        "hunter2" not in r.out, r


# ------------------------------------------------------------ atomic save
#
# build replaces its output through a rename: a reader of the old file
# (a hard link here, an open file in a live reload) keeps it.

@pytest.fixture(scope="module")
def replaced(lst, built):
    cf = built[0]
    run("build", lst, "-o", cf)
    old = os.path.join(TMP, "old.cf")
    os.link(cf, old)
    r = Run(["build", write("one.txt", "10.9.9.9\n"), "-o", cf])
    return cf, old, r


def test_build_replaces_output_never_in_place(replaced):
    _, old, r = replaced
    rc, out = run("info", old)
    assert r.rc == 0 and rc == 0 and "4 entries" in out, "%s / %s" % (r, out)


def test_build_wrote_new_list(replaced):
    rc, out = run("info", replaced[0])
    assert rc == 0 and "1 entries" in out, out


def test_no_temporary_file_left(replaced):
    left = [f for f in os.listdir(TMP) if f.startswith("list.cf.")]
    assert not left


def test_output_in_missing_directory_named(lst):
    r = Run(["build", lst, "-o", os.path.join(TMP, "nodir", "x.cf")])
    assert r.rc == 1 and "nodir/x.cf" in r.stderr, r
