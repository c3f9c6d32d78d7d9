#!/usr/bin/env bash
# Session 8, second build: the scenarios at 2 MiB and below again (and (c), whose
# first run had 265 steal windows), after the deadline
# backoff also counts cuts (OR_TMO_BACKOFF_CUTS_ANYWAY); at 4 MiB and above the 1 s
# horizon is reached first, so those runs of run_all.sh stand for this build too.
# Usage: bench/results/session8/rerun_small.sh BENCH_BINARY
set -u
B=${1:?bench binary}
HERE=$(cd "$(dirname "$0")" && pwd)
common=(--mode bounded --algorithm transpose -f --warmup-large 16)
OUT=$HERE/small
. "$HERE/../../scenarios.sh"
run a-1M-4M -- --sync-start 50 -m 1m:4m --iter-large 100
# a-64K: run by hand first (same arguments)
#run a-64K -- --sync-start 50 -m 64k:64k --iter-large 200
run b-1M-4M --loss 0.01 -- --sync-start 250 -m 1m:4m --iter-large 100
run b-64K --loss 0.01 -- --sync-start 250 -m 64k:64k --iter-large 200
run d-64K --rate none --loss 0.01 -- --sync-start 250 -m 64k:64k --iter-large 200
run d-1M --rate none --loss 0.01 -- --sync-start 250 -m 1m:1m --iter-large 200
echo "== done $(date -u +%H:%M:%S)"
