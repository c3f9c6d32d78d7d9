#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# multicast_egress.sh - bounded Transpose with its second phase sent once to a multicast
# group (B, multicast=auto, the default) against unicast to each peer (A, multicast=off),
# alternating every call, on 4 emulated hosts (docs/design.md, "Multicast").  The warm-up
# covers the deadline's calibration (16 operations) and the first try of the whole rate
# (4 more), so the timed calls show the steady state:
#   egress-4m, egress-16m   100 Mbit/s on each host's egress only (as clouds cap a VM's
#                           egress): multicast sends S per rank instead of 1.5 S
#   both-4m                 100 Mbit/s both ways: each host's ingress bounds both alike
#   loss-4m                 the same with 1 % random loss on every host
#   egress8-4m, both8-4m    the same on 8 hosts at 50 Mbit/s (8 ranks on 2 CPUs fill
#                           no faster link), MPI_Allreduce interleaved as the baseline;
#                           unicast sends 1.75 S per rank there
#   bytes8-mc, bytes8-uc    8 hosts, egress 50 Mbit/s, one way per run, no baseline: the
#                           bytes each host sends per operation (perf_table.sh bytes)
#
#   bench/scenarios/multicast_egress.sh BENCH_BINARY OUT_DIR [SCENARIO...]
#
# Needs root (the emulated cloud); run under flock /tmp/orc-cluster.lock.
# Tables: bench/perf_table.sh ab OUT_DIR/{egress,both}*, bench/perf_table.sh bytes
# OUT_DIR/bytes8-*.
set -u
. "$(dirname "$0")/common.sh"
batch_init "$@"
ab=(--param multicast=off --compare-param multicast=auto --warmup-large 24)
pick egress-4m && run egress-4m --rate 100mbit --rate-at egress --no-baseline -- \
	--sync-start 50 -m 4m:4m --iter-large 40 "${ab[@]}"
pick egress-16m && run egress-16m --rate 100mbit --rate-at egress --no-baseline -- \
	--sync-start 50 -m 16m:16m --iter-large 16 "${ab[@]}"
pick both-4m && run both-4m --rate 100mbit --no-baseline -- \
	--sync-start 50 -m 4m:4m --iter-large 40 "${ab[@]}"
pick loss-4m && run loss-4m --rate 100mbit --loss 0.01 --no-baseline -- \
	--sync-start 50 -m 4m:4m --iter-large 40 "${ab[@]}"
pick egress8-4m && run egress8-4m -n 8 --rate 50mbit --rate-at egress -- \
	--sync-start 50 -m 4m:4m --iter-large 20 "${ab[@]}"
pick both8-4m && run both8-4m -n 8 --rate 50mbit -- \
	--sync-start 50 -m 4m:4m --iter-large 20 "${ab[@]}"
pick bytes8-mc && run bytes8-mc -n 8 --rate 50mbit --rate-at egress --no-baseline -- \
	-m 4m:4m --iter-large 10 --param multicast=on
pick bytes8-uc && run bytes8-uc -n 8 --rate 50mbit --rate-at egress --no-baseline -- \
	-m 4m:4m --iter-large 10 --param multicast=off
echo "== done $(date -u +%H:%M:%S)"
