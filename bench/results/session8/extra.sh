#!/usr/bin/env bash
# Session 8, library 1e9d036, after rerun_small.sh: issue 4 (c) and (b) with a tighter
# deadline (calib_margin=1.1, a parameter; the default is 1.2), then (a) adaptive and
# fixed-300 ms alternated twice, so that their difference can be told from run-to-run drift.
# Usage: bench/results/session8/extra.sh BENCH_BINARY
set -u
B=${1:?bench binary}
HERE=$(cd "$(dirname "$0")" && pwd)
common=(--mode bounded --algorithm transpose -f --warmup-large 16)
OUT=$HERE/extra
. "$HERE/../../scenarios.sh"
run i4c-4M-cross-m11 --cross-traffic max --cross-onoff 500:4000 --cross-flows 6 --cross-sync --offload -- \
	--sync-start 250 -m 4m:4m --iter-large 300 --param calib_margin=1.1
run i4b-4M-cross-m11 --cross-traffic max --cross-onoff 300:1200 --offload -- \
	--sync-start 250 -m 4m:4m --iter-large 300 --param calib_margin=1.1
for k in 1 2; do
	run a-4M-adaptive-$k --no-baseline -- --sync-start 50 -m 4m:4m --iter-large 100
	run a-4M-fixed300-$k --no-baseline -- --sync-start 50 -m 4m:4m --iter-large 100 --param timeout_us=300000
done
echo "== done $(date -u +%H:%M:%S)"
