"""The end-to-end scripts' runner: run the test functions, record a
crash of one as its failure, print TAP, exit non-zero on any failure.

Each result is (name, ok, detail): ok True or False, None for a SKIP,
"todo" for a known failure reported but not counted, "note" for a line
printed as is (its name), not a test.
"""
import os
import shutil
import sys


def run(tests, results, tmp):
    """Run @tests (functions that append to @results), remove @tmp,
    print TAP and exit. E2E_ONLY=test_a,test_b runs just those (by hand,
    while working)."""
    only = os.environ.get("E2E_ONLY")
    for t in tests:
        if only and t.__name__ not in only.split(","):
            continue
        try:
            t()
        except Exception as e:  # a crash of the harness is a failure too
            results.append((t.__name__, False, repr(e)))
    shutil.rmtree(tmp, ignore_errors=True)
    print("1..%d" % sum(1 for r in results if r[1] != "note"))
    failed = n = 0
    for name, ok, detail in results:
        if ok == "note":
            print(name)
            continue
        n += 1
        if ok is None:
            print("ok %d - %s # SKIP %s" % (n, name, detail))
        elif ok == "todo":
            print("not ok %d - %s # TODO %s" % (n, name, detail))
        else:
            if not ok:
                failed += 1
                print("# " + detail.replace("\n", "\n# "))
            print("%s %d - %s" % ("ok" if ok else "not ok", n, name))
    sys.exit(1 if failed else 0)
