#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# optireduce_pmix.h under mpirun's PMIx server, 2 ranks: three communicators
# in a row while the program keeps PMIx initialized (one key per round).
prog="${top_builddir:-.}/examples/pmix_allreduce"
[ -x "$prog" ] || { echo "built without PMIx: skipping"; exit 77; }
exec "${top_srcdir:-.}/test/run-mpi.sh" 2 "$prog" -H -r 3 -n 100000
