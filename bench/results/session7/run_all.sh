#!/usr/bin/env bash
# The session-7 batch: session 6's scenarios (issues 3 and 4) again, on one build (the one
# of i4b/i4c, made just before), one run after the other, results here.
# Usage: bench/results/session7/run_all.sh BENCH_BINARY
exec "$(dirname "$0")/../session6/run_all.sh" "${1:?bench binary}" "$(dirname "$0")"
