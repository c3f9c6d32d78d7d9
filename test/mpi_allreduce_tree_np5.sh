#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Exact allreduce forced to the tree on 5 ranks (odd: tree B is shifted, not mirrored, and
# rank 4 is a leaf of both trees), every dtype x op, counts 0, 1, N-1, N+1 (-q: five ranks
# on a shared machine make the large counts slow; np2-np4 run them).
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 5 "${top_builddir:-.}/test/mpi_allreduce" -q -a tree
