#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A straggler's status counts the packets it found parked (once a bug reproducer: the
# counters were zeroed after the first poll had parked them).
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "${top_builddir:-.}/test/mpi_straggler" --strict-counters
