/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Reduce_scatter: rank i receives recvcounts[i] elements of the
 * reduction, the block that starts at recvcounts[0] + ... + recvcounts[i-1].
 * liboptireduce reduce-scatters equal blocks only
 * (optireduce_reduce_scatter_block), so a call
 *
 *   - whose recvcounts are all equal runs as MPI_Reduce_scatter_block does;
 *   - whose blocks differ, OPTIREDUCE_PMPI_UNEVEN_MAX bytes in all or
 *     fewer, runs as an exact allreduce of the whole input (into a scratch
 *     buffer, or in place into recvbuf) of which this rank keeps its block;
 *   - whose blocks differ and that is larger goes to PMPI_Reduce_scatter
 *     (reason uneven-large): the allreduce moves twice the bytes a
 *     reduce-scatter does.
 *
 * MPI_Ireduce_scatter takes the same route with the same checks
 * (orp_check_counts), as a generalized request: pmpi_iallreduce.c.
 *
 * Every choice depends on recvcounts, the datatype, the op and the
 * communicator, which MPI requires to be the same on every rank; see
 * docs/design.md, "Interposer".
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi_internal.h"

/* The checks of the counts' own arguments once the common ones passed. */
static int counts_reason(const struct orp_args *a, struct orp_counts *c)
{
	int inter = 0, size = 0, rank = 0, es = 0;

	PMPI_Comm_test_inter(a->comm, &inter);
	if (inter)
		return OPTIREDUCE_PMPI_REASON_INTERCOMM;
	if (!a->recvcounts)
		return OPTIREDUCE_PMPI_REASON_ARGS;
	PMPI_Comm_size(a->comm, &size);
	PMPI_Comm_rank(a->comm, &rank);
	*c = (struct orp_counts){0, 0, a->recvcounts[rank], 1};
	for (int i = 0; i < size; i++) {
		if (a->recvcounts[i] < 0)
			return OPTIREDUCE_PMPI_REASON_ARGS;
		if (i < rank)
			c->displ += (size_t)a->recvcounts[i];
		c->total += (size_t)a->recvcounts[i];
		c->equal &= a->recvcounts[i] == a->recvcounts[0];
	}
	if (c->total == 0)
		return OPTIREDUCE_PMPI_REASON_EMPTY;
	/* Erroneous: no receive buffer for a block that is not empty, or for the input. */
	if (!a->rbuf && (c->mine > 0 || a->sbuf == MPI_IN_PLACE))
		return OPTIREDUCE_PMPI_REASON_ARGS;
	/* liboptireduce may not be loaded yet: MPI's size of the (predefined) datatype. */
	PMPI_Type_size(a->dt, &es);
	if (!c->equal && c->total * (size_t)es > OPTIREDUCE_PMPI_UNEVEN_MAX)
		return OPTIREDUCE_PMPI_REASON_UNEVEN;
	return -1;
}

int orp_check_counts(struct orp_args *a, enum optireduce_dtype *odt, enum optireduce_op *oop,
                     struct orp_counts *c)
{
	char dummy;
	int reason;

	/* The common checks, with a count of 1 until the communicator is known to be valid; a
	 * rank whose block is empty may pass no receive buffer. */
	reason =
	    orp_check_call(a->sbuf, a->rbuf ? a->rbuf : &dummy, 1, a->dt, a->op, a->comm, odt, oop);
	if (reason < 0)
		reason = counts_reason(a, c);
	a->count = c->total > INT_MAX ? INT_MAX : (int)c->total;
	return reason;
}

/* Blocks of different sizes: an allreduce of the whole input on the exact channel. */
static int uneven(struct orp_comm *st, const struct orp_args *a, const struct orp_counts *c,
                  enum optireduce_dtype odt, enum optireduce_op oop,
                  struct optireduce_status *status)
{
	size_t es = orp_core.dtype_size(odt);
	char *tmp;
	int ret;

	if (a->sbuf == MPI_IN_PLACE) {
		/* recvbuf holds the whole input and receives the block at its start. */
		ret = orp_core.allreduce(st->exact, OPTIREDUCE_IN_PLACE, a->rbuf, c->total, odt,
		                         oop, status);
		if (!ret && c->displ && c->mine)
			memmove(a->rbuf, (char *)a->rbuf + c->displ * es, (size_t)c->mine * es);
		return ret;
	}
	/* At most OPTIREDUCE_PMPI_UNEVEN_MAX bytes.  A failure here fails the call on this rank
	 * only, which MPI's default error handler turns into the end of the job. */
	tmp = malloc(c->total * es);
	if (!tmp)
		return -OPTIREDUCE_ENOMEM;
	ret = orp_core.allreduce(st->exact, a->sbuf, tmp, c->total, odt, oop, status);
	if (!ret && c->mine)
		memcpy(a->rbuf, tmp + c->displ * es, (size_t)c->mine * es);
	free(tmp);
	return ret;
}

int orp_reduce_scatter(const void *sbuf, void *rbuf, const int recvcounts[], MPI_Datatype dt,
                       MPI_Op op, MPI_Comm comm)
{
	struct orp_args a = {
	    ORP_CALL_REDUCE_SCATTER_V, sbuf, rbuf, 0, recvcounts, dt, op, comm, NULL};
	enum optireduce_dtype odt = OPTIREDUCE_INT8;
	enum optireduce_op oop = OPTIREDUCE_SUM;
	struct optireduce_status status = {0};
	struct orp_counts c = {0};
	optireduce_comm_t *oc;
	struct orp_comm *st;
	size_t bytes;
	int reason, bounded, declined, ret;

	orp_stats_call(a.kind);
	reason = orp_check_counts(&a, &odt, &oop, &c);
	st = orp_enter(&a, reason, &ret);
	if (!st)
		return ret;
	bytes = c.total * orp_core.dtype_size(odt);
	pthread_mutex_lock(&st->lock);
	oc = orp_channel(st, odt, oop, bytes, &bounded, &declined);
	if (c.equal)
		ret = orp_core.reduce_scatter_block(
		    oc, sbuf == MPI_IN_PLACE ? OPTIREDUCE_IN_PLACE : sbuf, rbuf,
		    (size_t)recvcounts[0], odt, oop, &status);
	else
		ret = uneven(st, &a, &c, odt, oop, &status);
	/* Earlier nonblocking operations on this communicator finished first. */
	if (st->ihead)
		orp_iops_complete(st, 0);
	pthread_mutex_unlock(&st->lock);
	return orp_leave(st, &a, ret, &status, bounded, declined, bytes);
}

ORP_EXPORT int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	return orp_reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
}
