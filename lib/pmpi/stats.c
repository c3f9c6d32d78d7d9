/* SPDX-License-Identifier: BSD-3-Clause */
/* Counters of where the intercepted calls (MPI_Allreduce, MPI_Iallreduce, the reduce-scatters)
 * went, and their report at MPI_Finalize. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "pmpi_internal.h"

_Static_assert(OPTIREDUCE_PMPI_REASON_COUNT <= OPTIREDUCE_PMPI_MAX_REASONS,
               "optireduce_pmpi_stats has no room for every reason");

static const char *const reason_names[OPTIREDUCE_PMPI_REASON_COUNT] = {
    [OPTIREDUCE_PMPI_REASON_INACTIVE] = "inactive",
    [OPTIREDUCE_PMPI_REASON_DISABLED] = "disabled",
    [OPTIREDUCE_PMPI_REASON_THREADS] = "thread-multiple",
    [OPTIREDUCE_PMPI_REASON_ARGS] = "arguments",
    [OPTIREDUCE_PMPI_REASON_EMPTY] = "count-0",
    [OPTIREDUCE_PMPI_REASON_DTYPE] = "dtype",
    [OPTIREDUCE_PMPI_REASON_OP] = "op",
    [OPTIREDUCE_PMPI_REASON_INTERCOMM] = "intercomm",
    [OPTIREDUCE_PMPI_REASON_SINGLE] = "one-rank",
    [OPTIREDUCE_PMPI_REASON_UNAVAILABLE] = "unavailable",
    [OPTIREDUCE_PMPI_REASON_BUSY] = "concurrent",
    [OPTIREDUCE_PMPI_REASON_FORTRAN] = "fortran-sentinel",
    [OPTIREDUCE_PMPI_REASON_NOPROGRESS] = "no-progress-hook",
    [OPTIREDUCE_PMPI_REASON_UNEVEN] = "uneven-large",
};

/* Updated from any thread under MPI_THREAD_MULTIPLE, hence atomics (relaxed: only counts). */
static struct {
	atomic_uint_least64_t calls, exact, bounded, declined, pmpi, errors, created, destroyed;
	atomic_uint_least64_t bytes_exact, bytes_bounded, nb_calls, nb_served, rs_calls, rs_served;
	atomic_uint_least64_t irs_calls, irs_served, rsv_calls, rsv_served, irsv_calls, irsv_served;
	atomic_uint_least64_t reason[OPTIREDUCE_PMPI_REASON_COUNT];
} ctr;

#define ADD(field, n) atomic_fetch_add_explicit(&(field), (n), memory_order_relaxed)
#define GET(field)    atomic_load_explicit(&(field), memory_order_relaxed)

void orp_stats_call(enum orp_call kind)
{
	ADD(ctr.calls, 1);
	if (kind == ORP_CALL_IALLREDUCE)
		ADD(ctr.nb_calls, 1);
	else if (kind == ORP_CALL_REDUCE_SCATTER)
		ADD(ctr.rs_calls, 1);
	else if (kind == ORP_CALL_IREDUCE_SCATTER)
		ADD(ctr.irs_calls, 1);
	else if (kind == ORP_CALL_REDUCE_SCATTER_V)
		ADD(ctr.rsv_calls, 1);
	else if (kind == ORP_CALL_IREDUCE_SCATTER_V)
		ADD(ctr.irsv_calls, 1);
}

void orp_stats_pmpi(enum optireduce_pmpi_reason reason)
{
	ADD(ctr.pmpi, 1);
	if ((unsigned)reason < OPTIREDUCE_PMPI_REASON_COUNT)
		ADD(ctr.reason[reason], 1);
}

void orp_stats_served(int bounded, int declined, size_t bytes, enum orp_call kind)
{
	if (kind == ORP_CALL_IALLREDUCE)
		ADD(ctr.nb_served, 1);
	else if (kind == ORP_CALL_REDUCE_SCATTER)
		ADD(ctr.rs_served, 1);
	else if (kind == ORP_CALL_IREDUCE_SCATTER)
		ADD(ctr.irs_served, 1);
	else if (kind == ORP_CALL_REDUCE_SCATTER_V)
		ADD(ctr.rsv_served, 1);
	else if (kind == ORP_CALL_IREDUCE_SCATTER_V)
		ADD(ctr.irsv_served, 1);
	if (bounded) {
		ADD(ctr.bounded, 1);
		ADD(ctr.bytes_bounded, bytes);
	} else {
		ADD(ctr.exact, 1);
		ADD(ctr.bytes_exact, bytes);
	}
	if (declined)
		ADD(ctr.declined, 1);
}

void orp_stats_error(void)
{
	ADD(ctr.errors, 1);
}

void orp_stats_comm(int created)
{
	if (created)
		ADD(ctr.created, 1);
	else
		ADD(ctr.destroyed, 1);
}

ORP_EXPORT int optireduce_pmpi_stats(struct optireduce_pmpi_stats *out)
{
	if (!out)
		return -OPTIREDUCE_EINVAL;
	memset(out, 0, sizeof(*out));
	out->calls = GET(ctr.calls);
	out->served_exact = GET(ctr.exact);
	out->served_bounded = GET(ctr.bounded);
	out->bounded_declined = GET(ctr.declined);
	out->to_pmpi = GET(ctr.pmpi);
	for (int i = 0; i < OPTIREDUCE_PMPI_REASON_COUNT; i++)
		out->to_pmpi_by_reason[i] = GET(ctr.reason[i]);
	out->bytes_exact = GET(ctr.bytes_exact);
	out->bytes_bounded = GET(ctr.bytes_bounded);
	out->errors = GET(ctr.errors);
	out->comms_created = GET(ctr.created);
	out->comms_destroyed = GET(ctr.destroyed);
	out->nonblocking_calls = GET(ctr.nb_calls);
	out->nonblocking_served = GET(ctr.nb_served);
	out->reduce_scatter_calls = GET(ctr.rs_calls);
	out->reduce_scatter_served = GET(ctr.rs_served);
	out->ireduce_scatter_calls = GET(ctr.irs_calls);
	out->ireduce_scatter_served = GET(ctr.irs_served);
	out->reduce_scatter_v_calls = GET(ctr.rsv_calls);
	out->reduce_scatter_v_served = GET(ctr.rsv_served);
	out->ireduce_scatter_v_calls = GET(ctr.irsv_calls);
	out->ireduce_scatter_v_served = GET(ctr.irsv_served);
	return 0;
}

ORP_EXPORT const char *optireduce_pmpi_reason_name(int reason)
{
	if (reason < 0 || reason >= OPTIREDUCE_PMPI_REASON_COUNT)
		return "unknown";
	return reason_names[reason];
}

/* "of those, N <name>: M served by liboptireduce" when the program made such calls. */
static void print_kind(uint64_t calls, uint64_t served, const char *name)
{
	if (calls)
		fprintf(stderr,
		        "optireduce-pmpi[%d] stats: of those, %" PRIu64 " %s: %" PRIu64
		        " served by liboptireduce\n",
		        orp_world_rank, calls, name, served);
}

/*
 * Lines on stderr: where calls of every kind went, how many of them were of
 * each kind other than MPI_Allreduce, and why the PMPI ones went.
 */
void orp_stats_print(void)
{
	struct optireduce_pmpi_stats s;
	char why[512] = "";
	size_t len = 0;

	optireduce_pmpi_stats(&s);
	for (int i = 0; i < OPTIREDUCE_PMPI_REASON_COUNT && len < sizeof(why); i++)
		if (s.to_pmpi_by_reason[i])
			len += (size_t)snprintf(why + len, sizeof(why) - len, "%s%s %" PRIu64,
			                        len ? ", " : "", reason_names[i],
			                        s.to_pmpi_by_reason[i]);
	fprintf(stderr,
	        "optireduce-pmpi[%d] stats: %" PRIu64 " calls: %" PRIu64 " exact (%" PRIu64
	        " B), %" PRIu64 " bounded (%" PRIu64 " B), %" PRIu64 " bounded->exact, %" PRIu64
	        " to PMPI; %" PRIu64 " errors; %" PRIu64 " communicators\n",
	        orp_world_rank, s.calls, s.served_exact, s.bytes_exact, s.served_bounded,
	        s.bytes_bounded, s.bounded_declined, s.to_pmpi, s.errors, s.comms_created);
	print_kind(s.nonblocking_calls, s.nonblocking_served, "MPI_Iallreduce");
	print_kind(s.reduce_scatter_calls, s.reduce_scatter_served, "MPI_Reduce_scatter_block");
	print_kind(s.ireduce_scatter_calls, s.ireduce_scatter_served, "MPI_Ireduce_scatter_block");
	print_kind(s.reduce_scatter_v_calls, s.reduce_scatter_v_served, "MPI_Reduce_scatter");
	print_kind(s.ireduce_scatter_v_calls, s.ireduce_scatter_v_served, "MPI_Ireduce_scatter");
	if (s.to_pmpi)
		fprintf(stderr, "optireduce-pmpi[%d] stats: to PMPI because: %s\n", orp_world_rank,
		        why);
}
