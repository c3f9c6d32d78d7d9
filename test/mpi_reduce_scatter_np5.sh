#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Exact reduce-scatter on 5 ranks, flat, the small recvcounts.
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 5 -x OPTIREDUCE_HIERARCHY "${top_builddir:-.}/test/mpi_allreduce" -s -q
