#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# plot_cdf.sh - completion-time CDFs from optireduce_bench/gloo_bench --csv files.
#
#   bench/plot_cdf.sh OUT.png SIZE_BYTES TITLE RUN_DIR_OR_CSV...
#
# One step line per (file, implementation) at SIZE_BYTES, labelled
# "<run directory>: <impl>"; x is log-scaled milliseconds. A RUN_DIR is a
# run_cluster.sh results directory (its latency.csv is used). Needs gnuplot.
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
out=$1 size=$2 title=$3
shift 3
command -v gnuplot >/dev/null || { echo "plot_cdf.sh: gnuplot not found (Debian: gnuplot-nox)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plots=""
n=0
for f in "$@"; do
	csv=$f
	[ -d "$f" ] && csv=$f/latency.csv
	[ -r "$csv" ] || { echo "plot_cdf.sh: cannot read $csv" >&2; exit 1; }
	run=$(basename "$(dirname "$csv")")
	[ -d "$f" ] && run=$(basename "$f")
	for impl in $(awk -F, -v s="$size" '$2 == s { print $1 }' "$csv" | sort -u); do
		n=$((n + 1))
		awk -F, -v m="$impl" -v s="$size" '$1 == m && $2 == s { print $4 / 1000 }' "$csv" | sort -g |
			awk '{ v[NR] = $1 } END { if (NR) printf "%g 0\n", v[1]; for (i = 1; i <= NR; i++) printf "%g %g\n", v[i], i / NR }' >"$tmp/$n.dat"
		plots+="${plots:+, }'$tmp/$n.dat' using 1:2 with steps linewidth 2 title '$run: $impl'"
	done
done
[ -n "$plots" ] || { echo "plot_cdf.sh: no samples of size $size" >&2; exit 1; }
term=png
gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1 && term=pngcairo
gnuplot <<GP
set terminal $term size 1200,650
set output '$out'
set title "$title" noenhanced
$(cat "$(dirname "$0")/cdf_style.gp")
plot $plots
GP
echo "plot_cdf.sh: wrote $out"
