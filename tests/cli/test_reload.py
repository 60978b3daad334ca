#!/usr/bin/python3
"""The app's live blocklist reload over telemetry and SIGHUP, with files
that used to hang it or say too much.

usage: /usr/bin/python3 -m pytest tests/cli/test_reload.py
           [--cuckooflow BIN]
Runs the app once, on a net_null port with --no-huge, for the whole
module: the tests run in order, the last one stops it. Every telemetry
call has a timeout: a FIFO used to block the reload, holding the reload
lock, and with it every later command and SIGHUP.
"""
import glob
import json
import os
import signal
import subprocess
import time

import pytest

import dpdk_telemetry
from harness import DEADLINE, polling

# One app for the whole module, the tests in order: one xdist worker.
pytestmark = pytest.mark.xdist_group("reload")

PREFIX = "cfreload%d" % os.getpid()
TMP = None


def telemetry(cmd, timeout=DEADLINE):
    return dpdk_telemetry.query(PREFIX, cmd, timeout)


def write(path, data, mode="w"):
    with open(path, mode) as f:
        f.write(data)
    return path


def reload(path):
    """The reply (and the seconds it took, for the log)."""
    start = time.monotonic()
    r = telemetry("/cuckooflow/blocklist/reload," + path)
    return r, time.monotonic() - start


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    global TMP
    TMP = str(tmp_path_factory.mktemp("cf-reload"))
    f = {"first": write(os.path.join(TMP, "a.txt"), "10.0.0.1\n")}
    # A path over 255 characters (it used to be cut, naming another file).
    deep = os.path.join(TMP, *["d%02d_%s" % (i, "x" * 40) for i in range(7)])
    os.makedirs(deep)
    f["long"] = write(os.path.join(deep, "long_list.txt"),
                      "10.0.0.1\n10.0.0.2\n10.0.0.0/8\n")
    f["fifo"] = os.path.join(TMP, "fifo")
    os.mkfifo(f["fifo"])
    f["sparse"] = os.path.join(TMP, "sparse.txt")
    with open(f["sparse"], "wb") as sp:
        sp.truncate(1 << 30)
    f["secret"] = write(os.path.join(TMP, "secret.txt"),
                        "root:x:0:0:hunter2:/root:/bin/sh\n")
    return f


@pytest.fixture(scope="module")
def app(cuckooflow, files):
    """The running app: (process, its log file)."""
    log = open(os.path.join(TMP, "app.log"), "w+")
    proc = subprocess.Popen(
        [cuckooflow, "-l", "0,1", "--no-pci", "--no-huge", "-m", "256",
         "--log-level=lib.*:error", "--file-prefix=" + PREFIX,
         "--vdev", "net_null0", "--", "--blocklist", files["first"]],
        stdout=subprocess.DEVNULL, stderr=log)
    for _ in polling(0.1):  # until its commands are registered
        try:
            if telemetry("/cuckooflow/blocklist") is not None:
                break
        except (OSError, ValueError):
            continue
    yield proc, log
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    log.close()
    for f in glob.glob("/var/run/dpdk/%s/*" % PREFIX):
        os.unlink(f)
    if os.path.isdir("/var/run/dpdk/%s" % PREFIX):
        os.rmdir("/var/run/dpdk/%s" % PREFIX)


def refused(path, want):
    """Refused by what the path is, before anything is read from it: a
    reload that blocked on it (a FIFO) would hold the reload lock until
    the client gave up (no reply within DEADLINE), and one that read it
    would fail with another reason."""
    try:
        r, t = reload(path)
    except (OSError, ValueError) as e:
        pytest.fail("no reply (hung?): %r" % e)
    print("refused in %.3f s" % t)
    assert r["result"].startswith("failed") and want in r["last_error"], r


def test_reload_of_fifo_refused_at_once(app, files):
    refused(files["fifo"], files["fifo"] + ": is a FIFO")


def test_after_fifo_telemetry_still_answers(app, files):
    state = telemetry("/cuckooflow/blocklist")
    assert state["source"] == files["first"] and state["entries"] == 1, state


@pytest.mark.parametrize("what", ("directory", "character device",
                                  "1 GiB sparse file"))
def test_reload_refused_at_once(app, files, what):
    path, want = {
        "directory": (TMP, "is a directory"),
        "character device": ("/dev/zero",
                             "/dev/zero: is a character device"),
        "1 GiB sparse file": (files["sparse"], "limit for text lists"),
    }[what]
    refused(path, want)


def test_reload_not_a_list_file_line_not_content(app, files):
    r, _ = reload(files["secret"])
    assert r["result"].startswith("failed") and \
        "secret.txt:1: " in r["last_error"] and \
        "hunter2" not in json.dumps(r), r


def test_reload_of_a_long_path(app, files):
    long_list = files["long"]
    r, _ = reload(long_list)
    assert r["result"] == "reloaded" and r["entries"] == 3 and \
        r["source"].startswith("...") and \
        r["source"].endswith(long_list[-100:]) and \
        len(r["source"]) == 127, "%d characters: %s" % (len(long_list), r)


def test_sighup_rereads_the_long_path(app):
    proc, _ = app
    before = telemetry("/cuckooflow/blocklist")["reloads"]
    proc.send_signal(signal.SIGHUP)
    after = before
    for _ in polling(0.1):
        after = telemetry("/cuckooflow/blocklist")["reloads"]
        if after > before:
            break
    assert after == before + 1, "%d -> %d" % (before, after)


def test_app_stops_on_sigint(app):
    proc, log = app
    proc.send_signal(signal.SIGINT)
    try:
        rc = proc.wait(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        rc = None
    log.seek(0)
    assert rc == 0, "rc %s: %s" % (rc, log.read()[-300:])
