#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run_local.sh - run optireduce_bench with N ranks on this host (Open MPI uses
# shared memory between them; liboptireduce picks its own provider), with the
# MPI_Allreduce baseline, and keep the output in a results directory.
#
#   bench/run_local.sh [-n N] [run options] [--] [BENCH ARGS...]
#
#   -n N               ranks (default 4; more ranks than cores is fine)
#   --bench PATH       the benchmark binary (default: $OPTIREDUCE_BENCH, else
#                      bench/optireduce_bench next to this script, else
#                      /tmp/optireduce_bench)
#   --results DIR      where to write (default: ./results/local-<time>-n<N>)
#   --no-baseline      do not add "--baseline mpi"
#   --mpirun-opt ARG   one extra mpirun argument (repeatable)
# Everything else (and everything after --) goes to the benchmark.
# OPTIREDUCE_* and FI_* variables of this shell are passed to every rank (-x).
#
# Writes DIR/table.txt, DIR/stderr.txt, DIR/latency.csv, DIR/command.txt.
# Exit code: the benchmark's (77 if mpirun is missing).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/provenance.sh"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "run_local.sh: error: $*" >&2; exit 1; }

n=4 bench=${OPTIREDUCE_BENCH:-} results="" baseline=1
bench_args=() mpi_opts=()
while [ $# -gt 0 ]; do
	case $1 in
	-n) n=${2:?-n wants a number}; shift 2 ;;
	--bench) bench=${2:?}; shift 2 ;;
	--results) results=${2:?}; shift 2 ;;
	--no-baseline) baseline=0; shift ;;
	--mpirun-opt) mpi_opts+=("${2?}"); shift 2 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; bench_args+=("$@"); break ;;
	*) bench_args+=("$1"); shift ;;
	esac
done
if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ]; then die "-n wants a positive number, not '$n'"; fi
command -v mpirun >/dev/null 2>&1 || { echo "run_local.sh: mpirun not found; skipping" >&2; exit 77; }

if [ -z "$bench" ]; then
	for b in "$HERE/optireduce_bench" /tmp/optireduce_bench; do
		if [ -x "$b" ]; then bench=$b; break; fi
	done
fi
if [ -z "$bench" ] || [ ! -x "$bench" ]; then die "benchmark binary not found: build it or pass --bench PATH"; fi

case " ${bench_args[*]:-} " in
*" --baseline"* | *" --only"*) baseline=0 ;;
esac
[ "$baseline" = 1 ] && bench_args=(--baseline mpi "${bench_args[@]}")

if [ -z "$results" ]; then
	results=$PWD/results/local-$(date +%Y%m%d-%H%M%S)-n$n
fi
mkdir -p "$results"
results=$(readlink -f "$results")

xargs_env=()
while IFS= read -r v; do
	xargs_env+=(-x "$v")
done < <(env | sed -n 's/^\(\(OPTIREDUCE\|FI\)_[A-Za-z0-9_]*\)=.*/\1/p' | sort -u)

# As test/run-mpi.sh: loopback only, ranks may outnumber cores (yield when idle).
# Open MPI's ranks on one host talk over vader (shared memory).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cmd=(mpirun -np "$n" --oversubscribe --bind-to none --mca mpi_yield_when_idle 1
	--mca pml ob1 --mca btl "self,vader,tcp" --mca btl_tcp_if_include lo
	--mca oob_tcp_if_include lo "${xargs_env[@]}" "${mpi_opts[@]}"
	"$bench" "${bench_args[@]}" --csv "$results/latency.csv")
{
	echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
	provenance_lines
	env | grep -E '^(OPTIREDUCE|FI)_' | sed 's/^/# env /' || true
	printf '%q ' "${cmd[@]}"
	echo
} >"$results/command.txt"

echo "run_local.sh: $n ranks on this host; results in $results" >&2
rc=0
"${cmd[@]}" 2> >(tee "$results/stderr.txt" >&2) | tee "$results/table.txt" || rc=$?
[ "$rc" = 0 ] || echo "run_local.sh: benchmark failed (exit $rc); see $results/stderr.txt" >&2
exit "$rc"
