#!/bin/sh
# The run command: install what is missing, build, and replay a bundled
# capture through cuckooflow on a net_pcap vdev, printing the counters.
#
#   sh tools/run.sh [CAPTURE.pcap] [-- more cuckooflow options]
set -eu
cd "$(dirname "$0")/.."
sh tools/setup.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
pcap=pcaps/mixed.pcap
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
	pcap=$1
	shift
fi
[ "${1:-}" != "--" ] || shift
exec ./build/app/cuckooflow -l 0,1 --no-huge -m 512 --no-pci \
	--log-level='lib.*:warning' \
	--vdev "net_pcap0,rx_pcap=$pcap,tx_pcap=/dev/null" \
	-- --clock pkt --exit-on-eof "$@"
