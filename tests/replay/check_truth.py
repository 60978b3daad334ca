#!/usr/bin/python3
"""Replay every capture in a directory that has a .truth.json beside it
and compare cflow_replay's counters with the truth. With 32-bit
fingerprints they must be equal; with shorter ones, flows may only be
lost to false positives (a new flow matching another's fingerprint),
within a generous multiple of the number expected.

usage: check_truth.py CFLOW_REPLAY PCAP_DIR
Prints TAP, one case per capture and fingerprint width.
"""
import glob
import json
import os
import subprocess
import sys

EXACT = ("packets", "bytes", "non_ip", "fragments", "malformed",
         "malformed_total", "flows_evicted", "insert_failed")


def run(replay, pcap, fp_bits, args=()):
    out = subprocess.run([replay, "--fp-bits", str(fp_bits), "--seed", "7"] +
                         list(args) + [pcap], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


def compare(got, want, fp_bits):
    errors = []
    for key, value in want.items():
        if fp_bits == 32 or key in EXACT:
            if got.get(key) != value:
                errors.append("%s: %r, truth %r" % (key, got.get(key), value))
    if fp_bits < 32:
        # Lookups of untracked flows, each against at most 8 entries of a
        # table of 2^16 slots: the expected number of false positives.
        lookups = want["flows_new"] + want["orphan_close"]
        expected = lookups * 8 * min(1.0, lookups / 65536) / 2 ** fp_bits
        bound = 2 + 4 * expected
        lost = want["flows_new"] - got["flows_new"]
        if not 0 <= lost <= bound:
            errors.append("flows_new %d, truth %d (bound %.1f)" %
                          (got["flows_new"], want["flows_new"], bound))
    return errors


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    replay, pcap_dir = sys.argv[1], sys.argv[2]
    truths = sorted(glob.glob(os.path.join(pcap_dir, "*.truth.json")))
    cases = [(t, fp) for t in truths for fp in (32, 12)]
    print("1..%d" % len(cases))
    failed = 0
    for n, (truth_file, fp_bits) in enumerate(cases, 1):
        pcap = truth_file[: -len(".truth.json")] + ".pcap"
        name = "%s fp%d" % (os.path.basename(pcap), fp_bits)
        with open(truth_file) as f:
            want = json.load(f)
        # The options the truth holds for (--decap): not a counter.
        args = want.pop("args", [])
        try:
            errors = compare(run(replay, pcap, fp_bits, args), want,
                             fp_bits)
        except (subprocess.CalledProcessError, ValueError) as e:
            errors = [str(e)]
        for e in errors:
            print("# " + e)
        print("%s %d - %s" % ("not ok" if errors else "ok", n, name))
        failed += bool(errors)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
