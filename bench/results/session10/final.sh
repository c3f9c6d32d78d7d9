#!/usr/bin/env bash
# Session 10, library 8599f70: the runs of rerun.sh whose library (a2ea29f) had the
# progress thread spin while the application held the lock (272,453 wake-ups in the traced
# (c) run), again: issue 3 (b) and (a) at 64 KiB, issue 4 (c), (d), (b).
# Usage: bench/results/session10/final.sh BENCH_BINARY
set -u
B=${1:?bench binary}
HERE=$(cd "$(dirname "$0")" && pwd)
common=(--mode bounded --algorithm transpose -f --warmup-large 16)
OUT=$HERE/final
. "$HERE/../../scenarios.sh"
run b-64K --loss 0.01 -- --sync-start 250 -m 64k:64k --iter-large 200
run a-64K -- --sync-start 50 -m 64k:64k --iter-large 200
run i4c-4M-cross --cross-traffic max --cross-onoff 500:4000 --cross-flows 6 --cross-sync --offload -- \
	--sync-start 250 -m 4m:4m --iter-large 300
run i4d-4M-straggler -- --sync-start 50 -m 4m:4m --iter-large 200 --delay 3:1000000:0.1
run i4b-4M-cross --cross-traffic max --cross-onoff 300:1200 --offload -- \
	--sync-start 250 -m 4m:4m --iter-large 300
echo "== done $(date -u +%H:%M:%S)"
