#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# 10,000 operations of mixed sizes and both modes on one communicator, 2 ranks: results
# right, the library's heap and open descriptors flat (test/mpi_soak.c).
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 2 "${top_builddir:-.}/test/mpi_soak" 10000
