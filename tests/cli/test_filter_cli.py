#!/usr/bin/python3
"""cuckooflow-filter: build, query and info, and its errors.

usage: test_filter_cli.py CUCKOOFLOW_FILTER
Prints TAP.
"""
import os
import subprocess
import sys
import tempfile

CLI = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="cf-cli-")
results = []


def run(*args):
    p = subprocess.run([CLI] + list(args), capture_output=True, text=True,
                       timeout=30)
    return p.returncode, p.stdout + p.stderr


def case(name, ok, detail=""):
    results.append((name, ok, detail))


def write(name, data, mode="w"):
    path = os.path.join(TMP, name)
    with open(path, mode) as f:
        f.write(data)
    return path


def main():
    lst = write("list.txt", "# blocklist\n192.0.2.1\n198.51.100.0/24\n"
                "2001:db8::/32\nudp 10.0.0.1 53 10.0.0.2 5353\n")
    cf = os.path.join(TMP, "list.cf")
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
    case("a truncated filter file is refused", rc == 1 and out.strip(), out)
    flipped = bytearray(data)
    flipped[len(data) - 5] ^= 0xff
    rc, out = run("info", write("flip.cf", bytes(flipped), "wb"))
    case("a corrupted filter file is refused", rc == 1 and
         ("checksum" in out or ": filter:" in out), out)
    rc, out = run("query", cf, "10.0.0.0/40")
    case("a bad query is an error", rc == 1 and "prefix length" in out, out)
    for args in (["frobnicate", "x"], ["build", lst], ["build", lst, "-o",
                 cf, "--fp-bits", "4"], ["info"]):
        rc, out = run(*args)
        case("usage error: %s" % " ".join(args), rc == 2, out)
    rc, out = run("info", "/nonexistent.cf")
    case("a missing file is named", rc == 1 and "/nonexistent.cf" in out, out)
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
