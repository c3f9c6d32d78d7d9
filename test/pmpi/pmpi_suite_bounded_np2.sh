#!/bin/sh
# The suite with a bounded policy: float/double SUM >= 1 KiB on MPI_COMM_WORLD
# must run bounded (or exact, counted as declined); everything else as before.
exec "${top_srcdir:-.}/test/pmpi/run-pmpi.sh" 2 -x OPTIREDUCE_PMPI_STATS=1 \
	-x "OPTIREDUCE_PMPI_BOUNDED=float,double:>=1k" "${top_builddir:-.}/test/pmpi/pmpi_suite" -b
