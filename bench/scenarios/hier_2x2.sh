#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# hier_2x2.sh - exact mode with ranks that share hosts: 2 emulated hosts x 2 ranks on
# rate-limited links, 4 MiB float32 SUM, against MPI_Allreduce in the same run (p1, p2,
# p3), and the bytes each host sends per operation: liboptireduce on 2 x 2 (bytes-2x2),
# a 2-rank allreduce of the same size, one rank per host (bytes-2x1), and MPI_Allreduce
# on 2 x 2 (bytes-mpi-2x2), each run alone.
#
#   bench/scenarios/hier_2x2.sh BENCH_BINARY OUT_DIR [SCENARIO...]
#
# LINK_RATE (default 100mbit) is every host's link rate. Needs root (the emulated cloud);
# run under flock /tmp/orc-cluster.lock. Tables: bench/perf_table.sh cluster OUT_DIR/p*,
# bench/perf_table.sh bytes OUT_DIR/bytes-*.
set -u
. "$(dirname "$0")/common.sh"
batch_init "$@"
common=(--mode exact -f -m 4m:4m --warmup-large 2)
R=(-n 2 --rate "${LINK_RATE:-100mbit}")
for k in 1 2 3; do
	pick "p$k" && run "p$k" "${R[@]}" --per-host 2 -- --iter-large 20
done
pick bytes-2x2 && run bytes-2x2 "${R[@]}" --per-host 2 --no-baseline -- --iter-large 10
pick bytes-2x1 && run bytes-2x1 "${R[@]}" --per-host 1 --no-baseline -- --iter-large 10
pick bytes-mpi-2x2 && run bytes-mpi-2x2 "${R[@]}" --per-host 2 -- --only mpi --iter-large 10
echo "== done $(date -u +%H:%M:%S)"
