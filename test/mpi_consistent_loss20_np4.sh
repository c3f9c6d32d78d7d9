#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Parameter consistent on 4 ranks, 20 % injected loss (data, bitmaps and requests for
# them): 1,000 operations, each with the same output hash on every rank, unbiased.
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 4 "${top_builddir:-.}/test/mpi_consistent" --loss 0.2
