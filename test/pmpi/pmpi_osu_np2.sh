#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The OSU micro-benchmark osu_allreduce under the interposer, 2 ranks: it must
# run to the end with its allreduces served by liboptireduce.  Skip (77) when
# osu_allreduce is not installed (Debian has no package): set OSU_ALLREDUCE
# or put it on PATH.
osu=${OSU_ALLREDUCE:-}
if [ -z "$osu" ]; then
	osu=$(command -v osu_allreduce 2>/dev/null)
fi
for d in /usr/local/libexec/osu-micro-benchmarks/mpi/collective \
	/usr/libexec/osu-micro-benchmarks/mpi/collective /opt/osu-micro-benchmarks/mpi/collective; do
	[ -z "$osu" ] && [ -x "$d/osu_allreduce" ] && osu=$d/osu_allreduce
done
if [ -z "$osu" ] || [ ! -x "$osu" ]; then
	echo "osu_allreduce not found: skipping"
	exit 77
fi
log=$(mktemp "${TMPDIR:-/tmp}/pmpi_osu.XXXXXX") || exit 99
trap 'rm -f "$log"' EXIT
"${top_srcdir:-.}/test/pmpi/run-pmpi.sh" 2 -x OPTIREDUCE_PMPI_STATS=1 "$osu" -m 4:1048576 \
	-i 20 -x 5 >"$log" 2>&1
rc=$?
cat "$log"
[ "$rc" -eq 0 ] || exit "$rc"
# "optireduce-pmpi[0] stats: N calls: E exact ...": E must not be 0.
grep -Eq 'stats: [0-9]+ calls: [1-9][0-9]* exact' "$log" || {
	echo "osu_allreduce ran, but no MPI_Allreduce was served by liboptireduce"
	exit 1
}
