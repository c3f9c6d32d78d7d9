/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * optireduce_comm_progress: the whole communicator progressed from one call, for callers
 * with several operations in flight that complete in any order (a thread serving many
 * requests, a language binding).  It waits like optireduce_wait when nothing moves: a
 * short spin, then the kernel (docs/design.md, "Operations in flight"); how long any
 * waiter spins is the engine's (or_comm_spin_us, lib/op/wait.c).  optireduce_comm_wake (wake.c) ends
 * the call early from another thread: the caller has new work to start.
 */
#include <sched.h>

#include "lib/core/internal.h"
#include "lib/op/wake.h"

/* Operations not yet completed: the running ones and those queued behind them (on a
 * communicator with hier, in its own queue). */
static unsigned pending_ops(const optireduce_comm_t *comm)
{
	unsigned n = 0;

	for (const optireduce_req_t *r = comm->hier ? comm->hier->head : comm->head; r; r = r->next)
		n++;
	return n;
}

/* One pass: the communicator's channels, or its hier queue (which fails its operations
 * itself). */
static int pass(optireduce_comm_t *comm, int *activity)
{
	if (comm->hier) {
		or_hier_progress(comm->hier, activity);
		return 0;
	}
	return or_comm_progress(comm, activity);
}

/* Nothing moved: yield the CPU during the spin time, then sleep up to 1 ms in the kernel
 * (the caller's deadline may pass by less than that: no spinning until it comes), or less
 * if optireduce_comm_wake is called meanwhile. */
static int idle_wait(optireduce_comm_t *comm, double idle_since)
{
	int ret;

	if (comm->hier) {
		or_hier_idle_wait(comm->hier, or_now_us() - idle_since);
		return 0;
	}
	if (or_now_us() - idle_since <= or_comm_spin_us(comm)) {
		sched_yield();
		return 0;
	}
	ret = or_comm_wait_wakeable(comm, 1);
	return ret == -OPTIREDUCE_EAGAIN ? 0 : ret;
}

int optireduce_comm_progress(optireduce_comm_t *comm, int timeout_ms)
{
	double start, deadline, idle_since;
	unsigned before, left;

	if (!or_comm_valid(comm))
		return -OPTIREDUCE_EBADHANDLE;
	if (timeout_ms < 0)
		return -OPTIREDUCE_EINVAL;
	before = left = pending_ops(comm);
	start = idle_since = or_now_us();
	deadline = start + 1e3 * (double)timeout_ms;
	while (left == before && before) {
		int activity, ret = pass(comm, &activity);

		/* A failure fails every operation: they completed, their status says why. */
		if (ret < 0)
			or_comm_fail(comm, ret);
		left = pending_ops(comm);
		/* Woken: the caller has work to hand over, after one pass at least. */
		if (left < before || or_now_us() >= deadline || or_wake_take(comm->wake))
			break;
		if (activity) {
			idle_since = or_now_us();
			continue;
		}
		ret = idle_wait(comm, idle_since);
		if (ret < 0) {
			or_comm_fail(comm, ret);
			left = 0;
		}
	}
	return (int)(before - left);
}
