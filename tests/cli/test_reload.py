#!/usr/bin/python3
"""The app's live blocklist reload over telemetry and SIGHUP, with files
that used to hang it or say too much.

usage: test_reload.py CUCKOOFLOW
Prints TAP. Runs the app on a net_null port with --no-huge. Every
telemetry call has a timeout: a FIFO used to block the reload, holding
the reload lock, and with it every later command and SIGHUP.
"""
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

APP = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="cf-reload-")
PREFIX = "cfreload%d" % os.getpid()
results = []


def case(name, ok, detail=""):
    results.append((name, ok, str(detail)))


def telemetry(cmd, timeout=5):
    path = "/var/run/dpdk/%s/dpdk_telemetry.v2" % PREFIX
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    try:
        s.connect(path)
        json.loads(s.recv(16384).decode())
        s.send(cmd.encode())
        return json.loads(s.recv(1 << 17).decode())[cmd.split(",")[0]]
    finally:
        s.close()


def write(path, data, mode="w"):
    with open(path, mode) as f:
        f.write(data)
    return path


def reload(path):
    """The reply, and the seconds it took."""
    start = time.monotonic()
    r = telemetry("/cuckooflow/blocklist/reload," + path)
    return r, time.monotonic() - start


def refused(name, path, want):
    try:
        r, t = reload(path)
        case("reload %s: refused at once, '%s'" % (name, want),
             r["result"].startswith("failed") and want in r["last_error"]
             and t < 2, "%.3f s %s" % (t, r))
    except (OSError, ValueError, KeyError, TypeError) as e:
        case("reload %s: refused at once, '%s'" % (name, want), False,
             "no reply (hung?): %r" % e)


def main():
    first = write(os.path.join(TMP, "a.txt"), "10.0.0.1\n")
    # A path over 255 characters (it used to be cut, naming another file).
    deep = os.path.join(TMP, *["d%02d_%s" % (i, "x" * 40) for i in range(7)])
    os.makedirs(deep)
    long_list = write(os.path.join(deep, "long_list.txt"),
                      "10.0.0.1\n10.0.0.2\n10.0.0.0/8\n")
    fifo = os.path.join(TMP, "fifo")
    os.mkfifo(fifo)
    sparse = os.path.join(TMP, "sparse.txt")
    with open(sparse, "wb") as f:
        f.truncate(1 << 30)
    secret = write(os.path.join(TMP, "secret.txt"),
                   "root:x:0:0:hunter2:/root:/bin/sh\n")
    log = open(os.path.join(TMP, "app.log"), "w+")
    proc = subprocess.Popen(
        [APP, "-l", "0,1", "--no-pci", "--no-huge", "-m", "256",
         "--log-level=lib.*:error", "--file-prefix=" + PREFIX,
         "--vdev", "net_null0", "--", "--blocklist", first],
        stdout=subprocess.DEVNULL, stderr=log)
    try:
        # The socket is up before the app registers its commands, which
        # answer null until then: wait for a real reply.
        for _ in range(100):
            time.sleep(0.1)
            try:
                if telemetry("/cuckooflow/blocklist") is not None:
                    break
            except (OSError, ValueError):
                continue
        refused("of a FIFO", fifo, fifo + ": is a FIFO")
        try:
            state = telemetry("/cuckooflow/blocklist")
            case("after a FIFO, telemetry still answers",
                 state["source"] == first and state["entries"] == 1, state)
        except (OSError, ValueError, KeyError, TypeError) as e:
            case("after a FIFO, telemetry still answers", False, repr(e))
        refused("of a directory", TMP, "is a directory")
        refused("of a character device", "/dev/zero",
                "/dev/zero: is a character device")
        refused("of a 1 GiB sparse file", sparse, "limit for text lists")
        try:
            r, _ = reload(secret)
            case("reload of a file that is not a list: file:line, not its "
                 "content", r["result"].startswith("failed") and
                 "secret.txt:1: " in r["last_error"] and
                 "hunter2" not in json.dumps(r), r)
        except (OSError, ValueError, KeyError, TypeError) as e:
            case("reload of a file that is not a list", False, repr(e))
        try:
            r, _ = reload(long_list)
            case("reload of a %d-character path" % len(long_list),
                 r["result"] == "reloaded" and r["entries"] == 3 and
                 r["source"].startswith("...") and
                 r["source"].endswith(long_list[-100:]) and
                 len(r["source"]) == 127, r)
            before = telemetry("/cuckooflow/blocklist")["reloads"]
            proc.send_signal(signal.SIGHUP)
            after = before
            for _ in range(50):
                time.sleep(0.1)
                after = telemetry("/cuckooflow/blocklist")["reloads"]
                if after > before:
                    break
            case("SIGHUP rereads the long path", after == before + 1,
                 "%d -> %d" % (before, after))
        except (OSError, ValueError, KeyError, TypeError) as e:
            case("reload of a long path", False, repr(e))
        proc.send_signal(signal.SIGINT)
        try:
            rc = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            rc = None
        log.seek(0)
        case("the app stops on SIGINT", rc == 0, "rc %s: %s" % (
            rc, log.read()[-300:]))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for f in glob.glob("/var/run/dpdk/%s/*" % PREFIX):
            os.unlink(f)
        if os.path.isdir("/var/run/dpdk/%s" % PREFIX):
            os.rmdir("/var/run/dpdk/%s" % PREFIX)
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
