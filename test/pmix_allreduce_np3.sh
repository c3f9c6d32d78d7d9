#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# optireduce_pmix.h under mpirun's PMIx server, 3 ranks, a count that does not
# divide by 3, two communicators in a row; the helper initializes PMIx itself.
prog="${top_builddir:-.}/examples/pmix_allreduce"
[ -x "$prog" ] || { echo "built without PMIx: skipping"; exit 77; }
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "$prog" -r 2 -n 1000003
