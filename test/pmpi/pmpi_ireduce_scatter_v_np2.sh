#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# MPI_Ireduce_scatter (a count per rank) through the interposer on 2 ranks, each on the
# network as on a host of its own (hierarchy=0), against a reference the test computes.
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/pmpi/run-pmpi.sh" 2 -x OPTIREDUCE_HIERARCHY -x OPTIREDUCE_PMPI_STATS=1 \
	"${top_builddir:-.}/test/pmpi/pmpi_ireduce_scatter_v"
