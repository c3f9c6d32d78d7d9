#!/bin/sh
# Exact allreduce forced to recursive doubling, every dtype x op x count x in-place, on 4 ranks.
exec "${top_srcdir:-.}/test/run-mpi.sh" 4 "${top_builddir:-.}/test/mpi_allreduce" -a recursive_doubling
