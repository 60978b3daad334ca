#!/bin/sh
# The test command: install what is missing, then build and run every
# suite. Ends with "N passed, N failed" and exits non-zero on any failure.
#
#   tools/test.sh            everything (what CI runs)
#   FUZZ_SECONDS=300 tools/test.sh   longer fuzz runs
#   FUZZ_SEED=0 tools/test.sh        random fuzz seeds (default 1: a
#                                    run explores the same inputs first,
#                                    so CI does not fail on a new finding
#                                    of chance; hunting is done by hand)
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
FUZZ_SEED=${FUZZ_SEED:-1}
START=$(date +%s)
TALLY=$(mktemp)
trap 'rm -f "$TALLY"' EXIT

sh tools/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

# Hugepages, so that the application is tested on them as well as with
# --no-huge (its hugepage tests are skipped without them): 1 GiB of 2 MiB
# pages unless 256 are there already, and hugetlbfs on /dev/hugepages
# (DPDK's dpdk-hugepages.py; --setup would first free pages in use).
if [ "$(id -u)" = 0 ]; then
	[ "$(cat /proc/sys/vm/nr_hugepages)" -ge 256 ] ||
		dpdk-hugepages.py --pagesize 2M --reserve 1G ||
		echo "test.sh: no hugepages reserved"
	mkdir -p /dev/hugepages
	dpdk-hugepages.py --pagesize 2M --mount >/dev/null
	mountpoint -q /dev/hugepages ||
		echo "test.sh: hugetlbfs not mounted on /dev/hugepages"
fi

# tally NAME PASSED FAILED [SKIPPED]
tally() {
	echo "$2 $3 ${4:-0}" >> "$TALLY"
	echo "== $1: $2 passed, $3 failed, ${4:-0} skipped"
}

# Count meson's results; a TAP test counts each of its cases.
count_meson() {
	/usr/bin/python3 - "$1/meson-logs/testlog.json" <<'PY'
import json, sys
passed = failed = skipped = 0
for line in open(sys.argv[1]):
    t = json.loads(line)
    out = t.get("stdout") or ""
    skips = sum(1 for l in out.splitlines()
                if l.startswith("ok ") and "# SKIP" in l)
    oks = sum(1 for l in out.splitlines() if l.startswith("ok ")) - skips
    skipped += skips
    bad = sum(1 for l in out.splitlines() if l.startswith("not ok "))
    if bad:
        # meson prints a TAP test's stderr only: show each failed case
        # with the diagnostics before it ("# " lines), on stderr.
        lines = out.splitlines()
        for i, l in enumerate(lines):
            if l.startswith("not ok ") and "# TODO" not in l:
                j = i
                while j > 0 and lines[j - 1].startswith("#"):
                    j -= 1
                shown = lines[max(j, i - 60):i + 1]
                sys.stderr.write("== %s: %s\n%s\n" % (
                    t["name"], l, "\n".join(shown[:-1])))
    if t["result"] == "SKIP":
        skipped += 1
    elif t["result"] in ("OK", "EXPECTEDFAIL"):
        passed += max(oks, 1)
    else:
        passed += oks
        failed += max(bad, 1)
print(passed, failed, skipped)
PY
}

# suite NAME BUILDDIR "SUITES" [meson options...]: configure, build, test.
suite() {
	name=$1 dir=$2 suites=$3 t0=$(date +%s)
	shift 3
	if [ -d "$dir" ]; then
		meson setup --reconfigure "$dir" "$@" >"$dir.setup.log" 2>&1
	else
		meson setup "$dir" "$@" >"$dir.setup.log" 2>&1
	fi || { cat "$dir.setup.log"; tally "$name build" 0 1; return; }
	ninja -C "$dir" >"$dir.build.log" 2>&1 ||
		{ tail -50 "$dir.build.log"; tally "$name build" 0 1; return; }
	# shellcheck disable=SC2086 # one --suite per word
	meson test -C "$dir" --print-errorlogs --num-processes 2 \
		$(printf -- '--suite %s ' $suites)
	set -- $(count_meson "$dir")
	tally "$name" "$1" "$2" "$3"
	echo "== $name: build and tests took $(($(date +%s) - t0)) s"
}

# install: meson install into a DESTDIR and a program built against it
# (static and shared libraries: -Ddefault_library=both, also in build
# directories set up before it was the default).
suite release build "unit unit-slow fuzz-replay pcap app install" -Dwerror=true \
	-Ddefault_library=both
suite asan build-asan "unit unit-slow fuzz-replay pcap app install" -Dwerror=true \
	-Ddefault_library=both -Dbuildtype=debugoptimized \
	-Db_sanitize=address,undefined -Db_lundef=false \
	-Dc_args=-fno-sanitize-recover=all -Dbench=disabled

# libFuzzer: a short run of each target from a copy of its corpus.
# The unit tests already ran under ASan above; here only the corpora.
CC=clang suite fuzz build-fuzz fuzz-replay -Dwerror=true -Dfuzz=true \
	-Dbuildtype=debugoptimized -Db_sanitize=address,undefined \
	-Db_lundef=false -Dc_args=-fno-sanitize-recover=all -Dbench=disabled
for target in ops load track parse restore; do
	bin=build-fuzz/tests/fuzz/fuzz_$target
	[ -x "$bin" ] || { tally "fuzz_$target" 0 1; continue; }
	work=$(mktemp -d)
	cp "$ROOT/tests/fuzz/corpus/$target/"* "$work/"
	if "$bin" -max_total_time="$FUZZ_SECONDS" -seed="$FUZZ_SEED" \
			-print_final_stats=1 \
			-artifact_prefix="$work/" "$work" \
			>"build-fuzz/fuzz_$target.log" 2>&1; then
		tally "fuzz_$target ($FUZZ_SECONDS s)" 1 0
	else
		tail -40 "build-fuzz/fuzz_$target.log"
		ls "$work"/crash-* "$work"/leak-* 2>/dev/null
		tally "fuzz_$target ($FUZZ_SECONDS s)" 0 1
	fi
	rm -rf "$work"
done

echo "== all suites took $(($(date +%s) - START)) s"
awk '{ p += $1; f += $2; s += $3 }
	END { printf "%d passed, %d failed, %d skipped\n", p, f, s;
		exit f != 0 }' "$TALLY"
