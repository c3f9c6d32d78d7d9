#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# consistent_p99.sh - what parameter consistent (docs/design.md, "Replica-consistent
# results") costs the tail: bounded Transpose (A) against the same with consistent=1 (B),
# alternating every call on one cluster, 4 emulated hosts, 1 % loss per host on
# rate-limited links, at 64 KiB, 1 MiB and 4 MiB (c-SIZE).  The bar: B's P99 within 1.25x
# of A's.
#
#   bench/scenarios/consistent_p99.sh BENCH_BINARY OUT_DIR [SCENARIO...]
#
# LINK_RATE (default 100mbit) is every host's link rate.  Needs root (the emulated cloud);
# run under flock /tmp/orc-cluster.lock.  Table: bench/perf_table.sh ab OUT_DIR/c-*.
set -u
. "$(dirname "$0")/common.sh"
batch_init "$@"
R=(--rate "${LINK_RATE:-100mbit}" --loss 0.01 --no-baseline)
pick c-64K && run c-64K "${R[@]}" -- --sync-start 250 -m 64k:64k --iter-large 400 \
	--compare-param consistent=1
pick c-1M && run c-1M "${R[@]}" -- --sync-start 250 -m 1m:1m --iter-large 200 \
	--compare-param consistent=1
pick c-4M && run c-4M "${R[@]}" -- --sync-start 250 -m 4m:4m --iter-large 100 \
	--compare-param consistent=1
echo "== done $(date -u +%H:%M:%S)"
