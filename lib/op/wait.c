/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Testing and waiting for an operation of the engine (op.h), and how long a waiter spins
 * before it sleeps in the kernel (docs/design.md, "Operations in flight").
 */
#include <sched.h>

#include "lib/core/internal.h"

double or_comm_spin_us(const optireduce_comm_t *comm)
{
	const optireduce_req_t *head = comm->head;
	const struct or_params *p = &comm->params;
	uint64_t small = (uint64_t)or_param_int(p, OR_P_SPIN_SMALL_BYTES);

	if (head && head->coll.bounded)
		return (double)or_param_int(p, OR_P_BOUNDED_SPIN_US);
	/* Small operations wait a round trip or two: spinning through it beats a wake-up. */
	if (head && small && (uint64_t)(head->coll.count * head->coll.esize) <= small)
		return (double)or_param_int(p, OR_P_SPIN_SMALL_US);
	return (double)or_param_int(p, OR_P_SPIN_US);
}

/* Whether req is done: itself, or every piece of it (pieces.c). */
static int done(optireduce_req_t *req)
{
	return req->piece ? or_pieces_settle(req) : req->state == OR_REQ_DONE;
}

int or_op_test(optireduce_req_t *req)
{
	int activity, ret;

	if (done(req))
		return req->error ? req->error : 0;
	ret = or_comm_progress(req->coll.comm, &activity);
	if (ret < 0)
		or_comm_fail(req->coll.comm, ret);
	if (done(req))
		return req->error ? req->error : 0;
	return OPTIREDUCE_INPROGRESS;
}

int or_op_wait(optireduce_req_t *req, struct optireduce_status *status)
{
	optireduce_comm_t *comm = req->coll.comm;
	double idle_since = or_now_us();
	int ret;

	while (!done(req)) {
		int activity;

		ret = or_comm_progress(comm, &activity);
		if (ret < 0) {
			or_comm_fail(comm, ret);
			break;
		}
		if (activity) {
			idle_since = or_now_us();
			continue;
		}
		/*
		 * Spin briefly for latency, then let the kernel wake us.  Ranks may outnumber
		 * cores, and then the peer we wait for may need this very core: yield it on
		 * every idle pass (a no-op when nothing else is runnable).
		 */
		if (or_now_us() - idle_since > or_comm_spin_us(comm)) {
			ret = or_comm_wait_activity(comm, 1);
			if (ret < 0 && ret != -OPTIREDUCE_EAGAIN) {
				or_comm_fail(comm, ret);
				break;
			}
		} else {
			sched_yield();
		}
	}
	ret = req->error;
	if (status)
		*status = req->status;
	or_req_free(req);
	return ret;
}
