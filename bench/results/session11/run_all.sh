#!/usr/bin/env bash
# Session 11, new machine (AMD EPYC, 2 CPUs, kernel 6.18), library ad929be (cluster.sh keeps
# GSO packets below the tbf bucket with --offload): issue 4 (c), (b), (d), (a) and issue 3 (a),
# (b) at 4 MiB, against MPI_Allreduce in the same run.
# Usage: bench/results/session11/run_all.sh BENCH_BINARY [SCENARIO...]
set -u
. "$(dirname "$0")/../../scenarios.sh"
batch_init "$@"
pick i4c-4M-cross && run i4c-4M-cross --cross-traffic max --cross-onoff 500:4000 --cross-flows 6 --cross-sync --offload -- \
	--sync-start 250 -m 4m:4m --iter-large 200
pick i4b-4M-cross && run i4b-4M-cross --cross-traffic max --cross-onoff 300:1200 --offload -- \
	--sync-start 250 -m 4m:4m --iter-large 200
pick i4d-4M-straggler && run i4d-4M-straggler -- --sync-start 50 -m 4m:4m --iter-large 150 --delay 3:1000000:0.1
pick a-4M && run a-4M -- --sync-start 50 -m 4m:4m --iter-large 100
pick b-4M && run b-4M --loss 0.01 -- --sync-start 250 -m 4m:4m --iter-large 100
# Repeats of the two scenarios whose bar is closest, and the A/B runs of issue 4 (a) and
# of early timeout (no baseline: they compare two settings of ours, interleaved).
pick i4c-4M-cross-2 && run i4c-4M-cross-2 --cross-traffic max --cross-onoff 500:4000 --cross-flows 6 --cross-sync --offload -- \
	--sync-start 250 -m 4m:4m --iter-large 200
pick i4b-4M-cross-2 && run i4b-4M-cross-2 --cross-traffic max --cross-onoff 300:1200 --offload -- \
	--sync-start 250 -m 4m:4m --iter-large 200
pick i4a-4M-ab && run i4a-4M-ab --no-baseline -- --sync-start 50 -m 4m:4m --iter-large 200 \
	--compare-param timeout_us=300000
pick b-4M-noearly && run b-4M-noearly --loss 0.01 --no-baseline -- --sync-start 250 -m 4m:4m --iter-large 60 \
	--compare-param early_timeout=0
# Issue 3 at the other sizes, and (a) at 4 MiB on 100 Mbit/s links (this machine is
# CPU-bound at 200 Mbit/s: see RESULTS.md, session 11).
pick a-4M-100mbit && run a-4M-100mbit --rate 100mbit -- --sync-start 50 -m 4m:4m --iter-large 60
pick b-64K && run b-64K --loss 0.01 -- --sync-start 250 -m 64k:64k --iter-large 200
pick a-64K && run a-64K -- --sync-start 50 -m 64k:64k --iter-large 200
pick b-1M && run b-1M --loss 0.01 -- --sync-start 250 -m 1m:1m --iter-large 100
pick a-1M && run a-1M -- --sync-start 50 -m 1m:1m --iter-large 100
pick d-64K && run d-64K --rate none --loss 0.01 -- --sync-start 250 -m 64k:64k --iter-large 200
pick d-1M && run d-1M --rate none --loss 0.01 -- --sync-start 250 -m 1m:1m --iter-large 200
pick b-16M && run b-16M --loss 0.01 -- --sync-start 250 -m 16m:16m --iter-large 60
pick a-16M && run a-16M -- --sync-start 50 -m 16m:16m --iter-large 60
pick c-4M-16M && run c-4M-16M --rate none -- --sync-start 50 -m 4m:16m --iter-large 60
# Issue 4 (a) again, against 300 ms and against a fixed timeout tuned to this machine's
# phase (about 210 ms: 250 ms), and issue 3 (a) at 16 MiB on 100 Mbit/s links.
pick i4a-4M-ab-2 && run i4a-4M-ab-2 --no-baseline -- --sync-start 50 -m 4m:4m --iter-large 200 \
	--compare-param timeout_us=300000
pick i4a-4M-ab-250 && run i4a-4M-ab-250 --no-baseline -- --sync-start 50 -m 4m:4m --iter-large 200 \
	--compare-param timeout_us=250000
pick a-16M-100mbit && run a-16M-100mbit --rate 100mbit -- --sync-start 50 -m 16m:16m --iter-large 20
# (d) with the delay at 3x this machine's 4 MiB median (about 430 ms): 1.3 s.
pick i4d-4M-straggler-1300 && run i4d-4M-straggler-1300 -- --sync-start 50 -m 4m:4m --iter-large 150 --delay 3:1300000:0.1
pick i4d-4M-straggler-1300-2 && run i4d-4M-straggler-1300-2 -- --sync-start 50 -m 4m:4m --iter-large 150 --delay 3:1300000:0.1
# progress_wait=0 (default) against 1 at 64 KiB (A/B, no baseline).
pick ab-wait-a-64K && run ab-wait-a-64K --no-baseline -- --sync-start 50 -m 64k:64k --iter-large 200 \
	--compare-param progress_wait=1
pick ab-wait-b-64K && run ab-wait-b-64K --loss 0.01 --no-baseline -- --sync-start 250 -m 64k:64k --iter-large 200 \
	--compare-param progress_wait=1
# Issue 3 at 64 KiB again, in a quiet spell.
pick b-64K-2 && run b-64K-2 --loss 0.01 -- --sync-start 250 -m 64k:64k --iter-large 200
pick a-64K-2 && run a-64K-2 -- --sync-start 50 -m 64k:64k --iter-large 200
# 64 KiB with and without the progress thread (A/B, no baseline).
pick ab-thread-a-64K && run ab-thread-a-64K --no-baseline -- --sync-start 50 -m 64k:64k --iter-large 200 \
	--compare-param progress_thread=0
pick ab-thread-b-64K && run ab-thread-b-64K --loss 0.01 --no-baseline -- --sync-start 250 -m 64k:64k --iter-large 200 \
	--compare-param progress_thread=0
echo "== done $(date -u +%H:%M:%S)"
