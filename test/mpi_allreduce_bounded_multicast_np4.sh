#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Bounded allreduce with multicast on, on 4 ranks: every dtype x op, counts 0, 1, N-1, N+1,
# in place or not; float SUM and AVG bounded within the rotation's rounding with nothing
# lost, the rest exact (fell back).  -q: the large counts meet real datagram loss on a
# loaded host (the deadline fires while ranks wait for a CPU), which mpi_bounded judges.
exec "${top_srcdir:-.}/test/run-allreduce-multicast.sh" 4 -q
