#!/usr/bin/env bash
# Session 13, same machine as sessions 11-12 (AMD EPYC, 2 CPUs, kernel 6.18, Firecracker),
# library and emulated cloud unchanged since session 12: issue 3's scenarios (a) and (b) on
# 100 Mbit/s links instead of 200, against MPI_Allreduce in the same run. On this machine 4
# hosts at 200 Mbit/s are bound by the CPUs' packet rate (session 12: 4-11 % idle), not by
# the links; at 100 Mbit/s the links are the bottleneck again (session 11: 86.6 % and
# 92.0 % of the link at 4 and 16 MiB), which is what the issue's bars were set to measure.
# Usage: bench/results/session13/run_all.sh BENCH_BINARY [SCENARIO...]
set -u
. "$(dirname "$0")/../../scenarios.sh"
batch_init "$@"
R=(--rate 100mbit)
for k in 1 2 3; do pair64k q$k "${R[@]}"; done
pick a-4M && run a-4M "${R[@]}" -- --sync-start 50 -m 4m:4m --iter-large 100
pick b-4M && run b-4M "${R[@]}" --loss 0.01 -- --sync-start 250 -m 4m:4m --iter-large 100
pick a-16M && run a-16M "${R[@]}" -- --sync-start 50 -m 16m:16m --iter-large 60
pick b-16M && run b-16M "${R[@]}" --loss 0.01 -- --sync-start 250 -m 16m:16m --iter-large 60
pick a-1M && run a-1M "${R[@]}" -- --sync-start 50 -m 1m:1m --iter-large 100
pick b-1M && run b-1M "${R[@]}" --loss 0.01 -- --sync-start 250 -m 1m:1m --iter-large 100
# Later in the session (06:51 UTC, library of d478280, the same behaviour): more 64 KiB pairs, hoping for quieter spells, on
# 100 Mbit/s and on the issue's 200 Mbit/s (cluster.sh's default rate).
for k in 4 5; do pair64k q$k "${R[@]}"; done
for k in 1 2 3; do pair64k 200-q$k; done
echo "== done $(date -u +%H:%M:%S)"
