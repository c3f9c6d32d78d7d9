#!/bin/sh
# Known bug reproducer (XFAIL): a duplicate without LAST, parked ahead of the real packets,
# hides the sender's LAST and holds phase 1 open until its deadline.
exec "${top_srcdir:-.}/test/run-mpi.sh" 2 "${top_builddir:-.}/test/mpi_hostile" --stolen-last
