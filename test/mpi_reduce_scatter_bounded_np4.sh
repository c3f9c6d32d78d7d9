#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Reduce-scatter on a bounded communicator, 4 ranks, flat: exact all the same, and the
# status says it fell back.
export OPTIREDUCE_HIERARCHY=0 OPTIREDUCE_MODE=bounded
exec "${top_srcdir:-.}/test/run-mpi.sh" 4 -x OPTIREDUCE_HIERARCHY -x OPTIREDUCE_MODE \
	"${top_builddir:-.}/test/mpi_allreduce" -s -q
