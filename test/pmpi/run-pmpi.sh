#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run-pmpi.sh NP [MPIRUN-OPTIONS...] PROGRAM [ARGS...]: run a multi-rank test
# with liboptireduce_pmpi.so preloaded, launched by test/run-mpi.sh (skip 77
# without mpirun).  OPTIREDUCE_PMPI_SO overrides where the library is.
np=$1
shift
so=${OPTIREDUCE_PMPI_SO:-"${top_builddir:-.}/.libs/liboptireduce_pmpi.so"}
if [ ! -f "$so" ]; then
	echo "$so: not built" >&2
	exit 99
fi
# Absolute, and with the directory of an uninstalled liboptireduce.so on the path.
dir=$(cd "$(dirname "$so")" && pwd)
so=$dir/$(basename "$so")
libs=$(cd "${top_builddir:-.}" && pwd)/.libs
# Built with AddressSanitizer (configure --enable-asan): its runtime must be the first
# library loaded, before the preloaded interposer that needs it.
asan=$(ldd "$so" 2>/dev/null | awk '/libasan/ { print $3; exit }')
[ -n "$asan" ] && so=$asan:$so
exec "${top_srcdir:-.}/test/run-mpi.sh" "$np" -x "LD_PRELOAD=$so" \
	-x "LD_LIBRARY_PATH=$libs:$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"
