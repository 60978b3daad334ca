#!/bin/sh
# The test command: install what is missing, then build and run every
# suite. Ends with "N passed, N failed" and exits non-zero on any failure
# (docs/testing.md).
#
#   tools/test.sh            everything (what CI runs)
#   FUZZ_SECONDS=300 tools/test.sh   longer fuzz runs (30 s each)
#   FUZZ_SEED=0 tools/test.sh        random fuzz seeds (default 1: a
#                                    run explores the same inputs first,
#                                    so CI does not fail on a new finding
#                                    of chance; hunting is done by hand)
#   PYTEST_XDIST_AUTO_NUM_WORKERS=N  end-to-end tests side by side (twice
#                                    the CPUs, at least 4)
#
# Two trees: build/ (gcc, release, the AVX2/AVX-512 clones) and
# build-san/ (clang, ASan+UBSan, libFuzzer's coverage: the fuzz targets
# are built there too). Each runs every suite: unit (slow ones too), the
# captures' truths, the fuzz corpora replayed, install, and the
# end-to-end tests, those side by side (pytest-xdist; test_docs,
# test_real_traffic and test_ovs_dpdk in the release tree only:
# tests/e2e/meson.build says why). The two trees' suites run side by
# side. Then each libFuzzer target for FUZZ_SECONDS, all five at once.
#
# A skipped test is a failure unless it skipped for want of hardware
# (its reason starts with "hardware:"): every tool a test uses is
# installed by tools/setup.sh.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
FUZZ_SEED=${FUZZ_SEED:-1}
START=$(date +%s)
TALLY=$(mktemp)
TIMES=$(mktemp)
trap 'rm -f "$TALLY" "$TIMES"' EXIT

sh tools/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

# Hugepages, so that the application is tested on them as well as with
# --no-huge: 6 GiB of 2 MiB pages unless 3072 are there already (tests
# on hugepages run side by side: with 2 GiB, four at once found none
# free; with 4 GiB and the two trees' runs side by side, their
# test_ops hugepage cases, -m 512 each, ran at the same time and one
# found 286 MB left), and
# hugetlbfs on /dev/hugepages (DPDK's dpdk-hugepages.py; --setup would
# first free pages in use). The test run reserves them, not the service
# (docs/install.md, hugepages).
if [ "$(id -u)" = 0 ]; then
	[ "$(cat /proc/sys/vm/nr_hugepages)" -ge 3072 ] ||
		dpdk-hugepages.py --pagesize 2M --reserve 6G ||
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

# took NAME SECONDS: a line of the time table printed at the end
took() {
	printf '%-40s %5d s\n' "$1" "$2" >> "$TIMES"
}

# Count meson's results; a TAP test counts each of its cases. A skip
# whose reason does not start with "hardware:" is listed and counted
# failed.
count_meson() {
	/usr/bin/python3 - "$1/meson-logs/testlog.json" <<'PY'
import json, re, sys
passed = failed = skipped = 0
for line in open(sys.argv[1], errors="replace"):
    try:
        t = json.loads(line)
    except ValueError:
        # seen once: a stretch of NUL bytes where meson's lines were
        # (the file cut short while meson wrote it); what the stretch
        # held is unknown, so it counts as a failure
        failed += 1
        sys.stderr.write("== %s: %d bytes that are not a test's JSON line "
                         "(results lost; meson's own summary above has "
                         "them)\n" % (sys.argv[1], len(line)))
        continue
    out = t.get("stdout") or ""
    lines = out.splitlines()
    for l in lines:
        m = re.match(r"ok \d+ - (.*?) # SKIP ?(.*)$", l)
        if m is None:
            continue
        if m.group(2).startswith("hardware:"):
            skipped += 1
        else:
            failed += 1
            sys.stderr.write("== %s: %s: skipped (%s): only a missing "
                             "piece of hardware may skip\n" % (
                                 t["name"], m.group(1), m.group(2)))
    oks = sum(1 for l in lines if l.startswith("ok ") and
              "# SKIP" not in l)
    bad = sum(1 for l in lines if l.startswith("not ok ") and
              "# TODO" not in l)
    if bad:
        # meson prints a TAP test's stderr only: show each failed case
        # with the diagnostics before it ("# " lines), on stderr.
        for i, l in enumerate(lines):
            if l.startswith("not ok ") and "# TODO" not in l:
                j = i
                while j > 0 and lines[j - 1].startswith("#"):
                    j -= 1
                shown = lines[max(j, i - 60):i + 1]
                sys.stderr.write("== %s: %s\n%s\n" % (
                    t["name"], l, "\n".join(shown[:-1])))
    if t["result"] == "SKIP":
        failed += 1
        sys.stderr.write("== %s: skipped by meson\n" % t["name"])
    elif t["result"] in ("OK", "EXPECTEDFAIL"):
        passed += max(oks, 1)
    else:
        passed += oks
        failed += max(bad, 1)
print(passed, failed, skipped)
PY
}

# build NAME DIR [meson options...]: configure and build a tree.
build() {
	name=$1 dir=$2 t0=$(date +%s)
	shift 2
	if [ -d "$dir" ]; then
		meson setup --reconfigure "$dir" "$@" >"$dir.setup.log" 2>&1
	else
		meson setup "$dir" "$@" >"$dir.setup.log" 2>&1
	fi || { cat "$dir.setup.log"; tally "$name build" 0 1; return 1; }
	ninja -C "$dir" >"$dir.build.log" 2>&1 ||
		{ tail -50 "$dir.build.log"; tally "$name build" 0 1; return 1; }
	took "$name: build" $(($(date +%s) - t0))
}

# run NAME DIR: every suite of a built tree.
run() {
	name=$1 dir=$2 t0=$(date +%s)
	# meson's timeouts guard against hangs only: ten times theirs on a
	# loaded machine, where every test is slower, never failing
	meson test -C "$dir" --print-errorlogs --num-processes 2 \
		--timeout-multiplier 10 \
		--suite unit --suite unit-slow --suite fuzz-replay \
		--suite pcap --suite install --suite app --suite cli
	set -- $(count_meson "$dir")
	tally "$name" "$1" "$2" "$3"
	took "$name: tests" $(($(date +%s) - t0))
}

SAN_OPTS="-Dwerror=true -Ddefault_library=both -Dbuildtype=debugoptimized
	-Db_sanitize=address,undefined -Db_lundef=false
	-Dc_args=-fno-sanitize-recover=all -Dbench=disabled -Dfuzz=true"

# The two trees side by side: the release tree's suites start once it
# is built, the sanitizer tree is built beside them and its suites run
# beside them too. The end-to-end tests mostly wait (on EAL starts,
# sockets, namespaces, captures), so two of their runs on 2 cores take
# far less than one after the other (docs/testing.md, Time). Each tree's
# output goes to DIR.test.log, shown once both have ended.
t1=$(date +%s)
# shellcheck disable=SC2086 # options, one a word
if build release build -Dwerror=true -Ddefault_library=both; then
	run release build >build.test.log 2>&1 &
else
	: >build.test.log
fi
# shellcheck disable=SC2086
if CC=clang build sanitizers build-san $SAN_OPTS; then
	run sanitizers build-san >build-san.test.log 2>&1
else
	: >build-san.test.log
fi
wait
cat build.test.log build-san.test.log
took "both trees, side by side" $(($(date +%s) - t1))

# libFuzzer: each target from a copy of its corpus, all at once.
t0=$(date +%s)
targets="ops load track parse restore blocklist"
for target in $targets; do
	bin=build-san/tests/fuzz/fuzz_$target
	[ -x "$bin" ] || { tally "fuzz_$target" 0 1; continue; }
	work=build-san/fuzz_$target.work
	rm -rf "$work"
	mkdir -p "$work"
	cp "$ROOT/tests/fuzz/corpus/$target/"* "$work/"
	(
		if "$bin" -max_total_time="$FUZZ_SECONDS" -seed="$FUZZ_SEED" \
				-print_final_stats=1 -artifact_prefix="$work/" \
				"$work" >"build-san/fuzz_$target.log" 2>&1; then
			echo ok >"$work.result"
		else
			echo failed >"$work.result"
		fi
	) &
done
wait
for target in $targets; do
	work=build-san/fuzz_$target.work
	[ -f "$work.result" ] || continue
	if [ "$(cat "$work.result")" = ok ]; then
		tally "fuzz_$target ($FUZZ_SECONDS s)" 1 0
	else
		tail -40 "build-san/fuzz_$target.log"
		ls "$work"/crash-* "$work"/leak-* 2>/dev/null
		tally "fuzz_$target ($FUZZ_SECONDS s)" 0 1
	fi
	rm -rf "$work" "$work.result"
done
took "fuzzers, 6 side by side" $(($(date +%s) - t0))

# The EAL leaves a runtime directory per run (memseg lists: MiB each);
# the suites remove those of their exited processes (tests/harness.py),
# this the last ones.
/usr/bin/python3 -c 'import sys; sys.path[:0] = ["tests", "tools"]
import harness; print("EAL runtime directories removed:", harness.sweep_runtime_dirs(min_age=5))' || true

echo "== time by suite:"
cat "$TIMES"
took "all" $(($(date +%s) - START))
tail -1 "$TIMES"
awk '{ p += $1; f += $2; s += $3 }
	END { printf "%d passed, %d failed, %d skipped\n", p, f, s;
		exit f != 0 }' "$TALLY"
