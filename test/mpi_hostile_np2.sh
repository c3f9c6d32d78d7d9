#!/bin/sh
# Forged, duplicate, stale and early datagrams at a live bounded endpoint, 2 ranks.
exec "${top_srcdir:-.}/test/run-mpi.sh" 2 "${top_builddir:-.}/test/mpi_hostile"
