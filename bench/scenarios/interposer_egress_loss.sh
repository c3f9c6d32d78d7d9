#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# interposer_egress_loss.sh - bounded mode under the interposer against Open MPI's own
# MPI_Allreduce, on 4 emulated hosts with 1% random loss in every sender's OUTPUT chain
# (the host refuses the send, EPERM, as under a local firewall rule).
#
#   bench/scenarios/interposer_egress_loss.sh BUILD_DIR OUT_DIR [ROUNDS]
#
# The program is unmodified: optireduce_bench --only mpi times MPI_Allreduce and nothing
# else.  Each round runs it twice on the same cluster, once as it is (Open MPI) and once
# under LD_PRELOAD=liboptireduce_pmpi.so with OPTIREDUCE_PMPI_BOUNDED=float, so the two
# meet the same weather; ROUNDS (default 4) rounds of 50 timed calls per size, after 16
# untimed ones, are pooled.
# Links: 100 Mbit/s (1 MiB, 4 MiB) and unlimited (64 KiB, 1 MiB).  Every call of the
# interposed runs must be served bounded (OPTIREDUCE_PMPI_STATS) and none may fail.
#
# Writes OUT_DIR/LINK/{mpi,interposer}-ROUND.csv (every call), *.log, command.txt, and
# prints OUT_DIR/table.md: P50 and P99 of each, their ratios, and the bar (P99 ratio at
# most 0.5 on the rate-limited links, 1/3 on unlimited ones).  Needs root.
set -euo pipefail

BUILD=$(cd "${1:?usage: $0 BUILD_DIR OUT_DIR [ROUNDS]}" && pwd)
OUT=${2:?usage: $0 BUILD_DIR OUT_DIR [ROUNDS]}
ROUNDS=${3:-4}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CL=$HERE/../../test/cluster/cluster.sh
BENCH=$BUILD/bench/optireduce_bench
SO=$BUILD/.libs/liboptireduce_pmpi.so
ITERS=50
# As in the other bounded scenarios (common.sh): a new process is a new communicator, whose
# deadline calibrates over its first operations of each size; both ways get the same.
WARMUP=16
. "$HERE/../provenance.sh"

[ "$(id -u)" -eq 0 ] || { echo "needs root: skip"; exit 77; }
[ -x "$BENCH" ] && [ -f "$SO" ] || { echo "build $BENCH and $SO first" >&2; exit 1; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
{
	echo "# $0 $*"
	echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $(nproc) CPUs"
	provenance_lines
} >"$OUT/command.txt"

# run LINK WAY ROUND SIZE: one unmodified benchmark run on the cluster that is up.
run() {
	local link=$1 way=$2 round=$3 size=$4 env=()
	[ "$way" = interposer ] && env=(-x "LD_PRELOAD=$SO" -x "LD_LIBRARY_PATH=$BUILD/.libs"
		-x OPTIREDUCE_PMPI_BOUNDED=float -x OPTIREDUCE_PMPI_STATS=1)
	timeout 900 "$CL" run -n 4 "${env[@]}" -- "$BENCH" --only mpi --mpi-bounded -m "$size:$size" \
		-i "$ITERS" -x "$WARMUP" --csv "$OUT/$link/$way-$round-$size.csv" \
		>>"$OUT/$link/$way.log" 2>&1
}

# link NAME RATE SIZE...: the cluster up once, ROUNDS rounds of both ways per size.
link() {
	local name=$1 rate=$2 r s w
	shift 2
	mkdir -p "$OUT/$name"
	"$CL" up -n 4 --rate "$rate" --loss 0.01 --loss-at egress >/dev/null
	trap '"$CL" down >/dev/null 2>&1 || true' EXIT
	echo "cluster.sh up -n 4 --rate $rate --loss 0.01 --loss-at egress" >>"$OUT/command.txt"
	for ((r = 1; r <= ROUNDS; r++)); do
		for s in "$@"; do
			for w in mpi interposer; do
				echo "== $name round $r/$ROUNDS $s $w $(date -u +%H:%M:%S)" >&2
				run "$name" "$w" "$r" "$s"
			done
		done
	done
	"$CL" down >/dev/null
	trap - EXIT
}

exec 9>/tmp/orc-cluster.lock
flock 9
link rate100 100mbit 1m 4m
link unlimited none 64k 1m
flock -u 9

# Every interposed call of the float SUM benchmark served bounded, none failed:
# "optireduce-pmpi[R] stats: N calls: E exact (..), B bounded (..), .. ; X errors; ..".
awk -v want=$((ITERS + WARMUP)) '/stats: [0-9]+ calls:/ {
	for (i = 1; i < NF; i++) { if ($(i + 1) == "bounded") b = $i; if ($(i + 1) == "errors;") e = $i }
	if (b < want || e > 0) { print "interposed run with " b " bounded calls, " e " errors: " $0; bad = 1 }
} END { exit bad }' "$OUT"/*/interposer.log >&2 || echo "WARNING: see above" >&2
"$HERE/interposer_egress_table.sh" "$OUT" | tee "$OUT/table.md"
