/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * optireduce_bench_start.c - how each iteration starts: the untimed barrier, the
 * synchronised start after it, the straggler's sleep (--delay), and the process's CPU clock
 * the calls are charged with.
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "optireduce_bench.h"

/*
 * Whether this rank sleeps before iteration it: a hash of the iteration, so every
 * implementation and size sees the straggler at the same iterations, warm-up included
 * (a straggler does not wait for calibration to end).
 */
int ob_straggles(const struct options *o, long it)
{
	uint64_t x = (uint64_t)it * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;

	if (ob_rank != o->delay_rank || o->delay_us <= 0 || o->delay_prob <= 0)
		return 0;
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (double)(x >> 11) * 0x1p-53 < o->delay_prob;
}

/*
 * The untimed barrier between iterations, sleeping between tests.  MPI_Barrier polls: with
 * ranks sharing cores (the emulated cloud runs 4 hosts on 2 CPUs), a rank that finished
 * first spun in it for 194 ms on one CPU while the last rank, still decoding, waited that
 * long for the other (perf sched); on a real cluster every rank has its own host.  Both
 * implementations are timed after it alike.
 *
 * With a synchronised start the moment a rank leaves the barrier does not matter, so its
 * sleeps double up to 1 ms: three finished ranks testing every 100 us are 30,000 wake-ups
 * a second on the CPUs the last rank, still in the timed call, needs.  Without it they
 * stay at 100 us, since ranks leave the barrier up to one sleep apart and start timing
 * at once.
 */
void ob_sleeping_barrier(long sync_ms)
{
	MPI_Request req;
	long sleep_us = 100, max_us = sync_ms > 0 ? 1000 : 100;
	int done = 0;

	if (MPI_Ibarrier(MPI_COMM_WORLD, &req) != MPI_SUCCESS)
		ob_die("MPI_Ibarrier failed");
	for (;;) {
		struct timespec ts = {0, sleep_us * 1000};
		if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			ob_die("MPI_Test failed");
		if (done)
			break;
		nanosleep(&ts, NULL);
		if (sleep_us < max_us)
			sleep_us = sleep_us * 2 < max_us ? sleep_us * 2 : max_us;
	}
}

/* Waits for rank 0's start time, ms ahead of its clock, stored in *start_s; returns 1 if
 * it had passed. */
int ob_sync_start(long ms, double *start_s)
{
	struct timespec now, at;
	int64_t start_ns = 0;

	if (ob_rank == 0) {
		clock_gettime(CLOCK_REALTIME, &now);
		start_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec + (int64_t)ms * 1000000;
	}
	MPI_Bcast(&start_ns, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
	at.tv_sec = (time_t)(start_ns / 1000000000);
	at.tv_nsec = (long)(start_ns % 1000000000);
	*start_s = (double)at.tv_sec + 1e-9 * (double)at.tv_nsec;
	clock_gettime(CLOCK_REALTIME, &now);
	if ((int64_t)now.tv_sec * 1000000000 + now.tv_nsec > start_ns)
		return 1;
	while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &at, NULL) == EINTR)
		;
	return 0;
}

/* CPU time of the whole process (a progress thread's included): what a call costs the
 * application's other work on a host whose CPUs it shares. */
double ob_process_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
