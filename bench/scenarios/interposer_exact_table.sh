#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# interposer_exact_table.sh OUT_DIR: the markdown table of interposer_exact.sh from its raw
# files (OUT_DIR/CONFIG/{mpi,interposer}-ROUND.csv): per config and size, the nearest-rank
# P50 and P99 of every timed call of every round, Open MPI's and the interposer's (exact),
# the P50 ratio, and the bar on it where the project sets one:
#   flat-unlimited  at most 1.1, every size
#   flat-100mbit    at most 1.0, every size
#   2x2-100mbit     at most 1.0, 4 MiB only
#   pair-100mbit    none (the control: two ranks, each with a CPU of its own); the flat
#                   bar, 1.0, is shown to compare with flat-100mbit
#   local4          at most 1.2, 8 B, 64 KiB, 1 MiB and 4 MiB only
# Under each config, the served.txt check of its interposed runs; a config that stopped
# early (OUT_DIR/CONFIG/FAILED) says so, and its rows pool only the rounds it finished.
set -euo pipefail
OUT=${1:?usage: $0 OUT_DIR}
sed -n 's/^# source: /- Library: /p; s/^# machine: /- Machine: /p; s/^\(# [0-9T:-]*Z\) on .*/- Date: \1/p' \
	"$OUT/command.txt" | sed 's/^- Date: # /- Date: /'
echo "- Command: \`$(sed -n '1s/^# //p' "$OUT/command.txt")\`"
# shellcheck disable=SC2016  # the backquotes are markdown's
sed -n 's/^\([a-z0-9-]*\): \(cluster.sh .*\|test\/run-mpi.sh .*\)$/- \1: `\2`/p' "$OUT/command.txt"
echo

# bar CONFIG BYTES: the bar on the P50 ratio, or "-" where the project sets none.
bar() {
	case $1:$2 in
	flat-unlimited:*) echo 1.1 ;;
	flat-100mbit:* | pair-100mbit:*) echo 1.0 ;;
	2x2-100mbit:4194304) echo 1.0 ;;
	local4:8 | local4:65536 | local4:1048576 | local4:4194304) echo 1.2 ;;
	*) echo - ;;
	esac
}

# stats CONFIG WAY BYTES: "N P50 P99" (us) of the way's timed calls of that size, pooled
# over its rounds; "0 0 0" when there are none.
stats() {
	local f
	f=("$OUT/$1/$2"-*.csv)
	[ -e "${f[0]}" ] || { echo 0 0 0; return; }
	awk -F, -v s="$3" 'FNR > 1 && $2 == s { print $4 }' "${f[@]}" | sort -g |
		awk '{ v[NR] = $1 } END {
			if (NR == 0) { print 0, 0, 0; exit }
			i50 = int(0.50 * NR + 0.999999); i99 = int(0.99 * NR + 0.999999)
			printf "%d %.1f %.1f\n", NR, v[i50], v[i99] }'
}

# human BYTES: 8 B, 64 KiB, 16 MiB.
human() {
	awk -v b="$1" 'BEGIN {
		if (b >= 1048576) printf "%d MiB\n", b / 1048576
		else if (b >= 1024) printf "%d KiB\n", b / 1024
		else printf "%d B\n", b }'
}

for cfg in flat-unlimited flat-100mbit 2x2-100mbit pair-100mbit local4; do
	[ -d "$OUT/$cfg" ] || continue
	echo "### $cfg"
	echo
	[ -e "$OUT/$cfg/FAILED" ] && echo "**$(cat "$OUT/$cfg/FAILED")**: the config stopped there." && echo
	echo "| size | calls | MPI P50 | MPI P99 | interposer P50 | interposer P99 | P50 ratio | bar | verdict |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---|"
	sizes=$(cat "$OUT/$cfg"/*.csv 2>/dev/null | awk -F, '$2 ~ /^[0-9]+$/ { print $2 }' | sort -un)
	for size in $sizes; do
		read -r n1 m50 m99 < <(stats "$cfg" mpi "$size")
		read -r n2 i50 i99 < <(stats "$cfg" interposer "$size")
		awk -v size="$(human "$size")" -v bar="$(bar "$cfg" "$size")" -v n1="$n1" -v n2="$n2" \
			-v m50="$m50" -v m99="$m99" -v i50="$i50" -v i99="$i99" 'BEGIN {
			r = (m50 > 0 && n2 > 0) ? sprintf("%.3f", i50 / m50) : "-"
			v = (bar == "-" || r == "-") ? "-" : (r + 0 <= bar + 0 ? "met" : "missed")
			printf "| %s | %s | %.1f | %.1f | %.1f | %.1f | %s | %s | %s |\n",
				size, n1 == n2 ? n1 : n1 "/" n2, m50, m99, i50, i99, r, bar == "-" ? "-" : "<= " bar, v }'
	done
	echo
	if [ -s "$OUT/$cfg/served.txt" ]; then
		echo "Interposed runs, calls served (OPTIREDUCE_PMPI_STATS of rank 0):"
		echo
		grep '^round' "$OUT/$cfg/served.txt" | sed 's/^/- /'
		echo
	fi
done
echo "Times in us, each call's completion (the slowest rank's); calls: timed calls per way,"
echo "pooled over the rounds; the P50 ratio is the interposer's over Open MPI's."
