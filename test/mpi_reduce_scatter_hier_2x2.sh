#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Reduce-scatter on 2 hosts x 2 ranks told apart by OPTIREDUCE_HOST_ID (uneven numbering:
# host 0 holds ranks 0 and 2), 4 KiB chunks: exact, and on a bounded communicator, whose
# network step a reduce-scatter keeps exact.
export OPTIREDUCE_SHM_CHUNK=4k
"${top_srcdir:-.}/test/run-mpi.sh" 4 -x OPTIREDUCE_SHM_CHUNK "${top_srcdir:-.}/test/host_id.sh" 2 \
	"${top_builddir:-.}/test/mpi_allreduce" -s -q || exit $?
export OPTIREDUCE_MODE=bounded
exec "${top_srcdir:-.}/test/run-mpi.sh" 4 -x OPTIREDUCE_SHM_CHUNK -x OPTIREDUCE_MODE \
	"${top_srcdir:-.}/test/host_id.sh" 2 "${top_builddir:-.}/test/mpi_allreduce" -s -q
