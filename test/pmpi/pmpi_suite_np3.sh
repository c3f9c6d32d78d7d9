#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# MPI_Allreduce through liboptireduce_pmpi.so against PMPI_Allreduce, 3 ranks.
exec "${top_srcdir:-.}/test/pmpi/run-pmpi.sh" 3 -x OPTIREDUCE_PMPI_STATS=1 \
	"${top_builddir:-.}/test/pmpi/pmpi_suite"
