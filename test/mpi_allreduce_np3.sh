#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Exact allreduce, every dtype x op x count x in-place, on 3 ranks.
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "${top_builddir:-.}/test/mpi_allreduce"
