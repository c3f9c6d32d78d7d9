#!/usr/bin/env bash
# Session 9: the new defaults (A: calib_margin 1.1, backoff_after_us 5 s) against the old
# (B: 1.2 and 1 s) in one run, alternating every iteration, for a scenario named by $2:
#   d: issue 4 (d), rank 3 1 s late in 10 % of the operations, 200 Mbit/s
#   c: issue 4 (c), 6 synced flows per host, --offload
#   b: issue 4 (b), 1 flow per host, --offload
# MPI in the same run (after both).
# Usage: bench/results/session9/ab_old.sh BENCH_BINARY d|c|b [ITERS [SUFFIX]]
set -u
B=${1:?bench binary}
HERE=$(cd "$(dirname "$0")" && pwd)
common=(--mode bounded --algorithm transpose -f --warmup-large 16)
OUT=$HERE
. "$HERE/../../scenarios.sh"
old=(--compare-param calib_margin=1.2 --compare-param backoff_after_us=1000000)
n=${3:-200}
case ${2:?scenario} in
d) run i4d-4M-straggler-ab${4:-} -- --sync-start 50 -m 4m:4m --iter-large "$n" --delay 3:1000000:0.1 "${old[@]}" ;;
c) run i4c-4M-cross-ab${4:-} --cross-traffic max --cross-onoff 500:4000 --cross-flows 6 --cross-sync --offload -- \
	--sync-start 250 -m 4m:4m --iter-large "$n" "${old[@]}" ;;
b) run i4b-4M-cross-ab${4:-} --cross-traffic max --cross-onoff 300:1200 --offload -- \
	--sync-start 250 -m 4m:4m --iter-large "$n" "${old[@]}" ;;
esac
