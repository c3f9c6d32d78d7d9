#!/bin/sh
# A rank whose own sends crawl still returns by its deadlines, bounded mode, 3 ranks.
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "${top_builddir:-.}/test/mpi_slow_sender"
