#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bounded_tail.sh - the tail of bounded Transpose at 4 MiB on 200 Mbit/s links when
# something else slows the network or a rank, against MPI_Allreduce in the same run:
#   cross-onoff    one unpaced TCP flow per host, on 300 ms / off 1200 ms
#   cross-synced   six synchronised flows per host, on 500 ms / off 4000 ms
#   straggler      rank 3 starts 1.3 s late in 10 % of the calls (--delay)
# and two interleaved A/B runs of our own settings (no MPI baseline):
#   ab-fixed-timeout   adaptive deadlines (A) against a fixed 250 ms timeout (B)
#   ab-no-early        early timeout (A) against the hard bound alone (B), 1 % loss
#
#   bench/scenarios/bounded_tail.sh BENCH_BINARY OUT_DIR [SCENARIO...]
#
# Needs root (the emulated cloud); run under flock /tmp/orc-cluster.lock.
# Tables: bench/perf_table.sh cluster OUT_DIR/cross-* OUT_DIR/straggler, and
# bench/perf_table.sh ab OUT_DIR/ab-*.
set -u
. "$(dirname "$0")/common.sh"
batch_init "$@"
pick cross-onoff && run cross-onoff --cross-traffic max --cross-onoff 300:1200 --offload -- \
	--sync-start 250 -m 4m:4m --iter-large 200
pick cross-synced && run cross-synced --cross-traffic max --cross-onoff 500:4000 --cross-flows 6 \
	--cross-sync --offload -- --sync-start 250 -m 4m:4m --iter-large 200
pick straggler && run straggler -- --sync-start 50 -m 4m:4m --iter-large 150 --delay 3:1300000:0.1
pick ab-fixed-timeout && run ab-fixed-timeout --no-baseline -- --sync-start 50 -m 4m:4m \
	--iter-large 200 --compare-param timeout_us=250000
pick ab-no-early && run ab-no-early --loss 0.01 --no-baseline -- --sync-start 250 -m 4m:4m \
	--iter-large 60 --compare-param early_timeout=0
echo "== done $(date -u +%H:%M:%S)"
