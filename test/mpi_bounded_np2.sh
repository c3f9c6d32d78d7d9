#!/bin/sh
# Bounded mode on 2 ranks: clean result, injected loss statistics, exact fallback.
exec "${top_srcdir:-.}/test/run-mpi.sh" 2 "${top_builddir:-.}/test/mpi_bounded" -q
