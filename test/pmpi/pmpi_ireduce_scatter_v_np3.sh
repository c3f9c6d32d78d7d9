#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# MPI_Ireduce_scatter (a count per rank) through the interposer on 3 ranks of one host (the
# shared segment), against a reference the test computes.
exec "${top_srcdir:-.}/test/pmpi/run-pmpi.sh" 3 -x OPTIREDUCE_PMPI_STATS=1 \
	"${top_builddir:-.}/test/pmpi/pmpi_ireduce_scatter_v"
