/*
 * slicewrap NS PROGRAM [ARGS...] - session 13 diagnostic: ask the scheduler for an EEVDF
 * slice of NS nanoseconds (sched_setattr with sched_runtime for SCHED_OTHER, Linux 6.12+;
 * 0 leaves the default), then exec PROGRAM, whose threads inherit it.  Not part of the
 * library: a library has no business changing its application's scheduling.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/syscall.h>
struct sa {
	uint32_t size;
	uint32_t policy;
	uint64_t flags;
	int32_t nice;
	uint32_t prio;
	uint64_t runtime, deadline, period;
	uint32_t umin, umax;
};
int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	struct sa a = {0};
	a.size = sizeof a;
	a.policy = 0;
	a.runtime = strtoull(argv[1], 0, 10);
	if (a.runtime && syscall(SYS_sched_setattr, 0, &a, 0)) {
		perror("sched_setattr");
		return 1;
	}
	struct sa g = {0};
	syscall(SYS_sched_getattr, 0, &g, sizeof g, 0);
	if (getenv("SLICE_VERBOSE"))
		fprintf(stderr, "slice %llu\n", (unsigned long long)g.runtime);
	execvp(argv[2], argv + 2);
	perror("exec");
	return 1;
}
