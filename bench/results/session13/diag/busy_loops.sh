#!/usr/bin/env bash
# Session 13 diagnostic, no baseline: (b) at 64 KiB on 200 Mbit/s, alternately with two
# SCHED_IDLE busy loops (one per CPU, so that the CPUs never halt) and without.
# Made spin-b64-* and none-b64-* here.
# The runs were made by the same loop written inline, results then in /tmp/slice/r2/.
# Usage: bench/results/session13/diag/busy_loops.sh BENCH_BINARY
set -u
. "$(dirname "$0")/../../../scenarios.sh"
batch_init "$@"
OUT=$(cd "$(dirname "$0")" && pwd)
pids=()
trap '[ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null' EXIT
for k in 1 2; do
	for s in spin none; do
		pids=()
		if [ $s = spin ]; then
			for c in 0 1; do
				taskset -c $c chrt -i 0 sh -c 'while :; do :; done' &
				pids+=($!)
			done
		fi
		run $s-b64-$k --loss 0.01 --no-baseline -- --sync-start 250 -m 64k:64k --iter-large 200
		[ ${#pids[@]} -eq 0 ] || kill "${pids[@]}"
		pids=()
	done
done
