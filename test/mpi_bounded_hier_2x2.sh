#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Bounded mode on 2 emulated hosts x 2 ranks: loss injected on the leaders' network step
# only (the shared-memory step is exact), estimator statistics, exact fallback.
exec "${top_srcdir:-.}/test/run-mpi.sh" 4 "${top_srcdir:-.}/test/host_id.sh" 2 \
	"${top_builddir:-.}/test/mpi_bounded" -q
