#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# compare.sh - one command: on the emulated cloud (test/cluster/) with a chosen
# scenario, time liboptireduce (every algorithm, exact and bounded), Open MPI's
# MPI_Allreduce and Gloo's ring, chunked ring, halving-doubling and bcube allreduce with the
# same sizes and iteration counts; write a table and completion-time CDF plots.
#
#   bench/compare.sh [--scenario NAME] [--sizes LIST] [--iters N] [--out DIR] [options]
#
#   --scenario NAME    clean (default)  unlimited links, no loss
#                      lossP            unlimited links, P % one-way loss per host (loss1, loss0.1)
#                      rateR            every link limited to R mbit/s each way (rate200)
#                      cross            rate200 plus bursty cross traffic: host i sends to
#                                       host i+1 at 100 mbit/s, ON/OFF 50:50 ms
#                      straggler        unlimited links; the last host's ranks are stopped
#                                       20 % of every 100 ms (SIGSTOP/SIGCONT)
#   --up ARG           one more "cluster.sh up" argument (repeatable; added after the
#                      scenario's, so it can override them), e.g. --up --rate --up 1gbit
#   --sizes LIST       message sizes in bytes, comma-separated, k/m/g suffixes (default 1M)
#   --iters N          timed iterations per size and method (default 50)
#   --warmup N         untimed iterations before them (default: 16, bounded mode's
#                      calibration (calib_ops), so that it is not timed)
#   -n N               hosts, one rank each (default 4)
#   --out DIR          results directory (default: ./results/compare-<scenario>-<time>)
#   --build DIR        build directory holding bench/optireduce_bench, bench/gloo_bench
#                      and tools/optireduce_info (default: $OPTIREDUCE_BUILD, else the
#                      source tree this script is in)
#   --methods LIST     comma-separated shell patterns over the method ids (default '*'),
#                      e.g. 'or-*,mpi'; ids: or-exact-ALG, or-bounded-ALG, mpi, gloo-ring,
#                      gloo-ring-chunked, gloo-halving-doubling, gloo-bcube
#   --bounded-algs L   algorithms to run in bounded mode (default: those whose
#                      optireduce_info -a description says "bounded")
#   --run-timeout S    give up on one benchmark run after S seconds (default 900)
#   --keep             leave the cluster up afterwards (for debugging)
# OPTIREDUCE_* and FI_* variables of this shell are passed to every rank.
#
# Writes DIR/table.md (per size and method: iterations, P50, P99, P99.9, mean,
# contributions lost), DIR/cdf_<size>.png (gnuplot, with its script and data next
# to it), DIR/samples.csv (method,size,iter,latency_us: every timed iteration,
# latency = MAX over ranks, i.e. the collective's completion time), DIR/raw/ (each
# run's output) and DIR/command.txt.  The cluster is torn down on exit (trap).
# Needs root; exits 77 (skip) without it.  Exit code 0 if every run succeeded,
# 1 if some failed (they are marked in the table).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/provenance.sh"
CLUSTER=$HERE/../test/cluster/cluster.sh

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "compare.sh: error: $*" >&2; exit 1; }
say() { echo "compare.sh: $*" >&2; }

scenario=clean sizes_arg=1M iters=50 warmup="" n=4 out="" build=${OPTIREDUCE_BUILD:-}
methods_arg='*' bounded_arg="" run_timeout=900 keep=0
extra_up=()
while [ $# -gt 0 ]; do
	case $1 in
	--scenario) scenario=${2:?--scenario wants a name}; shift 2 ;;
	--up) [ $# -ge 2 ] || die "--up wants a value"; extra_up+=("$2"); shift 2 ;;
	--sizes) sizes_arg=${2:?--sizes wants a list}; shift 2 ;;
	--iters) iters=${2:?--iters wants a number}; shift 2 ;;
	--warmup) warmup=${2:?--warmup wants a number}; shift 2 ;;
	-n) n=${2:?-n wants a number}; shift 2 ;;
	--out) out=${2:?--out wants a directory}; shift 2 ;;
	--build) build=${2:?--build wants a directory}; shift 2 ;;
	--methods) methods_arg=${2:?--methods wants a list}; shift 2 ;;
	--bounded-algs) bounded_arg=${2:?--bounded-algs wants a list}; shift 2 ;;
	--run-timeout) run_timeout=${2:?--run-timeout wants seconds}; shift 2 ;;
	--keep) keep=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown argument '$1' (-h for help)" ;;
	esac
done

is_count() { [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ]; }
is_count "$iters" 1 || die "--iters wants a positive number, not '$iters'"
[ -z "$warmup" ] && warmup=16
is_count "$warmup" 0 || die "--warmup wants a number, not '$warmup'"
is_count "$n" 2 || die "-n wants at least 2 hosts, not '$n'"
is_count "$run_timeout" 1 || die "--run-timeout wants seconds, not '$run_timeout'"

# Scenario -> cluster.sh up arguments.  One impairment each, so they compare.
case $scenario in
clean) up_args=(--rate none) ;;
loss*)
	p=${scenario#loss}
	[[ $p =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "scenario '$scenario': want loss<percent>, e.g. loss1"
	frac=$(awk -v p="$p" 'BEGIN { printf "%.6g", p / 100 }')
	awk -v f="$frac" 'BEGIN { exit !(f > 0 && f < 1) }' || die "scenario '$scenario': loss must be in (0, 100) %"
	up_args=(--rate none --loss "$frac") ;;
rate*)
	r=${scenario#rate}
	if ! [[ $r =~ ^[0-9]+$ ]] || [ "$r" -eq 0 ]; then die "scenario '$scenario': want rate<mbit>, e.g. rate200"; fi
	up_args=(--rate "${r}mbit") ;;
cross) up_args=(--rate 200mbit --cross-traffic 100mbit --cross-onoff 50:50) ;;
straggler) up_args=(--rate none --straggler "$((n - 1)):stop:100:0.2") ;;
*) die "unknown scenario '$scenario' (clean, lossP, rateR, cross, straggler)" ;;
esac
up_args+=("${extra_up[@]}")

# "1M,16m,4096" -> bytes
sizes=()
IFS=, read -r -a size_words <<<"$sizes_arg"
for w in "${size_words[@]}"; do
	b=$(awk -v s="$w" 'BEGIN {
		if (match(s, /^[0-9]+/) == 0) exit 1
		v = substr(s, 1, RLENGTH); u = tolower(substr(s, RLENGTH + 1)); sub(/b$/, "", u)
		m = u == "" ? 1 : u == "k" ? 1024 : u == "m" ? 1048576 : u == "g" ? 1073741824 : 0
		if (m == 0 || v * m < 4 || v * m % 4) exit 1
		printf "%d", v * m }') || die "bad size '$w' (a multiple of 4 bytes, k/m/g suffixes)"
	sizes+=("$b")
done
[ ${#sizes[@]} -gt 0 ] || die "--sizes is empty"

# 1048576 -> 1M, for file names and headings
size_label() {
	local b=$1
	if [ $((b % 1048576)) -eq 0 ]; then echo "$((b / 1048576))M"
	elif [ $((b % 1024)) -eq 0 ]; then echo "$((b / 1024))K"
	else echo "$b"; fi
}

if [ "$(id -u)" -ne 0 ]; then
	echo "compare.sh: the emulated cluster needs root; skipping (exit 77)" >&2
	exit 77
fi
[ -f "$CLUSTER" ] || die "cluster.sh not found at $CLUSTER"

# Binaries: a VPATH build keeps them apart from the sources.
[ -n "$build" ] || build=$HERE/..
build=$(readlink -f "$build")
or_bench=$build/bench/optireduce_bench
gloo_bench=$build/bench/gloo_bench
info=$build/tools/optireduce_info
[ -x "$or_bench" ] || die "$or_bench not found: build first (MPI needed) or pass --build DIR"
[ -x "$info" ] || die "$info not found: build first or pass --build DIR"
have_gloo=1
[ -x "$gloo_bench" ] || have_gloo=0

# The algorithm table, from the library itself.
mapfile -t alg_lines < <("$info" -a | awk '/^ +[0-9]+ /')
algs=() bounded_algs=()
for l in "${alg_lines[@]}"; do
	a=$(awk '{ print $2 }' <<<"$l")
	algs+=("$a")
	if [ -z "$bounded_arg" ] && grep -qiw bounded <<<"$l"; then bounded_algs+=("$a"); fi
done
[ ${#algs[@]} -gt 0 ] || die "optireduce_info -a lists no algorithm"
[ -n "$bounded_arg" ] && IFS=, read -r -a bounded_algs <<<"$bounded_arg"

# Methods, in run order: id, display name, and how to run it.
ids=() names=()
declare -A kind arg
add_method() { ids+=("$1"); names+=("$2"); kind[$1]=$3; arg[$1]=$4; }
for a in "${algs[@]}"; do add_method "or-exact-$a" "liboptireduce exact $a" or "--mode exact --algorithm $a"; done
for a in "${bounded_algs[@]}"; do add_method "or-bounded-$a" "liboptireduce bounded $a" or "--mode bounded --algorithm $a"; done
add_method mpi "Open MPI MPI_Allreduce" mpi "--only mpi"
for g in ring ring-chunked halving-doubling bcube; do add_method "gloo-$g" "Gloo $g" gloo "$g"; done

# --methods filter
IFS=, read -r -a patterns <<<"$methods_arg"
sel=() sel_names=()
for i in "${!ids[@]}"; do
	for p in "${patterns[@]}"; do
		# shellcheck disable=SC2053  # the pattern is a glob on purpose
		if [[ ${ids[$i]} == $p ]]; then sel+=("${ids[$i]}"); sel_names+=("${names[$i]}"); break; fi
	done
done
[ ${#sel[@]} -gt 0 ] || die "--methods '$methods_arg' matches none of: ${ids[*]}"
gloo_sel=()
for m in "${sel[@]}"; do [ "${kind[$m]}" = gloo ] && gloo_sel+=("${arg[$m]}"); done

[ -n "$out" ] || out=$PWD/results/compare-$scenario-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out/raw" "$out/cdf"
out=$(readlink -f "$out")

# Pass the library's and libfabric's settings to every rank.
xenv=()
while IFS= read -r v; do xenv+=(-x "$v"); done < <(env | sed -n 's/^\(\(OPTIREDUCE\|FI\)_[A-Za-z0-9_]*\)=.*/\1/p' | sort -u)

cluster_up=0
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
	local rc=$?
	if [ "$cluster_up" = 1 ] && [ "$keep" = 0 ]; then
		"$CLUSTER" status >"$out/cluster-status-after.txt" 2>&1 || true
		"$CLUSTER" down >/dev/null 2>&1 || say "warning: cluster.sh down failed"
		say "cluster down"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

{
	echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
	printf '%q ' "$0" --scenario "$scenario" --sizes "$sizes_arg" --iters "$iters" --warmup "$warmup" -n "$n" --out "$out" --build "$build" --methods "$methods_arg"
	echo
	echo "# cluster.sh up -n $n ${up_args[*]}"
	provenance_lines
	env | grep -E '^(OPTIREDUCE|FI)_' | sed 's/^/# env /' || true
} >"$out/command.txt"

say "scenario $scenario: cluster.sh up -n $n ${up_args[*]}"
"$CLUSTER" up -n "$n" "${up_args[@]}" >"$out/cluster-up.txt" 2>&1 || {
	cat "$out/cluster-up.txt" >&2
	die "cluster.sh up failed (is a cluster already up? 'cluster.sh down' removes it)"
}
cluster_up=1
"$CLUSTER" status >"$out/cluster-status.txt" 2>&1 || true
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# One benchmark run under the cluster; returns its exit code.
run_bench() { # tag, program and args
	local tag=$1
	shift
	timeout --kill-after=15 "$run_timeout" "$CLUSTER" run -n "$n" "${xenv[@]}" -- "$@" \
		>"$out/raw/$tag.txt" 2>"$out/raw/$tag.err"
}

# Per size: every method once, liboptireduce, MPI, Gloo, so drift hits all alike.
echo "method,size,iter,latency_us" >"$out/samples.csv"
declare -A status lost
total=$((${#sizes[@]} * ${#sel[@]})) k=0 failures=0
nl=$'\n'
for s in "${sizes[@]}"; do
	L=$(size_label "$s")
	common=(-m "$s:$s" -i "$iters" -x "$warmup" --iter-large "$iters" --warmup-large "$warmup")
	for idx in "${!sel[@]}"; do
		m=${sel[$idx]}
		case ${kind[$m]} in
		gloo)
			k=$((k + 1))
			if [ "$have_gloo" = 0 ]; then
				status[$m,$s]="not built (libgloo-dev)"
				say "[$k/$total] $L ${sel_names[$idx]}: skipped, bench/gloo_bench not built"
				continue
			fi
			# One run times all the selected Gloo algorithms at this size.
			if [ -z "${status[gloo-run,$s]:-}" ]; then
				t0=$SECONDS
				say "[$k/$total] $L Gloo ($(IFS=,; echo "${gloo_sel[*]}")) ..."
				rc=0
				run_bench "gloo_$L" "$gloo_bench" --iface eth0 --algorithm "$(IFS=,; echo "${gloo_sel[*]}")" \
					"${common[@]}" --csv "$out/raw/gloo_$L.csv" || rc=$?
				status[gloo-run,$s]=$rc
				say "      Gloo done in $((SECONDS - t0)) s (exit $rc)"
			fi
			rc=${status[gloo-run,$s]}
			csv=$out/raw/gloo_$L.csv
			impl=gloo_${arg[$m]//-/_}
			if [ "$rc" = 0 ] && [ -f "$csv" ] && grep -q "^$impl," "$csv"; then
				status[$m,$s]=ok
				awk -F, -v m="$m" -v impl="$impl" '$1 == impl { print m "," $2 "," $3 "," $4 }' "$csv" >>"$out/samples.csv"
			else
				status[$m,$s]="failed (exit $rc)"
				failures=$((failures + 1))
			fi
			continue ;;
		esac
		k=$((k + 1))
		t0=$SECONDS
		say "[$k/$total] $L ${sel_names[$idx]} ..."
		tag=${m}_$L
		rc=0
		# shellcheck disable=SC2086  # arg[] holds several words on purpose
		run_bench "$tag" "$or_bench" ${arg[$m]} "${common[@]}" --csv "$out/raw/$tag.csv" || rc=$?
		if [ "$rc" = 0 ] && [ -s "$out/raw/$tag.csv" ]; then
			status[$m,$s]=ok
			awk -F, -v m="$m" 'NR > 1 { print m "," $2 "," $3 "," $4 }' "$out/raw/$tag.csv" >>"$out/samples.csv"
			# Bounded mode: the table's Lost(%) column (missing / expected contributions).
			# Header titles have spaces ("Avg Latency(us)"), so count from the right.
			lost[$m,$s]=$(awk '/^# Size/ { for (i = 1; i <= NF; i++) if ($i == "Lost(%)") r = NF - i + 1 }
				r && /^[0-9]/ { print $(NF - r + 1) }' "$out/raw/$tag.txt")
			say "      done in $((SECONDS - t0)) s"
		else
			status[$m,$s]="failed (exit $rc)"
			failures=$((failures + 1))
			say "      FAILED (exit $rc) after $((SECONDS - t0)) s; see $out/raw/$tag.err"
			tail -n 5 "$out/raw/$tag.err" | sed 's/^/      | /' >&2 || true
		fi
	done
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

# Statistics: nearest-rank percentiles (as optireduce_bench) over the MAX-over-ranks
# latencies.  Output: method,size,n,p50,p99,p999,mean
tail -n +2 "$out/samples.csv" | sort -t, -k1,1 -k2,2n -k4,4g | awk -F, '
	function flush() {
		if (!cnt) return
		printf "%s,%s,%d,%.1f,%.1f,%.1f,%.1f\n", key_m, key_s, cnt, v[pr(50)], v[pr(99)], v[pr(99.9)], sum / cnt
	}
	function pr(p,   k) { k = int(p / 100 * cnt); if (k < p / 100 * cnt) k++; if (k < 1) k = 1; return k }
	$1 != key_m || $2 != key_s { flush(); key_m = $1; key_s = $2; cnt = 0; sum = 0 }
	{ v[++cnt] = $4; sum += $4 }
	END { flush() }' >"$out/stats.csv"

{
	echo "# Allreduce comparison: scenario \`$scenario\`, $n hosts"
	echo
	echo "- Cluster: \`cluster.sh up -n $n ${up_args[*]}\`; one rank per host."
	echo "- float32 SUM; per size and method $iters timed iterations after $warmup warm-up;"
	echo "  an MPI_Barrier (not timed) before each; latency of an iteration = time until the"
	echo "  slowest rank returned (completion time). Percentiles are nearest-rank, so with"
	echo "  fewer than 1000 iterations P99.9 is the slowest iteration."
	echo "- Run order per size: the rows' order (the Gloo rows in one run). Gloo ring passes the"
	echo "  whole buffer around the ring; Gloo ring-chunked is its bandwidth-optimal ring."
	echo "- Lost: contributions missing / expected, bounded mode only (the others are exact)."
	echo "- $(date -u +%Y-%m-%dT%H:%M:%SZ), $(hostname), $(nproc) CPUs; load average $load_start at start, $load_end at end."
	echo "- liboptireduce $("$info" 2>/dev/null | awk 'NR == 1 { print $2 }'), $(mpirun --version 2>/dev/null | head -1),"
	echo "  Gloo: $([ "$have_gloo" = 1 ] && dpkg-query -W -f '${Version}' libgloo-dev 2>/dev/null || echo "not built")."
	for s in "${sizes[@]}"; do
		echo
		echo "## $s bytes ($(size_label "$s"))"
		echo
		echo "| method | iterations | P50 (us) | P99 (us) | P99.9 (us) | mean (us) | lost (%) |"
		echo "|---|---:|---:|---:|---:|---:|---:|"
		for idx in "${!sel[@]}"; do
			m=${sel[$idx]}
			st=${status[$m,$s]:-"not run"}
			if [ "$st" = ok ]; then
				row=$(awk -F, -v m="$m" -v s="$s" '$1 == m && $2 == s { print "| " $3 " | " $4 " | " $5 " | " $6 " | " $7 }' "$out/stats.csv")
				l=${lost[$m,$s]:-}
				echo "| ${sel_names[$idx]} $row | ${l:--} |"
			else
				echo "| ${sel_names[$idx]} | $st | | | | | |"
			fi
		done
	done
} >"$out/table.md"

# CDF plots: one PNG per size, a step line per method.
if command -v gnuplot >/dev/null 2>&1; then
	term=png
	gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1 && term=pngcairo
	for s in "${sizes[@]}"; do
		L=$(size_label "$s")
		plots=""
		for idx in "${!sel[@]}"; do
			m=${sel[$idx]}
			[ "${status[$m,$s]:-}" = ok ] || continue
			dat=$out/cdf/${L}_$m.dat
			awk -F, -v m="$m" -v s="$s" '$1 == m && $2 == s { print $4 / 1000 }' "$out/samples.csv" | sort -g |
				awk '{ v[NR] = $1 } END { if (NR) printf "%g 0\n", v[1]; for (i = 1; i <= NR; i++) printf "%g %g\n", v[i], i / NR }' >"$dat"
			plots+="${plots:+, \\$nl  }'$dat' using 1:2 with steps linewidth 2 title '${sel_names[$idx]}'"
		done
		[ -n "$plots" ] || continue
		gp=$out/cdf/cdf_$L.gp
		cat >"$gp" <<-EOF
			set terminal $term size 1200,650
			set output '$out/cdf_$L.png'
			set title "Allreduce completion time, $L float32, $n hosts, scenario $scenario ($iters iterations)" noenhanced
			$(cat "$HERE/cdf_style.gp")
			plot $plots
		EOF
		gnuplot "$gp" 2>"$out/cdf/cdf_$L.err" || say "warning: gnuplot failed for $L; see $out/cdf/cdf_$L.err"
	done
else
	say "warning: gnuplot not found (Debian: gnuplot-nox); no plots"
fi

cat "$out/table.md"
say "results in $out (table.md, cdf_*.png, samples.csv, raw/)"
[ "$failures" = 0 ] || { say "$failures run(s) failed"; exit 1; }
exit 0
