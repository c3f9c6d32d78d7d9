#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# 2 ranks, exact mode: 32 operations in flight, completed through optireduce_comm_progress.
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 2 "${top_builddir:-.}/test/mpi_multireq" exact -q -p
