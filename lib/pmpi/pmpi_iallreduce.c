/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Iallreduce: the routing of MPI_Allreduce (the same checks, policy and
 * communicator state); a served call starts optireduce_iallreduce and hands
 * the program a generalized request (MPI_Grequest_start).
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

#include "pmpi_internal.h"

struct orp_iop {
	optireduce_req_t *req;
	MPI_Request greq;
	int error; /* MPI_SUCCESS, or the class reported in the status */
	size_t bytes;
	int bounded, declined;
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
		orp_log(ORP_LOG_WARN, "%s: MPI_Iallreduce failed in liboptireduce: %s", st->name,
		        orp_core.strerror(ret));
		op->error = MPI_ERR_OTHER;
	} else {
		int bounded = (status->flags & OPTIREDUCE_STATUS_BOUNDED) != 0;
		orp_stats_served(bounded, op->declined || (op->bounded && !bounded), op->bytes,
		                 ORP_CALL_IALLREDUCE);
	}
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

static int to_pmpi(enum optireduce_pmpi_reason reason, const void *sbuf, void *rbuf, int count,
                   MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	orp_stats_pmpi(reason);
	return PMPI_Iallreduce(sbuf, rbuf, count, dt, op, comm, request);
}

/* Starts the operation on st (locked); MPI_SUCCESS, or an MPI error with nothing started. */
static int start(struct orp_comm *st, const void *sbuf, void *rbuf, int count,
                 enum optireduce_dtype odt, enum optireduce_op oop, MPI_Request *request)
{
	struct orp_iop *op = calloc(1, sizeof(*op));
	optireduce_comm_t *oc;
	int ret;

	if (!op)
		return MPI_ERR_NO_MEM;
	op->bytes = (size_t)count * orp_core.dtype_size(odt);
	oc = orp_channel(st, odt, oop, op->bytes, &op->bounded, &op->declined);
	atomic_init(&op->refs, 2);
	ret = PMPI_Grequest_start(query_fn, free_fn, cancel_fn, op, &op->greq);
	if (ret != MPI_SUCCESS) {
		free(op);
		return ret;
	}
	*request = op->greq;
	ret = orp_core.iallreduce(oc, sbuf == MPI_IN_PLACE ? OPTIREDUCE_IN_PLACE : sbuf, rbuf,
	                          (size_t)count, odt, oop, &op->req);
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

int orp_iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm, MPI_Request *request)
{
	enum optireduce_dtype odt = OPTIREDUCE_INT8;
	enum optireduce_op oop = OPTIREDUCE_SUM;
	struct orp_comm *st;
	int reason, ret;

	orp_stats_call(ORP_CALL_IALLREDUCE);
	reason = orp_check_call(sbuf, rbuf, count, dt, op, comm, &odt, &oop);
	if (reason < 0 && !request)
		reason = OPTIREDUCE_PMPI_REASON_ARGS;
	if (reason < 0 && orp_progress_init())
		reason = OPTIREDUCE_PMPI_REASON_NOPROGRESS;
	if (reason >= 0)
		return to_pmpi(reason, sbuf, rbuf, count, dt, op, comm, request);
	st = orp_comm_get(comm);
	if (!st)
		return to_pmpi(OPTIREDUCE_PMPI_REASON_UNAVAILABLE, sbuf, rbuf, count, dt, op, comm,
		               request);
	if (st->reason >= 0)
		return to_pmpi(st->reason, sbuf, rbuf, count, dt, op, comm, request);
	pthread_mutex_lock(&st->lock);
	ret = start(st, sbuf, rbuf, count, odt, oop, request);
	pthread_mutex_unlock(&st->lock);
	if (ret != MPI_SUCCESS) {
		orp_stats_error();
		PMPI_Comm_call_errhandler(comm, ret);
	}
	return ret;
}

ORP_EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	return orp_iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
}
