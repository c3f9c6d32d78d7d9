#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# datagram_path.sh - bounded mode's cost per byte on fast links, against MPI_Allreduce in
# the same run (docs/design.md, "Datagram transports"):
#   off2-{kernel,libfabric}  2 hosts, unlimited links, offloads on (--offload, MTU 1500),
#                            1, 4 and 16 MiB, on each datagram transport
#   fast2                    the same on the fast profile (offloads, MTU 9000)
#   fast2-pieces, fast4-pieces, loss4-pieces   the same with bounded_piece_size=1m
#   off4, fast4              4 hosts, unlimited links, 4 and 16 MiB
#   loss4                    4 hosts at 1 Gbit/s, 1 % loss on the wire (fast profile), 4 and
#                            16 MiB: the tail
#   loss4-steady             the same, warmed up past the deadline's calibration (16 operations
#                            per size, at timeout_max_us until calibrated), as the other tables
#   exact2                   exact mode, 2 hosts, --offload, 1-16 MiB
#
#   bench/scenarios/datagram_path.sh BENCH_BINARY OUT_DIR [SCENARIO...]
#
# Each table row carries the CPU per call and rank of both (the "# CPU at" lines). Needs
# root; run under flock /tmp/orc-cluster.lock.  Tables: bench/perf_table.sh cluster DIR.
set -u
. "$(dirname "$0")/common.sh"
batch_init "$@"
common=(--mode bounded -f --warmup-large 5)
M=(-m 1m:16m --iter-large 20)
for t in kernel libfabric; do
	pick "off2-$t" && OPTIREDUCE_BOUNDED_TRANSPORT=$t run "off2-$t" -n 2 --rate none --offload -- "${M[@]}"
done
pick fast2 && run fast2 -n 2 --rate none --fast -- "${M[@]}"
pick fast2-pieces && OPTIREDUCE_BOUNDED_PIECE_SIZE=1m run fast2-pieces -n 2 --rate none --fast -- "${M[@]}"
pick off4 && run off4 -n 4 --rate none --offload -- -m 4m:16m --iter-large 20
pick fast4 && run fast4 -n 4 --rate none --fast -- -m 4m:16m --iter-large 20
pick fast4-pieces && OPTIREDUCE_BOUNDED_PIECE_SIZE=1m run fast4-pieces -n 4 --rate none --fast -- -m 4m:16m --iter-large 20
pick loss4 && run loss4 -n 4 --rate 1gbit --loss 0.01 --fast -- -m 4m:16m --iter-large 40
pick loss4-pieces && OPTIREDUCE_BOUNDED_PIECE_SIZE=1m run loss4-pieces -n 4 --rate 1gbit --loss 0.01 --fast -- -m 4m:16m --iter-large 40
common=(--mode bounded -f --warmup-large 16)
pick loss4-steady && run loss4-steady -n 4 --rate 1gbit --loss 0.01 --fast -- -m 4m:16m --iter-large 40
common=(--mode exact -f --warmup-large 5)
pick exact2 && run exact2 -n 2 --rate none --offload -- "${M[@]}"
echo "== done $(date -u +%H:%M:%S)"
