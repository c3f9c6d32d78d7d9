/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reduce-scatter with equal blocks, like MPI_Reduce_scatter_block: the first phase of the
 * transpose algorithm (algorithms/transpose.c), queued and progressed like any other
 * operation of the communicator (lib/op/allreduce.c).  It runs on the exact channel; a
 * communicator whose ranks share hosts runs it as an allreduce through the host's segment
 * and keeps this rank's block (lib/hier/hier_op.c).
 */
#include <stdint.h>

#include "lib/core/internal.h"

int optireduce_ireduce_scatter_block(optireduce_comm_t *comm, const void *sbuf, void *rbuf,
                                     size_t recvcount, enum optireduce_dtype dtype,
                                     enum optireduce_op op, optireduce_req_t **req)
{
	size_t total;
	int ret;

	if (!or_comm_valid(comm))
		return -OPTIREDUCE_EBADHANDLE;
	if (recvcount > SIZE_MAX / comm->size)
		return -OPTIREDUCE_EOVERFLOW;
	total = recvcount * comm->size;
	/* sbuf == rbuf is in place, as for allreduce: then rbuf holds the whole contribution. */
	if (sbuf == rbuf)
		sbuf = OPTIREDUCE_IN_PLACE;
	ret = or_check_args(comm, sbuf, rbuf, total,
	                    sbuf == OPTIREDUCE_IN_PLACE ? total : recvcount, dtype, op);
	if (ret)
		return ret;
	if (!req)
		return -OPTIREDUCE_EINVAL;
	return or_api_post(comm, sbuf, rbuf, total, dtype, op, OR_OP_SCATTER, req);
}

int optireduce_reduce_scatter_block(optireduce_comm_t *comm, const void *sbuf, void *rbuf,
                                    size_t recvcount, enum optireduce_dtype dtype,
                                    enum optireduce_op op, struct optireduce_status *status)
{
	optireduce_req_t *req;
	int ret = optireduce_ireduce_scatter_block(comm, sbuf, rbuf, recvcount, dtype, op, &req);

	if (ret)
		return ret;
	return optireduce_wait(req, status);
}
