#!/usr/bin/env bash
# The session-8 batch: issue 4's cross-traffic runs (with cluster.sh --offload: loss-free
# scenarios, so TCP's offloads can stay on), then every scenario of session 6's batch, on
# one build, one run after the other.
# Usage: bench/results/session8/run_all.sh BENCH_BINARY
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
"$HERE/../session6/run_all.sh" "$B" "$HERE"
