#!/usr/bin/env bash
# Session 9 diagnostic: issue 4 (a), adaptive against fixed 300 ms on the clean
# 200 Mbit/s cluster, with the per-operation debug trace (log_level=3), to see where the
# adaptive runs' extra ~1 % goes.  No baseline: self-comparison.
# Usage: bench/results/session9/diag_a.sh BENCH_BINARY [d|b64|dstop]
set -u
B=${1:?bench binary}
HERE=$(cd "$(dirname "$0")" && pwd)
common=(--mode bounded --algorithm transpose -f --warmup-large 16)
OUT=$HERE/diag
. "$HERE/../../scenarios.sh"
[ -z "${2:-}" ] && run a-4M-adaptive-log --no-baseline -- --sync-start 50 -m 4m:4m --iter-large 60 --param log_level=3
[ -z "${2:-}" ] && run a-4M-fixed300-log --no-baseline -- --sync-start 50 -m 4m:4m --iter-large 60 --param timeout_us=300000 --param log_level=3
echo "== done $(date -u +%H:%M:%S)"
# Issue 4 (d) with the trace: the batch's i4d ran at 320-400 ms for 150 operations
# after a burst of steal (20:21:40-20:22:30); what held it there.
if [ "${2:-}" = d ]; then
	run i4d-4M-straggler-log --no-baseline -- --sync-start 50 -m 4m:4m --iter-large 200 \
		--delay 3:1000000:0.1 --param log_level=3
fi
# Issue 3 (b) at 64 KiB with the trace: what the operations past 1.5x the (a) P50 wait for.
if [ "${2:-}" = b64 ]; then
	run b-64K-log --loss 0.01 --no-baseline -- --sync-start 250 -m 64k:64k --iter-large 200 \
		--param log_level=3
fi
# Issue 4 (d) with emulated steal: hosts 1 and 3 stopped 10 % of every 700 and 1100 ms
# (SIGSTOP, cluster.sh --straggler), the trace on.
if [ "${2:-}" = dstop ]; then
	run i4d-4M-straggler-stop-log --no-baseline --straggler 1:stop:700:0.1 --straggler 3:stop:1100:0.1 -- \
		--sync-start 50 -m 4m:4m --iter-large 200 --delay 3:1000000:0.1 --param log_level=3
fi
