#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# cut_where.sh DIR [IMPL] - where a bounded run's cut data fell: reads DIR/latency.csv of a
# run_cluster.sh run made with --sync-start (optireduce_bench's late_us, deadline_us,
# lost_phase1, lost_phase2 and elements_expected columns) and prints, per implementation
# (optireduce, and optireduce-b of an A/B run; IMPL picks one):
#   - the share of elements cut in each phase, and the calls that cut any;
#   - the same for the calls a rank entered late, by more than half the first phase's
#     deadline after the synchronised start, and for the others.
# The question it answers: is a cut the host's scheduling (a rank that reached the call
# too late for its peers' deadline) or the network and the repair of what it lost?
set -u
dir=${1:?usage: cut_where.sh DIR [IMPL]}
csv=$dir/latency.csv
[ -r "$csv" ] || { echo "cut_where.sh: need $csv" >&2; exit 1; }
head -n 1 "$csv" | grep -q ',late_us,deadline_us,lost_phase1,lost_phase2,elements_expected' ||
	{ echo "cut_where.sh: $csv has no per-call cut columns (an older optireduce_bench)" >&2; exit 1; }
awk -F, -v want="${2:-}" '
	NR == 1 || $1 == "mpi" || (want != "" && $1 != want) { next }
	{
		late = $6 > $7 / 2 ? "late" : "on time"
		for (k = 0; k < 3; k++) {
			g = k == 0 ? "all" : (k == 1 ? late : "")
			if (g == "") continue
			key = $1 SUBSEP g
			n[key]++; p1[key] += $8; p2[key] += $9; ex[key] += $10; cut[key] += ($8 + $9 > 0)
		}
		impls[$1] = 1
	}
	function pct(a, b) { return b > 0 ? 100 * a / b : 0 }
	END {
		for (i in impls) {
			printf "%s\n", i
			split("all|late|on time", gs, "|")
			for (j = 1; j <= 3; j++) {
				key = i SUBSEP gs[j]
				if (!n[key]) { printf "  %-8s no calls\n", gs[j]; continue }
				printf "  %-8s %4d calls: cut %.4f %% (phase 1 %.4f %%, phase 2 %.4f %%), %d calls cut any\n",
				       gs[j], n[key], pct(p1[key] + p2[key], ex[key]), pct(p1[key], ex[key]),
				       pct(p2[key], ex[key]), cut[key]
			}
		}
	}' "$csv"
