#!/usr/bin/python3
"""Replay every capture in a directory that has a .truth.json beside it
and compare cflow_replay's counters with the truth. With 32-bit
fingerprints they must be equal; with shorter ones, flows may only be
lost to false positives (a new flow matching another's fingerprint),
within a generous multiple of the number expected. With records on
(--records), every tracked packet and its IP octets (the truth's
record_bytes) are in exactly one flow record: the records' sums equal
the truth's, and the counters are those of a run without records.

usage: /usr/bin/python3 -m pytest tests/replay/check_truth.py
           [--cflow-replay BIN] [--pcaps DIR]
One test per capture and fingerprint width.
"""
import json
import subprocess

import pytest

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


@pytest.mark.parametrize("fp_bits", (32, 12))
def test_truth(cflow_replay, truth_file, fp_bits):
    pcap = truth_file[: -len(".truth.json")] + ".pcap"
    with open(truth_file) as f:
        want = json.load(f)
    # The options the truth holds for (--decap): not a counter.
    args = want.pop("args", [])
    record_bytes = want.pop("record_bytes")
    errors = compare(run(cflow_replay, pcap, fp_bits, args), want, fp_bits)
    assert not errors
    if fp_bits != 32:
        return
    got = run(cflow_replay, pcap, fp_bits, args + ["--records"])
    assert not compare(got, want, fp_bits)
    assert (got["record_packets"], got["record_bytes"]) == \
        (want["flows_new"] + want["flows_seen"] + want["flows_closed"],
         record_bytes)
    assert got["records"] == want["flows_new"]
