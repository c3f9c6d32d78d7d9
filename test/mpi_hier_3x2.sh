#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# 3 emulated hosts x 2 ranks: outstanding nonblocking operations, and the bounded
# status counting contributions in ranks.
exec "${top_srcdir:-.}/test/run-mpi.sh" 6 "${top_srcdir:-.}/test/host_id.sh" 3 \
	"${top_builddir:-.}/test/mpi_hier"
