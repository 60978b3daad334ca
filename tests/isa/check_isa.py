#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check that a binary built for a baseline (-Dmarch=x86-64-v2) runs on
any x86-64 with SSE4.2: no instruction of a later level outside the
AVX2/AVX-512 clones of CFU_TARGET_CLONES (lib/cfutil/cfutil.h), which the
loader picks only on a CPU that has them.

    check_isa.py [--clones] BINARY...

Beyond the baseline: any VEX or EVEX encoded instruction (AVX, AVX2,
AVX-512, BMI1/2, FMA, F16C: first opcode byte C4, C5 or 62 after any
segment or address-size prefix; neither is a valid legacy opcode in
64-bit mode), LZCNT (on an older CPU it runs as BSR and answers
otherwise) and MOVBE. TZCNT is allowed: compilers emit it for BSF where
the operand is known non-zero, on which the two agree.

--clones: also require each BINARY that holds lib/cuckoo's hot
functions to hold their clones, each with instructions beyond the
baseline (the check would pass on a build that did no dispatch at all
otherwise).

Exit status 0 if every BINARY passes, 1 with each offending function
and a sample of its instructions listed, 2 on a usage error.
"""

import re
import subprocess
import sys

# gcc: f.arch_x86_64_v3; clang: f.arch_x86-64-v3.0, f.avx2.0
CLONE = re.compile(r"\.(arch_x86[-_]64[-_]v[34]|avx2|avx512bw)(\.\d+)?$")
FUNC = re.compile(r"^[0-9a-f]+ <(.+)>:$")
INSN = re.compile(r"^\s*[0-9a-f]+:\t([0-9a-f ]+)\t(\S+)")
PREFIXES = {"26", "2e", "36", "3e", "64", "65", "67"}
HOT = ["cf_lookup_bulk", "cf_lookup_bulk_values", "cf_scan_batch",
       "cf_scan_due"]


def beyond_baseline(raw, mnemonic):
    """Whether an instruction (its bytes, its mnemonic) needs more than
    x86-64-v2."""
    b = raw.split()
    while b and b[0] in PREFIXES:
        b = b[1:]
    if b and b[0] in ("c4", "c5", "62"):
        return True
    return mnemonic.startswith(("lzcnt", "movbe"))


def scan(path):
    """{function: [offending instructions]} and the set of functions
    with instructions beyond the baseline, clones included."""
    out = subprocess.run(["objdump", "-d", "-w", path],
                         capture_output=True, text=True, check=True).stdout
    func, bad, beyond, funcs = None, {}, set(), set()
    for line in out.splitlines():
        m = FUNC.match(line)
        if m:
            func = m.group(1)
            if "@" not in func:  # not a PLT entry
                funcs.add(func.split(".")[0])
            continue
        m = INSN.match(line)
        if not m or func is None:
            continue
        if beyond_baseline(m.group(1), m.group(2)):
            beyond.add(func)
            if not CLONE.search(func):
                bad.setdefault(func, []).append(line.strip())
    return bad, beyond, funcs


def main(argv):
    clones = "--clones" in argv
    paths = [a for a in argv if a != "--clones"]
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    failed = False
    for path in paths:
        bad, beyond, funcs = scan(path)
        for func, insns in sorted(bad.items()):
            failed = True
            print("%s: %s: %d instructions beyond x86-64-v2 outside a "
                  "clone, e.g.:" % (path, func, len(insns)))
            for insn in insns[:3]:
                print("    " + insn)
        if clones:
            for hot in HOT:
                if hot not in funcs:
                    continue  # lib/cuckoo is not in this one
                have = [f for f in beyond if CLONE.search(f) and
                        f.split(".")[0] == hot]
                if len(have) < 2:
                    failed = True
                    print("%s: %s: no AVX2 and AVX-512 clones (found: %s)"
                          % (path, hot, ", ".join(sorted(have)) or
                             "none"))
        if not bad:
            print("%s: nothing beyond x86-64-v2 outside %d cloned "
                  "functions" % (path, len([f for f in beyond
                                           if CLONE.search(f)])))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
