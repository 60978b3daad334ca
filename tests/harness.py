"""Helpers of the Python suites (tests/ is on sys.path: conftest.py)."""
import signal

import pytest


def no_crash(rc, what="cuckooflow", log=""):
    """Fail the test if @what was killed by a signal (subprocess's
    negative return code): a crash is a failure whatever the test
    expected of the exit status. Returns @rc."""
    if rc is not None and rc < 0:
        pytest.fail("%s killed by %s: %s" % (
            what, signal.Signals(-rc).name, log.strip()[-400:]))
    return rc
