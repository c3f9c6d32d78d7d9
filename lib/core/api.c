/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The public entry points of an operation: they check the handle and arguments, then hand
 * the operation to lib/hier/ on a communicator whose ranks share hosts, else to the request
 * engine (lib/op/op.h).  Both sit below this file; neither calls it.
 */
#include "internal.h"

int or_api_post(optireduce_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                enum optireduce_dtype dtype, enum optireduce_op op, unsigned flags,
                optireduce_req_t **req)
{
	if (comm->hier)
		return or_hier_iallreduce(comm, sbuf, rbuf, count, dtype, op,
		                          (flags & OR_OP_SCATTER) != 0, req);
	return or_op_post(comm, sbuf, rbuf, count, dtype, op, flags, req);
}

int optireduce_iallreduce(optireduce_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                          enum optireduce_dtype dtype, enum optireduce_op op,
                          optireduce_req_t **req)
{
	int ret = or_check_args(comm, sbuf, rbuf, count, count, dtype, op);

	if (ret)
		return ret;
	if (!req)
		return -OPTIREDUCE_EINVAL;
	return or_api_post(comm, sbuf, rbuf, count, dtype, op, 0, req);
}

int optireduce_test(optireduce_req_t *req)
{
	if (!or_req_valid(req))
		return -OPTIREDUCE_EBADHANDLE;
	if (req->hop)
		return or_hier_test(req);
	return or_op_test(req);
}

int optireduce_wait(optireduce_req_t *req, struct optireduce_status *status)
{
	if (!or_req_valid(req))
		return -OPTIREDUCE_EBADHANDLE;
	if (req->hop)
		return or_hier_wait(req, status);
	return or_op_wait(req, status);
}

int optireduce_allreduce(optireduce_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                         enum optireduce_dtype dtype, enum optireduce_op op,
                         struct optireduce_status *status)
{
	optireduce_req_t *req;
	int ret = optireduce_iallreduce(comm, sbuf, rbuf, count, dtype, op, &req);

	if (ret)
		return ret;
	return optireduce_wait(req, status);
}
