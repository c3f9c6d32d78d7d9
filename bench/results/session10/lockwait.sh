#!/usr/bin/env bash
# Session 10, library with the lock-wait count in the op timeline (run twice: before and after the thread stopped parking until half the receive ring waits): how often, and how
# long, the application waited for the communicator lock held by its progress thread, at
# 64 KiB, issue 3 (a), with the thread in poll() (default) and polling (progress_wait=0).
# A diagnostic (no baseline, log_level=3): the counts are the result, not the latencies.
# Usage: bench/results/session10/lockwait.sh BENCH_BINARY [x SUFFIX] (the first run had no
# suffix; the run after the change used "-deferred")
set -u
B=${1:?bench binary}
HERE=$(cd "$(dirname "$0")" && pwd)
common=(--mode bounded --algorithm transpose -f --warmup-large 16)
OUT=$HERE/diag
. "$HERE/../../scenarios.sh"
for pw in 1 0; do
	run a-64K-lockwait${3:-}-pw$pw --no-baseline -- --sync-start 50 -m 64k:64k --iter-large 200 \
		--param log_level=3 --param progress_wait=$pw
	grep timeline "$OUT/a-64K-lockwait${3:-}-pw$pw/stderr.txt" |
		sed 's/.*waited \([0-9]*\) times for the progress thread.s lock, \([0-9]*\) us/\1 \2/' |
		awk -v pw=$pw '{ n++; w += $1; us += $2; if ($1 > 0) k++; if ($2 > mx) mx = $2 }
			END { printf "progress_wait=%s: %d rank-operations, %d waited (%d waits), %.0f us in all, longest %.0f us\n", pw, n, k, w, us, mx }'
	tail -n 1 "$OUT/a-64K-lockwait${3:-}-pw$pw/table.txt"
done
