#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Parameter consistent on rank 0 only, of 3: it waits for bitmaps that never come and must
# fail within peer_timeout_ms, not hang; the others fail next.
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "${top_builddir:-.}/test/mpi_consistent" --disagree
