#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Repair of the final phase ends soon after its first pass, not at the deadline, 3 ranks.
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "${top_builddir:-.}/test/mpi_repair_end"
