#!/usr/bin/python3
"""cuckooflow-filter: build, query and info, their errors and exit codes.

usage: test_filter_cli.py CUCKOOFLOW_FILTER
Prints TAP. Every run has a timeout: a FIFO used to hang the tool.
"""
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

CLI = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="cf-cli-")
results = []


class Run:
    """One run: exit code (None if it hung), stdout, stderr, seconds and
    peak RSS in KiB."""

    def __init__(self, args, timeout=10):
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
        self.rc = None if killed else os.waitstatus_to_exitcode(status)
        self.stdout, self.stderr = out.decode(), err.decode()
        self.out = self.stdout + self.stderr

    def __str__(self):
        return "rc %s in %.3f s, %d KiB: %s" % (
            "hung" if self.rc is None else self.rc, self.seconds,
            self.rss_kib, self.out.strip())


def run(*args, timeout=10):
    r = Run(args, timeout)
    return r.rc, r.out


def case(name, ok, detail=""):
    results.append((name, ok, str(detail)))


def write(name, data, mode="w"):
    path = os.path.join(TMP, name)
    with open(path, mode) as f:
        f.write(data)
    return path


def basics(lst, cf):
    rc, out = run("build", lst, "-o", cf)
    case("build reports entries and the false-match rate", rc == 0 and
         "4 entries" in out and "expected false matches" in out, out)
    rc, out = run("query", cf, "192.0.2.1", "198.51.100.77", "203.0.113.9",
                  "2001:db8:1::1", "udp 10.0.0.2 5353 10.0.0.1 53")
    case("query answers by kind", rc == 0 and
         "192.0.2.1: address" in out and "198.51.100.77: prefix" in out and
         "203.0.113.9: not listed" in out and "2001:db8:1::1: prefix" in out
         and "5353 10.0.0.1 53: flow" in out, out)
    rc, out = run("info", cf)
    case("info", rc == 0 and "prefix lengths: 2 IPv4, 1 IPv6" in out, out)
    rc, out = run("info", lst)
    case("info reads text lists too", rc == 0 and "4 entries" in out, out)
    rc, out = run("build", lst, "-o", cf, "--fp-bits", "16")
    case("--fp-bits 16", rc == 0 and "fingerprint bits: 16" in out, out)
    bad = write("bad.txt", "192.0.2.1\n192.0.2.300\n")
    rc, out = run("build", bad, "-o", os.path.join(TMP, "x.cf"))
    case("a bad line names file:line, nothing written", rc == 1 and
         "bad.txt:2:" in out and not os.path.exists(
             os.path.join(TMP, "x.cf")), out)
    with open(cf, "rb") as f:
        data = f.read()
    rc, out = run("info", write("trunc.cf", data[: len(data) // 2], "wb"))
    case("a truncated filter file is refused", rc == 1 and
         "trunc.cf: truncated" in out and "the file is damaged" in out, out)
    rc, out = run("info", write("trunc2.cf", data[:-3], "wb"))
    case("a filter cut short is refused", rc == 1 and
         "trunc2.cf: filter truncated: the file is damaged" in out, out)
    flipped = bytearray(data)
    flipped[len(data) - 5] ^= 0xff
    rc, out = run("info", write("flip.cf", bytes(flipped), "wb"))
    case("a corrupted filter file: checksum mismatch, named", rc == 1 and
         "flip.cf: filter checksum mismatch: the file is damaged" in out,
         out)
    rc, out = run("info", "/nonexistent.cf")
    case("a missing file is named", rc == 1 and "/nonexistent.cf" in out, out)


def exit_codes(lst, cf):
    r = Run(["--help"])
    case("--help: usage on stdout, exit 0", r.rc == 0 and
         r.stdout.startswith("usage:") and r.stderr == "" and
         "like grep" in r.stdout, r)
    for args in (["frobnicate", "x"], ["build", lst], ["build", lst, "-o",
                 cf, "--fp-bits", "4"], ["info"], ["query", cf], []):
        r = Run(args)
        case("usage error: %s: stderr, exit 2" % " ".join(args),
             r.rc == 2 and r.stdout == "" and r.stderr != "", r)
    r = Run(["query", cf, "192.0.2.1"])
    case("query: listed, exit 0", r.rc == 0 and
         r.stdout == "192.0.2.1: address\n", r)
    r = Run(["query", cf, "203.0.113.9"])
    case("query: not listed, exit 1", r.rc == 1 and
         r.stdout == "203.0.113.9: not listed\n" and r.stderr == "", r)
    r = Run(["query", cf, "203.0.113.9", "192.0.2.1"])
    case("query: one of two listed, exit 0", r.rc == 0, r)
    r = Run(["query", cf, "10.0.0.0/40"])
    case("query: a bad entry is an error, exit 2", r.rc == 2 and
         "prefix length" in r.stderr, r)
    r = Run(["query", cf, "192.0.2.1", "10.0.0.0/40"])
    case("query: an error wins over listed, exit 2", r.rc == 2, r)
    r = Run(["query", "/nonexistent.cf", "192.0.2.1"])
    case("query: a missing file, exit 2", r.rc == 2 and
         "/nonexistent.cf" in r.stderr, r)
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            p = subprocess.run([CLI, "info", cf], stdout=full,
                               stderr=subprocess.PIPE, text=True, timeout=10)
        case("info: an output write error is an error", p.returncode == 1
             and "standard output" in p.stderr, p.stderr)


def odd_files(lst, cf):
    """A FIFO, a directory, a character device: refused by type, at once,
    in every role (list, compiled file, output)."""
    fifo = os.path.join(TMP, "fifo")
    os.mkfifo(fifo)
    sub = os.path.join(TMP, "dir")
    os.mkdir(sub)
    out = os.path.join(TMP, "x.cf")
    for path, what in ((fifo, "is a FIFO"), (sub, "is a directory"),
                       ("/dev/zero", "is a character device")):
        for args in (["build", path, "-o", out], ["info", path],
                     ["query", path, "192.0.2.1"]):
            r = Run(args, timeout=5)
            want = 2 if args[0] == "query" else 1
            case("%s %s: '%s', exit %d" % (args[0], path, what, want),
                 r.rc == want and "%s: %s" % (path, what) in r.stderr and
                 not os.path.exists(out), r)
        with open(cf, "rb") as f:
            before = f.read()
        r = Run(["build", lst, "-o", path], timeout=5)
        case("build -o %s: '%s'" % (path, what), r.rc == 1 and
             "%s: %s" % (path, what) in r.stderr, r)
    with open(cf, "rb") as f:
        case("the compiled file was not touched", f.read() == before)
    case("a FIFO output stays a FIFO", os.path.exists(fifo) and
         not os.path.isfile(fifo))


def big_files():
    """Files above the size limits: refused from their size, in well under
    a second and a few MiB (the whole file used to be read first)."""
    for size, name in ((1 << 30, "sparse1g.txt"), (2 << 40, "sparse2t.txt")):
        path = os.path.join(TMP, name)
        with open(path, "wb") as f:
            f.truncate(size)
        for args in (["build", path, "-o", os.path.join(TMP, "x.cf")],
                     ["info", path]):
            r = Run(args, timeout=30)
            print("# %s %s: %.3f s, peak RSS %d KiB" % (
                args[0], name, r.seconds, r.rss_kib))
            case("%s %s: refused by size, < 1 s, < 64 MiB" % (args[0], name),
                 r.rc == 1 and name in r.stderr and "limit" in r.stderr and
                 r.seconds < 1 and r.rss_kib < 64 * 1024, r)
        os.unlink(path)
    nul = write("nul.txt", "192.0.2.1\n198.51.100.7\0\n", "w")
    r = Run(["build", nul, "-o", os.path.join(TMP, "x.cf")])
    case("a NUL byte: FILE:LINE: NUL byte", r.rc == 1 and
         "nul.txt:2: NUL byte" in r.stderr, r)
    secret = write("secret.txt", "root:x:0:0:hunter2:/root:/bin/sh\n")
    r = Run(["info", secret])
    case("a file that is not a list: file:line, not its content",
         r.rc == 1 and "secret.txt:1: " in r.stderr and
         "hunter2" not in r.out, r)


def atomic_save(lst, cf):
    """build replaces its output through a rename: a reader of the old
    file (a hard link here, an open file in a live reload) keeps it."""
    run("build", lst, "-o", cf)
    old = os.path.join(TMP, "old.cf")
    os.link(cf, old)
    r = Run(["build", write("one.txt", "10.9.9.9\n"), "-o", cf])
    rc, out = run("info", old)
    case("build replaces the output, never rewrites it in place",
         r.rc == 0 and rc == 0 and "4 entries" in out, "%s / %s" % (r, out))
    rc, out = run("info", cf)
    case("build wrote the new list", rc == 0 and "1 entries" in out, out)
    left = [f for f in os.listdir(TMP) if f.startswith("list.cf.")]
    case("no temporary file is left", not left, left)
    r = Run(["build", lst, "-o", os.path.join(TMP, "nodir", "x.cf")])
    case("an output in a missing directory is named", r.rc == 1 and
         "nodir/x.cf" in r.stderr, r)


def main():
    lst = write("list.txt", "# blocklist\n192.0.2.1\n198.51.100.0/24\n"
                "2001:db8::/32\nudp 10.0.0.1 53 10.0.0.2 5353\n")
    cf = os.path.join(TMP, "list.cf")
    for part in (basics, exit_codes, odd_files, big_files, atomic_save):
        try:
            if part is big_files:
                part()
            else:
                part(lst, cf)
        except Exception as e:  # a test that crashes is a failure
            case(part.__name__, False, repr(e))
    print("1..%d" % len(results))
    failed = 0
    for n, (name, ok, detail) in enumerate(results, 1):
        if not ok:
            failed += 1
            print("# " + detail.strip().replace("\n", "\n# "))
        print("%s %d - %s" % ("ok" if ok else "not ok", n, name))
    subprocess.run(["rm", "-rf", TMP])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
