#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run_cluster.sh - one command: bring up the emulated cloud (test/cluster/),
# run optireduce_bench across its hosts with the MPI_Allreduce baseline,
# keep the output in a results directory, and tear the cluster down.
#
#   bench/run_cluster.sh [-n N] [scenario options] [run options] [--] [BENCH ARGS...]
#
# Scenario options go to "cluster.sh up" unchanged:
#   --rate RATE  --rate-at both|egress  --loss P  --burst BYTES  --latency MS  --cross-traffic RATE
#   --cross-onoff ON:OFF  --cross-flows K  --cross-sync  --offload  --fast  --mtu BYTES
#   --tcp-cc ALG
#   --straggler SPEC (repeatable)
#   (cluster.sh's default rate is 200mbit; "--rate none" = unlimited links)
# Run options:
#   -n N               hosts, one rank each (default 4)
#   --per-host K       K ranks on each of the N hosts (N x K ranks; default 1), filling
#                      each host's slots in turn: ranks that share a host
#   --bench PATH       the benchmark binary (default: $OPTIREDUCE_BENCH, else
#                      bench/optireduce_bench next to this script, else
#                      /tmp/optireduce_bench)
#   --results DIR      where to write (default: ./results/cluster-<time>-n<N>)
#   --no-baseline      do not add "--baseline mpi"
#   --mpirun-opt ARG   one extra mpirun argument (repeatable), e.g.
#                      --mpirun-opt --mca --mpirun-opt btl_tcp_eager_limit --mpirun-opt 65536
#   --keep             leave the cluster up afterwards (for debugging)
# Everything else (and everything after --) goes to the benchmark.
# OPTIREDUCE_* and FI_* variables of this shell are passed to every rank (-x).
#
# Writes DIR/table.txt (the benchmark's stdout), DIR/stderr.txt,
# DIR/latency.csv (every iteration), DIR/command.txt, DIR/cluster-status.txt,
# DIR/steal.txt (CPU the hypervisor took during the run, see cpu_steal.sh; its
# summary line also ends table.txt), DIR/host_bytes.txt (each host's eth0 byte
# counters before and after the benchmark: what it sent and received, for
# "perf_table.sh bytes").
# Needs root; exits 77 (skip) without it.  Exit code: the benchmark's.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/provenance.sh"
CLUSTER=$HERE/../test/cluster/cluster.sh

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "run_cluster.sh: error: $*" >&2; exit 1; }

n=4 per=1 bench=${OPTIREDUCE_BENCH:-} results="" baseline=1 keep=0
up_args=() bench_args=() mpi_opts=()
while [ $# -gt 0 ]; do
	case $1 in
	-n) n=${2:?-n wants a number}; shift 2 ;;
	--per-host) per=${2:?--per-host wants a number}; shift 2 ;;
	--rate | --rate-at | --loss | --burst | --latency | --cross-traffic | --cross-onoff | --cross-flows | --straggler | --tcp-cc | --mtu)
		[ $# -ge 2 ] || die "$1 wants a value"
		up_args+=("$1" "$2"); shift 2 ;;
	--cross-sync | --offload | --fast) up_args+=("$1"); shift ;;
	--bench) bench=${2:?}; shift 2 ;;
	--results) results=${2:?}; shift 2 ;;
	--no-baseline) baseline=0; shift ;;
	--mpirun-opt) mpi_opts+=("${2?}"); shift 2 ;;
	--keep) keep=1; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; bench_args+=("$@"); break ;;
	*) bench_args+=("$1"); shift ;;
	esac
done
if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ]; then die "-n wants a positive number, not '$n'"; fi
if ! [[ $per =~ ^[0-9]+$ ]] || [ "$per" -lt 1 ]; then die "--per-host wants a positive number, not '$per'"; fi

if [ "$(id -u)" -ne 0 ]; then
	echo "run_cluster.sh: the emulated cluster needs root; skipping (exit 77)" >&2
	exit 77
fi
[ -x "$CLUSTER" ] || [ -f "$CLUSTER" ] || die "cluster.sh not found at $CLUSTER"

if [ -z "$bench" ]; then
	for b in "$HERE/optireduce_bench" /tmp/optireduce_bench; do
		if [ -x "$b" ]; then bench=$b; break; fi
	done
fi
if [ -z "$bench" ] || [ ! -x "$bench" ]; then die "benchmark binary not found: build it or pass --bench PATH"; fi
bench=$(readlink -f "$bench")

# The MPI baseline, unless asked not to or the user already chose.
case " ${bench_args[*]:-} " in
*" --baseline"* | *" --only"*) baseline=0 ;;
esac
[ "$baseline" = 1 ] && bench_args=(--baseline mpi "${bench_args[@]}")

if [ -z "$results" ]; then
	results=$PWD/results/cluster-$(date +%Y%m%d-%H%M%S)-n$n
	[ "$per" = 1 ] || results=${results}x$per
fi
mkdir -p "$results"
results=$(readlink -f "$results")

# Pass the library's and libfabric's settings to every rank.
xargs_env=()
while IFS= read -r v; do
	xargs_env+=(-x "$v")
done < <(env | sed -n 's/^\(\(OPTIREDUCE\|FI\)_[A-Za-z0-9_]*\)=.*/\1/p' | sort -u)

cluster_up=0
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
	local rc=$?
	if [ "$cluster_up" = 1 ] && [ "$keep" = 0 ]; then
		"$CLUSTER" status >"$results/cluster-status-after.txt" 2>&1 || true
		"$CLUSTER" down >/dev/null 2>&1 || echo "run_cluster.sh: warning: cluster.sh down failed" >&2
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A cluster someone else made is theirs: cluster.sh up refuses, and we leave it alone.
"$CLUSTER" up -n "$n" "${up_args[@]}"
cluster_up=1
"$CLUSTER" status >"$results/cluster-status.txt" 2>&1 || true

cmd=("$CLUSTER" run -n $((n * per)) --per-host "$per" "${xargs_env[@]}" "${mpi_opts[@]}" -- "$bench" "${bench_args[@]}" --csv "$results/latency.csv")
{
	echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
	echo "# cluster.sh up -n $n ${up_args[*]:-}"
	echo "# ranks: $((n * per)), $per per host"
	provenance_lines
	env | grep -E '^(OPTIREDUCE|FI)_' | sed 's/^/# env /' || true
	printf '%q ' "${cmd[@]}"
	echo
} >"$results/command.txt"

# Each host's eth0 counters: "hI tx_bytes rx_bytes", one line per host.
host_bytes() {
	local i
	for ((i = 0; i < n; i++)); do
		ip -n "orc-h$i" -s link show dev eth0 |
			awk -v h="h$i" '/RX:/ { getline; rx = $1 } /TX:/ { getline; tx = $1 } END { print h, tx, rx }'
	done
}

echo "run_cluster.sh: $n hosts x $per ranks (${up_args[*]:-cluster.sh defaults}); results in $results" >&2
host_bytes >"$results/host_bytes.before"
"$HERE/cpu_steal.sh" "$results/steal.txt" &
steal_pid=$!
rc=0
"${cmd[@]}" 2> >(tee "$results/stderr.txt" >&2) | tee "$results/table.txt" || rc=$?
host_bytes >"$results/host_bytes.after"
{
	echo "# host tx_bytes rx_bytes (eth0, during the benchmark)"
	paste -d ' ' "$results/host_bytes.before" "$results/host_bytes.after" |
		awk '{ print $1, $5 - $2, $6 - $3 }'
} >"$results/host_bytes.txt"
rm -f "$results/host_bytes.before" "$results/host_bytes.after"
kill -TERM "$steal_pid" 2>/dev/null || true
wait "$steal_pid" 2>/dev/null || true
tail -n 1 "$results/steal.txt" | tee -a "$results/table.txt"
[ "$rc" = 0 ] || echo "run_cluster.sh: benchmark failed (exit $rc); see $results/stderr.txt" >&2
exit "$rc"
