#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Parameter consistent on 2 emulated hosts x 2 ranks: the leaders agree over the network,
# their host's ranks get the leader's result through shared memory; 5 % injected loss.
exec "${top_srcdir:-.}/test/run-mpi.sh" 4 "${top_srcdir:-.}/test/host_id.sh" 2 \
	"${top_builddir:-.}/test/mpi_consistent" --loss 0.05 --ops 300
