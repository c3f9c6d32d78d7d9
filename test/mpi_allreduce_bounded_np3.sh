#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Bounded allreduce on 3 ranks, multicast off (phase 2 sent to each peer): every dtype x op,
# counts 0, 1, N-1, N+1, in place or not; float SUM and AVG bounded within the rotation's
# rounding with nothing lost, the rest exact (fell back).  -q as in
# mpi_allreduce_bounded_multicast_np3.sh.  One host: every rank on the network, as on a
# host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0 OPTIREDUCE_MODE=bounded OPTIREDUCE_MULTICAST=off
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "${top_builddir:-.}/test/mpi_allreduce" -q
