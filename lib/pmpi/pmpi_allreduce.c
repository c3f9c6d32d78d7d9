/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Allreduce and MPI_Reduce_scatter_block: serve them on liboptireduce
 * when that computes what MPI defines, else hand them to PMPI unchanged;
 * and the routing every intercepted call shares (orp_to_pmpi,
 * orp_check_call, orp_channel, orp_enter and orp_leave).
 *
 * Every check before the communicator's state is created depends only on
 * values MPI requires to be equal on all ranks (datatype, op, count, comm)
 * or on process-wide settings the user must keep equal (environment,
 * thread level), so all ranks take the same route and none waits in a
 * collective the others skipped.  Checks that look at buffers only route
 * erroneous calls, which MPI then reports.
 */
#include "pmpi_internal.h"

int orp_to_pmpi(const struct orp_args *a, enum optireduce_pmpi_reason reason)
{
	orp_stats_pmpi(reason);
	switch (a->kind) {
	case ORP_CALL_REDUCE_SCATTER:
		return PMPI_Reduce_scatter_block(a->sbuf, a->rbuf, a->count, a->dt, a->op, a->comm);
	case ORP_CALL_REDUCE_SCATTER_V:
		return PMPI_Reduce_scatter(a->sbuf, a->rbuf, a->recvcounts, a->dt, a->op, a->comm);
	case ORP_CALL_IALLREDUCE:
		return PMPI_Iallreduce(a->sbuf, a->rbuf, a->count, a->dt, a->op, a->comm,
		                       a->request);
	case ORP_CALL_IREDUCE_SCATTER:
		return PMPI_Ireduce_scatter_block(a->sbuf, a->rbuf, a->count, a->dt, a->op, a->comm,
		                                  a->request);
	case ORP_CALL_IREDUCE_SCATTER_V:
		return PMPI_Ireduce_scatter(a->sbuf, a->rbuf, a->recvcounts, a->dt, a->op, a->comm,
		                            a->request);
	case ORP_CALL_ALLREDUCE:
		break;
	}
	return PMPI_Allreduce(a->sbuf, a->rbuf, a->count, a->dt, a->op, a->comm);
}

int orp_check_call(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                   MPI_Comm comm, enum optireduce_dtype *odt, enum optireduce_op *oop)
{
	if (!orp_active())
		return OPTIREDUCE_PMPI_REASON_INACTIVE;
	if (!orp_cfg.enable)
		return OPTIREDUCE_PMPI_REASON_DISABLED;
	if (orp_threads_blocked())
		return OPTIREDUCE_PMPI_REASON_THREADS;
	if (comm == MPI_COMM_NULL || count < 0)
		return OPTIREDUCE_PMPI_REASON_ARGS;
	if (count == 0)
		return OPTIREDUCE_PMPI_REASON_EMPTY;
	if (orp_dtype_of(dt, odt))
		return OPTIREDUCE_PMPI_REASON_DTYPE;
	if (orp_op_of(op, oop))
		return OPTIREDUCE_PMPI_REASON_OP;
	/* Erroneous: MPI_IN_PLACE as recvbuf, aliased or missing buffers (MPI_BOTTOM). */
	if (rbuf == MPI_IN_PLACE || !rbuf || !sbuf || sbuf == rbuf)
		return OPTIREDUCE_PMPI_REASON_ARGS;
	return -1;
}

optireduce_comm_t *orp_channel(struct orp_comm *st, enum optireduce_dtype odt,
                               enum optireduce_op oop, size_t bytes, int *bounded, int *declined)
{
	*bounded = st->bounded_allowed && oop == OPTIREDUCE_SUM && orp_dtype_is_float(odt) &&
	           orp_policy_match(&orp_cfg.policy, odt, bytes);
	*declined = 0;
	if (!*bounded)
		return st->exact;
	if (orp_comm_bounded(st))
		return st->bounded;
	*declined = 1;
	return st->exact;
}

const char *orp_call_name(enum orp_call kind)
{
	switch (kind) {
	case ORP_CALL_REDUCE_SCATTER:
		return "MPI_Reduce_scatter_block";
	case ORP_CALL_REDUCE_SCATTER_V:
		return "MPI_Reduce_scatter";
	case ORP_CALL_IALLREDUCE:
		return "MPI_Iallreduce";
	case ORP_CALL_IREDUCE_SCATTER:
		return "MPI_Ireduce_scatter_block";
	case ORP_CALL_IREDUCE_SCATTER_V:
		return "MPI_Ireduce_scatter";
	case ORP_CALL_ALLREDUCE:
		break;
	}
	return "MPI_Allreduce";
}

struct orp_comm *orp_enter(const struct orp_args *a, int reason, int *ret)
{
	struct orp_comm *st;

	if (reason >= 0) {
		*ret = orp_to_pmpi(a, reason);
		return NULL;
	}
	st = orp_comm_get(a->comm);
	if (!st) {
		*ret = orp_to_pmpi(a, OPTIREDUCE_PMPI_REASON_UNAVAILABLE);
		return NULL;
	}
	if (st->reason >= 0) {
		*ret = orp_to_pmpi(a, st->reason);
		return NULL;
	}
	/* Erroneous under MPI (two threads in collectives on one communicator). */
	if (atomic_exchange(&st->busy, 1)) {
		if (!st->warned_busy++)
			orp_log(ORP_LOG_WARN,
			        "%s: concurrent %s calls; this program is "
			        "erroneous and may deadlock",
			        st->name, orp_call_name(a->kind));
		*ret = orp_to_pmpi(a, OPTIREDUCE_PMPI_REASON_BUSY);
		return NULL;
	}
	return st;
}

int orp_leave(struct orp_comm *st, const struct orp_args *a, int ret,
              const struct optireduce_status *status, int bounded, int declined, size_t bytes)
{
	atomic_store(&st->busy, 0);
	if (ret) {
		/* rbuf may be half written and the peers' state is unknown: only MPI can report it.
		 */
		orp_stats_error();
		orp_log(ORP_LOG_WARN, "%s: %s of %d elements failed in liboptireduce: %s", st->name,
		        orp_call_name(a->kind), a->count, orp_core.strerror(ret));
		PMPI_Comm_call_errhandler(a->comm, MPI_ERR_OTHER);
		return MPI_ERR_OTHER;
	}
	orp_stats_served((status->flags & OPTIREDUCE_STATUS_BOUNDED) != 0,
	                 declined || (bounded && !(status->flags & OPTIREDUCE_STATUS_BOUNDED)),
	                 bytes, a->kind);
	return MPI_SUCCESS;
}

/* A blocking call of either kind; count is MPI_Reduce_scatter_block's recvcount. */
static int blocking(const struct orp_args *a)
{
	enum optireduce_dtype odt = OPTIREDUCE_INT8;
	enum optireduce_op oop = OPTIREDUCE_SUM;
	struct optireduce_status status;
	const void *osbuf = a->sbuf == MPI_IN_PLACE ? OPTIREDUCE_IN_PLACE : a->sbuf;
	optireduce_comm_t *oc;
	struct orp_comm *st;
	size_t bytes;
	int bounded, declined, ret, size = 1;

	orp_stats_call(a->kind);
	st = orp_enter(
	    a, orp_check_call(a->sbuf, a->rbuf, a->count, a->dt, a->op, a->comm, &odt, &oop), &ret);
	if (!st)
		return ret;
	/* The policy sees a reduce-scatter's whole contribution, recvcount per rank. */
	if (a->kind == ORP_CALL_REDUCE_SCATTER)
		PMPI_Comm_size(a->comm, &size);
	bytes = (size_t)a->count * (size_t)size * orp_core.dtype_size(odt);
	pthread_mutex_lock(&st->lock);
	oc = orp_channel(st, odt, oop, bytes, &bounded, &declined);
	if (a->kind == ORP_CALL_REDUCE_SCATTER)
		ret = orp_core.reduce_scatter_block(oc, osbuf, a->rbuf, (size_t)a->count, odt, oop,
		                                    &status);
	else
		ret = orp_core.allreduce(oc, osbuf, a->rbuf, (size_t)a->count, odt, oop, &status);
	/* Earlier nonblocking operations on this communicator finished first. */
	if (st->ihead)
		orp_iops_complete(st, 0);
	pthread_mutex_unlock(&st->lock);
	return orp_leave(st, a, ret, &status, bounded, declined, bytes);
}

int orp_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm)
{
	struct orp_args a = {ORP_CALL_ALLREDUCE, sbuf, rbuf, count, NULL, dt, op, comm, NULL};

	return blocking(&a);
}

int orp_reduce_scatter_block(const void *sbuf, void *rbuf, int recvcount, MPI_Datatype dt,
                             MPI_Op op, MPI_Comm comm)
{
	struct orp_args a = {
	    ORP_CALL_REDUCE_SCATTER, sbuf, rbuf, recvcount, NULL, dt, op, comm, NULL};

	return blocking(&a);
}

ORP_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm comm)
{
	return orp_allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

ORP_EXPORT int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	return orp_reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
}
