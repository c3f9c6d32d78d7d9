#!/usr/bin/env bash
# The session-6 batch: every issue 3 and 4 scenario of session 5 again, on one build,
# one run after the other (the cross-traffic runs i4b/i4c were made just before).
# Usage: bench/results/session6/run_all.sh BENCH_BINARY [RESULTS_DIR]
# (RESULTS_DIR defaults to this script's directory; later sessions pass their own.)
set -u
B=${1:?bench binary}
HERE=$(cd "$(dirname "$0")" && pwd)
R=$(cd "${2:-$HERE}" && pwd)
common=(--mode bounded --algorithm transpose -f --warmup-large 16)
OUT=$R
. "$HERE/../../scenarios.sh"
run a-1M-4M -- --sync-start 50 -m 1m:4m --iter-large 100
run a-4M-fixed300 --no-baseline -- --sync-start 50 -m 4m:4m --iter-large 100 --param timeout_us=300000
run a-16M -- --sync-start 50 -m 16m:16m --iter-large 60
run a-64K -- --sync-start 50 -m 64k:64k --iter-large 200
run b-1M-4M --loss 0.01 -- --sync-start 250 -m 1m:4m --iter-large 100
run b-4M-noearly --loss 0.01 --no-baseline -- --sync-start 250 -m 4m:4m --iter-large 60 --param early_timeout=0
run b-16M --loss 0.01 -- --sync-start 250 -m 16m:16m --iter-large 60
run b-64K --loss 0.01 -- --sync-start 250 -m 64k:64k --iter-large 200
run d-64K --rate none --loss 0.01 -- --sync-start 250 -m 64k:64k --iter-large 200
run d-1M --rate none --loss 0.01 -- --sync-start 250 -m 1m:1m --iter-large 200
run c-4M-16M --rate none -- --sync-start 50 -m 4m:16m --iter-large 60
run i4d-4M-straggler -- --sync-start 50 -m 4m:4m --iter-large 200 --delay 3:1000000:0.1
echo "== done $(date -u +%H:%M:%S)"
