#!/bin/sh
# Install every Debian package cuckooflow needs to build, test and benchmark:
# every tool a test uses is here (a missing one fails the test, it does
# not skip it).
# Idempotent; run as root on Debian 12. Skips apt-get when all are present.
set -eu

PKGS="build-essential meson ninja-build pkg-config \
libdpdk-dev dpdk dpdk-dev libpcap-dev libxxhash-dev \
python3-scapy python3-pytest python3-pytest-xdist tshark python3-matplotlib \
python3-prometheus-client tcpreplay tcpdump iproute2 prometheus nfdump \
clang libclang-rt-14-dev scdoc stress-ng libsystemd-dev doxygen \
iputils-ping traceroute curl ethtool openvswitch-switch-dpdk gdb"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done

if [ -n "$missing" ]; then
	echo "setup: installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# tshark asks whether non-root users may capture; answer no.
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		debconf-set-selections
	apt-get install -y -q --no-install-recommends $missing
fi
