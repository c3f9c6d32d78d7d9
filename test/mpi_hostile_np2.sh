#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Forged, duplicate, stale and early datagrams at a live bounded endpoint, 2 ranks.
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 2 "${top_builddir:-.}/test/mpi_hostile"
