#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The suite with a bounded policy: float/double SUM >= 1 KiB on MPI_COMM_WORLD
# must run bounded (or exact, counted as declined); everything else as before.
# Twice: as configured, then with a bounded channel that cannot be created,
# where those calls must fall back to exact (with a warning).
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
run="${top_srcdir:-.}/test/pmpi/run-pmpi.sh"
prog="${top_builddir:-.}/test/pmpi/pmpi_suite"
"$run" 2 -x OPTIREDUCE_PMPI_STATS=1 -x "OPTIREDUCE_PMPI_BOUNDED=float,double:>=1k" "$prog" -b ||
	exit $?
exec "$run" 2 -x OPTIREDUCE_PMPI_STATS=1 -x "OPTIREDUCE_PMPI_BOUNDED=float,double:>=1k" \
	-x OPTIREDUCE_BOUNDED_PROVIDER=no-such-provider "$prog" -b
