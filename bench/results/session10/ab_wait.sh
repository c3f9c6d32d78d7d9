#!/usr/bin/env bash
# Session 10, library 8599f70 (no spin): does the idle thread that sleeps in poll() (progress_wait=1,
# A) cost or gain anything inside operations against the polling one (B)?  One A/B run
# each of issue 3 (a) and (b) at 64 KiB, the size most sensitive to CPU (the rerun's
# a-64K lost 4.3 % of contributions under 5 % steal, the batch's 0.25 % under 0.1 %).
# Usage: bench/results/session10/ab_wait.sh BENCH_BINARY [OUT_SUBDIR]
# (6b8f124, with the spin, wrote ab-wait/; 8599f70 wrote ab-wait-final/; c0e7cb9, the
# thread parking only once half the receive ring waits, wrote ab-wait-deferred/)
set -u
B=${1:?bench binary}
HERE=$(cd "$(dirname "$0")" && pwd)
common=(--mode bounded --algorithm transpose -f --warmup-large 16)
OUT=$HERE/${2:-ab-wait}
. "$HERE/../../scenarios.sh"
run a-64K-ab -- --sync-start 50 -m 64k:64k --iter-large 200 --compare-param progress_wait=0
run b-64K-ab --loss 0.01 -- --sync-start 250 -m 64k:64k --iter-large 200 --compare-param progress_wait=0
for r in a-64K-ab b-64K-ab; do grep -E '^(B:|# A/B|# CPU)' "$OUT/$r/table.txt"; done
