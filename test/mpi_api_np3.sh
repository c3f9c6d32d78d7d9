#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The API contract with peers (test/mpi_api.c) on 3 ranks, exact and bounded mode.
exec "${top_srcdir:-.}/test/run-mpi.sh" 3 "${top_builddir:-.}/test/mpi_api"
