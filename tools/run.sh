#!/bin/sh
# The run command: install what is missing, build, and run the main job.
# Until the cuckooflow application lands, the main job is the filter
# benchmark's quick mode (lib/cuckoo against rte_member and rte_hash).
set -eu
cd "$(dirname "$0")/.."
sh tools/setup.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
exec ./build/bench/bench_filter --quick "$@"
