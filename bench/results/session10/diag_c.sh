#!/usr/bin/env bash
# Session 10, library 6b8f124: issue 4 (c) traced (OPTIREDUCE_LOG_LEVEL=3 through
# --param log_level=3), no baseline: a diagnostic, its latencies are not results.  With
# start_s and the per-window steal, the slow calls without steal can be read in the trace.
# Usage: bench/results/session10/diag_c.sh BENCH_BINARY
set -u
B=${1:?bench binary}
HERE=$(cd "$(dirname "$0")" && pwd)
common=(--mode bounded --algorithm transpose -f --warmup-large 16)
OUT=$HERE/diag
. "$HERE/../../scenarios.sh"
run i4c-4M-cross-log --cross-traffic max --cross-onoff 500:4000 --cross-flows 6 --cross-sync --offload \
	--no-baseline -- --sync-start 250 -m 4m:4m --iter-large 200 --param log_level=3
