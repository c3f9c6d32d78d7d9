#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# With progress_wait=1 an idle communicator must cost nothing: between operations its
# progress thread sleeps in the kernel until a datagram arrives, instead of waking every
# few milliseconds (polling every 200 us, it slowed MPI_Allreduce in the same processes by
# 12 % at the median).
# Two ranks wait 1 s outside the library before each of 4 bounded operations; each rank's
# thread logs its wake-ups when the communicator is destroyed.  A thread that polled at
# progress_idle_us (2 ms) would wake about 2,000 times; one that sleeps in poll() wakes
# for the operations' datagrams and at most 10 times a second besides.
# One host: every rank on the network, as on a host of its own (hierarchy=0).
export OPTIREDUCE_HIERARCHY=0
top_srcdir=${top_srcdir:-.}
bench=${top_builddir:-.}/bench/optireduce_bench
[ -x "$bench" ] || { echo "no $bench: skipping"; exit 77; }
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT

# run ARGS...: the benchmark with debug logging; sets $max, the most wake-ups of a thread.
run() {
	OPTIREDUCE_LOG_LEVEL=3 "$top_srcdir/test/run-mpi.sh" 2 "$bench" --mode bounded "$@" \
		>"$out" 2>&1
	rc=$?
	[ "$rc" = 77 ] && exit 77
	if [ "$rc" != 0 ]; then
		cat "$out"
		echo "FAIL: the benchmark exited $rc"
		exit 1
	fi
	lines=$(grep -c "progress thread: .* wakeups" "$out")
	[ "$lines" -ge 2 ] || { cat "$out"; echo "FAIL: $lines ranks reported their thread's wake-ups, want 2"; exit 1; }
	grep "progress thread: .* wakeups" "$out"
	max=$(grep "progress thread: .* wakeups" "$out" | sed 's/.* in \([0-9]*\) wakeups.*/\1/' | sort -n | tail -n 1)
}

idle=(-m 4k:4k -i 4 -x 0 --sync-start 1000)
run "${idle[@]}" --param progress_wait=1
if grep -q "progress thread: polls" "$out"; then
	echo "the provider has no wait descriptor: the thread polls; skipping"
	exit 77
fi
# 4 s idle at most 10 wake-ups a second: 40; the operations' datagrams add a few (4 KiB:
# a handful per operation), and the timed-out polls of warm-up and set-up a few more.
if [ "$max" -gt 200 ]; then
	echo "FAIL: a progress thread woke $max times in about 4 s idle (want at most 200)"
	exit 1
fi
echo "sleeping in poll(): at most $max wake-ups in about 4 s idle"
# The count must be able to fail: the polling thread (progress_wait=0, 2 ms sleeps).
run "${idle[@]}" --param progress_wait=0
if [ "$max" -le 500 ]; then
	echo "FAIL: with progress_wait=0 a thread woke only $max times: the count does not see polling"
	exit 1
fi
echo "polling (progress_wait=0): $max wake-ups"
# Busy: operations back to back, datagrams arriving while the application holds the lock
# (encoding, decoding).  fi_trywait then refuses, and a thread that retried at once spun
# (15x the polling thread's wake-ups); it must back off like the polling thread.  A thread
# that sleeps in poll() also wakes for each burst of datagrams, which the polling one
# reaps together every 2 ms: under the sanitizer, on two busy CPUs, it woke 3.2x as often
# (1499 against 471) without spinning, so the bound is 4x.
busy=(-m 1m:1m -i 20 -x 2)
run "${busy[@]}" --param progress_wait=0
polled=$max
run "${busy[@]}" --param progress_wait=1
echo "busy: $max wake-ups sleeping in poll(), $polled polling"
if [ "$max" -gt $((4 * polled + 200)) ]; then
	echo "FAIL: the thread that sleeps in poll() woke $max times, the polling one $polled: it spins"
	exit 1
fi
echo "PASS"
