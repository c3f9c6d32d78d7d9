/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The request engine (op.h): argument checks, the per-communicator queue, posting and
 * progress; testing and waiting are in wait.c.  Every rank starts a communicator's operations in
 * the same order, up to max_inflight at once, and each finishes when its own data is in, so tags
 * and sequence numbers agree everywhere (docs/design.md, "Operations in flight").
 */
#include <stdlib.h>
#include <string.h>

#include "algorithm.h"
#include "lib/core/internal.h"
#include "lib/kernels/reduce.h"

int or_check_args(optireduce_comm_t *comm, const void *sbuf, void *rbuf, size_t scount,
                  size_t rcount, enum optireduce_dtype dtype, enum optireduce_op op)
{
	size_t es;

	if (!or_comm_valid(comm))
		return -OPTIREDUCE_EBADHANDLE;
	if ((unsigned)dtype >= OPTIREDUCE_DTYPE_COUNT)
		return -OPTIREDUCE_EDTYPE;
	if ((unsigned)op >= OPTIREDUCE_OP_COUNT)
		return -OPTIREDUCE_EOP;
	es = optireduce_dtype_size(dtype);
	if (scount > SIZE_MAX / es || scount * es > (size_t)INT64_MAX || rcount > scount)
		return -OPTIREDUCE_EOVERFLOW;
	if (scount > 0 && (!sbuf || !rbuf))
		return -OPTIREDUCE_EINVAL;
	/* sbuf == rbuf reads as in place; a partial overlap has no meaning. */
	if (rcount > 0 && sbuf != OPTIREDUCE_IN_PLACE && sbuf != rbuf &&
	    (const char *)sbuf < (const char *)rbuf + rcount * es &&
	    (const char *)rbuf < (const char *)sbuf + scount * es)
		return -OPTIREDUCE_EINVAL;
	if (comm->failed)
		return -OPTIREDUCE_EPEER;
	return 0;
}

/* Bounded mode serves only floating SUM and AVG: anything else would be wrong, not approximate. */
static int bounded_eligible(enum optireduce_dtype dtype, enum optireduce_op op)
{
	int fl = dtype == OPTIREDUCE_FLOAT16 || dtype == OPTIREDUCE_BFLOAT16 ||
	         dtype == OPTIREDUCE_FLOAT32 || dtype == OPTIREDUCE_FLOAT64;
	return fl && (op == OPTIREDUCE_SUM || op == OPTIREDUCE_AVG);
}

void or_req_free(optireduce_req_t *r)
{
	for (size_t i = 0; i < r->npieces; i++)
		or_req_free(r->piece[i]);
	free(r->piece);
	or_handle_remove(r);
	r->magic = OR_MAGIC_DEAD;
	free(r);
}

/* The algorithm's view of the operation: the application's buffer, as it gave it. */
static void view_exact(optireduce_req_t *r)
{
	struct or_coll *c = &r->coll;
	int in_place = r->sbuf == OPTIREDUCE_IN_PLACE;

	c->rbuf = r->rbuf;
	c->count = r->count;
	c->dtype = r->dtype;
	c->esize = optireduce_dtype_size(r->dtype);
	if (r->scatter) {
		/* In place, the block is reduced where it lies and moved to the start at the end:
		 * the start holds block 0, which is sent first. */
		c->src = in_place ? r->rbuf : r->sbuf;
		if (in_place)
			c->rbuf = (char *)r->rbuf + (size_t)c->rank * r->recvcount * c->esize;
	}
}

/*
 * A bounded algorithm works on the encoded contribution (lib/op/codec.h): whole Hadamard
 * blocks of float32 (float64 for float64) in the rotated domain.
 */
static int start_bounded(optireduce_comm_t *comm, optireduce_req_t *r)
{
	struct or_coll *c = &r->coll;
	struct or_codec *e = &r->codec;
	const void *src = r->sbuf == OPTIREDUCE_IN_PLACE ? r->rbuf : r->sbuf;
	int ret;

	r->times.start_us = or_now_us();
	e->seed = comm->id;
	e->seq = c->seq;
	e->hadamard = or_param_int(&comm->params, OR_P_HADAMARD) != 0;
	ret = or_codec_encode(e, &comm->codec_cache, src, r->count, r->dtype, c->size,
	                      (size_t)or_param_int(&comm->params, OR_P_HADAMARD_BLOCK));
	if (ret)
		return ret;
	r->times.encoded_us = or_now_us();
	c->rbuf = e->buf;
	c->count = e->count;
	c->dtype = e->dtype;
	c->esize = optireduce_dtype_size(e->dtype);
	return or_bounded_op_start(comm->bounded, c, (size_t)1 << e->log2_block,
	                           r->count * optireduce_dtype_size(r->dtype), &r->times);
}

static int req_start(optireduce_comm_t *comm, optireduce_req_t *r)
{
	struct or_coll *c = &r->coll;
	int ret;

	r->state = OR_REQ_RUNNING;
	r->status.ops_in_flight = ++comm->running;
	or_inject_delay(comm, c->seq);
	r->t_start_us = r->t_last_progress_us = or_now_us();
	if (c->bounded) {
		ret = start_bounded(comm, r);
		if (ret)
			return ret;
	} else {
		view_exact(r);
		if (!r->scatter && r->sbuf != OPTIREDUCE_IN_PLACE && r->sbuf != r->rbuf && r->count)
			memcpy(c->rbuf, r->sbuf, r->count * c->esize);
	}
	return r->alg->start(c);
}

/* The algorithm's result (c->rbuf: the encoded buffer or one of its own) decoded into the
 * application's buffer, then what the operation saw goes to the channel's controllers. */
static int finish_bounded(optireduce_comm_t *comm, optireduce_req_t *r)
{
	struct or_coll *c = &r->coll;
	int ret;

	r->times.decode_start_us = or_now_us();
	r->times.decode_start_cpu_us = OR_LOG_DEBUG <= or_log_level ? or_thread_cpu_us() : 0;
	ret = or_codec_decode(&r->codec, c->rbuf, r->rbuf, r->count, r->dtype);
	r->times.decoded_us = or_now_us();
	or_bounded_op_finish(comm->bounded, c, &r->times);
	return ret;
}

static void unlink_req(optireduce_comm_t *comm, optireduce_req_t *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		comm->head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		comm->tail = r->prev;
	r->next = r->prev = NULL;
}

/*
 * A failed operation's receives may still be posted, and its sends in flight, into memory its
 * cleanup frees and into the application's buffer: every transfer of the communicator is
 * given back first (one failure fails them all).  A transfer libfabric does not give back
 * within OR_QUIESCE_MS closes the exact endpoint (ofi.h, or_ofi_quiesce).
 */
static void quiesce(optireduce_comm_t *comm)
{
	int abandoned = or_ofi_quiesce(comm->rdm, OR_QUIESCE_MS);

	if (abandoned > 0)
		or_log(OR_LOG_INFO,
		       "%d transfers not given back within %d ms of a failure: exact endpoint "
		       "closed",
		       abandoned, OR_QUIESCE_MS);
}

static void req_finish(optireduce_comm_t *comm, optireduce_req_t *r, int ret)
{
	struct or_coll *c = &r->coll;

	if (ret < 0)
		quiesce(comm);
	if (c->bounded) {
		if (ret == 0)
			ret = finish_bounded(comm, r);
		else
			or_bounded_op_abort(comm->bounded, c);
		or_codec_release(&r->codec, &comm->codec_cache);
	}
	if (ret == 0 && r->scatter && !c->bounded && c->rbuf != r->rbuf)
		memmove(r->rbuf, c->rbuf, r->recvcount * c->esize);
	/* AVG reduces as SUM in either mode: the result is divided here, once. */
	if (ret == 0 && c->op == OPTIREDUCE_AVG && (r->scatter ? r->recvcount : r->count))
		ret = or_reduce_divide(r->rbuf, r->scatter ? r->recvcount : r->count, r->dtype,
		                       c->size);
	r->alg->cleanup(c);
	r->error = ret;
	r->status.error = ret;
	r->status.elapsed_us = or_now_us() - r->t_start_us;
	if (ret == 0)
		comm->record(comm, &r->trial, r->status.elapsed_us);
	r->state = OR_REQ_DONE;
	comm->running--;
	unlink_req(comm, r);
	if (ret) {
		comm->failed = 1;
		or_log(OR_LOG_WARN, "operation %llu failed: %s", (unsigned long long)c->seq,
		       optireduce_strerror(ret));
	}
}

void or_comm_lock(optireduce_comm_t *comm)
{
	if (comm->bounded)
		or_bounded_lock(comm->bounded);
}

void or_comm_unlock(optireduce_comm_t *comm)
{
	if (comm->bounded)
		or_bounded_unlock(comm->bounded);
}

/*
 * After a transport error, a timeout or a failed start nothing on this communicator can be
 * trusted again: every operation not yet completed fails with err.
 */
static void fail_all(optireduce_comm_t *comm, int err)
{
	or_comm_lock(comm);
	/* Bounded: the other ranks are told at once, not left to find the silence. */
	or_bounded_fail(comm->bounded, err);
	while (comm->head) {
		optireduce_req_t *r = comm->head;
		if (r->state == OR_REQ_QUEUED) {
			r->error = r->status.error = err;
			r->state = OR_REQ_DONE;
			unlink_req(comm, r);
		} else {
			req_finish(comm, r, err);
		}
	}
	comm->failed = 1;
	or_comm_unlock(comm);
}

/*
 * Whether the queued operation r may start: fewer than max_inflight run, and it stays within
 * OR_TAG_SEQ_SPAN of the oldest running one (the list's head) even when younger operations
 * finish first, so two operations alive anywhere never share an exact-channel tag (coll.h).
 */
static int may_start(const optireduce_comm_t *comm, const optireduce_req_t *r)
{
	if (comm->running >= (unsigned)or_param_int(&comm->params, OR_P_MAX_INFLIGHT))
		return 0;
	if (r->gate && r->gate->state != OR_REQ_DONE)
		return 0;
	return !comm->running || r->coll.seq - comm->head->coll.seq < OR_TAG_SEQ_SPAN;
}

/*
 * One pass over a running operation: 1 while it runs, 0 once it finished successfully, or a
 * negative code once it failed.  activity says whether anything moved on the communicator in
 * this pass; an operation that saw nothing move for peer_timeout_ms times out.
 */
static int progress_one(optireduce_comm_t *comm, optireduce_req_t *r, int *activity)
{
	int ret = r->alg->progress(&r->coll);
	double now = or_now_us();

	if (ret == OPTIREDUCE_INPROGRESS) {
		if (*activity)
			r->t_last_progress_us = now;
		if (now - r->t_last_progress_us <=
		    1e3 * (double)or_param_int(&comm->params, OR_P_PEER_TIMEOUT_MS))
			return 1;
		ret = -OPTIREDUCE_ETIMEDOUT;
	}
	req_finish(comm, r, ret);
	*activity = 1;
	return ret < 0 ? ret : 0;
}

/* Polls the channels, starts what may start and progresses every running operation, oldest
 * first.  A failed operation is returned at once: the caller fails the rest (fail_all). */
static int progress_locked(optireduce_comm_t *comm, int *activity)
{
	optireduce_req_t *r, *next;
	int ret;

	*activity = 0;
	ret = or_ofi_poll(comm->rdm, 256);
	if (ret > 0)
		*activity = 1;
	else if (ret < 0)
		return ret;
	if (comm->bounded) {
		ret = or_bounded_poll(comm->bounded);
		if (ret > 0)
			*activity = 1;
		else if (ret < 0)
			return ret;
	}
	for (r = comm->head; r; r = next) {
		next = r->next;
		if (r->state == OR_REQ_QUEUED) {
			/* Queued operations follow every running one, in start order. */
			if (!may_start(comm, r))
				break;
			ret = req_start(comm, r);
			*activity = 1;
			if (ret < 0) {
				req_finish(comm, r, ret);
				return ret;
			}
		}
		ret = progress_one(comm, r, activity);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* The bounded channel's progress thread stands aside while the core works on comm. */
int or_comm_progress(optireduce_comm_t *comm, int *activity)
{
	int ret;

	or_comm_lock(comm);
	ret = progress_locked(comm, activity);
	or_comm_unlock(comm);
	return ret;
}

int or_comm_wait_activity(optireduce_comm_t *comm, int timeout_ms)
{
	int ret;

	if (!comm->bounded)
		return or_ofi_wait(comm->rdm, timeout_ms);
	or_comm_lock(comm);
	ret = or_bounded_wait(comm->bounded, comm->rdm, timeout_ms);
	or_comm_unlock(comm);
	return ret;
}

/* The queue's new request, posted as or_op_post says; gate: as or_op_post_piece's, and then
 * the request is a piece, no handle of the application's. */
static int post(optireduce_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                enum optireduce_dtype dtype, enum optireduce_op op, unsigned flags,
                const optireduce_req_t *gate, int piece, optireduce_req_t **req)
{
	int scatter = (flags & OR_OP_SCATTER) != 0;
	optireduce_req_t *r;
	struct or_coll *c;
	int bounded, activity, ret;

	r = calloc(1, sizeof(*r));
	if (!r || (!piece && or_handle_add(r))) {
		free(r);
		return -OPTIREDUCE_ENOMEM;
	}
	/* Reduce-scatter is transpose's first phase, on the exact channel. */
	bounded = !(flags & (OR_OP_SCATTER | OR_OP_EXACT)) && comm->bounded &&
	          bounded_eligible(dtype, op);
	r->magic = OR_MAGIC_REQ;
	r->gate = gate;
	r->sbuf = sbuf;
	r->rbuf = rbuf;
	r->count = count;
	r->dtype = dtype;
	r->scatter = scatter;
	r->recvcount = scatter ? count / comm->size : count;
	r->trial.slot = -1;
	r->alg = scatter ? &or_alg_transpose
	                 : comm->choose(comm, count * optireduce_dtype_size(dtype), bounded,
	                                flags & OR_OP_NOMEASURE ? NULL : &r->trial);
	c = &r->coll;
	c->rank = comm->rank;
	c->size = comm->size;
	c->op = op;
	c->seq = comm->next_seq++;
	c->bounded = bounded;
	c->scatter = scatter;
	c->comm = comm;
	c->status = &r->status;
	c->incast = (uint32_t)or_param_int(&comm->params, OR_P_INCAST);
	if (c->incast == 0 || c->incast > comm->size - 1)
		c->incast = comm->size > 1 ? comm->size - 1 : 1;
	{
		size_t seg = (size_t)or_param_int(&comm->params, OR_P_SEGMENT_SIZE);
		size_t max = or_ofi_max_msg(comm->rdm);
		if (seg > max)
			seg = max;
		c->segment_bytes = seg - seg % optireduce_dtype_size(dtype);
	}
	r->status.mode = bounded ? OPTIREDUCE_MODE_BOUNDED : OPTIREDUCE_MODE_EXACT;
	r->status.algorithm = r->alg->id;
	if (bounded)
		r->status.flags |= OPTIREDUCE_STATUS_BOUNDED;
	else if (comm->mode == OPTIREDUCE_MODE_BOUNDED)
		r->status.flags |= OPTIREDUCE_STATUS_FELL_BACK;
	r->prev = comm->tail;
	if (comm->tail)
		comm->tail->next = r;
	else
		comm->head = r;
	comm->tail = r;
	*req = r;
	/* Start now so data moves before the first test; errors surface in wait. */
	ret = or_comm_progress(comm, &activity);
	if (ret < 0)
		fail_all(comm, ret);
	return 0;
}

/*
 * An operation as pieces over consecutive slices (pieces.c), each a request of the engine
 * gated as or_pieces_gate says; the application holds r.  A piece that could not be posted
 * fails the communicator: the other ranks posted it.
 */
static int post_pieces(optireduce_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                       enum optireduce_dtype dtype, enum optireduce_op op, size_t per,
                       optireduce_req_t **req)
{
	size_t es = optireduce_dtype_size(dtype), npieces = (count + per - 1) / per;
	optireduce_req_t *r = or_pieces_new(npieces);
	int ret = 0;

	if (!r)
		return -OPTIREDUCE_ENOMEM;
	r->coll.comm = comm;
	for (size_t i = 0; i < npieces && !ret; i++) {
		size_t at = i * per, n = count - at < per ? count - at : per;
		const void *s = sbuf == OPTIREDUCE_IN_PLACE ? sbuf : (const char *)sbuf + at * es;
		ret = post(comm, s, (char *)rbuf + at * es, n, dtype, op, 0, or_pieces_gate(r, i),
		           1, &r->piece[i]);
		r->npieces += !ret;
	}
	*req = r;
	if (ret) {
		r->error = ret;
		fail_all(comm, ret);
	}
	return 0;
}

int or_op_post(optireduce_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
               enum optireduce_dtype dtype, enum optireduce_op op, unsigned flags,
               optireduce_req_t **req)
{
	size_t per = count;

	if (!(flags & (OR_OP_SCATTER | OR_OP_EXACT)) && comm->bounded &&
	    bounded_eligible(dtype, op))
		per = or_pieces_per(comm, count, dtype);
	if (per < count)
		return post_pieces(comm, sbuf, rbuf, count, dtype, op, per, req);
	return post(comm, sbuf, rbuf, count, dtype, op, flags, NULL, 0, req);
}

/* For the waiters (wait.c, lib/core/progress_api.c): after a transport error or a timeout
 * every operation not yet completed fails with err. */
void or_comm_fail(optireduce_comm_t *comm, int err)
{
	fail_all(comm, err);
}
