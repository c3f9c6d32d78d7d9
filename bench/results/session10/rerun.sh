#!/usr/bin/env bash
# Session 10, library a2ea29f (the idle progress thread sleeps in poll(); latency.csv has
# start_s, so bench/steal_at.sh sets every call against the steal of the moment): issue 4
# (c), (b), (d) again (the batch ran them under 7-9 % steal), issue 3 (b) at 64 KiB and
# 16 MiB (the batch missed them by 0.2 % and 1.3 %), then MPI_Allreduce alone and next to
# a communicator whose idle thread now sleeps until a datagram comes.
# Usage: bench/results/session10/rerun.sh BENCH_BINARY
set -u
B=${1:?bench binary}
HERE=$(cd "$(dirname "$0")" && pwd)
common=(--mode bounded --algorithm transpose -f --warmup-large 16)
OUT=$HERE/rerun
. "$HERE/../../scenarios.sh"
run i4c-4M-cross --cross-traffic max --cross-onoff 500:4000 --cross-flows 6 --cross-sync --offload -- \
	--sync-start 250 -m 4m:4m --iter-large 300
run i4b-4M-cross --cross-traffic max --cross-onoff 300:1200 --offload -- \
	--sync-start 250 -m 4m:4m --iter-large 300
run i4d-4M-straggler -- --sync-start 50 -m 4m:4m --iter-large 200 --delay 3:1000000:0.1
run b-64K --loss 0.01 -- --sync-start 250 -m 64k:64k --iter-large 200
run a-64K -- --sync-start 50 -m 64k:64k --iter-large 200
run b-16M --loss 0.01 -- --sync-start 250 -m 16m:16m --iter-large 60
run mpi-alone -- --sync-start 50 -m 4m:4m --iter-large 100 --only mpi
run mpi-next-to-default -- --sync-start 50 -m 4m:4m --iter-large 100
echo "== done $(date -u +%H:%M:%S)"
