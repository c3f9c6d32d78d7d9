/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Iallreduce, MPI_Ireduce_scatter_block and MPI_Ireduce_scatter: the
 * routing of MPI_Allreduce, MPI_Reduce_scatter_block and MPI_Reduce_scatter
 * (the same checks, policy and communicator state); a served call starts
 * optireduce_iallreduce (optireduce_ireduce_scatter_block) and hands the
 * program a generalized request (MPI_Grequest_start).  MPI_Ireduce_scatter
 * with blocks of different sizes starts an exact allreduce of the whole
 * input into a scratch buffer (in place: into recvbuf), and its completion
 * moves this rank's block to recvbuf before MPI sees the request complete.
 *
 * The request is MPI's own, so everything MPI does with requests works
 * unchanged: MPI_Waitall and MPI_Testsome over a mix of these and plain
 * requests, MPI_Request_free, MPI_Request_get_status, Fortran handles,
 * tools that wrap the wait functions.  MPI fills the status through
 * query_fn.  Progress comes from MPI's progress engine (progress.c), and a
 * finished operation is reported with MPI_Grequest_complete, in start order
 * (the library completes operations on one communicator in that order).
 *
 * An operation belongs to its communicator's queue until the library
 * finished it, so the buffers stay the library's even after the program
 * freed the request with MPI_Request_free; MPI_Comm_free and MPI_Finalize
 * finish what is left.  The memory of an operation has two owners, the
 * queue and MPI (which calls free_fn once the request is completed and
 * freed, in whichever order an MPI chooses); the last one frees it.
 */
#include <stdlib.h>
#include <string.h>

#include "pmpi_internal.h"

struct orp_iop {
	optireduce_req_t *req;
	MPI_Request greq;
	int error; /* MPI_SUCCESS, or the class reported in the status */
	size_t bytes;
	int bounded, declined;
	enum orp_call kind;
	/* MPI_Ireduce_scatter, blocks of different sizes: the allreduce's scratch buffer (NULL
	 * in place), and this rank's block, moved from block_src to block_dst on success. */
	char *tmp, *block_dst;
	const char *block_src;
	size_t block_len;
	atomic_int refs;
	struct orp_iop *next;
};

atomic_int orp_pending;

static void iop_release(struct orp_iop *op)
{
	if (atomic_fetch_sub(&op->refs, 1) == 1)
		free(op);
}

/* A collective's status: no source, no tag, nothing received, never cancelled. */
static int query_fn(void *extra, MPI_Status *status)
{
	const struct orp_iop *op = extra;

	status->MPI_SOURCE = MPI_ANY_SOURCE;
	status->MPI_TAG = MPI_ANY_TAG;
	status->MPI_ERROR = op->error;
	PMPI_Status_set_elements(status, MPI_BYTE, 0);
	PMPI_Status_set_cancelled(status, 0);
	return op->error;
}

static int free_fn(void *extra)
{
	iop_release(extra);
	return MPI_SUCCESS;
}

/* MPI does not allow cancelling a collective: the operation runs to its end. */
static int cancel_fn(void *extra, int complete)
{
	(void)extra, (void)complete;
	return MPI_SUCCESS;
}

static void finish(struct orp_comm *st, struct orp_iop *op, int ret,
                   const struct optireduce_status *status)
{
	if (ret) {
		orp_stats_error();
		orp_log(ORP_LOG_WARN, "%s: %s failed in liboptireduce: %s", st->name,
		        orp_call_name(op->kind), orp_core.strerror(ret));
		op->error = MPI_ERR_OTHER;
	} else {
		int bounded = (status->flags & OPTIREDUCE_STATUS_BOUNDED) != 0;
		/* Before MPI_Grequest_complete: the program may read recvbuf once MPI says so. */
		if (op->block_len && op->block_dst != op->block_src)
			memmove(op->block_dst, op->block_src, op->block_len);
		orp_stats_served(bounded, op->declined || (op->bounded && !bounded), op->bytes,
		                 op->kind);
	}
	free(op->tmp);
	op->tmp = NULL;
	/* May run free_fn (the program already freed the request): op is not used after. */
	PMPI_Grequest_complete(op->greq);
	iop_release(op);
}

int orp_iops_complete(struct orp_comm *st, int wait)
{
	int n = 0;

	while (st->ihead) {
		struct orp_iop *op = st->ihead;
		struct optireduce_status status = {0};
		int ret;

		if (!wait && orp_core.test(op->req) == OPTIREDUCE_INPROGRESS)
			break;
		ret = orp_core.wait(op->req, &status);
		op->req = NULL;
		st->ihead = op->next;
		if (!st->ihead)
			st->itail = NULL;
		atomic_fetch_sub(&orp_pending, 1);
		finish(st, op, ret, &status);
		n++;
	}
	return n;
}

/* The policy sees the whole contribution: a reduce-scatter's recvcount per rank, or the sum
 * of its recvcounts. */
static size_t policy_bytes(const struct orp_args *a, const struct orp_counts *c,
                           enum optireduce_dtype odt)
{
	size_t n = (size_t)a->count;
	int size = 1;

	if (a->kind == ORP_CALL_IREDUCE_SCATTER) {
		PMPI_Comm_size(a->comm, &size);
		n *= (size_t)size;
	} else if (a->kind == ORP_CALL_IREDUCE_SCATTER_V) {
		n = c->total;
	}
	return n * orp_core.dtype_size(odt);
}

/* MPI_Ireduce_scatter with blocks of different sizes: an exact allreduce of the whole input
 * (as MPI_Reduce_scatter), whose completion (finish) moves this rank's block into place. */
static int uneven(struct orp_comm *st, const struct orp_args *a, const struct orp_counts *c,
                  enum optireduce_dtype odt, enum optireduce_op oop, struct orp_iop *op)
{
	size_t es = orp_core.dtype_size(odt);
	char *dst = op->tmp ? op->tmp : a->rbuf;

	op->block_dst = a->rbuf;
	op->block_src = dst + c->displ * es;
	op->block_len = (size_t)c->mine * es;
	return orp_core.iallreduce(st->exact, op->tmp ? a->sbuf : OPTIREDUCE_IN_PLACE, dst,
	                           c->total, odt, oop, &op->req);
}

/* Starts the liboptireduce operation of the call a on the channel oc. */
static int launch(struct orp_comm *st, optireduce_comm_t *oc, const struct orp_args *a,
                  const struct orp_counts *c, enum optireduce_dtype odt, enum optireduce_op oop,
                  struct orp_iop *op)
{
	const void *osbuf = a->sbuf == MPI_IN_PLACE ? OPTIREDUCE_IN_PLACE : a->sbuf;

	switch (a->kind) {
	case ORP_CALL_IREDUCE_SCATTER:
		return orp_core.ireduce_scatter_block(oc, osbuf, a->rbuf, (size_t)a->count, odt,
		                                      oop, &op->req);
	case ORP_CALL_IREDUCE_SCATTER_V:
		if (c->equal)
			return orp_core.ireduce_scatter_block(oc, osbuf, a->rbuf, (size_t)c->mine,
			                                      odt, oop, &op->req);
		return uneven(st, a, c, odt, oop, op);
	default:
		return orp_core.iallreduce(oc, osbuf, a->rbuf, (size_t)a->count, odt, oop,
		                           &op->req);
	}
}

/* Starts the operation a on st (locked); MPI_SUCCESS, or an MPI error with nothing started. */
static int start(struct orp_comm *st, const struct orp_args *a, const struct orp_counts *c,
                 enum optireduce_dtype odt, enum optireduce_op oop)
{
	struct orp_iop *op = calloc(1, sizeof(*op));
	optireduce_comm_t *oc;
	int ret;

	if (!op)
		return MPI_ERR_NO_MEM;
	op->kind = a->kind;
	op->bytes = policy_bytes(a, c, odt);
	/* At most OPTIREDUCE_PMPI_UNEVEN_MAX bytes; taken before anything starts, so that a
	 * failure is this call's error on this rank only, as in MPI_Reduce_scatter. */
	if (a->kind == ORP_CALL_IREDUCE_SCATTER_V && !c->equal && a->sbuf != MPI_IN_PLACE &&
	    !(op->tmp = malloc(op->bytes))) {
		free(op);
		return MPI_ERR_NO_MEM;
	}
	oc = orp_channel(st, odt, oop, op->bytes, &op->bounded, &op->declined);
	atomic_init(&op->refs, 2);
	ret = PMPI_Grequest_start(query_fn, free_fn, cancel_fn, op, &op->greq);
	if (ret != MPI_SUCCESS) {
		free(op->tmp);
		free(op);
		return ret;
	}
	*a->request = op->greq;
	ret = launch(st, oc, a, c, odt, oop, op);
	if (ret) {
		/* Reported at completion, like an error on the way. */
		finish(st, op, ret, NULL);
		return MPI_SUCCESS;
	}
	if (st->itail)
		st->itail->next = op;
	else
		st->ihead = op;
	st->itail = op;
	atomic_fetch_add(&orp_pending, 1);
	return MPI_SUCCESS;
}

static int nonblocking(struct orp_args *a)
{
	enum optireduce_dtype odt = OPTIREDUCE_INT8;
	enum optireduce_op oop = OPTIREDUCE_SUM;
	struct orp_counts c = {0};
	struct orp_comm *st;
	int reason, ret;

	orp_stats_call(a->kind);
	if (a->kind == ORP_CALL_IREDUCE_SCATTER_V)
		reason = orp_check_counts(a, &odt, &oop, &c);
	else
		reason =
		    orp_check_call(a->sbuf, a->rbuf, a->count, a->dt, a->op, a->comm, &odt, &oop);
	if (reason < 0 && !a->request)
		reason = OPTIREDUCE_PMPI_REASON_ARGS;
	if (reason < 0 && orp_progress_init())
		reason = OPTIREDUCE_PMPI_REASON_NOPROGRESS;
	if (reason >= 0)
		return orp_to_pmpi(a, reason);
	st = orp_comm_get(a->comm);
	if (!st)
		return orp_to_pmpi(a, OPTIREDUCE_PMPI_REASON_UNAVAILABLE);
	if (st->reason >= 0)
		return orp_to_pmpi(a, st->reason);
	pthread_mutex_lock(&st->lock);
	ret = start(st, a, &c, odt, oop);
	pthread_mutex_unlock(&st->lock);
	if (ret != MPI_SUCCESS) {
		orp_stats_error();
		PMPI_Comm_call_errhandler(a->comm, ret);
	}
	return ret;
}

int orp_iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request)
{
	struct orp_args a = {ORP_CALL_IALLREDUCE, sbuf, rbuf, count, NULL, dt, op, comm, request};

	return nonblocking(&a);
}

int orp_ireduce_scatter_block(const void *sbuf, void *rbuf, int recvcount, MPI_Datatype dt,
                              MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	struct orp_args a = {
	    ORP_CALL_IREDUCE_SCATTER, sbuf, rbuf, recvcount, NULL, dt, op, comm, request};

	return nonblocking(&a);
}

int orp_ireduce_scatter(const void *sbuf, void *rbuf, const int recvcounts[], MPI_Datatype dt,
                        MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	struct orp_args a = {
	    ORP_CALL_IREDUCE_SCATTER_V, sbuf, rbuf, 0, recvcounts, dt, op, comm, request};

	return nonblocking(&a);
}

ORP_EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	return orp_iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
}

ORP_EXPORT int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                         MPI_Request *request)
{
	return orp_ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
}

ORP_EXPORT int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                   MPI_Request *request)
{
	return orp_ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
}
