#!/bin/sh
# Known bug reproducer (XFAIL): a straggler's status reports none of the packets it found
# parked, because the counters are zeroed after the first poll parked them.
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "${top_builddir:-.}/test/mpi_straggler" --strict-counters
