#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Exact reduce-scatter (transpose's first phase), every dtype x op x recvcount x in-place,
# on 2 ranks without the host hierarchy (OPTIREDUCE_HIERARCHY=0: over the network provider).
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 2 -x OPTIREDUCE_HIERARCHY "${top_builddir:-.}/test/mpi_allreduce" -s
