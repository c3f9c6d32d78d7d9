#!/usr/bin/env bash
# Session 13 diagnostic, no baseline: (b) at 64 KiB on 200 Mbit/s with the ranks asking
# the scheduler for a shorter EEVDF slice (slicewrap.c: sched_setattr with sched_runtime,
# then exec the bench; 0 = the default), three rounds of 300 us, default and 100 us.
# Made s*-b64-* here (s0-b64-0 is the single default run before them).
# The runs were made by the same loop written inline, with the wrappers in /tmp/slice/
# (their command.txt shows it).
# Usage: bench/results/session13/diag/slice.sh BENCH_BINARY   (gcc builds slicewrap)
set -u
. "$(dirname "$0")/../../../scenarios.sh"
batch_init "$@"
OUT=$(cd "$(dirname "$0")" && pwd)
gcc -O2 -o /tmp/slicewrap "$OUT/slicewrap.c" || exit 1
bench=$B
for s in 0 300000 100000; do
	printf '#!/bin/sh\nexec /tmp/slicewrap %s %s "$@"\n' "$s" "$bench" >/tmp/bench-slice-$s
	chmod +x /tmp/bench-slice-$s
done
for k in 1 2 3; do
	for s in 300000 0 100000; do
		B=/tmp/bench-slice-$s run s$s-b64-$k --loss 0.01 --no-baseline -- --sync-start 250 \
			-m 64k:64k --iter-large 200
	done
done
