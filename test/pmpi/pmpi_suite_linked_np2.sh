#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The suite linked with -loptireduce_pmpi before -lmpi instead of preloaded.
exec "${top_srcdir:-.}/test/run-mpi.sh" 2 -x OPTIREDUCE_PMPI_STATS=1 \
	"${top_builddir:-.}/test/pmpi/pmpi_suite_linked"
