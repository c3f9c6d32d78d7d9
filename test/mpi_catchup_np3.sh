#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# catch_up: a rank that falls behind once is waited for in the next operation, bounded, 3 ranks.
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "${top_builddir:-.}/test/mpi_catchup"
