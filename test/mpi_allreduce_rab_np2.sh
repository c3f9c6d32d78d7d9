#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Exact allreduce forced to Rabenseifner's (recursive halving, then doubling), every
# dtype x op x count x in-place, on 2 ranks: one halving step, then one doubling step.
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 2 "${top_builddir:-.}/test/mpi_allreduce" -a rabenseifner
