"""Helpers of the Python suites (tests/ is on sys.path: conftest.py)."""
import signal
import time

import pytest

import dpdk_telemetry  # tools/, on sys.path (conftest.py)


def no_crash(rc, what="cuckooflow", log=""):
    """Fail the test if @what was killed by a signal (subprocess's
    negative return code): a crash is a failure whatever the test
    expected of the exit status. Returns @rc."""
    if rc is not None and rc < 0:
        pytest.fail("%s killed by %s: %s" % (
            what, signal.Signals(-rc).name, log.strip()[-400:]))
    return rc


def stats(prefix):
    """cuckooflow's /cuckooflow/stats over telemetry, or None (not up,
    not answering yet)."""
    try:
        return dpdk_telemetry.query(prefix, "/cuckooflow/stats")
    except (OSError, ValueError, KeyError, TypeError):
        return None


def wait_packets(prefix, want, proc, timeout=10.0):
    """Until /cuckooflow/stats counts @want packets (or more), or @proc
    exits; returns the last stats seen."""
    end = time.monotonic() + timeout
    st = None
    while time.monotonic() < end and proc.poll() is None:
        st = stats(prefix) or st
        if st and st["packets"] >= want:
            return st
        time.sleep(0.02)
    return st
