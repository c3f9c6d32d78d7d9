#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# interposer_egress_table.sh OUT_DIR: the markdown table of interposer_egress_loss.sh from
# its raw files (OUT_DIR/LINK/{mpi,interposer}-ROUND-SIZE.csv): per link and size, the
# nearest-rank P50 and P99 of every call of every round, Open MPI's and the interposer's
# (bounded), their ratios, and the P99 bar.
set -euo pipefail
OUT=${1:?usage: $0 OUT_DIR}
sed -n 's/^# source: /- Library: /p; s/^# machine: /- Machine: /p; s/^\(# [0-9T:-]*Z\) on .*/- Date: \1/p' \
	"$OUT/command.txt" | sed 's/^- Date: # /- Date: /'
echo "- Command: \`$(sed -n '1s/^# //p' "$OUT/command.txt")\`"
echo
echo "| links | size | calls | MPI P50 | MPI P99 | interposer P50 | interposer P99 | P50 ratio | P99 ratio | bar | verdict |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
for dir in "$OUT"/rate100 "$OUT"/unlimited; do
	[ -d "$dir" ] || continue
	link=$(basename "$dir")
	bar=0.5
	[ "$link" = unlimited ] && bar=0.333
	for size in $(ls "$dir" | sed -n 's/^mpi-[0-9]*-\(.*\)\.csv$/\1/p' | sort -u); do
		for way in mpi interposer; do
			tail -q -n +2 "$dir"/$way-*-"$size".csv | cut -d, -f4 | sort -g |
				awk '{ v[NR] = $1 } END {
					i50 = int(0.50 * NR + 0.999999); i99 = int(0.99 * NR + 0.999999)
					printf "%d %.2f %.2f\n", NR, v[i50] / 1000, v[i99] / 1000 }'
		done | paste -sd' ' | awk -v link="$link" -v size="$size" -v bar="$bar" '{
			r50 = $5 / $2; r99 = $6 / $3
			printf "| %s | %s | %d | %.2f | %.2f | %.2f | %.2f | %.3f | %.3f | %s | %s |\n",
				link == "rate100" ? "100 Mbit/s" : "unlimited", size, $1, $2, $3, $5, $6,
				r50, r99, bar == 0.333 ? "1/3" : bar, r99 <= bar ? "met" : "missed" }'
	done
done
echo
echo "Times in ms; ratios are the interposer's over Open MPI's."
