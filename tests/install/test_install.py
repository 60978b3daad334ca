"""meson install into a DESTDIR: the files it puts there, exactly; the
installed headers, each on its own; the pkg-config files; a program
(use_libs.c) built against them alone, linked static and shared, run;
the installed programs run; the systemd unit through systemd-analyze
verify.

meson passes the build's directories and settings in the environment
(tests/install/meson.build): MESON, BUILD_ROOT, PREFIX, BINDIR, LIBDIR,
INCLUDEDIR, MANDIR, SYSCONFDIR, LIBEXECDIR, DATADIR, UNITDIR, DEFAULT_LIBRARY,
SOVERSION, VERSION, MAN (1 with the man pages), API_DOCS (1 with the API
reference, -Dapi_docs), APP (1 with cuckooflow), CC, CFLAGS (the build's
sanitizer flags, which its libraries need)."""
import os
import re
import shlex
import shutil
import subprocess
import tempfile

import pytest

from harness import DEADLINE

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = os.environ
LIBS = ("cuckoo", "cflow", "blocklist")
HEADERS = ("blocklist.h", "cf_alloc.h", "cf_inline.h", "cflow.h",
           "cflow_event.h", "cflow_frag.h", "cflow_records.h",
           "cflow_ipfix.h", "cflow_parse.h", "cflow_topk.h", "cflow_track.h",
           "cuckoo_filter.h")
WANT = ("cuckoo: added 1000, found 1000, odd keys left 500\n"
        "cflow: ok, proto 6, ports 1234-80; packets 4, new 1, closed 1\n"
        "blocklist: packet address, 203.0.113.9 not listed\n")


def under(root, d):
    """Directory d of the build (relative to the prefix, or absolute)
    inside root."""
    return os.path.join(root, os.path.join(ENV["PREFIX"], d).lstrip("/"))


def run(cmd, env=None, check=True, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=DEADLINE,
                       env=dict(ENV, **(env or {})), **kw)
    if check:
        assert p.returncode == 0, "%s: exit %d\n%s%s" % (
            " ".join(cmd), p.returncode, p.stdout, p.stderr)
    return p


@pytest.fixture(scope="module")
def destdir():
    d = tempfile.mkdtemp(prefix="cf-install-")
    run([ENV["MESON"], "install", "-C", ENV["BUILD_ROOT"], "--destdir", d,
         "--no-rebuild", "--quiet"])
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def work():
    d = tempfile.mkdtemp(prefix="cf-install-work-")
    with open(os.path.join(d, "list.txt"), "w") as f:
        f.write("10.0.0.2\n198.51.100.0/24\n")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def pkg_config(root, *args):
    """pkg-config on root's .pc files, their paths moved into root."""
    env = {"PKG_CONFIG_PATH": os.path.join(under(root, ENV["LIBDIR"]),
                                           "pkgconfig"),
           "PKG_CONFIG_SYSROOT_DIR": root}
    return shlex.split(run(["pkg-config"] + list(args), env=env).stdout)


def cc(args, check=True):
    return run(shlex.split(ENV["CC"]) + shlex.split(ENV.get("CFLAGS", ""))
               + args, check=check)


def api_dirs(root):
    """The API reference's directories (-Dapi_docs, docs/api.md):
    doxygen's HTML pages and man3 pages, whose names follow what the
    headers declare."""
    return (os.path.join(under(root, ENV["DATADIR"]), "doc", "cuckooflow",
                         "api", "html"),
            os.path.join(under(root, ENV["MANDIR"]), "man3"))


def expected(root):
    libdir = under(root, ENV["LIBDIR"])
    files = {os.path.join(under(root, ENV["INCLUDEDIR"]), "cuckooflow", h)
             for h in HEADERS}
    files.add(os.path.join(under(root, ENV["BINDIR"]), "cuckooflow-filter"))
    if ENV["APP"] == "1":
        files.add(os.path.join(under(root, ENV["BINDIR"]), "cuckooflow"))
    if ENV["MAN"] == "1":
        pages = ["cuckooflow-filter.8"] + (
            ["cuckooflow.8"] if ENV["APP"] == "1" else [])
        files |= {os.path.join(under(root, ENV["MANDIR"]), "man8", p)
                  for p in pages}
    if ENV["API_DOCS"] == "1":
        html, man3 = api_dirs(root)
        files.add(os.path.join(html, "index.html"))
        files |= {os.path.join(man3, h + ".3") for h in HEADERS}
    for lib in LIBS:
        name = "libcuckooflow-" + lib
        files.add(os.path.join(libdir, "pkgconfig",
                               "cuckooflow-%s.pc" % lib))
        if ENV["DEFAULT_LIBRARY"] != "shared":
            files.add(os.path.join(libdir, name + ".a"))
        if ENV["DEFAULT_LIBRARY"] != "static":
            files |= {os.path.join(libdir, name + s) for s in (
                ".so", ".so." + ENV["SOVERSION"], ".so." + ENV["VERSION"])}
    etc = under(root, ENV["SYSCONFDIR"])
    files |= {os.path.join(etc, "cuckooflow", f)
              for f in ("cuckooflow.ini", "cuckooflow.env")}
    files |= {os.path.join(root, ENV["UNITDIR"].lstrip("/"), u)
              for u in ("cuckooflow.service", "cuckooflow-exporter.service")}
    files |= {os.path.join(under(root, ENV["LIBEXECDIR"]), "cuckooflow", f)
              for f in ("cuckooflow_exporter.py", "dpdk_telemetry.py",
                        "cuckooflow-preflight")}
    files |= {os.path.join(under(root, ENV["DATADIR"]), "cuckooflow", f)
              for f in ("60-cuckooflow-hugepages.conf",
                        "cuckooflow-alerts.yml", "cuckooflow-grafana.json")}
    return files


def test_files(destdir):
    """Exactly the expected files: programs, man pages, the headers
    under include/cuckooflow, libraries, .pc files, the example config,
    the unit, the API reference (its index and a man3 page a header; its
    other pages are doxygen's); nothing internal (cfutil, cf_internal.h,
    cflow_state.h, the app's library)."""
    got = set()
    for d, _, names in os.walk(destdir):
        got |= {os.path.join(d, n) for n in names}
    want = expected(destdir)
    if ENV["API_DOCS"] == "1":
        api = tuple(d + os.sep for d in api_dirs(destdir))
        got = {f for f in got if f in want or not f.startswith(api)}
    assert got == want, "missing: %s\nunexpected: %s" % (
        sorted(want - got), sorted(got - want))


def test_headers_alone(destdir, work):
    """Each installed header compiles on its own, found through the .pc
    file's -I, and includes only headers installed beside it."""
    inc = os.path.join(under(destdir, ENV["INCLUDEDIR"]), "cuckooflow")
    cflags = pkg_config(destdir, "--cflags", "cuckooflow-blocklist",
                        "cuckooflow-cflow")
    for h in HEADERS:
        with open(os.path.join(inc, h)) as f:
            for q in re.findall(r'^#\s*include\s+"([^"]+)"', f.read(), re.M):
                assert os.path.exists(os.path.join(inc, q)), (
                    "%s includes %s, which is not installed" % (h, q))
        src = os.path.join(work, "alone_%s.c" % h[:-2])
        with open(src, "w") as f:
            f.write("#include <cuckooflow/%s>\nint x;\n" % h)
        cc(["-std=c11", "-Wall", "-Wextra", "-Werror", "-c", src, "-o",
            src + ".o"] + cflags)


def test_pkg_config(destdir):
    for lib in LIBS:
        name = "cuckooflow-" + lib
        assert pkg_config(destdir, "--modversion", name) == [ENV["VERSION"]]
        assert "-l" + name in pkg_config(destdir, "--libs", name)
    # the users of cflow.h and blocklist.h get lib/cuckoo with them
    for lib in ("cflow", "blocklist"):
        assert "-lcuckooflow-cuckoo" in pkg_config(
            destdir, "--libs", "cuckooflow-" + lib)
    # a static link gets libxxhash, libm and threads too
    static = pkg_config(destdir, "--static", "--libs", "cuckooflow-cuckoo")
    assert {"-lxxhash", "-lm", "-pthread"} <= set(static), static


def needed(path):
    out = run(["readelf", "-d", path]).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^]]+)\]", out)


def build(destdir, work, name, static):
    pcs = ["cuckooflow-blocklist", "cuckooflow-cflow"]
    cflags = pkg_config(destdir, "--cflags", *pcs)
    libs = pkg_config(destdir, "--libs", *(["--static"] if static else []),
                      *pcs)
    if static:
        # -l:libX.a: the archive, though the shared library is beside it
        libs = [re.sub(r"^-l(cuckooflow-\w+)$", r"-l:lib\1.a", a)
                for a in libs]
    exe = os.path.join(work, name)
    cc(["-std=c11", "-Wall", "-Wextra", "-Werror",
        os.path.join(HERE, "use_libs.c"), "-o", exe] + cflags + libs)
    return exe


@pytest.mark.skipif(ENV.get("DEFAULT_LIBRARY") == "static",
                    reason="-Ddefault_library=static: no shared libraries")
def test_program_shared(destdir, work):
    """use_libs.c linked with the shared libraries, run on them."""
    exe = build(destdir, work, "use_shared", static=False)
    libdir = under(destdir, ENV["LIBDIR"])
    assert {"libcuckooflow-%s.so.%s" % (lib, ENV["SOVERSION"])
            for lib in LIBS} <= set(needed(exe))
    env = {"LD_LIBRARY_PATH": libdir}
    # the libraries the loader takes are those of the DESTDIR
    for line in run(["ldd", exe], env=env).stdout.splitlines():
        if "libcuckooflow-" in line:
            assert "=> " + libdir + "/" in line, line
    p = run([exe, os.path.join(work, "list.txt")], env=env)
    assert p.stdout == WANT
    for lib in LIBS:
        soname = re.search(r"\(SONAME\)\s+Library soname: \[([^]]+)\]", run(
            ["readelf", "-d", os.path.join(libdir, "libcuckooflow-%s.so"
                                           % lib)]).stdout)
        assert soname and soname.group(1) == "libcuckooflow-%s.so.%s" % (
            lib, ENV["SOVERSION"])


@pytest.mark.skipif(ENV.get("DEFAULT_LIBRARY") == "shared",
                    reason="-Ddefault_library=shared: no static libraries")
def test_program_static(destdir, work):
    """use_libs.c linked with the static libraries: runs on its own."""
    exe = build(destdir, work, "use_static", static=True)
    assert not [n for n in needed(exe) if "cuckooflow" in n]
    p = run([exe, os.path.join(work, "list.txt")])
    assert p.stdout == WANT


def test_control_missing_header(destdir, work):
    """A control: without an installed header the program does not
    build, so the builds above take the DESTDIR's headers alone."""
    copy = os.path.join(work, "broken")
    shutil.copytree(destdir, copy, symlinks=True)
    os.unlink(os.path.join(under(copy, ENV["INCLUDEDIR"]), "cuckooflow",
                           "cflow.h"))
    cflags = pkg_config(copy, "--cflags", "cuckooflow-blocklist")
    p = cc(["-fsyntax-only", os.path.join(HERE, "use_libs.c")] + cflags,
           check=False)
    assert p.returncode != 0 and "cflow.h" in p.stderr, p.stderr


def test_installed_programs(destdir, work):
    """The installed programs run (no path into the build tree)."""
    bindir = under(destdir, ENV["BINDIR"])
    out = os.path.join(work, "list.cf")
    run([os.path.join(bindir, "cuckooflow-filter"), "build",
         os.path.join(work, "list.txt"), "-o", out])
    p = run([os.path.join(bindir, "cuckooflow-filter"), "query", out,
             "198.51.100.7"])
    assert p.stdout == "198.51.100.7: prefix\n"
    if ENV["APP"] == "1":
        p = run([os.path.join(bindir, "cuckooflow"), "--no-huge", "-m", "64",
                 "--no-pci", "--no-telemetry", "--log-level=lib.*:error",
                 "--file-prefix=cfinst%d" % os.getpid(), "--", "--cfg",
                 os.path.join(under(destdir, ENV["SYSCONFDIR"]),
                              "cuckooflow", "cuckooflow.ini"), "--help"])
        assert "--blocklist FILE" in p.stdout


def unit_text(destdir, name):
    with open(os.path.join(destdir, ENV["UNITDIR"].lstrip("/"), name)) as f:
        return f.read()


def analyze_verify(destdir, work, name, text):
    """systemd-analyze verify on the unit, its programs moved into the
    DESTDIR: nothing to say."""
    analyze = shutil.which("systemd-analyze")
    assert analyze is not None, "systemd-analyze: Debian's systemd"
    for d in (ENV["BINDIR"], ENV["LIBEXECDIR"]):
        full = os.path.join(ENV["PREFIX"], d)
        text = text.replace("=" + full + "/", "=" + os.path.join(
            destdir, full.lstrip("/")) + "/").replace(
            " " + full + "/", " " + os.path.join(destdir, full.lstrip("/"))
            + "/")
    moved = os.path.join(work, name)
    with open(moved, "w") as f:
        f.write(text)
    p = run([analyze, "verify", "--man=no", moved], check=False)
    assert p.returncode == 0 and p.stdout + p.stderr == "", p.stderr


def test_unit(destdir, work):
    """The unit: its commands and files are the installed ones; it takes
    its lcores from cuckooflow.env, leaves hugepages to the admin (a
    check before the start, no reservation), says when it is ready
    (Type=notify), stops, restarts and reloads as it should; the
    exporter's unit runs the installed exporter with the service's file
    prefix; systemd-analyze verify finds nothing to say of either (their
    paths moved into the DESTDIR, where the programs are)."""
    text = unit_text(destdir, "cuckooflow.service")
    etc = os.path.join(ENV["PREFIX"], ENV["SYSCONFDIR"], "cuckooflow")
    libexec = os.path.join(ENV["PREFIX"], ENV["LIBEXECDIR"], "cuckooflow")
    for line in (
            "ExecStart=%s --file-prefix cuckooflow --lcores "
            "${CUCKOOFLOW_LCORES} $CUCKOOFLOW_EAL -- --cfg "
            "%s/cuckooflow.ini $CUCKOOFLOW_OPTS" % (
                os.path.join(ENV["PREFIX"], ENV["BINDIR"], "cuckooflow"),
                etc),
            "ExecStartPre=%s/cuckooflow-preflight" % libexec,
            "EnvironmentFile=-%s/cuckooflow.env" % etc,
            "ExecReload=/bin/kill -HUP $MAINPID",
            "Restart=on-failure",
            "Type=notify"):
        assert "\n" + line + "\n" in text, line
    # hugepages and CPUs are the admin's: not set by the unit
    assert "dpdk-hugepages.py --pagesize" not in text and \
        not re.search(r"^CPUAffinity=", text, re.M), text
    analyze_verify(destdir, work, "cuckooflow.service", text)
    exp = unit_text(destdir, "cuckooflow-exporter.service")
    assert "\nExecStart=/usr/bin/python3 %s/cuckooflow_exporter.py " \
        "--file-prefix cuckooflow $CUCKOOFLOW_EXPORTER_OPTS\n" % libexec \
        in exp and "\nEnvironmentFile=-%s/cuckooflow.env\n" % etc in exp
    analyze_verify(destdir, work, "cuckooflow-exporter.service", exp)


def preflight(destdir, work, env, meminfo, mounts):
    """The installed cuckooflow-preflight with @env and a /proc of
    @meminfo and @mounts: (exit status, stderr)."""
    proc = os.path.join(work, "proc")
    os.makedirs(proc, exist_ok=True)
    with open(os.path.join(proc, "meminfo"), "w") as f:
        f.write(meminfo)
    with open(os.path.join(proc, "mounts"), "w") as f:
        f.write(mounts)
    script = os.path.join(under(destdir, ENV["LIBEXECDIR"]), "cuckooflow",
                          "cuckooflow-preflight")
    p = subprocess.run([script], capture_output=True, text=True, timeout=DEADLINE,
                       env=dict(env, CUCKOOFLOW_PROC=proc,
                                PATH=ENV["PATH"]))
    return p.returncode, p.stderr


HUGE = "HugePages_Total:     512\nHugePages_Free:      512\n"
NO_HUGE = "HugePages_Total:       0\nHugePages_Free:        0\n"
MOUNTED = "hugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n"
NOT_MOUNTED = "proc /proc proc rw 0 0\n"


def test_preflight(destdir, work):
    """The unit's ExecStartPre checks, changes nothing, and says what is
    missing and how to give it: the lcores (CUCKOOFLOW_LCORES), hugepages
    reserved (the sysctl.d file installed, dpdk-hugepages.py) and
    hugetlbfs mounted; hugepages not with --no-huge. (Before: the unit
    set the host's reservation with dpdk-hugepages.py --reserve and pinned
    the service to CPUs 0-1.)"""
    lcores = {"CUCKOOFLOW_LCORES": "0@0,1@2"}
    assert preflight(destdir, work, lcores, HUGE, MOUNTED) == (0, "")
    rc, err = preflight(destdir, work, {}, HUGE, MOUNTED)
    assert rc == 1 and "CUCKOOFLOW_LCORES is not set" in err and \
        "CUCKOOFLOW_LCORES=0@0,1@2,2@3" in err, err
    rc, err = preflight(destdir, work, lcores, NO_HUGE, MOUNTED)
    assert rc == 1 and "no hugepages are reserved" in err and \
        "60-cuckooflow-hugepages.conf /etc/sysctl.d/" in err, err
    rc, err = preflight(destdir, work, lcores, HUGE, NOT_MOUNTED)
    assert rc == 1 and "no hugetlbfs is mounted" in err, err
    assert preflight(destdir, work, dict(lcores, CUCKOOFLOW_EAL="--no-pci "
                     "--no-huge -m 512"), NO_HUGE, NOT_MOUNTED) == (0, "")
