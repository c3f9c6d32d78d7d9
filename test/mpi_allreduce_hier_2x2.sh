#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Exact allreduce, every dtype x op x count x in-place, on 2 emulated hosts x 2 ranks
# numbered across hosts; 1 MiB shared-memory chunks, so the large counts go chunk by chunk.
OPTIREDUCE_SHM_CHUNK=1m exec "${top_srcdir:-.}/test/run-mpi.sh" 4 -x OPTIREDUCE_SHM_CHUNK \
	"${top_srcdir:-.}/test/host_id.sh" 2 "${top_builddir:-.}/test/mpi_allreduce"
