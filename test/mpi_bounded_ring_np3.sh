#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Bounded ring on 3 ranks: clean result equals the exact sum; injected loss gives unbiased
# estimates whose error follows the ring's theory (ring_theory in mpi_bounded.c).
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "${top_builddir:-.}/test/mpi_bounded" -q ring
