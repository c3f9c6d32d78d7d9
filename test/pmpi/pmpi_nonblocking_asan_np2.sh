#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# pmpi_nonblocking linked with the interposer's sources, built with AddressSanitizer and
# UBSan, 2 ranks: the generalized requests' lifetimes (MPI_Request_free, MPI_Comm_free,
# MPI_Finalize with an operation pending) under ASan.  liboptireduce itself is opened
# from .libs as the interposer does.  Skipped when the compiler cannot build it; leak
# checking is off (Open MPI's own allocations at exit would drown the report).
prog="${top_builddir:-.}/test/pmpi/pmpi_nonblocking_asan"
[ -x "$prog" ] || { echo "pmpi_nonblocking_asan not built (no -fsanitize=address here): skipping"; exit 77; }
libs=$(cd "${top_builddir:-.}" && pwd)/.libs
ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:exitcode=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS UBSAN_OPTIONS
exec "${top_srcdir:-.}/test/run-mpi.sh" 2 -x ASAN_OPTIONS -x UBSAN_OPTIONS \
	-x "LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" -x OPTIREDUCE_PMPI_STATS=1 \
	"$prog"
