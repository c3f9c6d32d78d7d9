#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The API contract with peers (test/mpi_api.c) on 3 ranks, exact and bounded mode.
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "${top_builddir:-.}/test/mpi_api"
