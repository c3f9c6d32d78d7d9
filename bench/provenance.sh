# SPDX-License-Identifier: BSD-3-Clause
# provenance.sh - sourced by run_cluster.sh, run_local.sh and compare.sh: provenance_lines
# prints the "# machine:" and "# source:" lines of a results directory's command.txt, which
# bench/perf_table.sh puts in the header of every table it makes.
#   machine: CPU model, CPU count, kernel
#   source:  the commit of the tree this script sits in ("+changes" when it has
#            uncommitted ones); with --bench from another build, say which in the table
provenance_lines() {
	local here model commit
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
	echo "# machine: ${model:-unknown CPU}, $(nproc) CPUs, kernel $(uname -r)"
	commit=$(git -C "$here" rev-parse --short=7 HEAD 2>/dev/null) || commit=unknown
	if [ "$commit" != unknown ] && ! git -C "$here" diff --quiet HEAD -- 2>/dev/null; then
		commit="$commit+changes"
	fi
	echo "# source: $commit"
}
