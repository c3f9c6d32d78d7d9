#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A rank stopped and continued (SIGSTOP/SIGCONT: a suspended job, a debugger, the emulated
# cloud's stopped straggler) must not fail an operation: on Linux a blocking epoll_wait
# returns EINTR after SIGCONT even without a handler.  optireduce_bench checks its own
# results (exact: the known sum; bounded: within what was lost), so success means correct.
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
top_srcdir=${top_srcdir:-.}
bench=${top_builddir:-.}/bench/optireduce_bench
[ -x "$bench" ] || { echo "no $bench: skipping"; exit 77; }
command -v pgrep >/dev/null 2>&1 || { echo "no pgrep: skipping"; exit 77; }
tmp=$(mktemp -d) || exit 1
tag=stopped-$$
trap 'rm -rf "$tmp"' EXIT

# The test makes its own conditions: each mode runs the benchmark again (a fixed, short
# amount of work, results checked each time) until its ranks were stopped and continued at
# least $want times, however fast this machine finishes one run; at most $max runs.
want=5 max=20
for mode in exact bounded; do
	stops=0 runs=0
	while [ "$stops" -lt "$want" ] && [ "$runs" -lt "$max" ]; do
		runs=$((runs + 1))
		# The CSV path names this run, so that pgrep finds its ranks and no one else's.
		"$top_srcdir/test/run-mpi.sh" 2 "$bench" --mode "$mode" -m 64k:256k -i 30 -x 2 \
			--csv "$tmp/$tag-$mode-$runs.csv" >"$tmp/out" 2>&1 &
		run=$!
		while kill -0 "$run" 2>/dev/null; do
			# Rank processes only (not mpirun): their command line has the bench's path.
			pids=$(pgrep -f "optireduce_bench.*$tag-$mode-$runs\\.csv" | while read -r p; do
				[ "$(cat /proc/"$p"/comm 2>/dev/null)" = optireduce_benc ] && echo "$p"
			done)
			if [ -n "$pids" ]; then
				# shellcheck disable=SC2086 # one word per pid
				kill -STOP $pids 2>/dev/null && sleep 0.03
				# shellcheck disable=SC2086
				kill -CONT $pids 2>/dev/null && stops=$((stops + 1))
			fi
			sleep 0.05
		done
		wait "$run"
		rc=$?
		if [ "$rc" != 0 ]; then
			cat "$tmp/out"
			echo "FAIL: $mode mode exited $rc in run $runs after $stops stops"
			exit 1
		fi
	done
	[ "$stops" -ge "$want" ] ||
		{ echo "FAIL: $mode: only $stops stops in $runs runs, the test did not test"; exit 1; }
	echo "$mode: passed through $stops stop/continue cycles in $runs runs"
done
echo "PASS"
