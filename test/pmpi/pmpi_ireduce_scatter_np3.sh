#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# MPI_Ireduce_scatter_block through the interposer on 3 ranks of one host (the shared
# segment), against PMPI_Reduce_scatter_block.
exec "${top_srcdir:-.}/test/pmpi/run-pmpi.sh" 3 -x OPTIREDUCE_PMPI_STATS=1 \
	"${top_builddir:-.}/test/pmpi/pmpi_ireduce_scatter"
