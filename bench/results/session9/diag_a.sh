#!/usr/bin/env bash
# Session 9 diagnostic: issue 4 (a), adaptive against fixed 300 ms on the clean
# 200 Mbit/s cluster, with the per-operation debug trace (log_level=3), to see where the
# adaptive runs' extra ~1 % goes.  No baseline: self-comparison.
# Usage: bench/results/session9/diag_a.sh BENCH_BINARY
set -u
B=${1:?bench binary}
HERE=$(cd "$(dirname "$0")" && pwd)
common=(--mode bounded --algorithm transpose -f --warmup-large 16)
OUT=$HERE/diag
. "$HERE/../../scenarios.sh"
run a-4M-adaptive-log --no-baseline -- --sync-start 50 -m 4m:4m --iter-large 60 --param log_level=3
run a-4M-fixed300-log --no-baseline -- --sync-start 50 -m 4m:4m --iter-large 60 --param timeout_us=300000 --param log_level=3
echo "== done $(date -u +%H:%M:%S)"
