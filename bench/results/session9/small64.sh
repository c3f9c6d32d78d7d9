#!/usr/bin/env bash
# Session 9: issue 3 at 64 KiB, (a) then (b) back to back (the (b) bar is 1.5x the (a)
# P50), MPI in each run.
# Usage: bench/results/session9/small64.sh BENCH_BINARY SUFFIX
set -u
B=${1:?bench binary}
HERE=$(cd "$(dirname "$0")" && pwd)
common=(--mode bounded --algorithm transpose -f --warmup-large 16)
OUT=$HERE/small
. "$HERE/../../scenarios.sh"
[ "${2:?suffix}" != ab ] && run a-64K-$2 -- --sync-start 50 -m 64k:64k --iter-large 200
[ "$2" != ab ] && run b-64K-$2 --loss 0.01 -- --sync-start 250 -m 64k:64k --iter-large 200
# With SUFFIX ab: the same two runs as A/B tests, B with the old deadline margin (1.2).
if [ "$2" = ab ]; then
	run a-64K-ab-m12 -- --sync-start 50 -m 64k:64k --iter-large 200 --compare-param calib_margin=1.2
	run b-64K-ab-m12 --loss 0.01 -- --sync-start 250 -m 64k:64k --iter-large 200 --compare-param calib_margin=1.2
fi
