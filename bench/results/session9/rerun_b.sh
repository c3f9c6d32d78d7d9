#!/usr/bin/env bash
# Session 9, library 0dffa0e (the idle progress thread no longer slows MPI next to it):
# issue 3 (b) at 4 and 16 MiB again, whose bar is against MPI's P99.
# Usage: bench/results/session9/rerun_b.sh BENCH_BINARY [i4b]
set -u
B=${1:?bench binary}
HERE=$(cd "$(dirname "$0")" && pwd)
common=(--mode bounded --algorithm transpose -f --warmup-large 16)
OUT=$HERE/after-idle-fix
. "$HERE/../../scenarios.sh"
[ -z "${2:-}" ] && run b-4M --loss 0.01 -- --sync-start 250 -m 4m:4m --iter-large 100
[ -z "${2:-}" ] && run b-16M --loss 0.01 -- --sync-start 250 -m 16m:16m --iter-large 60
# Issue 4 (b) against the MPI baseline no longer slowed (does this cross traffic still
# give MPI a P99/P50 of 1.5?): with a second argument "i4b".
if [ "${2:-}" = i4b ]; then
	run i4b-4M-cross --cross-traffic max --cross-onoff 300:1200 --offload -- \
		--sync-start 250 -m 4m:4m --iter-large 300
fi
