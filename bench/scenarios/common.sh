# SPDX-License-Identifier: BSD-3-Clause
# common.sh - sourced by the scenario scripts in bench/scenarios/: one scenario per call.
#
#   set -u
#   . "$(dirname "$0")/common.sh"
#   batch_init "$@"       # the script's own arguments: BENCH_BINARY OUT_DIR [SCENARIO...]
#
#   run NAME [run_cluster.sh options] -- [optireduce_bench options]
#
# Runs bench/run_cluster.sh with the bench binary $B, results in $OUT/NAME, the bench
# options prefixed with the array "common", and prints the header-less table rows.
# bench/perf_table.sh turns the directories into the tables of bench/PERFORMANCE.md.
RC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/run_cluster.sh
run() {
	local name=$1; shift
	local up=()
	while [ "$1" != -- ]; do up+=("$1"); shift; done; shift
	echo "== $name $(date -u +%H:%M:%S)"
	timeout 1500 "$RC" "${up[@]}" --results "$OUT/$name" --bench "$B" -- "${common[@]}" "$@" 2>&1 |
		grep -v progress | grep -E '^[0-9]'
}

# batch_init BENCH_BINARY OUT_DIR [SCENARIO...]: the bench binary ($B), where the run
# directories go ($OUT), the scenarios asked for ($SEL, see pick), and the bench options
# every bounded scenario shares ("common").
batch_init() {
	B=${1:?usage: $(basename "$0") BENCH_BINARY OUT_DIR [SCENARIO...]}
	OUT=${2:?usage: $(basename "$0") BENCH_BINARY OUT_DIR [SCENARIO...]}
	shift 2
	SEL=("$@")
	mkdir -p "$OUT"
	OUT=$(cd "$OUT" && pwd)
	common=(--mode bounded --algorithm transpose -f --warmup-large 16)
}

# pick NAME: true when the scenario script was given no scenario names, or NAME among them
# (batch_init sets SEL to its scenario arguments).
pick() { [ ${#SEL[@]} -eq 0 ] || [[ " ${SEL[*]} " == *" $1 "* ]]; }

# quiet: waits (at most 10 min) until the hypervisor took under 1 % of the CPUs over 5 s,
# measured by cpu_steal.sh; prints what the last 5 s had.
quiet() {
	local t0=$SECONDS f pct pid
	f=$(mktemp)
	while :; do
		"$(dirname "$RC")/cpu_steal.sh" "$f" &
		pid=$!
		sleep 5
		kill -TERM "$pid"
		wait "$pid"
		pct=$(sed -n 's/.*during the run: \([0-9.]*\) %.*/\1/p' "$f")
		awk -v p="${pct:-100}" 'BEGIN { exit !(p < 1.0) }' && break
		[ $((SECONDS - t0)) -lt 600 ] || break
	done
	rm -f "$f"
	echo "== steal in the 5 s before: ${pct:-?} %"
}

# pair64k TAG [run_cluster.sh options]: the 64 KiB pair, clean a-64K-TAG with 50 ms between
# calls, then b-64K-TAG with 1 % loss and 250 ms (MPI's lossy tail needs them), each
# started in a quiet spell; the options (a link rate, say) go to both.
pair64k() {
	local tag=$1
	shift
	pick "a-64K-$tag" && quiet && run "a-64K-$tag" "$@" -- --sync-start 50 -m 64k:64k --iter-large 200
	pick "b-64K-$tag" && quiet && run "b-64K-$tag" "$@" --loss 0.01 -- --sync-start 250 -m 64k:64k --iter-large 200
}
