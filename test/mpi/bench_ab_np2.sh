#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# optireduce_bench --compare-param: variant B runs interleaved with A, both validated
# by the benchmark itself (it aborts on a wrong sum), B's row and the A/B ratios printed,
# every iteration of A, B and MPI in the CSV with its deadline and cut; malformed or unknown parameters refused.
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
top_srcdir=${top_srcdir:-.}
bench=${top_builddir:-.}/bench/optireduce_bench
[ -x "$bench" ] || { echo "no $bench: skipping"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$tmp/out" "$tmp/err" 2>/dev/null; exit 1; }
run() { "$top_srcdir/test/run-mpi.sh" 2 "$bench" "$@" >"$tmp/out" 2>"$tmp/err"; }

run --mode bounded --algorithm transpose -m 64k:128k -i 6 -x 2 --baseline mpi \
	--compare-param timeout_us=300000 --compare-param early_timeout=0 --csv "$tmp/lat.csv" ||
	fail "A/B run exited $?"
for size in 65536 131072; do
	grep -q "^$size " "$tmp/out" || fail "no A row at $size"
	grep -q "^B:$size " "$tmp/out" || fail "no B row at $size"
	grep -q "^# A/B at $size: Avg [0-9.]*, P50 [0-9.]*, P99 [0-9.]*$" "$tmp/out" ||
		fail "no A/B ratios at $size"
done
grep -q "^# A/B: row B:SIZE is a second communicator with timeout_us=300000 early_timeout=0" \
	"$tmp/out" || fail "header does not name B's parameters"
for impl in optireduce optireduce-b mpi; do
	n=$(grep -c "^$impl,65536," "$tmp/lat.csv")
	[ "$n" = 6 ] || fail "$impl: $n CSV rows at 65536, want 6"
done
# Each call's lateness (0 without --sync-start), deadline and cut: bounded calls have a
# deadline and expect elements, and lose at most those; MPI's have none of the three.
head -n 1 "$tmp/lat.csv" | grep -qx \
	'impl,size,iter,latency_us,start_s,late_us,deadline_us,lost_phase1,lost_phase2,elements_expected' ||
	fail "CSV header: $(head -n 1 "$tmp/lat.csv")"
awk -F, 'NR == 1 { next }
	NF != 10 || $6 != 0 { bad++; next }
	$1 == "mpi" { if ($7 != 0 || $8 != 0 || $9 != 0 || $10 != 0) bad++; next }
	$7 <= 0 || $10 <= 0 || $8 < 0 || $9 < 0 || $8 + $9 > $10 { bad++ }
	END { exit(bad > 0) }' "$tmp/lat.csv" || fail "CSV per-call columns out of range"

# Refused before anything runs: not NAME=VALUE, an unknown name, a bad value, with --only mpi.
for bad in "--compare-param timeout_us" "--compare-param =1" \
	"--compare-param no_such_param=1" "--compare-param calib_margin=0.5" \
	"--only mpi --compare-param timeout_us=1000"; do
	# shellcheck disable=SC2086 # word splitting wanted
	if run --mode bounded -m 4k:4k -i 2 -x 0 $bad; then fail "accepted: $bad"; fi
	grep -q "compare-param" "$tmp/err" || fail "'$bad': no error naming --compare-param"
done
echo "PASS: A/B rows, ratios, CSV; malformed --compare-param refused"
