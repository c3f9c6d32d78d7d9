#!/bin/sh
# A straggler 5x late and a rank that never calls, bounded mode, 3 ranks.
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "${top_builddir:-.}/test/mpi_straggler"
