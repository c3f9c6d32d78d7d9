#!/usr/bin/env bash
# The session-10 batch: every issue 3 and 4 scenario on one build (aeb85df), against the
# MPI baseline no longer slowed by our idle progress thread (0dffa0e), most wanted first.
# steal.txt now has every 100 ms window's steal, so a slow stretch can be set against it.
# Usage: bench/results/session10/run_all.sh BENCH_BINARY
set -u
B=${1:?bench binary}
HERE=$(cd "$(dirname "$0")" && pwd)
common=(--mode bounded --algorithm transpose -f --warmup-large 16)
OUT=$HERE
. "$HERE/../../scenarios.sh"
run i4c-4M-cross --cross-traffic max --cross-onoff 500:4000 --cross-flows 6 --cross-sync --offload -- \
	--sync-start 250 -m 4m:4m --iter-large 300
run i4b-4M-cross --cross-traffic max --cross-onoff 300:1200 --offload -- \
	--sync-start 250 -m 4m:4m --iter-large 300
run i4d-4M-straggler -- --sync-start 50 -m 4m:4m --iter-large 200 --delay 3:1000000:0.1
run b-64K --loss 0.01 -- --sync-start 250 -m 64k:64k --iter-large 200
run a-64K -- --sync-start 50 -m 64k:64k --iter-large 200
run b-1M-4M --loss 0.01 -- --sync-start 250 -m 1m:4m --iter-large 100
run a-1M-4M -- --sync-start 50 -m 1m:4m --iter-large 100
run b-16M --loss 0.01 -- --sync-start 250 -m 16m:16m --iter-large 60
run a-16M -- --sync-start 50 -m 16m:16m --iter-large 60
run d-64K --rate none --loss 0.01 -- --sync-start 250 -m 64k:64k --iter-large 200
run d-1M --rate none --loss 0.01 -- --sync-start 250 -m 1m:1m --iter-large 200
run c-4M-16M --rate none -- --sync-start 50 -m 4m:16m --iter-large 60
run i4a-4M-ab --no-baseline -- --sync-start 50 -m 4m:4m --iter-large 200 \
	--compare-param timeout_us=300000
run b-4M-noearly --loss 0.01 --no-baseline -- --sync-start 250 -m 4m:4m --iter-large 60 \
	--compare-param early_timeout=0
echo "== done $(date -u +%H:%M:%S)"
