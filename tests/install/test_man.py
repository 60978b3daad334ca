"""The man pages against the programs' --help, so that they cannot drift
apart: every option --help prints is described in the page's source
(docs/man/*.8.scd) and every option the page describes is in --help; for
cuckooflow, each option's default and config key as --help and
config/cuckooflow.ini give them."""
import os
import re
import subprocess

from harness import DEADLINE, help_options, ini_keys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MAN = os.path.join(ROOT, "docs", "man")
INI = os.path.join(ROOT, "config", "cuckooflow.ini")

# an option: a dash (or two) and a letter, not inside a word
OPTION = re.compile(r"(?<![\w-])(--?[a-zA-Z][a-z0-9-]*)")


def man_source(name):
    with open(os.path.join(MAN, name + ".8.scd")) as f:
        return f.read()


def described(source):
    """{option: its paragraph} of the definition lines of the page's
    OPTIONS: a line that starts with a bold option (*--flows* _N_, *-h*,
    *--help*), then its indented text."""
    out = {}
    lines = source.splitlines()
    section = None
    for i, line in enumerate(lines):
        if line.startswith("# "):
            section = line[2:]
        if section != "OPTIONS" or not line.startswith("*-"):
            continue
        text = []
        for more in lines[i + 1:]:
            if not more.startswith("\t"):
                break
            text.append(more.strip())
        for opt in re.findall(r"\*(--?[a-zA-Z][a-z0-9-]*)\*", line):
            out[opt] = " ".join(text)
    return out


def app_help(cuckooflow):
    p = subprocess.run([cuckooflow, "--no-huge", "-m", "64", "--no-pci",
                        "--no-telemetry", "--log-level=lib.*:error",
                        "--file-prefix=cfman%d" % os.getpid(), "--",
                        "--help"], capture_output=True, text=True,
                       timeout=DEADLINE)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def test_cuckooflow_options(cuckooflow):
    """Every option of cuckooflow --help is in cuckooflow(8), and the
    other way round."""
    helped = help_options(app_help(cuckooflow))
    man = described(man_source("cuckooflow"))
    assert len(helped) > 40
    missing = sorted(set(helped) - set(man))
    extra = sorted(set(man) - set(helped))
    assert not missing, "in --help, not in cuckooflow.8.scd: %s" % missing
    assert not extra, "in cuckooflow.8.scd, not in --help: %s" % extra


def test_cuckooflow_defaults(cuckooflow):
    """Each option's default and config key in cuckooflow(8) are the ones
    --help prints, and the key is one of config/cuckooflow.ini."""
    helped = help_options(app_help(cuckooflow))
    man = described(man_source("cuckooflow"))
    keys = ini_keys(INI)
    bad = []
    for opt, o in sorted(helped.items()):
        text = man.get(opt, "")
        m = re.search(r"\((\w+\.\w+); default: ([^)]*)\)", text)
        if o["key"] is None:
            if m is not None:
                bad.append("%s: key %s in the page, none in --help"
                           % (opt, m.group(1)))
            continue
        if m is None:
            bad.append("%s: no (section.key; default: ...) in the page"
                       % opt)
            continue
        if not m.group(2).startswith(o["default"]):
            bad.append("%s: default %r in the page, %r in --help"
                       % (opt, m.group(2), o["default"]))
        if m.group(1) != o["key"]:
            bad.append("%s: key %s in the page, %s in --help"
                       % (opt, m.group(1), o["key"]))
        if m.group(1) not in keys:
            bad.append("%s: key %s is not in config/cuckooflow.ini"
                       % (opt, m.group(1)))
    assert not bad, "\n".join(bad)


def test_filter_options(cuckooflow_filter):
    """Every option of cuckooflow-filter --help is in
    cuckooflow-filter(8), and the other way round."""
    p = subprocess.run([cuckooflow_filter, "--help"], capture_output=True,
                       text=True, timeout=DEADLINE)
    assert p.returncode == 0, p.stderr
    helped = set(OPTION.findall(p.stdout))
    man = described(man_source("cuckooflow-filter"))
    assert {"-o", "--fp-bits", "--help"} <= helped
    missing = sorted(helped - set(man))
    extra = sorted(set(man) - helped - {"-h"})
    assert not missing, "in --help, not in cuckooflow-filter.8.scd: %s" % (
        missing)
    assert not extra, "in cuckooflow-filter.8.scd, not in --help: %s" % (
        extra)


def test_filter_commands(cuckooflow_filter):
    """Each command of the usage has a section in the page."""
    p = subprocess.run([cuckooflow_filter, "--help"], capture_output=True,
                       text=True, timeout=DEADLINE)
    commands = set(re.findall(r"cuckooflow-filter (\w+) ", p.stdout))
    source = man_source("cuckooflow-filter")
    assert commands == {"build", "query", "info"}
    for c in sorted(commands):
        assert re.search(r"^\*%s\* _" % c, source, re.M), c
