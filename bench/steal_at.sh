#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# steal_at.sh DIR [IMPL [SIZE]] - the hypervisor's steal during each timed call of a
# run_cluster.sh run: joins DIR/latency.csv (optireduce_bench's start_s column) with
# DIR/steal.txt (cpu_steal.sh's 100 ms windows) and prints, per call,
#   impl size iter latency_ms steal_ms
# where steal_ms is the CPU time stolen (summed over CPUs) in the windows the call
# overlapped, prorated.  Then one summary line per implementation: the calls slower than
# 1.3x their median, and how much steal they saw against the others; and one line with the
# nearest-rank P50 and P99 (as optireduce_bench's) of the calls that saw under 0.5 ms of
# steal.  The question it answers: is a slow stretch the weather (steal) or ours?
set -u
dir=${1:?usage: steal_at.sh DIR [IMPL [SIZE]]}
impl=${2:-}
size=${3:-}
csv=$dir/latency.csv steal=$dir/steal.txt
[ -r "$csv" ] && [ -r "$steal" ] || { echo "steal_at.sh: need $csv and $steal" >&2; exit 1; }
head -n 1 "$csv" | grep -q ',start_s' || { echo "steal_at.sh: $csv has no start_s column" >&2; exit 1; }
awk -v want_impl="$impl" -v want_size="$size" '
	FILENAME == ARGV[1] {
		if ($2 == "steal") { split($1, t, ":"); w[n] = t[1] * 3600 + t[2] * 60 + t[3]; ms[n] = $3; n++ }
		next
	}
	FNR == 1 { FS = ","; $0 = $0; next }
	(want_impl == "" || $1 == want_impl) && (want_size == "" || $2 == want_size) {
		s = $5 - 86400 * int($5 / 86400); e = s + $4 / 1e6; st = 0
		for (i = 1; i < n; i++) {
			lo = w[i - 1]; hi = w[i]
			if (hi <= s || lo >= e) continue
			a = (s > lo ? s : lo); b = (e < hi ? e : hi)
			st += ms[i] * (b - a) / (hi - lo)
		}
		k = $1 " " $2; cnt[k]++; lat[k, cnt[k]] = $4 / 1000; sl[k, cnt[k]] = st
		printf "%s %s %s %.3f %.1f\n", $1, $2, $3, $4 / 1000, st
	}
	function rank(p, n,  r) { r = int(p * n / 100); if (r < p * n / 100) r++; return r < 1 ? 1 : (r > n ? n : r) }
	# x into the sorted a[1..n] (insertion sort: mawk has no asort); returns the new n
	function insert_sorted(a, n, x,  j) {
		for (j = n; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]
		a[j + 1] = x
		return n + 1
	}
	END {
		for (k in cnt) {
			m = cnt[k]
			for (i = 1; i <= m; i++) insert_sorted(v, i - 1, lat[k, i])
			med = v[int((m + 1) / 2)]
			ns = 0; nf = 0; ss = 0; sf = 0; bs = 0
			for (i = 1; i <= m; i++) {
				if (lat[k, i] > 1.3 * med) { ns++; ss += sl[k, i]; if (sl[k, i] >= 10) bs++ }
				else { nf++; sf += sl[k, i] }
			}
			printf "# %s: median %.3f ms; %d calls above 1.3x (mean steal %.1f ms, %d with >= 10 ms), %d others (mean steal %.1f ms)\n",
			       k, med, ns, ns ? ss / ns : 0, bs, nf, nf ? sf / nf : 0
			q = 0
			for (i = 1; i <= m; i++) if (sl[k, i] < 0.5) q = insert_sorted(c, q, lat[k, i])
			if (q)
				printf "# %s: %d of %d calls saw under 0.5 ms of steal: P50 %.3f ms, P99 %.3f ms (nearest rank)\n",
				       k, q, m, c[rank(50, q)], c[rank(99, q)]
			delete v; delete c
		}
	}' "$steal" "$csv"
