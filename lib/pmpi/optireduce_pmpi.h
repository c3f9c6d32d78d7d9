/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * liboptireduce_pmpi: MPI_Allreduce, MPI_Iallreduce, MPI_Reduce_scatter_block,
 * MPI_Ireduce_scatter_block, MPI_Reduce_scatter and MPI_Ireduce_scatter on
 * liboptireduce for unmodified MPI programs, by LD_PRELOAD or by linking it
 * before -lmpi:
 *
 *   mpirun -x LD_PRELOAD=/path/liboptireduce_pmpi.so ./app
 *
 * A call runs on liboptireduce when it can be served exactly as MPI defines
 * it (predefined integer or floating datatype the library has, MPI_SUM,
 * MPI_PROD, MPI_MIN or MPI_MAX, an intracommunicator of 2 or more ranks);
 * every other call goes to PMPI_Allreduce.  MPI_Iallreduce follows the
 * same rules and returns an MPI generalized request, progressed by Open
 * MPI's progress engine (see optireduce_pmpi(7)).  MPI_Reduce_scatter_block
 * follows them too (in place included) and runs transpose's first phase,
 * always exact; so does MPI_Ireduce_scatter_block, as a generalized request.
 * MPI_Reduce_scatter runs as MPI_Reduce_scatter_block when its blocks are
 * equal, else as an exact allreduce of which each rank keeps its block, up
 * to OPTIREDUCE_PMPI_UNEVEN_MAX bytes in all (PMPI above); MPI_Ireduce_scatter
 * takes the same route as a generalized request.  Exact mode unless
 * OPTIREDUCE_PMPI_BOUNDED selects floating SUM calls for bounded mode.
 *
 * Environment (read once, at the first intercepted call; must be the same on
 * every rank):
 *   OPTIREDUCE_PMPI_ENABLE=0          every call goes to PMPI_Allreduce
 *   OPTIREDUCE_PMPI_BOUNDED=rules     floating SUM calls that may run bounded
 *       (default none).  Rules are ';'-separated, each "names[:cond]": names
 *       from float, double, half, bfloat16, all (','-separated); cond is
 *       >=N, >N, <=N, <N or N-M (inclusive) on the message size in bytes, N
 *       with an optional k, m or g (x1024).  E.g. "float,double:>=64k" or
 *       "float:<1m;double:4k-16m".  A malformed string: a warning, no bounded.
 *   OPTIREDUCE_PMPI_BOUNDED_COMMS=world|all   communicators bounded mode may
 *                                     use (default world: MPI_COMM_WORLD only)
 *   OPTIREDUCE_PMPI_THREAD_MULTIPLE=1 serve calls even when MPI provides
 *                                     MPI_THREAD_MULTIPLE (default: PMPI then)
 *   OPTIREDUCE_PMPI_STATS=1           print the counters at MPI_Finalize (rank 0)
 *   OPTIREDUCE_LOG_LEVEL=2            also prints them, plus one line per communicator
 *
 * Under MPI_THREAD_MULTIPLE calls go to PMPI by default: the route must be
 * the same on every rank, and a per-communicator "busy" fallback taken on
 * one rank only would deadlock.  With the opt-in, each communicator has its
 * own liboptireduce context, which is safe for programs that follow MPI's
 * rule of one collective at a time per communicator.
 */
#ifndef OPTIREDUCE_PMPI_H
#define OPTIREDUCE_PMPI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility push(default)
#endif

/* Why a call went to PMPI_Allreduce (or the PMPI function of its own name).  Indexes
 * optireduce_pmpi_stats.to_pmpi_by_reason. */
enum optireduce_pmpi_reason {
	OPTIREDUCE_PMPI_REASON_INACTIVE,    /* before MPI_Init or from MPI_Finalize on */
	OPTIREDUCE_PMPI_REASON_DISABLED,    /* OPTIREDUCE_PMPI_ENABLE=0 */
	OPTIREDUCE_PMPI_REASON_THREADS,     /* MPI_THREAD_MULTIPLE without the opt-in */
	OPTIREDUCE_PMPI_REASON_ARGS,        /* erroneous or unusual arguments: MPI reports them */
	OPTIREDUCE_PMPI_REASON_EMPTY,       /* count 0 */
	OPTIREDUCE_PMPI_REASON_DTYPE,       /* derived or unsupported datatype */
	OPTIREDUCE_PMPI_REASON_OP,          /* user-defined or unsupported operation */
	OPTIREDUCE_PMPI_REASON_INTERCOMM,   /* intercommunicator */
	OPTIREDUCE_PMPI_REASON_SINGLE,      /* communicator of one rank */
	OPTIREDUCE_PMPI_REASON_UNAVAILABLE, /* liboptireduce communicator creation failed */
	OPTIREDUCE_PMPI_REASON_BUSY,        /* concurrent call on one communicator */
	OPTIREDUCE_PMPI_REASON_FORTRAN,     /* Fortran MPI_BOTTOM or unknown sentinels */
	OPTIREDUCE_PMPI_REASON_NOPROGRESS,  /* nonblocking calls: this MPI has no progress hook */
	OPTIREDUCE_PMPI_REASON_UNEVEN,      /* MPI_(I)reduce_scatter, blocks of different sizes
	                                       and more than OPTIREDUCE_PMPI_UNEVEN_MAX bytes */
	OPTIREDUCE_PMPI_REASON_COUNT
};

#define OPTIREDUCE_PMPI_MAX_REASONS 16 /* room in the struct; REASON_COUNT <= this */

/* MPI_Reduce_scatter and MPI_Ireduce_scatter with blocks of different sizes are served as an
 * allreduce of the whole input (twice the bytes of a reduce-scatter) up to this many bytes in
 * all. */
#define OPTIREDUCE_PMPI_UNEVEN_MAX (256 * 1024)

/* Counters of this process since it started. */
struct optireduce_pmpi_stats {
	uint64_t calls;            /* calls intercepted, of every kind */
	uint64_t served_exact;     /* ran on liboptireduce's exact channel */
	uint64_t served_bounded;   /* ran on the bounded channel */
	uint64_t bounded_declined; /* policy chose bounded, bounded unavailable: ran exact
	                              (also counted in served_exact) */
	uint64_t to_pmpi;          /* went to the PMPI function of the same name */
	uint64_t to_pmpi_by_reason[OPTIREDUCE_PMPI_MAX_REASONS];
	uint64_t bytes_exact;
	uint64_t bytes_bounded;
	uint64_t errors;        /* liboptireduce failed an operation (MPI error raised) */
	uint64_t comms_created; /* liboptireduce communicators (exact and bounded) */
	uint64_t comms_destroyed;
	uint64_t nonblocking_calls;  /* of calls: MPI_Iallreduce */
	uint64_t nonblocking_served; /* of served_exact + served_bounded: MPI_Iallreduce */
	/* Appended, so the fields above keep their offsets. */
	uint64_t reduce_scatter_calls;   /* of calls: MPI_Reduce_scatter_block */
	uint64_t reduce_scatter_served;  /* of served_exact: MPI_Reduce_scatter_block (always exact;
	                                    also bounded_declined when the policy chose bounded) */
	uint64_t ireduce_scatter_calls;  /* of calls: MPI_Ireduce_scatter_block */
	uint64_t ireduce_scatter_served; /* of served_exact: MPI_Ireduce_scatter_block (the same) */
	uint64_t reduce_scatter_v_calls; /* of calls: MPI_Reduce_scatter (a count per rank) */
	uint64_t reduce_scatter_v_served;  /* of served_exact: MPI_Reduce_scatter (the same) */
	uint64_t ireduce_scatter_v_calls;  /* of calls: MPI_Ireduce_scatter */
	uint64_t ireduce_scatter_v_served; /* of served_exact: MPI_Ireduce_scatter (the same) */
};

/* Copies the counters; returns 0, or -22 (EINVAL) for a NULL out. */
int optireduce_pmpi_stats(struct optireduce_pmpi_stats *out);

/* Short name of a reason ("dtype", "intercomm", ...); "unknown" out of range. */
const char *optireduce_pmpi_reason_name(int reason);

#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* OPTIREDUCE_PMPI_H */
