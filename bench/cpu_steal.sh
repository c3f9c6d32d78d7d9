#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# cpu_steal.sh OUT - sample the CPU time the hypervisor takes from this VM
# ("steal" in /proc/stat) every 100 ms until SIGTERM, then write a summary.
#
# A benchmark's tail is only worth reading next to this: on the 2-CPU VM the
# results come from, steal arrives in bursts of 50-100 ms while the ranks are
# busy, and a rank stopped that long adds it to an operation that no deadline
# can cut.  OUT gets one line per 100 ms window with the milliseconds stolen in it
# (summed over CPUs; "!" marks the windows with at least 50 ms), so that a slow stretch
# of operations can be set against the steal of the same moment; then the summary line,
# which also says how busy the CPUs were (user, system, idle).
#
# The sampling loop uses bash builtins only: a loop that started sleep, awk, date and
# cut every 100 ms took 6-7 % of the 2 CPUs it was measuring (perf, 4 MiB run).
set -u
export TZ=UTC
out=${1:?usage: cpu_steal.sh OUT}
hz=$(getconf CLK_TCK)
# steal, total, then user+nice, system+irq+softirq, idle+iowait: a run with little idle
# time measured the CPUs, not the emulated links.
read_cpu() {
	local _cpu u n y i w q sq st _rest
	read -r _cpu u n y i w q sq st _rest </proc/stat
	cpu=($st $((u + n + y + i + w + q + sq + st)) $((u + n)) $((y + q + sq)) $((i + w)))
}
read_cpu
s0=${cpu[0]} t0=${cpu[1]} u0=${cpu[2]} y0=${cpu[3]} i0=${cpu[4]}
prev=$s0 windows=0 running=1
trap 'running=0' TERM INT
# read -t on a FIFO that no one writes sleeps without starting a process.
nap_path=$(mktemp -u "${TMPDIR:-/tmp}/cpu_steal.XXXXXX")
mkfifo "$nap_path"
exec {nap}<>"$nap_path"
rm -f "$nap_path"
: >"$out"
while [ "$running" = 1 ]; do
	read -r -t 0.1 -u "$nap" _ || true
	read_cpu
	ms=$(((cpu[0] - prev) * 1000 / hz))
	mark=
	if [ "$ms" -ge 50 ]; then
		windows=$((windows + 1))
		mark=" !"
	fi
	now=$EPOCHREALTIME
	frac=${now#*.}
	printf '%(%H:%M:%S)T.%s steal %d ms in 100 ms%s\n' "${now%.*}" "${frac:0:3}" "$ms" "$mark" >>"$out"
	prev=${cpu[0]}
done
read_cpu
pct=$(awk -v s=$((cpu[0] - s0)) -v t=$((cpu[1] - t0)) 'BEGIN { printf "%.1f", (t > 0 ? 100 * s / t : 0) }')
use=$(awk -v u=$((cpu[2] - u0)) -v y=$((cpu[3] - y0)) -v i=$((cpu[4] - i0)) -v t=$((cpu[1] - t0)) \
	'BEGIN { if (t <= 0) t = 1; printf "user %.0f %%, system %.0f %%, idle %.0f %%", 100 * u / t, 100 * y / t, 100 * i / t }')
echo "# CPU steal during the run: $pct % of CPU time; $windows windows of 100 ms with >= 50 ms stolen; $use" >>"$out"
