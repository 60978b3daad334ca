#!/usr/bin/python3
"""End-to-end tests of cuckooflow's settings: --cfg however getopt spells
it, the strict INI reader, string limits, --stats-json checked up front.

usage: test_config.py CUCKOOFLOW PCAP_DIR
Prints TAP. Each run uses its own --file-prefix and --no-huge, replays
tcp.pcap with --exit-on-eof --clock pkt, and has a timeout.
"""
import json
import os
import subprocess
import sys
import tempfile

import tap  # tests/e2e/tap.py

APP, PCAPS = sys.argv[1], sys.argv[2]
PCAP = os.path.join(PCAPS, "tcp.pcap")
TMP = tempfile.mkdtemp(prefix="cuckooflow-cfg-")
results = []
runs = 0


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
    return p.returncode, (p.stdout + p.stderr).decode(errors="replace")


def case(name, ok, detail=""):
    results.append((name, bool(ok), detail))


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


def refused(name, args, words, timeout=30):
    """The run fails, before any packet is counted, and its output holds
    every word."""
    rc, log = app(args, timeout=timeout)
    missing = [w for w in words if w not in log]
    case(name, rc not in (0, None) and not missing and
         "rx_packets" not in log, "rc %s, missing %s: %s" % (
             rc, missing, log.strip()[-400:]))


def test_cfg_spellings():
    """--cfg=F, --cf F and --cfg F all read F; the command line wins,
    wherever it stands."""
    out = fresh("spell.json")
    ini = write("spell.ini", "[flows]\nflows = 5000\n[run]\n"
                "stats_json = %s\n" % out)
    for spelling in (["--cfg", ini], ["--cfg=" + ini], ["--cf", ini],
                     ["--cf=" + ini]):
        fresh("spell.json")
        rc, log = app(spelling)
        case("%s reads the file" % (spelling[0].replace(ini, "F") +
                                    (" F" if len(spelling) > 1 else "")),
             rc == 0 and capacity(out) == 5000,
             "rc %s, capacity %s: %s" % (rc, capacity(out), log[-300:]))
    bad = write("spell_bad.ini", "[flows]\nfp_bits = 40\n")
    for spelling in (["--cfg=" + bad], ["--cf", bad]):
        refused("%s F: a bad value in F is refused with F:line" %
                spelling[0].split("=")[0], spelling,
                ["%s:2:" % bad, "fp_bits"])
    cli = fresh("spell_cli.json")
    fresh("spell.json")
    rc, log = app(["--stats-json", cli, "--flows", "6000", "--cf", ini])
    case("command line before --cf F still overrides F",
         rc == 0 and capacity(cli) == 6000 and not os.path.exists(out),
         "rc %s, capacity %s, file's json %s: %s" % (
             rc, capacity(cli), os.path.exists(out), log[-300:]))


def test_ambiguous():
    """glibc takes an abbreviation of several options alike (all with a
    value) for the first: --time 5 set --timeout-tcp, --c F --clock."""
    for args in (["--time", "5"], ["--c", "x.ini"], ["--stats", "1"]):
        refused("%s is refused as ambiguous" % args[0], args,
                [args[0] + ":", "ambiguous"])
    rc, log = app(["--timeout-t", "5", "--exit"])
    case("an unambiguous abbreviation still works", rc == 0,
         "rc %s: %s" % (rc, log[-300:]))


def test_cfg_twice():
    a = write("twice_a.ini", "[flows]\nfp_bits = 16\n")
    b = write("twice_b.ini", "[flows]\nfp_bits = 20\n")
    for args in (["--cfg", a, "--cfg", b], ["--cfg=" + a, "--cf", b]):
        refused("%s twice is refused" % args[0].split("=")[0], args,
                ["--cfg", "twice"])


def test_sections():
    out = fresh("repeat.json")
    ini = write("repeat.ini", "[run]\nexit_on_eof = 1\n[flows]\n"
                "flows = 5000\n[run]\nstats_json = %s\n" % out)
    rc, log = app(["--cfg", ini])
    case("a repeated section is read whole", rc == 0 and
         capacity(out) == 5000, "rc %s: %s" % (rc, log[-300:]))
    ini = write("seventeen.ini", "[flows]\n" * 16 + "[flows]\nfp_bits = 40\n")
    refused("the 17th section is read (bad value at line 18 refused)",
            ["--cfg", ini], ["%s:18:" % ini, "fp_bits"])
    ini = write("unknown_section.ini", "[flows]\nfp_bits = 16\n\n[flow]\n"
                "fp_bits = 16\n")
    refused("an unknown section is refused with file:line", ["--cfg", ini],
            ["%s:4:" % ini, "[flow]"])
    ini = write("unknown_key.ini", "; comment\n[flows]\nno_such_key = 1\n")
    refused("an unknown key is refused with file:line", ["--cfg", ini],
            ["%s:3:" % ini, "no_such_key"])
    ini = write("outside.ini", "fp_bits = 16\n[flows]\n")
    refused("a key before any section is refused with file:line",
            ["--cfg", ini], ["%s:1:" % ini, "fp_bits"])


def test_duplicates():
    ini = write("dup.ini", "[flows]\nfp_bits = 16\n; again\nfp_bits = 20\n")
    refused("a key given twice in a section: both lines named",
            ["--cfg", ini], ["%s:4:" % ini, "fp_bits", "line 2"])
    ini = write("dup_sections.ini", "[flows]\nfp_bits = 16\n[run]\n"
                "exit_on_eof = 1\n[flows]\nfp_bits = 20\n")
    refused("a key given again in a repeated section: both lines named",
            ["--cfg", ini], ["%s:6:" % ini, "fp_bits", "line 2"])
    ini = write("many_keys.ini", "[flows]\n" + "fp_bits = 12\n" * 32 +
                "no_such_key = 1\n")
    refused("33 keys in a section are not cut to 32", ["--cfg", ini],
            ["%s:3:" % ini, "fp_bits", "line 2"])


def test_bytes():
    ini = write("nul.ini", b"[flows]\n\0fp_bits = 40\n")
    refused("a line starting with a NUL byte is refused with file:line",
            ["--cfg", ini], ["%s:2:" % ini, "NUL"])
    ini = write("nul_mid.ini", b"[flows]\nfp_bits = 16\0 40\n")
    refused("a NUL byte inside a line is refused with file:line",
            ["--cfg", ini], ["%s:2:" % ini, "NUL"])
    ini = write("long_line.ini", "[flows]\n;" + "x" * 5000 + "\n")
    refused("a line longer than the bound is refused with file:line",
            ["--cfg", ini], ["%s:2:" % ini, "longer"])
    ini = write("big.ini", ("; " + "x" * 98 + "\n") * 11000)
    refused("a file over 1 MiB is refused", ["--cfg", ini],
            [ini, "MiB"])
    out = fresh("comments.json")
    ini = write("comments.ini", "# a comment\r\n\r\n  ; another\r\n"
                "[ flows ]\r\n  flows=5000  ; inline\r\n"
                "fp_bits = 16\t# inline\r\n[run]\r\n"
                "stats_json = %s\r\n" % out)
    rc, log = app(["--cfg", ini])
    case("# and ; comments (inline after a blank), blank lines, CRLF and "
         "spaces are accepted",
         rc == 0 and capacity(out) == 5000, "rc %s: %s" % (rc, log[-300:]))


def test_not_regular():
    d = os.path.join(TMP, "dir.ini")
    os.makedirs(d, exist_ok=True)
    refused("--cfg DIR is refused by name", ["--cfg", d],
            [d, "a directory"])
    fifo = os.path.join(TMP, "fifo.ini")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    refused("--cfg FIFO is refused by name, without blocking",
            ["--cfg", fifo], [fifo, "a FIFO"], timeout=20)
    refused("--cfg /dev/null is refused by name", ["--cfg", "/dev/null"],
            ["/dev/null", "a character device"])


def test_string_limits():
    # 284 characters, all of it a path that could exist.
    long_path = os.path.join(TMP, "d" * 40, "e" * 40, "f" * 40, "g" * 40)
    long_path += "/" + "s" * (284 - len(long_path) - 6) + ".json"
    assert len(long_path) == 284, len(long_path)
    os.makedirs(os.path.dirname(long_path), exist_ok=True)
    ini = write("long_value.ini", "[run]\nstats_json = %s\n" % long_path)
    refused("a 284-character stats_json in the file is refused, not cut",
            ["--cfg", ini], ["%s:2:" % ini, "stats_json", "255"])
    refused("a 284-character --stats-json is refused, not cut",
            ["--stats-json", long_path], ["--stats-json", "255"])
    ini = write("long_map.ini", "[workers]\nconfig = %s\n" %
                ",".join(["(0,0,1)"] * 200))
    refused("a 1399-character workers.config is refused, not cut",
            ["--cfg", ini], ["%s:2:" % ini, "config", "1023"])


def test_stats_json_checked_first():
    d = os.path.join(TMP, "out_dir")
    os.makedirs(d, exist_ok=True)
    refused("--stats-json DIR is refused before the run", ["--stats-json",
            d], ["--stats-json", d, "directory"])
    refused("--stats-json DIR/ is refused before the run", ["--stats-json",
            d + "/"], ["--stats-json", "directory"])
    missing = os.path.join(TMP, "no_such_dir", "s.json")
    refused("--stats-json in a missing directory is refused before the run",
            ["--stats-json", missing], ["--stats-json", missing])
    not_dir = os.path.join(write("a_file", "x"), "s.json")
    refused("--stats-json under a regular file is refused before the run",
            ["--stats-json", not_dir], ["--stats-json", not_dir])
    ini = write("json_dir.ini", "[run]\nstats_json = %s\n" % d)
    refused("stats_json = DIR in the file is refused with file:line",
            ["--cfg", ini], ["%s:2:" % ini, "stats_json", "directory"])
    out = fresh("later.json")
    rc, log = app(["--cfg", ini, "--stats-json", out])
    case("a bad stats_json in the file overridden by the command line is "
         "not checked", rc == 0 and os.path.exists(out),
         "rc %s: %s" % (rc, log[-300:]))
    # The check neither truncates an existing file (replaced only at the
    # run's end) nor leaves a new one behind when the run fails later.
    keep = write("keep.json", "old")
    missing_list = os.path.join(TMP, "no_such_blocklist.txt")
    rc, log = app(["--stats-json", keep, "--blocklist", missing_list])
    with open(keep) as f:
        kept = f.read()
    new = fresh("new.json")
    rc2, log2 = app(["--stats-json", new, "--blocklist", missing_list])
    case("the check neither truncates nor leaves a file",
         rc not in (0, None) and kept == "old" and rc2 not in (0, None) and
         not os.path.exists(new), "rc %s %s, kept %r, new exists %s: %s" % (
             rc, rc2, kept, os.path.exists(new), log2[-200:]))


def test_blocklist_section():
    """The blocklist's keys are in [blocklist]; [filter], their old
    section, still reads them, with one deprecation warning naming
    file:line."""
    out = fresh("blsect.json")
    ini = write("blsect.ini", "[run]\nstats_json = %s\n[blocklist]\n"
                "blocklist_unparsed = pass\n" % out)
    rc, log = app(["--cfg", ini])
    case("[blocklist] holds the blocklist's keys", rc == 0 and
         os.path.exists(out) and "deprecated" not in log,
         "rc %s: %s" % (rc, log[-300:]))
    out = fresh("blsect_old.json")
    ini = write("blsect_old.ini", "[run]\nstats_json = %s\n\n[filter]\n"
                "blocklist_unparsed = pass\n" % out)
    rc, log = app(["--cfg", ini])
    warned = [l for l in log.splitlines() if "deprecated" in l]
    case("[filter] is read as [blocklist], with one warning naming "
         "file:line", rc == 0 and os.path.exists(out) and
         len(warned) == 1 and "%s:4:" % ini in warned[0] and
         "[blocklist]" in warned[0], "rc %s: %s" % (rc, log[-300:]))
    ini = write("blsect_bad.ini", "[filter]\nblocklist_unparsed = maybe\n")
    refused("a bad value under [filter] is still refused with file:line",
            ["--cfg", ini], ["%s:2:" % ini, "blocklist_unparsed"])


def main():
    tap.run((test_cfg_spellings, test_ambiguous, test_cfg_twice,
             test_sections, test_duplicates, test_bytes, test_not_regular,
             test_string_limits, test_stats_json_checked_first,
             test_blocklist_section), results,
            TMP)

if __name__ == "__main__":
    main()
