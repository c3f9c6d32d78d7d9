#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The OSU micro-benchmark osu_iallreduce under the interposer, 2 ranks, with validation
# when this OSU version has it: it must run to the end with its MPI_Iallreduce calls served
# by liboptireduce.  Skip (77) when osu_iallreduce is not installed (Debian has no
# package): set OSU_IALLREDUCE or put it on PATH.
osu=${OSU_IALLREDUCE:-}
if [ -z "$osu" ]; then
	osu=$(command -v osu_iallreduce 2>/dev/null)
fi
for d in /usr/local/libexec/osu-micro-benchmarks/mpi/collective \
	/usr/libexec/osu-micro-benchmarks/mpi/collective /opt/osu-micro-benchmarks/mpi/collective; do
	[ -z "$osu" ] && [ -x "$d/osu_iallreduce" ] && osu=$d/osu_iallreduce
done
if [ -z "$osu" ] || [ ! -x "$osu" ]; then
	echo "osu_iallreduce not found: skipping"
	exit 77
fi
validate=
"$osu" --help 2>&1 | grep -q -- '--validation' && validate=-c
log=$(mktemp "${TMPDIR:-/tmp}/pmpi_osu_i.XXXXXX") || exit 99
trap 'rm -f "$log"' EXIT
"${top_srcdir:-.}/test/pmpi/run-pmpi.sh" 2 -x OPTIREDUCE_PMPI_STATS=1 "$osu" $validate \
	-m 4:1048576 -i 20 -x 5 >"$log" 2>&1
rc=$?
cat "$log"
[ "$rc" -eq 0 ] || exit "$rc"
if [ -n "$validate" ] && grep -q -i 'fail' "$log"; then
	echo "osu_iallreduce validation failed"
	exit 1
fi
# "optireduce-pmpi[0] stats: of those, N MPI_Iallreduce: S served by liboptireduce".
grep -Eq 'stats: of those, [0-9]+ MPI_Iallreduce: [1-9][0-9]* served' "$log" || {
	echo "osu_iallreduce ran, but no MPI_Iallreduce was served by liboptireduce"
	exit 1
}
