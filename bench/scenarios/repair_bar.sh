#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# repair_bar.sh - what repair inside the deadline (docs/design.md) recovers: bounded
# Transpose with repair (A, the default) against repair=0 (B), alternating every call, and
# MPI_Allreduce interleaved per size, on 4 emulated hosts with 1 % loss per host on
# rate-limited links, at 64 KiB, 1 MiB and 16 MiB (r-SIZE).  The bars: A's data cut at most
# 0.1 %, A's P50 at most 1.1x B's, A's P99 at most 0.5x MPI's.
#
#   bench/scenarios/repair_bar.sh BENCH_BINARY OUT_DIR [SCENARIO...]
#
# LINK_RATE (default 100mbit) is every host's link rate.  Needs root (the emulated cloud);
# run under flock /tmp/orc-cluster.lock.  Tables: bench/perf_table.sh ab OUT_DIR/r-* (A
# against B) and bench/perf_table.sh cluster OUT_DIR/r-* (against MPI).
set -u
. "$(dirname "$0")/common.sh"
batch_init "$@"
R=(--rate "${LINK_RATE:-100mbit}" --loss 0.01)
pick r-64K && run r-64K "${R[@]}" -- --sync-start 250 -m 64k:64k --iter-large 300 \
	--compare-param repair=0
pick r-1M && run r-1M "${R[@]}" -- --sync-start 250 -m 1m:1m --iter-large 100 \
	--compare-param repair=0
pick r-16M && run r-16M "${R[@]}" -- -m 16m:16m --iter-large 20 --compare-param repair=0
echo "== done $(date -u +%H:%M:%S)"
