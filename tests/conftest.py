"""pytest's setup for every Python suite.

- The programs under test and the captures: --cuckooflow,
  --cuckooflow-filter, --cflow-replay, --ipfix-send and --pcaps (meson
  passes them), else $CUCKOOFLOW, $CUCKOOFLOW_FILTER, $CFLOW_REPLAY,
  $IPFIX_SEND and $PCAPS, else their places in build/ and pcaps/ of this
  tree; fixtures of the same names (dashes as underscores), as absolute
  paths.
- tools/ on sys.path (dpdk_telemetry).
- A test function taking `truth_file` runs once for each
  pcaps/*.truth.json.
- E2E_ONLY=test_a,test_b runs only those functions (all their
  parameters); pytest's -k does the same and more.
- Side by side: with pytest-xdist's -n auto, as many workers as
  $PYTEST_XDIST_AUTO_NUM_WORKERS, else twice the CPUs (at least 4): the
  end-to-end tests mostly wait on processes, sockets and captures.
  Tests marked slow start first, so that none of them ends the run
  alone; xdist_group("name") keeps tests that share a resource on one
  worker (with --dist loadgroup), in their order.
- --tap: TAP on stdout instead of pytest's report, for meson: the plan,
  then one "ok N - name" / "not ok N - name" line per test, SKIP and
  TODO (xfail) directives, the failure's traceback and anything the test
  printed as "# " lines.
"""
import glob
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))

# option: (environment variable, default under ROOT, what)
PATHS = {
    "cuckooflow": ("CUCKOOFLOW", "build/app/cuckooflow",
                   "the cuckooflow binary"),
    "cuckooflow-filter": ("CUCKOOFLOW_FILTER", "build/cli/cuckooflow-filter",
                          "the cuckooflow-filter binary"),
    "cflow-replay": ("CFLOW_REPLAY", "build/tests/replay/cflow_replay",
                     "the cflow_replay binary"),
    "pcaps": ("PCAPS", "pcaps", "the captures and their truths"),
    "ipfix-send": ("IPFIX_SEND", "build/tests/ipfix/ipfix_send",
                   "the ipfix_send test program"),
}


def pytest_addoption(parser):
    group = parser.getgroup("cuckooflow")
    for opt, (env, default, what) in PATHS.items():
        group.addoption("--" + opt, metavar="PATH",
                        default=os.environ.get(env,
                                               os.path.join(ROOT, default)),
                        help="%s (default $%s, else %s)" % (what, env,
                                                            default))
    group.addoption("--tap", action="store_true",
                    help="report in TAP on stdout (for meson)")


def _path(request, opt):
    return os.path.abspath(request.config.getoption(opt.replace("-", "_")))


@pytest.fixture(scope="session")
def cuckooflow(request):
    return _path(request, "cuckooflow")


@pytest.fixture(scope="session")
def cuckooflow_filter(request):
    return _path(request, "cuckooflow-filter")


@pytest.fixture(scope="session")
def cflow_replay(request):
    return _path(request, "cflow-replay")


@pytest.fixture(scope="session")
def ipfix_send(request):
    return _path(request, "ipfix-send")


@pytest.fixture(scope="session")
def pcaps(request):
    return _path(request, "pcaps")


def pytest_generate_tests(metafunc):
    if "truth_file" in metafunc.fixturenames:
        pcaps = metafunc.config.getoption("pcaps")
        truths = sorted(glob.glob(os.path.join(pcaps, "*.truth.json")))
        metafunc.parametrize("truth_file", truths, ids=[
            os.path.basename(t)[: -len(".truth.json")] + ".pcap"
            for t in truths])


def pytest_xdist_auto_num_workers(config):
    env = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    if env:
        return int(env)
    return max(4, 2 * (os.cpu_count() or 1))


def pytest_collection_modifyitems(config, items):
    # slow tests first (a stable sort: the others keep their order)
    items.sort(key=lambda i: i.get_closest_marker("slow") is None)
    only = os.environ.get("E2E_ONLY")
    if not only:
        return
    names = only.split(",")
    keep = [i for i in items if getattr(i, "originalname", i.name) in names]
    config.hook.pytest_deselected(items=[i for i in items if i not in keep])
    items[:] = keep


_finished = 0


def pytest_runtest_teardown(item):
    """Every 25 tests of a worker, and at its end, the EAL runtime
    directories of processes that have exited go (harness.py)."""
    global _finished
    _finished += 1
    if _finished % 25 == 0:
        import harness
        harness.sweep_runtime_dirs()


def pytest_sessionfinish(session):
    import harness
    harness.sweep_runtime_dirs()


@pytest.hookimpl(trylast=True)  # after the terminal reporter's
def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: takes tens of seconds; started first")
    config.addinivalue_line(
        "markers", "xdist_group(name): run on one xdist worker, in order "
        "(a resource the group's tests share)")
    # in the controller only: xdist's workers report to it
    if config.getoption("tap") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(Tap(config), "cuckooflow-tap")


class _Mute:
    """A terminal that writes nothing."""
    hasmarkup = isatty = False

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


class Tap:
    """TAP on stdout: a line per test once its teardown is reported, the
    plan last. Replaces pytest's terminal report."""

    def __init__(self, config):
        self.n = 0
        self.reports = {}
        term = config.pluginmanager.getplugin("terminalreporter")
        if term is not None:
            config.pluginmanager.unregister(term)
        # pytest-xdist's status lines ("gw0 I / gw1 I") are not TAP: its
        # reporter writes through the terminal reporter it took earlier
        dist = config.pluginmanager.getplugin("terminaldistreporter")
        if dist is not None:
            dist.tr = _Mute()

    @staticmethod
    def comment(text):
        for line in text.rstrip().splitlines():
            print(line if line.startswith("#") else "# " + line)

    def line(self, ok, name, directive=""):
        self.n += 1
        name = name.replace("#", "no.").replace("\n", " ")
        print("%s %d - %s%s" % ("ok" if ok else "not ok", self.n, name,
                                " # " + directive if directive else ""),
              flush=True)

    def pytest_collectreport(self, report):
        if report.failed:
            self.comment(report.longreprtext)
            self.line(False, "collect " + report.nodeid)

    def pytest_runtest_logreport(self, report):
        self.reports.setdefault(report.nodeid, []).append(report)
        if report.when != "teardown":
            return
        reports = self.reports.pop(report.nodeid)
        name = report.nodeid.split("::", 1)[-1]
        for _, text in report.sections:  # every phase's, so far
            self.comment(text)
        failed = [r for r in reports if r.failed]
        skipped = [r for r in reports if r.skipped]
        if failed:
            for r in failed:
                self.comment(r.longreprtext)
            self.line(False, name)
        elif skipped and hasattr(skipped[0], "wasxfail"):
            why = skipped[0].wasxfail.replace("reason: ", "", 1)
            self.line(False, name, "TODO " + why)
        elif skipped:
            why = skipped[0].longrepr
            why = why[2] if isinstance(why, tuple) else str(why)
            self.line(True, name, "SKIP " + why.replace("Skipped: ", "", 1))
        else:
            self.line(True, name)

    def pytest_sessionfinish(self, session):
        print("1..%d" % self.n, flush=True)
