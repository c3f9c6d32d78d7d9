#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Exact allreduce, every dtype x op x count x in-place, on 2 ranks.
exec "${top_srcdir:-.}/test/run-mpi.sh" 2 "${top_builddir:-.}/test/mpi_allreduce"
