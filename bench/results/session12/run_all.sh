#!/usr/bin/env bash
# Session 12, same machine as session 11 (AMD EPYC, 2 CPUs, kernel 6.18), with the emulated
# cloud of 7f602c6 (no iptables on bridged frames in the switch namespace; cpu_steal.sh
# without per-sample processes): issue 3 again, against MPI_Allreduce in the same run.
# Usage: bench/results/session12/run_all.sh BENCH_BINARY [SCENARIO...]
set -u
. "$(dirname "$0")/../../scenarios.sh"
batch_init "$@"
pick a-64K && run a-64K -- --sync-start 50 -m 64k:64k --iter-large 200
pick b-64K && run b-64K --loss 0.01 -- --sync-start 250 -m 64k:64k --iter-large 200
pick a-4M && run a-4M -- --sync-start 50 -m 4m:4m --iter-large 100
pick a-16M && run a-16M -- --sync-start 50 -m 16m:16m --iter-large 60
# With the cluster of 590b35e (no filter table on loss-free hosts): issue 3 (a), (b), (d).
pick a-4M-2 && run a-4M-2 -- --sync-start 50 -m 4m:4m --iter-large 100
pick a-16M-2 && run a-16M-2 -- --sync-start 50 -m 16m:16m --iter-large 60
pick b-1M && run b-1M --loss 0.01 -- --sync-start 250 -m 1m:1m --iter-large 100
pick b-4M && run b-4M --loss 0.01 -- --sync-start 250 -m 4m:4m --iter-large 100
pick b-16M && run b-16M --loss 0.01 -- --sync-start 250 -m 16m:16m --iter-large 60
pick a-1M && run a-1M -- --sync-start 50 -m 1m:1m --iter-large 100
pick d-64K && run d-64K --rate none --loss 0.01 -- --sync-start 250 -m 64k:64k --iter-large 200
pick d-1M && run d-1M --rate none --loss 0.01 -- --sync-start 250 -m 1m:1m --iter-large 200
# 64 KiB again, each run started only once the hypervisor has taken under 1 % of the CPUs
# for 5 s (at most 10 min of waiting): its tail is steal bursts (RESULTS.md, session 12).
# (The runs were made with a /proc/stat reader of their own in this script; quiet in
# scenarios.sh now measures the same 5 s with cpu_steal.sh.)
for k in 1 2 3; do pair64k q$k; done
# (a) at 64 KiB with (b)'s 250 ms between iterations instead of 50: is the gap itself
# part of (b)'s higher P50?
for k in 1 2; do
	pick a250-64K-q$k && quiet && run a250-64K-q$k -- --sync-start 250 -m 64k:64k --iter-large 200
done
# The bench of this session's later commit (the barrier between calls tests every 100 us
# growing to 1 ms with --sync-start): the 64 KiB pairs again.
for k in 4 5 6; do pair64k q$k; done
# The library of 129987b (a waiting rank wakes when a phase may close on a timeout, to the
# microsecond, not at the next whole millisecond): the 64 KiB pairs, and 4 MiB (a), (b).
for k in 1 2 3; do pair64k w$k; done
pick a-4M-w && run a-4M-w -- --sync-start 50 -m 4m:4m --iter-large 100
pick b-4M-w && run b-4M-w --loss 0.01 -- --sync-start 250 -m 4m:4m --iter-large 100
# The library of 21da531 (the precise wake only once every sender's LAST is in).
for k in 1 2 3; do pair64k v$k; done
pick a-4M-v && run a-4M-v -- --sync-start 50 -m 4m:4m --iter-large 100
pick b-4M-v && run b-4M-v --loss 0.01 -- --sync-start 250 -m 4m:4m --iter-large 100
# A/B in one run (no baseline): does closing phases promptly cut more data?  B spins (polls,
# yielding) for 2 ms before the millisecond wait, so it notices a phase's timeout at once.
pick ab-spin-b-64K && quiet && run ab-spin-b-64K --loss 0.01 --no-baseline -- --sync-start 250 -m 64k:64k \
	--iter-large 200 --compare-param bounded_spin_us=2000
echo "== done $(date -u +%H:%M:%S)"
