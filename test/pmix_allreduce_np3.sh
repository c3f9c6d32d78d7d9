#!/bin/sh
# optireduce_pmix.h under mpirun's PMIx server, 3 ranks, a count that does not
# divide by 3; the helper initializes and finalizes PMIx around each of two
# creations itself.
prog="${top_builddir:-.}/examples/pmix_allreduce"
[ -x "$prog" ] || { echo "built without PMIx: skipping"; exit 77; }
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "$prog" -r 2 -n 1000003
