#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# 4 ranks on one host: outstanding nonblocking operations across shared-memory chunks,
# and a bounded communicator that never touches the network.
exec "${top_srcdir:-.}/test/run-mpi.sh" 4 "${top_builddir:-.}/test/mpi_hier"
