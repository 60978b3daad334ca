#!/usr/bin/python3
"""End-to-end tests of cuckooflow's settings: --cfg however getopt spells
it, the strict INI reader, string limits, --stats-json checked up front.

usage: /usr/bin/python3 -m pytest tests/e2e/test_config.py
           [--cuckooflow BIN] [--pcaps DIR]
Each run uses its own --file-prefix and --no-huge, replays tcp.pcap with
--exit-on-eof --clock pkt, and has a timeout.
"""
import json
import os
import subprocess

import pytest

from harness import no_crash

APP = PCAP = TMP = None
runs = 0


@pytest.fixture(scope="module", autouse=True)
def _paths(cuckooflow, pcaps, tmp_path_factory):
    global APP, PCAP, TMP
    APP, PCAP = cuckooflow, os.path.join(pcaps, "tcp.pcap")
    TMP = str(tmp_path_factory.mktemp("cuckooflow-cfg"))


def app(args=(), timeout=30):
    """Run the binary on tcp.pcap; return (exit code, stdout+stderr).
    A run past its timeout counts as exit code None."""
    global runs
    runs += 1
    eal = ["-l", "0,1", "--no-pci", "--no-huge", "-m", "512",
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


def refused(args, words, timeout=30):
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


def ini_refused(name, text, line, *words):
    """--cfg F of @text is refused naming F:@line and @words."""
    def build():
        ini = write(name, text)
        return ["--cfg", ini], ["%s:%d:" % (ini, line)] + list(words)
    return build


def twice(how):
    def build():
        a = write("twice_a.ini", "[flows]\nfp_bits = 16\n")
        b = write("twice_b.ini", "[flows]\nfp_bits = 20\n")
        args = ["--cfg", a, "--cfg", b] if how == "--cfg" else \
            ["--cfg=" + a, "--cf", b]
        return args, ["--cfg", "twice"]
    return build


def big_file():
    ini = write("big.ini", ("; " + "x" * 98 + "\n") * 11000)
    return ["--cfg", ini], [ini, "MiB"]


def not_regular(kind):
    def build():
        if kind == "DIR":
            d = os.path.join(TMP, "dir.ini")
            os.makedirs(d, exist_ok=True)
            return ["--cfg", d], [d, "a directory"]
        if kind == "FIFO":
            fifo = os.path.join(TMP, "fifo.ini")
            if not os.path.exists(fifo):
                os.mkfifo(fifo)
            return ["--cfg", fifo], [fifo, "a FIFO"], 20
        return ["--cfg", "/dev/null"], ["/dev/null", "a character device"]
    return build


def long_path():
    """284 characters, all of it a path that could exist."""
    path = os.path.join(TMP, "d" * 40, "e" * 40, "f" * 40, "g" * 40)
    path += "/" + "s" * (284 - len(path) - 6) + ".json"
    assert len(path) == 284, len(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path


def long_stats_json_in_file():
    ini = write("long_value.ini", "[run]\nstats_json = %s\n" % long_path())
    return ["--cfg", ini], ["%s:2:" % ini, "stats_json", "255"]


def long_map():
    ini = write("long_map.ini", "[workers]\nconfig = %s\n" %
                ",".join(["(0,0,1)"] * 200))
    return ["--cfg", ini], ["%s:2:" % ini, "config", "1023"]


def out_dir():
    d = os.path.join(TMP, "out_dir")
    os.makedirs(d, exist_ok=True)
    return d


def json_dir_ini():
    return write("json_dir.ini", "[run]\nstats_json = %s\n" % out_dir())


def json_missing_dir():
    missing = os.path.join(TMP, "no_such_dir", "s.json")
    return ["--stats-json", missing], ["--stats-json", missing]


def json_under_file():
    not_dir = os.path.join(write("a_file", "x"), "s.json")
    return ["--stats-json", not_dir], ["--stats-json", not_dir]


REFUSALS = {
    # --cfg however getopt spells it
    "--cfg=F: a bad value in F is refused with F:line": bad_fp_bits("--cfg="),
    "--cf F: a bad value in F is refused with F:line": bad_fp_bits("--cf"),
    # glibc takes an abbreviation of several options alike (all with a
    # value) for the first: --time 5 set --timeout-tcp, --c F --clock.
    "--time is refused as ambiguous": lambda: (
        ["--time", "5"], ["--time:", "ambiguous"]),
    "--c is refused as ambiguous": lambda: (
        ["--c", "x.ini"], ["--c:", "ambiguous"]),
    "--stats is refused as ambiguous": lambda: (
        ["--stats", "1"], ["--stats:", "ambiguous"]),
    "--cfg twice is refused": twice("--cfg"),
    "--cfg= and --cf: twice is refused": twice("--cfg="),
    # sections
    "the 17th section is read (bad value at line 18 refused)": ini_refused(
        "seventeen.ini", "[flows]\n" * 16 + "[flows]\nfp_bits = 40\n", 18,
        "fp_bits"),
    "an unknown section is refused with file:line": ini_refused(
        "unknown_section.ini", "[flows]\nfp_bits = 16\n\n[flow]\n"
        "fp_bits = 16\n", 4, "[flow]"),
    "an unknown key is refused with file:line": ini_refused(
        "unknown_key.ini", "; comment\n[flows]\nno_such_key = 1\n", 3,
        "no_such_key"),
    "a key before any section is refused with file:line": ini_refused(
        "outside.ini", "fp_bits = 16\n[flows]\n", 1, "fp_bits"),
    # duplicates
    "a key given twice in a section: both lines named": ini_refused(
        "dup.ini", "[flows]\nfp_bits = 16\n; again\nfp_bits = 20\n", 4,
        "fp_bits", "line 2"),
    "a key given again in a repeated section: both lines named": ini_refused(
        "dup_sections.ini", "[flows]\nfp_bits = 16\n[run]\n"
        "exit_on_eof = 1\n[flows]\nfp_bits = 20\n", 6, "fp_bits", "line 2"),
    "33 keys in a section are not cut to 32": ini_refused(
        "many_keys.ini", "[flows]\n" + "fp_bits = 12\n" * 32 +
        "no_such_key = 1\n", 3, "fp_bits", "line 2"),
    # bytes
    "a line starting with a NUL byte is refused with file:line": ini_refused(
        "nul.ini", b"[flows]\n\0fp_bits = 40\n", 2, "NUL"),
    "a NUL byte inside a line is refused with file:line": ini_refused(
        "nul_mid.ini", b"[flows]\nfp_bits = 16\0 40\n", 2, "NUL"),
    "a line longer than the bound is refused with file:line": ini_refused(
        "long_line.ini", "[flows]\n;" + "x" * 5000 + "\n", 2, "longer"),
    "a file over 1 MiB is refused": big_file,
    # not regular files
    "--cfg DIR is refused by name": not_regular("DIR"),
    "--cfg FIFO is refused by name, without blocking": not_regular("FIFO"),
    "--cfg /dev/null is refused by name": not_regular("/dev/null"),
    # string limits
    "a 284-character stats_json in the file is refused, not cut":
        long_stats_json_in_file,
    "a 284-character --stats-json is refused, not cut": lambda: (
        ["--stats-json", long_path()], ["--stats-json", "255"]),
    "a 1399-character workers.config is refused, not cut": long_map,
    # --stats-json checked before the run
    "--stats-json DIR is refused before the run": lambda: (
        ["--stats-json", out_dir()], ["--stats-json", out_dir(),
                                      "directory"]),
    "--stats-json DIR/ is refused before the run": lambda: (
        ["--stats-json", out_dir() + "/"], ["--stats-json", "directory"]),
    "--stats-json in a missing directory is refused before the run":
        json_missing_dir,
    "--stats-json under a regular file is refused before the run":
        json_under_file,
    "stats_json = DIR in the file is refused with file:line": lambda: (
        ["--cfg", json_dir_ini()], ["%s:2:" % json_dir_ini(), "stats_json",
                                    "directory"]),
}


@pytest.mark.parametrize("name", REFUSALS)
def test_refused(name):
    refused(*REFUSALS[name]())


@pytest.mark.parametrize("spelling", ("--cfg F", "--cfg=F", "--cf F",
                                      "--cf=F"))
def test_cfg_spelling_reads_the_file(spelling):
    """--cfg=F, --cf F and --cfg F all read F."""
    out = fresh("spell.json")
    ini = write("spell.ini", "[flows]\nflows = 5000\n[run]\n"
                "stats_json = %s\n" % out)
    opt, sep = spelling[:-1].rstrip(" ="), spelling[-2]
    args = [opt + "=" + ini] if sep == "=" else [opt, ini]
    rc, log = app(args)
    assert rc == 0 and capacity(out) == 5000, \
        "rc %s, capacity %s: %s" % (rc, capacity(out), log[-300:])


def test_command_line_before_cf_still_overrides():
    """The command line wins, wherever it stands."""
    out = fresh("spell.json")
    ini = write("spell.ini", "[flows]\nflows = 5000\n[run]\n"
                "stats_json = %s\n" % out)
    cli = fresh("spell_cli.json")
    rc, log = app(["--stats-json", cli, "--flows", "6000", "--cf", ini])
    assert rc == 0 and capacity(cli) == 6000 and not os.path.exists(out), \
        "rc %s, capacity %s, file's json %s: %s" % (
            rc, capacity(cli), os.path.exists(out), log[-300:])


def test_unambiguous_abbreviation_still_works():
    rc, log = app(["--timeout-t", "5", "--exit"])
    assert rc == 0, "rc %s: %s" % (rc, log[-300:])


def test_repeated_section_read_whole():
    out = fresh("repeat.json")
    ini = write("repeat.ini", "[run]\nexit_on_eof = 1\n[flows]\n"
                "flows = 5000\n[run]\nstats_json = %s\n" % out)
    rc, log = app(["--cfg", ini])
    assert rc == 0 and capacity(out) == 5000, "rc %s: %s" % (rc, log[-300:])


def test_comments_blank_lines_crlf_spaces_accepted():
    """# and ; comments (inline after a blank), blank lines, CRLF and
    spaces are accepted."""
    out = fresh("comments.json")
    ini = write("comments.ini", "# a comment\r\n\r\n  ; another\r\n"
                "[ flows ]\r\n  flows=5000  ; inline\r\n"
                "fp_bits = 16\t# inline\r\n[run]\r\n"
                "stats_json = %s\r\n" % out)
    rc, log = app(["--cfg", ini])
    assert rc == 0 and capacity(out) == 5000, "rc %s: %s" % (rc, log[-300:])


def test_bad_stats_json_in_file_overridden_not_checked():
    out = fresh("later.json")
    rc, log = app(["--cfg", json_dir_ini(), "--stats-json", out])
    assert rc == 0 and os.path.exists(out), "rc %s: %s" % (rc, log[-300:])


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


def test_blocklist_section_holds_its_keys():
    """The blocklist's keys are in [blocklist]."""
    out = fresh("blsect.json")
    ini = write("blsect.ini", "[run]\nstats_json = %s\n[blocklist]\n"
                "blocklist_unparsed = pass\n" % out)
    rc, log = app(["--cfg", ini])
    assert rc == 0 and os.path.exists(out) and "deprecated" not in log, \
        "rc %s: %s" % (rc, log[-300:])


def test_filter_section_read_as_blocklist_with_one_warning():
    """[filter], the old section, still reads them, with one deprecation
    warning naming file:line."""
    out = fresh("blsect_old.json")
    ini = write("blsect_old.ini", "[run]\nstats_json = %s\n\n[filter]\n"
                "blocklist_unparsed = pass\n" % out)
    rc, log = app(["--cfg", ini])
    warned = [l for l in log.splitlines() if "deprecated" in l]
    assert rc == 0 and os.path.exists(out) and len(warned) == 1 and \
        "%s:4:" % ini in warned[0] and "[blocklist]" in warned[0], \
        "rc %s: %s" % (rc, log[-300:])


def test_bad_value_under_filter_section_refused():
    ini = write("blsect_bad.ini", "[filter]\nblocklist_unparsed = maybe\n")
    refused(["--cfg", ini], ["%s:2:" % ini, "blocklist_unparsed"])
