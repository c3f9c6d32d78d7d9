#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Exact reduce-scatter, every dtype x op x recvcount x in-place, on 3 ranks, flat.
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 -x OPTIREDUCE_HIERARCHY "${top_builddir:-.}/test/mpi_allreduce" -s
