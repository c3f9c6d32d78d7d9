/* SPDX-License-Identifier: BSD-3-Clause */
/* The clocks every layer reads: wall time and this thread's CPU time, in microseconds. */
#include <time.h>

#include "internal.h"

double or_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

double or_thread_cpu_us(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}
