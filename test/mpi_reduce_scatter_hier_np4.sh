#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Reduce-scatter with 4 ranks on one host (the shared segment, 4 KiB chunks), exact and on a
# bounded communicator.
export OPTIREDUCE_SHM_CHUNK=4k
"${top_srcdir:-.}/test/run-mpi.sh" 4 -x OPTIREDUCE_SHM_CHUNK "${top_builddir:-.}/test/mpi_allreduce" -s -q ||
	exit $?
export OPTIREDUCE_MODE=bounded
exec "${top_srcdir:-.}/test/run-mpi.sh" 4 -x OPTIREDUCE_SHM_CHUNK -x OPTIREDUCE_MODE \
	"${top_builddir:-.}/test/mpi_allreduce" -s -q
