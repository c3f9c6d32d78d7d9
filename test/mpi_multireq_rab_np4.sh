#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# 4 ranks, exact mode forced to Rabenseifner's: 32 operations in flight at once, completed
# out of order.  Every receive of an operation is posted when it starts; without that, a
# partner a step ahead stalls the net provider's connection (docs/design.md, "Selection").
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0 OPTIREDUCE_ALGORITHM=rabenseifner
exec "${top_srcdir:-.}/test/run-mpi.sh" 4 "${top_builddir:-.}/test/mpi_multireq" exact -q
