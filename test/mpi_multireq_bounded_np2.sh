#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# 2 ranks, bounded mode: 32 operations in flight at once, completed out of order.
exec "${top_srcdir:-.}/test/run-mpi.sh" 2 "${top_builddir:-.}/test/mpi_multireq" bounded -q
