#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# MPI_Iallreduce through liboptireduce_pmpi.so (pmpi_nonblocking.c), 3 ranks.
exec "${top_srcdir:-.}/test/pmpi/run-pmpi.sh" 3 -x OPTIREDUCE_PMPI_STATS=1 \
	"${top_builddir:-.}/test/pmpi/pmpi_nonblocking"
