#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpi_bounded on 2 ranks with emulate_dgram_modes=1: every datagram buffer has a 40-byte
# message prefix before it and lies in registered memory, its descriptor passed, as EFA's
# and verbs' datagram endpoints need (FI_MSG_PREFIX, FI_MR_LOCAL), here on udp.  The same
# assertions as the case mpi/mpi_bounded_np2, and each rank must log that its endpoint runs so.
# ("make check-dgram-modes" runs every bounded test so.)
export OPTIREDUCE_HIERARCHY=0 OPTIREDUCE_EMULATE_DGRAM_MODES=1 OPTIREDUCE_LOG_LEVEL=3
log=$(mktemp) || exit 99
trap 'rm -f "$log"' EXIT
"${top_srcdir:-.}/test/run-mpi.sh" 2 "${top_builddir:-.}/test/mpi/mpi_bounded" -q >"$log" 2>&1
ret=$?
grep -v 'debug:\|trace:' "$log"
[ $ret -eq 0 ] || exit $ret
n=$(grep -c 'datagram endpoint .*message prefix 40 bytes, buffers registered' "$log")
echo "endpoints with a 40-byte prefix and registered buffers: $n"
[ "$n" -ge 2 ] || { echo "FAIL: the prefix and registration paths did not run"; exit 1; }
