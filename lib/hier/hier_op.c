/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An operation on a communicator whose ranks share hosts (docs/design.md, "Ranks that
 * share a host"), chunk by chunk through the host's segment:
 *
 *   copy in   each local rank copies its chunk into its slot, then says so (arrived);
 *   reduce    once all arrived, each reduces its slice of every slot into the result
 *             area, then says so (reduced): the local sum is exact, in the user's dtype;
 *   network   the leader, once all reduced, runs the network allreduce on the result
 *             area over the leaders' communicator, then publishes it (done);
 *   share     every local rank copies the result out.
 *
 * A rank says it arrived at chunk g + 1 only after copying chunk g out, and reduces only
 * once everyone arrived, so the result area is never overwritten while read; it copies
 * into its slot only after chunk g was reduced everywhere (done, or all reduced on one
 * host), so no slot is overwritten while read.  Operations run one at a time in start
 * order, a state machine that optireduce_test advances without blocking.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/core/internal.h"
#include "lib/kernels/reduce.h"

enum hop_step { HOP_COPY_IN, HOP_REDUCE, HOP_NETWORK, HOP_SHARE };

struct or_hier_op {
	enum hop_step step;
	enum optireduce_op op; /* AVG reduces as SUM, divided once at the end */
	size_t es;
	size_t off; /* elements finished */
	size_t n;   /* elements of the current chunk */
	uint64_t g; /* the current chunk's number */
	optireduce_req_t *net_req;
};

static const void *source(const optireduce_req_t *r)
{
	return r->sbuf == OPTIREDUCE_IN_PLACE ? r->rbuf : r->sbuf;
}

static int copy_in(struct or_hier *h, optireduce_req_t *r, struct or_hier_op *o)
{
	size_t per = h->shm.chunk / o->es;

	o->n = r->count - o->off < per ? r->count - o->off : per;
	o->g = ++h->next_chunk;
	memcpy(or_shm_slot(&h->shm, h->local), (const char *)source(r) + o->off * o->es,
	       o->n * o->es);
	or_shm_store(&h->shm.arrived[h->local], o->g);
	o->step = HOP_REDUCE;
	return 1;
}

/* This rank's slice of every slot, reduced into the result area in slot order. */
static int reduce_slice(struct or_hier *h, optireduce_req_t *r, struct or_hier_op *o)
{
	size_t lo = o->n * h->local / h->nlocal, hi = o->n * (h->local + 1) / h->nlocal;
	char *dst = h->shm.result + lo * o->es;
	int ret = 0;

	if (!or_shm_all_reached(h->shm.arrived, h->nlocal, o->g))
		return 0;
	if (hi > lo) {
		memcpy(dst, or_shm_slot(&h->shm, 0) + lo * o->es, (hi - lo) * o->es);
		for (uint32_t j = 1; j < h->nlocal && !ret; j++)
			ret = or_reduce(dst, or_shm_slot(&h->shm, j) + lo * o->es, hi - lo,
			                r->dtype, o->op);
	}
	if (ret)
		return ret;
	or_shm_store(&h->shm.reduced[h->local], o->g);
	o->step = HOP_NETWORK;
	return 1;
}

/* A remote host's contribution stands for its ranks: count contributions in ranks. */
static void add_net_status(struct or_hier *h, optireduce_req_t *r,
                           const struct optireduce_status *st)
{
	struct optireduce_status *s = &r->status;
	double per = h->nhosts > 1 ? (double)(h->comm->size - h->nlocal) / (h->nhosts - 1) : 1;

	s->mode = st->mode;
	s->algorithm = st->algorithm;
	s->flags |= st->flags;
	for (int p = 0; p < OPTIREDUCE_STATUS_PHASES; p++) {
		s->elements_expected[p] += st->elements_expected[p];
		s->elements_received[p] += st->elements_received[p];
		s->deadline_us[p] = st->deadline_us[p];
		s->phase_end[p] = st->phase_end[p];
	}
	s->contributions_expected += (uint64_t)((double)st->contributions_expected * per + 0.5);
	s->contributions_missing += (uint64_t)((double)st->contributions_missing * per + 0.5);
	s->blocks_fallback += st->blocks_fallback;
	s->packets_sent += st->packets_sent;
	s->packets_received += st->packets_received;
	s->packets_invalid += st->packets_invalid;
	s->packets_stale += st->packets_stale;
	s->packets_duplicate += st->packets_duplicate;
	s->packets_parked += st->packets_parked;
	s->repair_requested += st->repair_requested;
	s->repair_resent += st->repair_resent;
	s->repair_recovered += st->repair_recovered;
	s->packets_send_failed += st->packets_send_failed;
	s->packets_recv_failed += st->packets_recv_failed;
	s->packets_stranger += st->packets_stranger;
	s->bcast_multicast += st->bcast_multicast;
	s->bcast_unicast += st->bcast_unicast;
	s->consistent_us += st->consistent_us;
	s->consistent_bytes += st->consistent_bytes;
	s->consistent_packets_replaced += st->consistent_packets_replaced;
	s->consistent_packets_discarded += st->consistent_packets_discarded;
	s->consistent_blocks_zeroed += st->consistent_blocks_zeroed;
	s->consistent_asks += st->consistent_asks;
	s->consistent_packets_fetched += st->consistent_packets_fetched;
	s->packets_kernel_dropped += st->packets_kernel_dropped;
}

/* The leader: the result area through the leaders' communicator, then published. */
static int lead_network(struct or_hier *h, optireduce_req_t *r, struct or_hier_op *o)
{
	struct optireduce_status st;
	int ret;

	if (!o->net_req) {
		if (!or_shm_all_reached(h->shm.reduced, h->nlocal, o->g))
			return 0;
		/* A reduce-scatter is exact: its network step too. */
		ret = or_check_args(h->net, OPTIREDUCE_IN_PLACE, h->shm.result, o->n, o->n,
		                    r->dtype, o->op);
		if (!ret)
			ret = or_op_post(h->net, OPTIREDUCE_IN_PLACE, h->shm.result, o->n, r->dtype,
			                 o->op, OR_OP_NOMEASURE | (r->scatter ? OR_OP_EXACT : 0),
			                 &o->net_req);
		if (ret) {
			o->net_req = NULL;
			goto publish;
		}
	}
	ret = or_op_test(o->net_req);
	if (ret == OPTIREDUCE_INPROGRESS)
		return 0;
	ret = or_op_wait(o->net_req, &st);
	o->net_req = NULL;
	h->shm.hdr->net = st;
publish:
	or_shm_store(&h->shm.hdr->error, (uint64_t)(int64_t)ret);
	or_shm_store(&h->shm.hdr->done, o->g);
	return ret ? ret : 1;
}

static int network(struct or_hier *h, optireduce_req_t *r, struct or_hier_op *o)
{
	int ret;

	if (h->nhosts == 1) {
		if (!or_shm_all_reached(h->shm.reduced, h->nlocal, o->g))
			return 0;
		o->step = HOP_SHARE;
		return 1;
	}
	if (h->net) {
		ret = lead_network(h, r, o);
		if (ret <= 0)
			return ret;
	} else {
		if (or_shm_load(&h->shm.hdr->done) < o->g)
			return 0;
		ret = (int)(int64_t)or_shm_load(&h->shm.hdr->error);
		if (ret)
			return ret;
	}
	/* Read before this rank arrives at the next chunk, after which it may change. */
	add_net_status(h, r, &h->shm.hdr->net);
	o->step = HOP_SHARE;
	return 1;
}

static int share(struct or_hier *h, optireduce_req_t *r, struct or_hier_op *o)
{
	memcpy((char *)(r->work ? r->work : r->rbuf) + o->off * o->es, h->shm.result, o->n * o->es);
	o->off += o->n;
	o->step = HOP_COPY_IN;
	return 1;
}

/* Runs the head operation as far as it goes: 1 moved, 0 blocked, negative error. */
static int step(struct or_hier *h, optireduce_req_t *r)
{
	struct or_hier_op *o = r->hop;

	switch (o->step) {
	case HOP_COPY_IN:
		return copy_in(h, r, o);
	case HOP_REDUCE:
		return reduce_slice(h, r, o);
	case HOP_NETWORK:
		return network(h, r, o);
	case HOP_SHARE:
		return share(h, r, o);
	}
	return -OPTIREDUCE_EINVAL;
}

/* A reduce-scatter's block, from the whole sum in r->work to the application's buffer. */
static void scatter_out(struct or_hier *h, optireduce_req_t *r, int ret)
{
	if (ret == 0)
		memcpy(r->rbuf,
		       (const char *)r->work + (size_t)h->comm->rank * r->recvcount * r->hop->es,
		       r->recvcount * r->hop->es);
	free(r->work);
	r->work = NULL;
}

static void finish(struct or_hier *h, optireduce_req_t *r, int ret)
{
	if (r->scatter)
		scatter_out(h, r, ret);
	if (ret == 0 && r->coll.op == OPTIREDUCE_AVG && r->recvcount)
		ret = or_reduce_divide(r->rbuf, r->recvcount, r->dtype, h->comm->size);
	r->error = r->status.error = ret;
	r->status.elapsed_us = or_now_us() - r->t_start_us;
	r->state = OR_REQ_DONE;
	h->head = r->next;
	if (!h->head)
		h->tail = NULL;
	if (ret) {
		/* The segment's counters no longer agree between local ranks. */
		h->comm->failed = 1;
		or_log(OR_LOG_WARN, "operation %llu failed: %s", (unsigned long long)r->coll.seq,
		       optireduce_strerror(ret));
	}
}

/* Moves the queue as far as it goes; *activity says whether anything moved. */
static void progress(struct or_hier *h, int *activity)
{
	*activity = 0;
	while (h->head) {
		optireduce_req_t *r = h->head;
		int ret = 0;

		if (h->comm->failed) {
			ret =
			    -OPTIREDUCE_EPEER; /* queued behind a failed operation: never starts */
		} else if (r->hop->step != HOP_COPY_IN || r->hop->off < r->count) {
			r->status.ops_in_flight =
			    1; /* started: one at a time through the segment */
			ret = step(h, r);
		} else
			ret = 0; /* every chunk shared back */
		if (ret > 0) {
			*activity = 1;
			r->t_last_progress_us = or_now_us();
			continue;
		}
		if (ret == 0 && (r->hop->step != HOP_COPY_IN || r->hop->off < r->count)) {
			double idle = or_now_us() - r->t_last_progress_us;
			if (idle <=
			    1e3 * (double)or_param_int(&h->comm->params, OR_P_PEER_TIMEOUT_MS))
				return;
			ret = -OPTIREDUCE_ETIMEDOUT;
		}
		finish(h, r, ret);
		*activity = 1;
	}
}

int or_hier_iallreduce(optireduce_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                       enum optireduce_dtype dtype, enum optireduce_op op, int scatter,
                       optireduce_req_t **req)
{
	struct or_hier *h = comm->hier;
	size_t es = optireduce_dtype_size(dtype);
	optireduce_req_t *r;
	int activity;

	r = calloc(1, sizeof(*r) + sizeof(struct or_hier_op));
	if (!r || or_handle_add(r)) {
		free(r);
		return -OPTIREDUCE_ENOMEM;
	}
	if (scatter && !(r->work = malloc(count * es + 1))) {
		or_handle_remove(r);
		free(r);
		return -OPTIREDUCE_ENOMEM;
	}
	r->magic = OR_MAGIC_REQ;
	r->hop = (struct or_hier_op *)(r + 1);
	r->hop->op = op == OPTIREDUCE_AVG ? OPTIREDUCE_SUM : op;
	r->hop->es = es;
	/* In place, a reduce-scatter's contribution is the whole of rbuf; the chunks are
	 * shared back into work, and rbuf gets the block at the end. */
	r->sbuf = scatter && sbuf == OPTIREDUCE_IN_PLACE ? rbuf : sbuf;
	r->rbuf = rbuf;
	r->count = count;
	r->dtype = dtype;
	r->scatter = scatter;
	r->recvcount = scatter ? count / comm->size : count;
	r->coll.comm = comm;
	r->coll.op = op;
	r->coll.seq = comm->next_seq++;
	r->state = OR_REQ_RUNNING;
	r->t_start_us = r->t_last_progress_us = or_now_us();
	r->status.mode = OPTIREDUCE_MODE_EXACT;
	r->status.algorithm = -1; /* shared memory only, unless a network step says otherwise */
	if (h->tail)
		h->tail->next = r;
	else
		h->head = r;
	h->tail = r;
	*req = r;
	progress(h, &activity);
	return 0;
}

int or_hier_test(optireduce_req_t *req)
{
	int activity;

	if (req->state != OR_REQ_DONE)
		progress(req->coll.comm->hier, &activity);
	if (req->state == OR_REQ_DONE)
		return req->error;
	return OPTIREDUCE_INPROGRESS;
}

/*
 * Waiting for local ranks yields the CPU on every idle pass (ranks may outnumber cores);
 * after 2 ms idle, a leader sleeps on its network endpoint and the others 50 us at a
 * time: they wait for a network step.
 */
static void idle_wait(struct or_hier *h, double idle_us)
{
	struct timespec ts = {0, 50 * 1000};

	if (idle_us < 2000) {
		sched_yield();
		return;
	}
	if (h->net)
		or_comm_wait_activity(h->net, 1);
	else
		nanosleep(&ts, NULL);
}

/* For optireduce_comm_progress (lib/core/progress_api.c): the queue's pass and the idle wait. */
void or_hier_progress(struct or_hier *h, int *activity)
{
	progress(h, activity);
}

void or_hier_idle_wait(struct or_hier *h, double idle_us)
{
	idle_wait(h, idle_us);
}

int or_hier_wait(optireduce_req_t *req, struct optireduce_status *status)
{
	struct or_hier *h = req->coll.comm->hier;
	double idle_since = or_now_us();
	int ret;

	while (req->state != OR_REQ_DONE) {
		int activity;

		progress(h, &activity);
		if (activity)
			idle_since = or_now_us();
		else
			idle_wait(h, or_now_us() - idle_since);
	}
	ret = req->error;
	if (status)
		*status = req->status;
	or_handle_remove(req);
	req->magic = OR_MAGIC_DEAD;
	free(req);
	return ret;
}
