#!/usr/bin/env bash
# Session 9: issue 4 (a) as an A/B test in one run (optireduce_bench --compare-param):
# A = adaptive deadline (defaults), B = hand-tuned fixed 300 ms, alternating every
# iteration on the clean 200 Mbit/s cluster.
# Usage: bench/results/session9/ab.sh BENCH_BINARY [NAME_SUFFIX]
set -u
B=${1:?bench binary}
HERE=$(cd "$(dirname "$0")" && pwd)
common=(--mode bounded --algorithm transpose -f --warmup-large 16)
OUT=$HERE
. "$HERE/../../scenarios.sh"
run i4a-4M-ab${2:-} --no-baseline -- --sync-start 50 -m 4m:4m --iter-large 200 \
	--compare-param timeout_us=300000
grep -E '^(B:|# A/B)' "$OUT/i4a-4M-ab${2:-}/table.txt"
tail -n 1 "$OUT/i4a-4M-ab${2:-}/table.txt"
