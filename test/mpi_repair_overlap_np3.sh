#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Repair of two bounded operations in flight at once, as DDP's buckets are, 3 ranks.
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
# Paced at 40 Mbit/s from the start: the rate is the channel's, set when it is made.
export OPTIREDUCE_PACING_RATE=40
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "${top_builddir:-.}/test/mpi_repair_overlap"
