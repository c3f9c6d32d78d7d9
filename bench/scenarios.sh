# scenarios.sh - sourced by the batch scripts in bench/results/*/: one scenario per call.
#
#   run NAME [run_cluster.sh options] -- [optireduce_bench options]
#
# Runs bench/run_cluster.sh with the bench binary $B, results in $OUT/NAME, the bench
# options prefixed with the array "common", and prints the header-less table rows.
RC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/run_cluster.sh
run() {
	local name=$1; shift
	local up=()
	while [ "$1" != -- ]; do up+=("$1"); shift; done; shift
	echo "== $name $(date -u +%H:%M:%S)"
	timeout 1500 "$RC" "${up[@]}" --results "$OUT/$name" --bench "$B" -- "${common[@]}" "$@" 2>&1 |
		grep -v progress | grep -E '^[0-9]'
}
