#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# perf_table.sh - the markdown tables of bench/PERFORMANCE.md, made from raw results.
#
#   bench/perf_table.sh [-c] cluster DIR...   one row per run_cluster.sh / run_local.sh
#                                             directory (table.txt, command.txt): ours
#                                             against the MPI baseline of the same run
#   bench/perf_table.sh [-c] ab DIR...        one row per A/B run (--compare-param)
#   bench/perf_table.sh [-c] [-m REGEX] compare DIR
#                                             a compare.sh directory (stats.csv,
#                                             command.txt): every method (or those
#                                             matching REGEX) against MPI
#   bench/perf_table.sh [-c] [-r RULE] algorithms DIR...
#                                             one column per run_cluster.sh directory of
#                                             one algorithm (--algorithm NAME), a row per
#                                             size: P50 in ms (ratio to that run's MPI
#                                             P50) [data cut % when at least 0.1], the
#                                             fastest in italics, RULE's choice in bold
#                                             (a tune string as optireduce_info prints
#                                             it: 0-4097:recursive_doubling,...)
#   bench/perf_table.sh [-c] bytes DIR...     one row per run_cluster.sh run of one size
#                                             and one implementation (--no-baseline or
#                                             --only mpi): bytes each host sent per
#                                             operation (host_bytes.txt)
#
# Times in ms. Ratios are ours / MPI's (or A / B) in the same run. "bus bw" is
# 2(N-1)/N x size / P50, the rate each host's link carried, in Mbit/s. "steal" is the
# share of CPU time the hypervisor took and the number of 100 ms windows with >= 50 ms
# stolen (cpu_steal.sh). The header gives the machine, the source commit and the dates
# from command.txt ("not recorded" for runs made before the runners wrote them);
# -c adds every run's command below the table.
set -euo pipefail

usage() { sed -n '3,23p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "perf_table.sh: $*" >&2; exit 1; }

show_cmds=0 methods=. rule=""
while [ $# -gt 0 ]; do
	case $1 in
	-c) show_cmds=1; shift ;;
	-m) methods=${2:?-m wants a regular expression}; shift 2 ;;
	-r) rule=${2:?-r wants a tune string}; shift 2 ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || { usage >&2; exit 2; }
kind=$1
shift
for d in "$@"; do
	[ -r "$d/command.txt" ] || die "$d: no command.txt (not a results directory)"
done

# The header: what every run's command.txt says about machine, source and time.
header() {
	local f machine source dates
	machine=$(for d in "$@"; do sed -n 's/^# machine: //p' "$d/command.txt"; done | sort -u | paste -sd ';' -)
	source=$(for d in "$@"; do sed -n 's/^# source: //p' "$d/command.txt"; done | sort -u | paste -sd ' ' -)
	dates=$(for d in "$@"; do sed -n '1s/^# \([0-9TZ:-]*\) on .*/\1/p' "$d/command.txt"; done | sort)
	f=$(echo "$dates" | head -n 1)
	echo "Machine: ${machine:-not recorded}. Source commit: ${source:-not recorded}."
	echo "Runs: $f to $(echo "$dates" | tail -n 1) (UTC)."
	echo
}

# The command of each run: cluster.sh's up line and the benchmark's arguments, without
# the paths of this machine and the --csv the runner adds.
commands() {
	[ "$show_cmds" = 1 ] || return 0
	echo
	echo '```'
	for d in "$@"; do
		awk -v name="$(basename "$d")" '
			/^# cluster.sh up / { sub(/^# /, ""); sub(/ +$/, ""); up = $0; next }
			/^# env / { sub(/^# env /, ""); env = env " " $0; next }
			/^#/ { next }
			{
				line = $0
				sub(/^.*optireduce_bench /, "optireduce_bench ", line)
				sub(/^.*compare.sh /, "bench/compare.sh ", line)
				sub(/ --csv [^ ]*/, "", line)
				sub(/ +$/, "", line)
				cmd = line
			}
			END {
				printf "%s:%s%s\n", name, (up != "" ? " " up ";" : ""), env
				printf "    %s\n", cmd
			}' "$d/command.txt"
	done
	echo '```'
}

# "3.0 %, 25" from the steal summary of table.txt, "-" without one.
steal_of() {
	sed -n 's/^# CPU steal during the run: \([0-9.]*\) % of CPU time; \([0-9]*\) windows.*/\1 %, \2/p' "$1/table.txt" | tail -n 1 | grep . || echo -
}

# The columns of a table.txt row, by the names in its "# Size" header line.
rows_awk='
	/^# Ranks: / { split($3, r, ","); ranks = r[1] + 0 }
	/^# Size/ {
		full = index($0, "Min Latency") > 0
		bounded = index($0, "Data(%)") > 0
		mpi = index($0, "MPI P50") > 0
		next
	}
	/^# A\/B: row B:SIZE is a second communicator with / {
		change = $0
		sub(/^# A\/B: row B:SIZE is a second communicator with /, "", change)
		sub(/ \(A.s parameters otherwise\);$/, "", change)
		next
	}
	/^#/ { next }
	/^[0-9B]/ {
		label = ""
		size = $1
		if (size ~ /^B:/) { label = "B"; sub(/^B:/, "", size) }
		k = 2; avg = $k; k++
		if (full) k += 3
		p50 = $k; p99 = $(k + 1); k += 2
		data = "-"; lost = "-"
		if (bounded) { data = $k; lost = $(k + 1); k += 2 }
		mp50 = ""; mp99 = ""
		if (mpi) { mp50 = $k; mp99 = $(k + 1) }
		emit()
	}'

cluster_table() {
	header "$@"
	echo "| run | size | P50 | P99 | P99/P50 | MPI P50 | MPI P99 | MPI P99/P50 | P50 ratio | P99 ratio | data cut % | contrib. lost % | bus bw | steal |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
	for d in "$@"; do
		awk -v name="$(basename "$d")" -v steal="$(steal_of "$d")" "$rows_awk"'
			function human(s) {
				if (s >= 1048576 && s % 1048576 == 0) return (s / 1048576) " MiB"
				if (s >= 1024 && s % 1024 == 0) return (s / 1024) " KiB"
				return s " B"
			}
			function ms(us) {
				if (us == "") return "-"
				return sprintf(us < 1000 ? "%.3f" : "%.2f", us / 1000)
			}
			function ratio(a, b) { return b == "" || b == 0 ? "-" : sprintf("%.3f", a / b) }
			function emit() {
				if (label != "") return
				bw = ranks > 1 ? sprintf("%.1f", 2 * (ranks - 1) / ranks * size * 8 / p50) : "-"
				printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				    name, human(size), ms(p50), ms(p99), ratio(p99, p50), ms(mp50),
				    ms(mp99), ratio(mp99, mp50), ratio(p50, mp50), ratio(p99, mp99),
				    data == "-" ? "-" : sprintf("%.2f", data),
				    lost == "-" ? "-" : sprintf("%.2f", lost), bw, steal
			}' "$d/table.txt"
	done
	commands "$@"
}

ab_table() {
	header "$@"
	echo "| run | B changes | size | A P50 | A P99 | B P50 | B P99 | A/B mean | A/B P50 | A/B P99 | A / B data cut % | A / B contrib. lost % | steal |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|"
	for d in "$@"; do
		awk -v name="$(basename "$d")" -v steal="$(steal_of "$d")" "$rows_awk"'
			function human(s) {
				if (s >= 1048576 && s % 1048576 == 0) return (s / 1048576) " MiB"
				if (s >= 1024 && s % 1024 == 0) return (s / 1024) " KiB"
				return s " B"
			}
			function pct(v) { return v == "-" ? v : sprintf("%.2f", v) }
			function emit() {
				if (label == "") {
					a50[size] = p50; a99[size] = p99; aavg[size] = avg
					adata[size] = data; alost[size] = lost
					return
				}
				printf "| %s | `%s` | %s | %.2f | %.2f | %.2f | %.2f | %.3f | %.3f | %.3f | %s / %s | %s / %s | %s |\n",
				    name, change, human(size), a50[size] / 1000, a99[size] / 1000,
				    p50 / 1000, p99 / 1000, aavg[size] / avg, a50[size] / p50,
				    a99[size] / p99, pct(adata[size]), pct(data), pct(alost[size]), pct(lost), steal
			}' "$d/table.txt"
	done
	commands "$@"
}

compare_table() {
	[ $# -eq 1 ] || die "compare takes one compare.sh directory"
	local d=$1
	[ -r "$d/stats.csv" ] || die "$d: no stats.csv (not a compare.sh directory)"
	header "$d"
	sed -n 's/^# \(cluster.sh up .*\)/Scenario: `\1`./p' "$d/command.txt"
	echo
	echo "| size | method | iterations | P50 | P99 | mean | P50 / MPI | P99 / MPI |"
	echo "|---:|---|---:|---:|---:|---:|---:|---:|"
	# stats.csv: method,size,iterations,p50,p99,p99.9,mean (us); the rows in the order the
	# methods ran (their first sample in samples.csv).
	local order=/dev/null
	[ -r "$d/samples.csv" ] && order=$d/samples.csv
	awk -F, 'FILENAME != ARGV[2] { if (FNR > 1 && !($1 in rank)) rank[$1] = ++nr; next }
		{ if (!($1 in rank)) rank[$1] = ++nr }
		{ print rank[$1] "," $0 }' "$order" "$d/stats.csv" | sort -t, -k1,1n | cut -d, -f2- |
	awk -F, -v keep="$methods" '
		function human(s) {
			if (s >= 1048576 && s % 1048576 == 0) return (s / 1048576) " MiB"
			if (s >= 1024 && s % 1024 == 0) return (s / 1024) " KiB"
			return s " B"
		}
		{ n++; m[n] = $1; s[n] = $2; it[n] = $3; p50[n] = $4; p99[n] = $5; mean[n] = $7
		  if ($1 == "mpi") { mp50[$2] = $4; mp99[$2] = $5 }
		  if (!($2 in seen)) { seen[$2] = 1; sizes[++ns] = $2 } }
		END {
			# sizes ascending, methods in the order of stats.csv within a size
			for (i = 1; i <= ns; i++) for (j = i + 1; j <= ns; j++)
				if (sizes[j] + 0 < sizes[i] + 0) { t = sizes[i]; sizes[i] = sizes[j]; sizes[j] = t }
			for (i = 1; i <= ns; i++) for (k = 1; k <= n; k++) if (s[k] == sizes[i] && m[k] ~ keep)
				printf "| %s | %s | %s | %.2f | %.2f | %.2f | %s | %s |\n", human(s[k]), m[k],
				    it[k], p50[k] / 1000, p99[k] / 1000, mean[k] / 1000,
				    mp50[s[k]] ? sprintf("%.3f", p50[k] / mp50[s[k]]) : "-",
				    mp99[s[k]] ? sprintf("%.3f", p99[k] / mp99[s[k]]) : "-"
		}'
	commands "$d"
}

# Bytes per host per operation: eth0's transmit counter over the benchmark, divided by the
# operations (timed rows of latency.csv plus the warm-up, --warmup-large or -x, default 10
# above 8 KiB). What the harness adds (a barrier per iteration, set-up) is counted too.
bytes_table() {
	header "$@"
	echo "| run | hosts x ranks | timed | size | operations | MiB sent per host per op (mean, max) | / size |"
	echo "|---|---|---|---:|---:|---|---:|"
	for d in "$@"; do
		[ -r "$d/host_bytes.txt" ] || die "$d: no host_bytes.txt"
		local impl=optireduce who=liboptireduce per hosts warm
		if grep -q -- '--only mpi' "$d/command.txt"; then
			impl=mpi who=MPI_Allreduce
		elif grep -q -- '--baseline mpi' "$d/command.txt"; then
			die "$d: both implementations ran (--baseline mpi): their bytes cannot be told apart"
		fi
		per=$(sed -n 's/^# ranks: [0-9]*, \([0-9]*\) per host/\1/p' "$d/command.txt")
		hosts=$(grep -vc '^#' "$d/host_bytes.txt")
		warm=$(grep -v '^#' "$d/command.txt" | tail -n 1 |
			sed -n 's/.* --warmup-large \([0-9]*\).*/\1/p; t; s/.* -x \([0-9]*\).*/\1/p')
		awk -F, -v impl="$impl" -v warm="${warm:-10}" -v name="$(basename "$d")" -v who="$who" \
			-v shape="$hosts x ${per:-1}" '
			FILENAME ~ /latency.csv$/ {
				if (FNR == 1 || $1 != impl) next
				n++; sizes[$2] = 1; size = $2; next
			}
			/^#/ { next }
			{ split($0, f, " "); sum += f[2]; if (f[2] > max) max = f[2]; h++ }
			END {
				k = 0; for (s in sizes) k++
				if (k != 1) { print "perf_table.sh: " name ": not one size" > "/dev/stderr"; exit 1 }
				ops = n + warm
				human = (size >= 1048576 ? (size / 1048576) " MiB" : size " B")
				printf "| %s | %s | %s | %s | %d | %.2f, %.2f | %.3f |\n", name, shape, who,
				    human, ops, sum / h / ops / 1048576, max / ops / 1048576, sum / h / ops / size
			}' "$d/latency.csv" "$d/host_bytes.txt"
	done
	commands "$@"
}

# The algorithm a run named (--algorithm NAME in its command), else its directory's name.
alg_of() {
	local a
	a=$(sed -n 's/.* --algorithm \([a-z_]*\).*/\1/p' "$1/command.txt" | tail -n 1)
	echo "${a:-$(basename "$1")}"
}

algorithms_table() {
	local d names=""
	header "$@"
	for d in "$@"; do names="$names $(alg_of "$d")"; done
	for d in "$@"; do
		awk -v name="$(alg_of "$d")" "$rows_awk"'
			function emit() { if (label == "") print name, size, p50, mp50, data }' "$d/table.txt"
	done | awk -v names="$names" -v rule="$rule" '
		function human(s) {
			if (s >= 1048576 && s % 1048576 == 0) return (s / 1048576) " MiB"
			if (s >= 1024 && s % 1024 == 0) return (s / 1024) " KiB"
			return s " B"
		}
		function ms(us) { return sprintf(us < 10000 ? "%.2f" : us < 1e6 ? "%.1f" : "%.0f", us / 1000) }
		# The algorithm RULE gives a message of b bytes ([lo, hi) ranges, "inf" open).
		function chosen(b,   n, i, r, lo, hi) {
			n = split(rule, r, ",")
			for (i = 1; i <= n; i++) {
				split(r[i], part, ":"); split(part[1], lh, "-")
				lo = lh[1] + 0; hi = lh[2] == "inf" ? -1 : lh[2] + 0
				if (b >= lo && (hi < 0 || b < hi)) return part[2]
			}
			return ""
		}
		{ t[$1, $2] = $3; m[$1, $2] = $4; cut[$1, $2] = $5
		  if (!($2 in seen)) { seen[$2] = 1; sizes[++ns] = $2 }
		  if ($4 != "") { if (!($2 in lo) || $4 < lo[$2]) lo[$2] = $4; if ($4 > hi[$2]) hi[$2] = $4 } }
		END {
			na = split(names, a, " ")
			for (i = 1; i <= ns; i++) for (j = i + 1; j <= ns; j++)
				if (sizes[j] + 0 < sizes[i] + 0) { x = sizes[i]; sizes[i] = sizes[j]; sizes[j] = x }
			printf "| size |"; for (k = 1; k <= na; k++) printf " %s |", a[k]
			print " MPI P50 (min-max over runs) |"
			printf "|---:|"; for (k = 1; k <= na; k++) printf "---:|"; print "---:|"
			for (i = 1; i <= ns; i++) {
				sz = sizes[i]; best = ""
				for (k = 1; k <= na; k++)
					if ((a[k], sz) in t && (best == "" || t[a[k], sz] + 0 < t[best, sz] + 0)) best = a[k]
				printf "| %s |", human(sz)
				for (k = 1; k <= na; k++) {
					if (!((a[k], sz) in t)) { printf " - |"; continue }
					c = ms(t[a[k], sz])
					if (m[a[k], sz] != "") c = c sprintf(" (%.2f)", t[a[k], sz] / m[a[k], sz])
					if (cut[a[k], sz] != "-" && cut[a[k], sz] + 0 >= 0.1) c = c sprintf(" [%.1f %%]", cut[a[k], sz])
					if (a[k] == best) c = "_" c "_"
					if (rule != "" && a[k] == chosen(sz + 0)) c = "**" c "**"
					printf " %s |", c
				}
				printf " %s |\n", (sz in lo) ? ms(lo[sz]) "-" ms(hi[sz]) : "-"
			}
		}'
	commands "$@"
}

case $kind in
cluster) cluster_table "$@" ;;
bytes) bytes_table "$@" ;;
ab) ab_table "$@" ;;
compare) compare_table "$@" ;;
algorithms) algorithms_table "$@" ;;
*) usage >&2; exit 2 ;;
esac
