#!/bin/sh
# Forged, duplicate, stale and early datagrams at a live bounded endpoint, 3 ranks.
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "${top_builddir:-.}/test/mpi_hostile"
