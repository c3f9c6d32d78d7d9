#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Exact allreduce forced to Rabenseifner's (recursive halving, then doubling), every
# dtype x op x count x in-place, on 5 ranks: rank 0 folds into rank 1 and the other four
# run the schedule; counts below 4 leave blocks empty.
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 5 "${top_builddir:-.}/test/mpi_allreduce" -a rabenseifner
