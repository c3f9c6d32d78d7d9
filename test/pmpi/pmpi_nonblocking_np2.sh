#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# MPI_Iallreduce through liboptireduce_pmpi.so (pmpi_nonblocking.c), 2 ranks.
exec "${top_srcdir:-.}/test/pmpi/run-pmpi.sh" 2 -x OPTIREDUCE_PMPI_STATS=1 \
	"${top_builddir:-.}/test/pmpi/pmpi_nonblocking"
