#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# doxygen.sh DOXYGEN DOXYFILE OUTDIR MODE HEADER...
#
# Runs DOXYGEN on DOXYFILE (docs/api/Doxyfile.in, configured) over the
# HEADERs, with what changes by run appended:
#   MODE build: html/ and man3/ in OUTDIR, warnings printed, not fatal;
#   MODE check: man pages only, not kept (OUTDIR is ignored: a temporary
#     directory of its own), exit status 1 on any warning (WARN_AS_ERROR =
#     FAIL_ON_WARNINGS: an undocumented parameter or return value of a
#     public function fails).
set -eu
doxygen=$1 doxyfile=$2 out=$3 mode=$4
shift 4

case $mode in
build)
	warn=NO html=YES man=YES
	rm -rf "$out/html" "$out/man3"
	mkdir -p "$out"
	;;
check)
	warn=FAIL_ON_WARNINGS html=NO man=YES
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT
	;;
*)
	echo "doxygen.sh: MODE is build or check, not '$mode'" >&2
	exit 2
	;;
esac

input=""
for h in "$@"; do
	input="$input \"$h\""
done

{
	cat "$doxyfile"
	echo "OUTPUT_DIRECTORY = \"$out\""
	echo "INPUT = $input"
	echo "WARN_AS_ERROR = $warn"
	echo "GENERATE_HTML = $html"
	echo "GENERATE_MAN = $man"
} | "$doxygen" -
