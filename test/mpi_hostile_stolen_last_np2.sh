#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Known bug reproducer (XFAIL): a duplicate without LAST, parked ahead of the real packets,
# hides the sender's LAST and holds phase 1 open until its deadline.
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 2 "${top_builddir:-.}/test/mpi_hostile" --stolen-last
