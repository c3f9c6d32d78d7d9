#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Exact allreduce, every dtype x op x in-place (small counts), on 3 emulated hosts x 2
# ranks numbered across hosts (host 0 holds ranks 0 and 3).
exec "${top_srcdir:-.}/test/run-mpi.sh" 6 "${top_srcdir:-.}/test/host_id.sh" 3 \
	"${top_builddir:-.}/test/mpi_allreduce" -q
