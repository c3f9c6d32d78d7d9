#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# pmpi_ireduce_scatter_v linked with the interposer's sources, built with AddressSanitizer
# and UBSan, 2 ranks (hierarchy=0): MPI_Ireduce_scatter's scratch buffers, freed when the
# operation completes, and its requests (MPI_Request_free of a running one) under ASan.  As
# pmpi_reduce_scatter_asan_np2.sh: skipped when the compiler cannot build it; leak checking
# off.
builddir="${top_builddir:-.}"
p=pmpi_ireduce_scatter_v_asan
[ -x "$builddir/test/pmpi/$p" ] || { echo "$p not built (no -fsanitize=address here): skipping"; exit 77; }
libs=$(cd "$builddir" && pwd)/.libs
ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:exitcode=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
OPTIREDUCE_HIERARCHY=0
export ASAN_OPTIONS UBSAN_OPTIONS OPTIREDUCE_HIERARCHY
exec "${top_srcdir:-.}/test/run-mpi.sh" 2 -x ASAN_OPTIONS -x UBSAN_OPTIONS -x OPTIREDUCE_HIERARCHY \
	-x "LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" -x OPTIREDUCE_PMPI_STATS=1 \
	"$builddir/test/pmpi/$p"
