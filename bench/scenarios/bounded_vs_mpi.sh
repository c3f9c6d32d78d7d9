#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bounded_vs_mpi.sh - bounded Transpose against MPI_Allreduce in the same run, 4 emulated
# hosts on rate-limited links: clean (a-SIZE) and with 1 % loss each way (b-SIZE), at 1, 4
# and 16 MiB, and 64 KiB pairs each started in a quiet spell (a-64K-qN, b-64K-qN).
#
#   bench/scenarios/bounded_vs_mpi.sh BENCH_BINARY OUT_DIR [SCENARIO...]
#
# LINK_RATE (default 100mbit) is every host's link rate: at 100 Mbit/s a 2-CPU machine's
# packet rate is not the bottleneck, the links are. Needs root (the emulated cloud);
# run under flock /tmp/orc-cluster.lock. Tables: bench/perf_table.sh cluster OUT_DIR/*.
set -u
. "$(dirname "$0")/common.sh"
batch_init "$@"
R=(--rate "${LINK_RATE:-100mbit}")
for k in 1 2 3 4 5; do pair64k q$k "${R[@]}"; done
pick a-1M && run a-1M "${R[@]}" -- --sync-start 50 -m 1m:1m --iter-large 100
pick b-1M && run b-1M "${R[@]}" --loss 0.01 -- --sync-start 250 -m 1m:1m --iter-large 100
pick a-4M && run a-4M "${R[@]}" -- --sync-start 50 -m 4m:4m --iter-large 100
pick b-4M && run b-4M "${R[@]}" --loss 0.01 -- --sync-start 250 -m 4m:4m --iter-large 100
pick a-16M && run a-16M "${R[@]}" -- --sync-start 50 -m 16m:16m --iter-large 60
pick b-16M && run b-16M "${R[@]}" --loss 0.01 -- --sync-start 250 -m 16m:16m --iter-large 60
echo "== done $(date -u +%H:%M:%S)"
