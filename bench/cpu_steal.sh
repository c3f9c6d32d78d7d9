#!/usr/bin/env bash
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
set -u
out=${1:?usage: cpu_steal.sh OUT}
hz=$(getconf CLK_TCK)
# steal, total, then user+nice, system+irq+softirq, idle+iowait: a run with little idle
# time measured the CPUs, not the emulated links.
read_cpu() { awk '/^cpu /{ t = 0; for (i = 2; i <= 9; i++) t += $i; print $9, t, $2 + $3, $4 + $7 + $8, $5 + $6 }' /proc/stat; }
read -r s0 t0 u0 y0 i0 < <(read_cpu)
prev=$s0 windows=0 running=1
trap 'running=0' TERM INT
: >"$out"
while [ "$running" = 1 ]; do
	sleep 0.1 || true
	read -r s _ < <(read_cpu)
	ms=$(((s - prev) * 1000 / hz))
	mark=
	if [ "$ms" -ge 50 ]; then
		windows=$((windows + 1))
		mark=" !"
	fi
	echo "$(date -u +%H:%M:%S.%N | cut -c1-12) steal $ms ms in 100 ms$mark" >>"$out"
	prev=$s
done
read -r s t u y i < <(read_cpu)
pct=$(awk -v s=$((s - s0)) -v t=$((t - t0)) 'BEGIN { printf "%.1f", (t > 0 ? 100 * s / t : 0) }')
use=$(awk -v u=$((u - u0)) -v y=$((y - y0)) -v i=$((i - i0)) -v t=$((t - t0)) \
	'BEGIN { if (t <= 0) t = 1; printf "user %.0f %%, system %.0f %%, idle %.0f %%", 100 * u / t, 100 * y / t, 100 * i / t }')
echo "# CPU steal during the run: $pct % of CPU time; $windows windows of 100 ms with >= 50 ms stolen; $use" >>"$out"
