#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Exact allreduce forced to recursive doubling on 2 ranks, small counts only (-q): one
# exchange; the large counts (segmented lanes) run on 3 and 4 ranks.
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 2 "${top_builddir:-.}/test/mpi_allreduce" -q -a recursive_doubling
