/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bootstrap a liboptireduce communicator from an MPI communicator.
 * Header-only so liboptireduce itself never links MPI:
 *
 *   optireduce_ctx_t *ctx;  optireduce_comm_t *comm;
 *   optireduce_init(OPTIREDUCE_API_VERSION, &ctx);
 *   optireduce_comm_from_mpi(ctx, MPI_COMM_WORLD, &comm);
 */
#ifndef OPTIREDUCE_MPI_H
#define OPTIREDUCE_MPI_H

#include <mpi.h>
#include <optireduce.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline int optireduce_mpi_oob_allgather(const void *sbuf, void *rbuf, size_t len,
                                               void *coll_info)
{
	MPI_Comm mc = *(MPI_Comm *)coll_info;
	if (len > (size_t)INT32_MAX)
		return -OPTIREDUCE_EOVERFLOW;
	return PMPI_Allgather(sbuf, (int)len, MPI_BYTE, rbuf, (int)len, MPI_BYTE, mc) == MPI_SUCCESS
	           ? 0
	           : -OPTIREDUCE_EOOB;
}

/* As optireduce_comm_from_mpi with an explicit mode. */
static inline int optireduce_comm_from_mpi_mode(optireduce_ctx_t *ctx, MPI_Comm mc,
                                                enum optireduce_mode mode, optireduce_comm_t **comm)
{
	struct optireduce_comm_attr attr;
	int rank, size;
	/* The OOB is used only during comm_create, so a stack copy suffices. */
	MPI_Comm handle = mc;

	if (PMPI_Comm_rank(mc, &rank) != MPI_SUCCESS || PMPI_Comm_size(mc, &size) != MPI_SUCCESS)
		return -OPTIREDUCE_EOOB;
	attr.oob.allgather = optireduce_mpi_oob_allgather;
	attr.oob.coll_info = &handle;
	attr.oob.rank = (uint32_t)rank;
	attr.oob.size = (uint32_t)size;
	attr.mode = mode;
	return optireduce_comm_create(ctx, &attr, comm);
}

static inline int optireduce_comm_from_mpi(optireduce_ctx_t *ctx, MPI_Comm mc,
                                           optireduce_comm_t **comm)
{
	return optireduce_comm_from_mpi_mode(ctx, mc, OPTIREDUCE_MODE_DEFAULT, comm);
}

#ifdef __cplusplus
}
#endif

#endif /* OPTIREDUCE_MPI_H */
