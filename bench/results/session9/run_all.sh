#!/usr/bin/env bash
# The session-9 batch, on the library whose defaults are calib_margin 1.1 and
# backoff_after_us 5 s: issue 4's cross-traffic runs (cluster.sh --offload), issue 4 (a)
# adaptive against fixed 300 ms in the order F A A F (so that drift over the batch
# cancels out of the difference), then every scenario of session 6's batch.
# Usage: bench/results/session9/run_all.sh BENCH_BINARY
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
fixed=(--param timeout_us=300000)
run i4a-4M-fixed300-1 --no-baseline -- --sync-start 50 -m 4m:4m --iter-large 100 "${fixed[@]}"
run i4a-4M-adaptive-1 --no-baseline -- --sync-start 50 -m 4m:4m --iter-large 100
run i4a-4M-adaptive-2 --no-baseline -- --sync-start 50 -m 4m:4m --iter-large 100
run i4a-4M-fixed300-2 --no-baseline -- --sync-start 50 -m 4m:4m --iter-large 100 "${fixed[@]}"
"$HERE/../session6/run_all.sh" "$B" "$HERE"
