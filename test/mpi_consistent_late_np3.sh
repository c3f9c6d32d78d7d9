#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Parameter consistent on 3 ranks, 5 % injected loss, without repair, rank 1 entering every
# tenth operation 3 ms late: bitmaps come before the operation is started there.
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "${top_builddir:-.}/test/mpi_consistent" \
	--loss 0.05 --ops 300 --repair 0 --late
