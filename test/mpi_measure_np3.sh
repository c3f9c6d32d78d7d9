#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# 3 ranks, exact mode: measure_exact tries its algorithms in turn, then all ranks take the
# fastest; a slowed algorithm loses; operations in flight during the agreement.
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "${top_builddir:-.}/test/mpi_measure"
