#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# MPI_Ireduce_scatter_block under a bounded policy (float/double SUM >= 1 KiB on
# MPI_COMM_WORLD), 2 ranks, hierarchy=0: the calls the policy picks run exact all the same
# and are counted as bounded_declined.
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/pmpi/run-pmpi.sh" 2 -x OPTIREDUCE_HIERARCHY -x OPTIREDUCE_PMPI_STATS=1 \
	-x "OPTIREDUCE_PMPI_BOUNDED=float,double:>=1k" "${top_builddir:-.}/test/pmpi/pmpi_ireduce_scatter" -b
