#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mpi_hostile built with AddressSanitizer and UBSan (library sources included), 3 ranks.
# Skipped when the compiler cannot build it (configure: HAVE_ASAN).  Leak checking is off:
# Open MPI's own allocations at exit would drown the report.
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
prog="${top_builddir:-.}/test/mpi_hostile_asan"
[ -x "$prog" ] || { echo "mpi_hostile_asan not built (no -fsanitize=address here): skipping"; exit 77; }
ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:exitcode=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export ASAN_OPTIONS UBSAN_OPTIONS
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 -x ASAN_OPTIONS -x UBSAN_OPTIONS "$prog"
