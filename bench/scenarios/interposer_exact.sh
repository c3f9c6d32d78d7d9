#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# interposer_exact.sh - exact mode under the interposer against Open MPI's own
# MPI_Allreduce, every power-of-two size from 8 B to 16 MiB, on the emulated cloud and on
# this host alone.
#
#   bench/scenarios/interposer_exact.sh BUILD_DIR OUT_DIR [CONFIG...]
#
# CONFIG (default: all four, in this order):
#   flat-unlimited  cluster.sh up -n 4 --rate none;    4 ranks, one per host
#   flat-100mbit    cluster.sh up -n 4 --rate 100mbit; 4 ranks, one per host
#   2x2-100mbit     cluster.sh up -n 2 --rate 100mbit; 4 ranks, two per host
#   pair-100mbit    cluster.sh up -n 2 --rate 100mbit; 2 ranks, one per host: the control
#                   in which every rank has a CPU of its own (4 ranks share 2 here)
#   local4          4 ranks on this host, no cluster (test/run-mpi.sh: shared memory and
#                   loopback, oversubscribed, mpi_yield_when_idle)
#
# The program is unmodified: optireduce_bench --only mpi times MPI_Allreduce and nothing
# else.  Each round runs it twice with the same setup, once as it is (Open MPI) and once
# under LD_PRELOAD=liboptireduce_pmpi.so, which serves MPI_Allreduce in exact mode unless
# OPTIREDUCE_PMPI_BOUNDED says otherwise (this script unsets it), so the two meet the same
# weather; which of the two goes first alternates per round, so neither always inherits
# the other's warm caches or the hypervisor's mood of the moment.  The rounds are pooled.
#
# Environment (defaults in brackets):
#   ROUNDS [3]          rounds per config
#   SIZES [8:16m]       optireduce_bench -m MIN:MAX: the powers of two from MIN to MAX
#   ITERS [200]         timed calls per size up to 8 KiB (-i), WARMUP [20] untimed (-x)
#   ITERS_LARGE [30]    timed calls per size above 8 KiB, WARMUP_LARGE [3] untimed
#   LOCK_WAIT [0]       seconds to wait for /tmp/orc-cluster.lock; 0 waits as long as needed
#   TCP_CC [the machine's]  the hosts' TCP congestion control (cluster.sh up --tcp-cc)
# The defaults keep one run (one config, round and way) within about 5 min on 2 shared
# vCPUs: Open MPI's run takes 1.6 min on flat-unlimited, 2.7 min on 2x2-100mbit, 4.8 min
# on flat-100mbit and 3 s on local4, the interposer's 1.1, 1.6, 2.5 min and 3 s; a round
# of all four configs takes about 15 min, most of it in the 8 and 16 MiB calls (1.3 s and
# 4.2 s each for Open MPI at 16 MiB, unlimited and at 100 Mbit/s).  30 timed calls of a
# large size pool to 90 per way over 3 rounds, a P50 that a few slow calls do not move;
# 200 of a small one cost little, as those calls take under a millisecond.
#
# Every interposed run must show, from its OPTIREDUCE_PMPI_STATS line (rank 0 prints it at
# MPI_Finalize), at least as many calls served exact as the benchmark made (timed and
# untimed; the few more are its own MAX reductions of the results), none bounded, none to
# PMPI and no errors; otherwise, or when a run fails, the config stops
# with "FAILED" on stderr and in OUT_DIR/CONFIG/FAILED, and the script exits 1 at the end.
#
# Writes OUT_DIR/CONFIG/{mpi,interposer}-ROUND.csv (every timed call), the runs' logs
# (*-ROUND.log), OUT_DIR/CONFIG/served.txt (each interposed run's stats check),
# OUT_DIR/command.txt, and prints OUT_DIR/table.md (interposer_exact_table.sh): P50 and
# P99 of each way, the P50 ratio and the bar.  Needs root for the cluster configs; holds
# /tmp/orc-cluster.lock throughout, local4 included, so no other benchmark shares the CPUs.
set -euo pipefail

usage="usage: $0 BUILD_DIR OUT_DIR [flat-unlimited|flat-100mbit|2x2-100mbit|pair-100mbit|local4...]"
BUILD=$(cd "${1:?$usage}" && pwd)
OUT=${2:?$usage}
shift 2
CONFIGS=("$@")
[ ${#CONFIGS[@]} -gt 0 ] || CONFIGS=(flat-unlimited flat-100mbit 2x2-100mbit local4)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
CL=$TOP/test/cluster/cluster.sh
BENCH=$BUILD/bench/optireduce_bench
SO=$BUILD/.libs/liboptireduce_pmpi.so
ROUNDS=${ROUNDS:-3}
SIZES=${SIZES:-8:16m}
ITERS=${ITERS:-200}
WARMUP=${WARMUP:-20}
ITERS_LARGE=${ITERS_LARGE:-30}
WARMUP_LARGE=${WARMUP_LARGE:-3}
LOCK_WAIT=${LOCK_WAIT:-0}
TCP_CC=${TCP_CC:-}
# shellcheck source=SCRIPTDIR/../provenance.sh
. "$TOP/bench/provenance.sh"

for c in "${CONFIGS[@]}"; do
	case $c in
	flat-unlimited | flat-100mbit | 2x2-100mbit | pair-100mbit | local4) ;;
	*) echo "unknown config '$c'; $usage" >&2; exit 2 ;;
	esac
	if [ "$c" != local4 ] && [ "$(id -u)" -ne 0 ]; then
		echo "config $c needs root: skip" >&2
		exit 77
	fi
done
if [ ! -x "$BENCH" ] || [ ! -f "$SO" ]; then
	echo "build $BENCH and $SO first" >&2
	exit 1
fi
command -v mpirun >/dev/null 2>&1 || { echo "mpirun not found: skip" >&2; exit 77; }
# The interposer's default is what is measured: exact, every call it can serve.
unset OPTIREDUCE_PMPI_BOUNDED OPTIREDUCE_PMPI_ENABLE

# bytes SIZE: 8, 64k, 16m, 1g -> bytes.
bytes() {
	local v=${1%[kKmMgG]}
	case $1 in
	*[kK]) echo $((v << 10)) ;;
	*[mM]) echo $((v << 20)) ;;
	*[gG]) echo $((v << 30)) ;;
	*) echo "$v" ;;
	esac
}
# WANT: the MPI_Allreduce calls one run makes of the benchmarked kind (the sizes of -m,
# each timed and warmed up; above 8 KiB with the large counts, as optireduce_bench does).
lo=$(bytes "${SIZES%%:*}")
hi=$(bytes "${SIZES##*:}")
WANT=0
for ((s = lo; s <= hi; s *= 2)); do
	if [ "$s" -gt 8192 ]; then
		WANT=$((WANT + ITERS_LARGE + WARMUP_LARGE))
	else
		WANT=$((WANT + ITERS + WARMUP))
	fi
done

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
exec 9>/tmp/orc-cluster.lock
flock -n 9 || echo "== waiting for /tmp/orc-cluster.lock (another benchmark holds it) $(date -u +%H:%M:%S)" >&2
if [ "$LOCK_WAIT" = 0 ]; then
	flock 9
elif ! flock -w "$LOCK_WAIT" 9; then
	echo "/tmp/orc-cluster.lock still held after ${LOCK_WAIT} s: nothing run" >&2
	exit 1
fi
{
	echo "# ROUNDS=$ROUNDS SIZES=$SIZES ITERS=$ITERS WARMUP=$WARMUP ITERS_LARGE=$ITERS_LARGE WARMUP_LARGE=$WARMUP_LARGE $0 $BUILD $OUT ${CONFIGS[*]}"
	echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $(nproc) CPUs"
	provenance_lines
	env | grep -E '^(OPTIREDUCE|FI)_' | sed 's/^/# env /' || true
	echo "optireduce_bench --only mpi -m $SIZES -i $ITERS -x $WARMUP --iter-large $ITERS_LARGE --warmup-large $WARMUP_LARGE --csv CONFIG/WAY-ROUND.csv"
} >"$OUT/command.txt"

# Only a cluster this script brought up is brought down: cluster.sh up refuses to replace
# someone else's, and that one is theirs.
cluster_up=0
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
	if [ "$cluster_up" = 1 ]; then "$CL" down >/dev/null 2>&1 || echo "cluster.sh down failed" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# check LOG: rank 0's stats line shows the run's calls served exact (the interposer decides
# alike on every rank, and prints on rank 0 only); prints a summary line, then the line
# again when it falls short.  It reads
# "optireduce-pmpi[R] stats: N calls: E exact (.. B), B bounded (.. B), D bounded->exact,
# P to PMPI; X errors; C communicators"; fails when it is short or missing.
check() {
	awk -v want="$WANT" '/optireduce-pmpi\[0\] stats: [0-9]+ calls:/ {
		n++
		for (i = 1; i < NF; i++) {
			if ($(i + 1) == "exact") e = $i
			if ($(i + 1) == "bounded") b = $i
			if ($(i + 1) == "to") p = $i
			if ($(i + 1) == "errors;") x = $i
		}
		if (e < want || b > 0 || p > 0 || x > 0) { bad = 1; short = short "  short: " $0 "\n" }
	} END {
		if (n == 0) { print "no stats line from rank 0"; exit 1 }
		printf "%s exact of %d benchmarked calls, %s bounded, %s to PMPI, %s errors\n",
			e, want, b, p, x
		printf "%s", short
		exit bad || n != 1
	}' "$1"
}

# run CONFIG WAY ROUND: one unmodified benchmark run; fails when the benchmark or, for the
# interposed way, the stats check does.
run() {
	local cfg=$1 way=$2 round=$3 dir=$OUT/$1 env=() t0=$SECONDS rc=0 np=4
	local args=("$BENCH" --only mpi -m "$SIZES" -i "$ITERS" -x "$WARMUP"
		--iter-large "$ITERS_LARGE" --warmup-large "$WARMUP_LARGE" --csv "$dir/$way-$round.csv")
	[ "$way" = interposer ] && env=(-x "LD_PRELOAD=$SO" -x "LD_LIBRARY_PATH=$BUILD/.libs"
		-x OPTIREDUCE_PMPI_STATS=1)
	echo "== $cfg round $round/$ROUNDS $way $(date -u +%H:%M:%S)" >&2
	case $cfg in
	local4) "$TOP/test/run-mpi.sh" 4 "${env[@]}" "${args[@]}" >"$dir/$way-$round.log" 2>&1 || rc=$? ;;
	2x2-100mbit) timeout 900 "$CL" run -n 4 --per-host 2 "${env[@]}" -- "${args[@]}" \
		>"$dir/$way-$round.log" 2>&1 || rc=$? ;;
	*) [ "$cfg" = pair-100mbit ] && np=2
		timeout 900 "$CL" run -n "$np" "${env[@]}" -- "${args[@]}" >"$dir/$way-$round.log" 2>&1 || rc=$? ;;
	esac
	if [ "$rc" != 0 ]; then
		echo "   $cfg $way round $round: benchmark failed (exit $rc), see $dir/$way-$round.log" >&2
		return 1
	fi
	if [ "$way" = interposer ]; then
		{ printf 'round %s: ' "$round"; check "$dir/$way-$round.log"; } >>"$dir/served.txt" || rc=$?
		grep "^round $round: " "$dir/served.txt" | sed 's/^/   /' >&2
		[ "$rc" = 0 ] || { echo "   $cfg round $round: calls not all served exact by liboptireduce, see $dir/served.txt" >&2; return 1; }
	fi
	echo "   $((SECONDS - t0)) s" >&2
}

# config CONFIG: the setup up once (a cluster, or nothing for local4), ROUNDS rounds of
# both ways, alternating which goes first, the setup down.
config() {
	local cfg=$1 up=() r w ways t0=$SECONDS
	rm -rf "${OUT:?}/$cfg"
	mkdir -p "$OUT/$cfg"
	case $cfg in
	flat-unlimited) up=(-n 4 --rate none) ;;
	flat-100mbit) up=(-n 4 --rate 100mbit) ;;
	2x2-100mbit | pair-100mbit) up=(-n 2 --rate 100mbit) ;;
	esac
	if [ ${#up[@]} -gt 0 ] && [ -n "$TCP_CC" ]; then up+=(--tcp-cc "$TCP_CC"); fi
	if [ ${#up[@]} -gt 0 ]; then
		"$CL" up "${up[@]}" >/dev/null
		cluster_up=1
		echo "$cfg: cluster.sh up ${up[*]}" >>"$OUT/command.txt"
	else
		echo "$cfg: test/run-mpi.sh 4 (this host)" >>"$OUT/command.txt"
	fi
	for ((r = 1; r <= ROUNDS; r++)); do
		ways="mpi interposer"
		[ $((r % 2)) = 0 ] && ways="interposer mpi"
		for w in $ways; do
			if ! run "$cfg" "$w" "$r"; then
				echo "FAILED: $cfg round $r $w" | tee "$OUT/$cfg/FAILED" >&2
				failed=1
				break 2
			fi
		done
	done
	if [ "$cluster_up" = 1 ]; then
		"$CL" down >/dev/null
		cluster_up=0
	fi
	echo "== $cfg: $((SECONDS - t0)) s" >&2
}

failed=0
for c in "${CONFIGS[@]}"; do config "$c"; done
flock -u 9
"$HERE/interposer_exact_table.sh" "$OUT" | tee "$OUT/table.md"
[ "$failed" = 0 ] || { echo "FAILED: see OUT_DIR/*/FAILED" >&2; exit 1; }
