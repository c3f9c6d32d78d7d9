#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tta_runner.sh - time-to-accuracy of the same data-parallel training job
# (examples/train_fashion_mnist.py) on the emulated cloud, with its gradients
# averaged three ways: PyTorch's Gloo backend, liboptireduce exact, and
# liboptireduce bounded.  For each scenario the cloud is brought up once, the
# three runs go one after the other on it, and it is brought down again.
#
#   examples/tta_runner.sh [options] [SCENARIO...] [-- TRAIN ARGS...]
#
# Scenarios (default: clean loss harsh straggler), on N hosts at --rate each way:
#   clean      no loss, no cross traffic
#   loss       1% random loss on every host
#   harsh      1% loss plus bursty cross traffic: on every host 3 unpaced TCP flows
#              to the other hosts, all on one ON/OFF schedule (mean 1.5 s on, 4.5 s
#              off), meant to give Gloo's gradient averaging P99/P50 >= 3 (the table
#              shows the ratio measured)
#   harsher    as harsh, with the flows 3 s on and 3 s off
#   straggler  host 3's ranks are stopped 30% of every second (SIGSTOP/SIGCONT)
#   NAME=ARGS  a scenario of your own: ARGS go to "cluster.sh up" after -n and --rate,
#              e.g. 'lossy5=--loss 0.05'
#
# Options:
#   --ways LIST      comma-separated subset of gloo,exact,bounded (default all three)
#   -n N             hosts, one rank each (default 4)
#   --rate RATE      link rate of every host (default 100mbit: with 2 CPUs the links,
#                    not the CPUs, bind there; each run's CPU use is in the table)
#   --target ACC     stop at this test accuracy (default 0.80)
#   --max-steps N    stop after N steps anyway (default 400)
#   --short          the demo: harsh only, a 784-512-10 model (0.4 M parameters),
#                    target 0.78, evaluations on 2000 test images; a few minutes
#   --seeds LIST     comma-separated training seeds: each way runs once per seed
#                    (seed by seed, the ways in turn), and the table gives each
#                    way's median over the seeds next to the runs; one run of the
#                    training's own seed by default
#   --out DIR        results (default ./tta_results); DIR/SCENARIO/WAY.{csv,json,log},
#                    with --seeds DIR/SCENARIO/WAY-sSEED.{csv,json,log}
#   --build DIR      build tree whose python/ and .libs/ to use (default: build/ next
#                    to the sources if it has python/optireduce, else the installed
#                    package)
#   --python PATH    interpreter with torch (default /usr/bin/python3, Debian's)
#   --run-timeout S  give up a run after S seconds (default 3600)
#   --local          no emulated cloud: N ranks on this host (mpirun, loopback), one
#                    scenario "local"; shows the job works, not the cloud comparison
# Anything after -- goes to every training run (train_fashion_mnist.py --help).
#
# Writes DIR/table.md (printed at the end), DIR/table.csv, DIR/tta.png (test
# accuracy against training wall time, one panel per scenario), DIR/command.txt.
# The cloud is used under flock /tmp/orc-cluster.lock, one scenario at a time.
# Needs root (network namespaces); exits 77 without it.
set -euo pipefail

HERE=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
CLUSTER=$ROOT/test/cluster/cluster.sh
TRAIN=$HERE/train_fashion_mnist.py
REPORT=$HERE/tta_report.py
LOCK=/tmp/orc-cluster.lock

usage() { sed -n '3,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "tta_runner.sh: error: $*" >&2; exit 1; }

# Scenario presets: arguments of "cluster.sh up" besides -n and --rate.
declare -A PRESET=(
	[clean]=""
	[loss]="--loss 0.01"
	[harsh]="--loss 0.01 --cross-traffic max --cross-onoff 1500:4500 --cross-flows 3 --cross-sync"
	[harsher]="--loss 0.01 --cross-traffic max --cross-onoff 3000:3000 --cross-flows 3 --cross-sync"
	[straggler]="--straggler 3:stop:1000:0.3"
)

n=4 rate=100mbit target=0.80 max_steps=400 out=tta_results build="" py=/usr/bin/python3
ways=gloo,exact,bounded run_timeout=3600 short=0 local=0 seeds=""
scenarios=() train_args=()
cmdline="$0 $*"
while [ $# -gt 0 ]; do
	case $1 in
	--ways) ways=${2:?}; shift 2 ;;
	--seeds) seeds=${2:?}; shift 2 ;;
	-n) n=${2:?}; shift 2 ;;
	--rate) rate=${2:?}; shift 2 ;;
	--target) target=${2:?}; shift 2 ;;
	--max-steps) max_steps=${2:?}; shift 2 ;;
	--short) short=1; shift ;;
	--out) out=${2:?}; shift 2 ;;
	--build) build=${2:?}; shift 2 ;;
	--python) py=${2:?}; shift 2 ;;
	--run-timeout) run_timeout=${2:?}; shift 2 ;;
	--local) local=1; shift ;;
	-h | --help) usage; exit 0 ;;
	--) shift; train_args+=("$@"); break ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*=*) PRESET[${1%%=*}]=${1#*=}; scenarios+=("${1%%=*}"); shift ;;
	*) [ -n "${PRESET[$1]+x}" ] || die "unknown scenario '$1' (clean, loss, harsh, straggler, NAME=ARGS)"
		scenarios+=("$1"); shift ;;
	esac
done
if [ "$local" = 1 ]; then
	[ ${#scenarios[@]} -eq 0 ] || die "--local runs no scenario (got ${scenarios[*]})"
	scenarios=(local)
	PRESET[local]="(none: $n ranks on this host, loopback)"
fi
if [ "$short" = 1 ]; then
	[ ${#scenarios[@]} -gt 0 ] || scenarios=(harsh)
	target=0.78
	[[ " $cmdline " == *" --max-steps "* ]] || max_steps=150
	train_args=(--hidden 512 --eval-every 10 --eval-samples 2000 "${train_args[@]}")
fi
[ ${#scenarios[@]} -gt 0 ] || scenarios=(clean loss harsh straggler)
IFS=, read -r -a way_list <<<"$ways"
for w in "${way_list[@]}"; do
	case $w in gloo | exact | bounded) ;; *) die "unknown way '$w' in --ways" ;; esac
done
[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] || die "-n wants a number >= 2"
[[ -z $seeds || $seeds =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--seeds wants numbers separated by commas"
# One run per way (name = way), or per seed and way (name = way-sSEED).
runs=()
if [ -z "$seeds" ]; then
	runs=("${way_list[@]}")
else
	IFS=, read -r -a seed_list <<<"$seeds"
	for s in "${seed_list[@]}"; do
		for w in "${way_list[@]}"; do runs+=("$w-s$s"); done
	done
fi

if [ "$local" = 0 ] && [ "$(id -u)" -ne 0 ]; then
	echo "tta_runner.sh: the emulated cloud needs root: skipping (exit 77)" >&2
	exit 77
fi
"$py" -c 'import torch, matplotlib' 2>/dev/null ||
	die "$py lacks torch or matplotlib (Debian: python3-torch python3-matplotlib)"
[ -d /usr/share/datasets/fashion-mnist ] ||
	die "Fashion-MNIST not found in /usr/share/datasets/fashion-mnist (dataset-fashion-mnist)"

# The optireduce package: the build tree's (PYTHONPATH) or the installed one.
if [ -z "$build" ] && [ -d "$ROOT/build/python/optireduce" ]; then build=$ROOT/build; fi
if [ -n "$build" ]; then
	build=$(cd "$build" && pwd)
	[ -d "$build/python/optireduce" ] || die "$build/python/optireduce missing: run make there"
	export PYTHONPATH=$build/python${PYTHONPATH:+:$PYTHONPATH}
fi
PYTHONPATH=${PYTHONPATH:-} "$py" -c 'import optireduce; optireduce.version_string()' ||
	die "the optireduce package or its library does not load (--build DIR, or make install)"
export PYTHONPATH=${PYTHONPATH:-} OMP_NUM_THREADS=1

mkdir -p "$out"
out=$(cd "$out" && pwd)
{
	echo "# $cmdline"
	echo "# on $(hostname), $(getconf _NPROCESSORS_ONLN) CPUs, $(uname -r); library $(PYTHONPATH=$PYTHONPATH "$py" -c \
		'import optireduce; print(optireduce.version_string())')"
	echo "# training: $TRAIN --target $target --max-steps $max_steps ${train_args[*]}"
} >"$out/command.txt"

# Busy share of all CPUs between two reads of /proc/stat: "busy% steal%".
cpu_read() { local _c u ni sy id io iq sq st _r; read -r _c u ni sy id io iq sq st _r </proc/stat
	echo "$((u + ni + sy + iq + sq + st)) $((id + io)) $st"; }
cpu_share() {
	awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " ");
		busy = y[1] - x[1]; idle = y[2] - x[2]; st = y[3] - x[3]; t = busy + idle;
		if (t <= 0) t = 1; printf "%.0f %.1f", 100 * busy / t, 100 * st / t }'
}

cluster_up=0
cleanup() {
	if [ "$cluster_up" = 1 ]; then
		"$CLUSTER" down >/dev/null 2>&1 || true
		cluster_up=0
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# One training run: the ranks on the emulated cloud, or on this host with --local.
launch() {
	local port=$1
	shift
	if [ "$local" = 1 ]; then
		# Each rank stands for a host (hierarchy off), so exact and bounded use the network
		# channels as on the cloud instead of shared memory.
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 GLOO_SOCKET_IFNAME=lo \
			OPTIREDUCE_HIERARCHY=${OPTIREDUCE_HIERARCHY:-0} timeout "$run_timeout" mpirun -np "$n" --oversubscribe --bind-to none \
			--mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
			--mca pml ob1 -x PYTHONPATH -x OMP_NUM_THREADS -x OPTIREDUCE_LOG_LEVEL \
			-x GLOO_SOCKET_IFNAME -x OPTIREDUCE_HIERARCHY -- "$py" "$TRAIN" --master-addr 127.0.0.1 \
			--master-port "$port" "$@"
	else
		timeout "$run_timeout" "$CLUSTER" run -n "$n" -x PYTHONPATH -x OMP_NUM_THREADS \
			-x OPTIREDUCE_LOG_LEVEL -- "$py" "$TRAIN" --master-addr 198.18.0.1 \
			--master-port "$port" "$@"
	fi
}

# Take the emulated cloud (under the lock) and bring it up for scenario $1.
cloud_up() {
	local sc=$1 dir=$2
	shift 2
	echo "==> $sc: waiting for the emulated cloud ($LOCK)"
	exec 9>"$LOCK"
	flock 9
	if ip netns list 2>/dev/null | grep -q '^orc-'; then
		flock -u 9
		die "an emulated cloud is already up (not under $LOCK?): not touching it"
	fi
	echo "==> $sc: cluster.sh up $*"
	"$CLUSTER" up "$@" >"$dir/cluster-up.txt" 2>&1 ||
		{ cat "$dir/cluster-up.txt" >&2; flock -u 9; die "cluster.sh up failed"; }
	cluster_up=1
}

cloud_down() {
	local dir=$1
	"$CLUSTER" status >"$dir/cluster-status.txt" 2>&1 || true
	"$CLUSTER" down >/dev/null 2>&1 || true
	cluster_up=0
	flock -u 9
}

run_scenario() {
	local sc=$1 dir=$out/$1 up_args i=0 w rc t0 c0 c1 share
	# shellcheck disable=SC2206 # the preset is a word list on purpose
	up_args=(-n "$n" --rate "$rate" ${PRESET[$sc]})
	mkdir -p "$dir"
	rm -f "$dir"/*.csv "$dir"/*.json "$dir/runs.tsv"
	if [ "$local" = 1 ]; then
		echo "local: ${PRESET[$sc]}" >"$dir/cluster.txt"
	else
		echo "cluster.sh up ${up_args[*]}" >"$dir/cluster.txt"
		cloud_up "$sc" "$dir" "${up_args[@]}"
	fi
	printf 'way\texit\tseconds\tcpu_busy_pct\tcpu_steal_pct\n' >"$dir/runs.tsv"
	for w in "${runs[@]}"; do
		local seed_args=()
		[[ $w == *-s* ]] && seed_args=(--seed "${w##*-s}")
		i=$((i + 1))
		echo "==> $sc: $w ($i/${#runs[@]}), log $dir/$w.log"
		t0=$SECONDS
		c0=$(cpu_read)
		rc=0
		launch $((29500 + i % 400)) --comm "${w%%-s*}" --target "$target" --max-steps "$max_steps" \
			--csv "$dir/$w.csv" --label "$sc: $(cat "$dir/cluster.txt")" "${train_args[@]}" \
			"${seed_args[@]}" 2>"$dir/$w.err" | tee "$dir/$w.log" || rc=$?
		c1=$(cpu_read)
		share=$(cpu_share "$c0" "$c1")
		printf '%s\t%s\t%s\t%s\t%s\n' "$w" "$rc" $((SECONDS - t0)) ${share} >>"$dir/runs.tsv"
		[ "$rc" = 0 ] || echo "tta_runner.sh: $sc/$w exited with $rc (see $dir/$w.err)" >&2
	done
	[ "$local" = 1 ] || cloud_down "$dir"
}

export OPTIREDUCE_LOG_LEVEL=${OPTIREDUCE_LOG_LEVEL:-1}
for sc in "${scenarios[@]}"; do
	run_scenario "$sc"
done
"$py" "$REPORT" "$out" "${scenarios[@]}"
