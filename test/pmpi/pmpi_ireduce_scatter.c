/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Ireduce_scatter_block through liboptireduce_pmpi.so, as an unmodified
 * program uses it, against PMPI_Reduce_scatter_block on the same inputs.
 *
 * Built with plain mpicc, never linked with liboptireduce: run it under
 * LD_PRELOAD=liboptireduce_pmpi.so (without it, it skips: 77).
 *
 *   - The matrix of pmpi_reduce_scatter.c: integer and floating datatypes x
 *     SUM, PROD, MIN, MAX x recvcount {0, 1, 7, 1000, 100003} x in place or
 *     not, on MPI_COMM_WORLD and on a split in reversed rank order, completed
 *     by MPI_Wait or an MPI_Test loop: each rank's block equals PMPI's, the
 *     send buffer and everything past the block are left alone, and the
 *     counters say liboptireduce served the call (recvcount 0: PMPI).
 *   - MPI_Waitall and MPI_Waitany over a mix of these, MPI_Iallreduce and
 *     point-to-point requests; MPI_Request_free of running operations
 *     (finished by a later one, by MPI_Comm_free, by MPI_Finalize).
 *   - Calls liboptireduce cannot serve (user op, one rank, recvcount 0)
 *     go to PMPI_Ireduce_scatter_block and still complete as requests.
 *
 *   pmpi_ireduce_scatter [-b]   -b: OPTIREDUCE_PMPI_BOUNDED="float,double:>=1k" is set:
 *                               floating SUM of >= 1 KiB on MPI_COMM_WORLD chooses
 *                               bounded, runs exact and counts as bounded_declined
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rs_check.h"

#define TAG 31

static int bounded_run, started;

/* Served exact (and declined when the policy picks bounded), or PMPI for recvcount 0. */
static void check_route(const char *what, const struct rs_type *t, int op, int rc, int csize,
                        int is_world, const struct optireduce_pmpi_stats *a,
                        const struct optireduce_pmpi_stats *b)
{
	int declines = bounded_run && is_world && op == 0 && t->is_float &&
	               (size_t)rc * (size_t)csize * (size_t)t->size >= 1024;

	if (b->calls != a->calls + 1 || b->ireduce_scatter_calls != a->ireduce_scatter_calls + 1)
		RS_FAIL("%s: not counted as MPI_Ireduce_scatter_block", what);
	if (rc == 0) {
		if (b->to_pmpi_by_reason[OPTIREDUCE_PMPI_REASON_EMPTY] !=
		    a->to_pmpi_by_reason[OPTIREDUCE_PMPI_REASON_EMPTY] + 1)
			RS_FAIL("%s: recvcount 0 not sent to PMPI", what);
	} else if (b->served_exact != a->served_exact + 1 ||
	           b->ireduce_scatter_served != a->ireduce_scatter_served + 1 ||
	           b->to_pmpi != a->to_pmpi || b->served_bounded != a->served_bounded ||
	           b->bounded_declined != a->bounded_declined + (uint64_t)declines) {
		RS_FAIL("%s: not served exact by liboptireduce (exact +%llu, served +%llu, "
		        "declined +%llu)",
		        what, (unsigned long long)(b->served_exact - a->served_exact),
		        (unsigned long long)(b->ireduce_scatter_served - a->ireduce_scatter_served),
		        (unsigned long long)(b->bounded_declined - a->bounded_declined));
	}
}

/* Completes req with MPI_Wait or an MPI_Test loop; checks the collective's empty status. */
static void complete(MPI_Request *req, int test_loop, const char *what)
{
	MPI_Status st;
	int flag = 0, count = -1, cancelled = -1;

	if (test_loop)
		while (!flag)
			MPI_Test(req, &flag, &st);
	else
		MPI_Wait(req, &st);
	MPI_Get_count(&st, MPI_BYTE, &count);
	MPI_Test_cancelled(&st, &cancelled);
	if (*req != MPI_REQUEST_NULL || count != 0 || cancelled)
		RS_FAIL("%s: request %s, status count %d cancelled %d", what,
		        *req == MPI_REQUEST_NULL ? "freed" : "left", count, cancelled);
}

static void run_case(MPI_Comm comm, const char *cname, int is_world, const struct rs_type *t,
                     int op, int rc, int in_place)
{
	size_t es = (size_t)t->size, first, bad;
	struct optireduce_pmpi_stats a, b;
	struct rs_case c;
	MPI_Request req;
	char what[160];
	int ret;

	snprintf(what, sizeof(what), "%s %s %s recvcount %d%s", cname, t->name, rs_op_names[op], rc,
	         in_place ? " in place" : "");
	rs_prepare(&c, comm, t, op, rc, in_place);
	a = rs_snap();
	ret = MPI_Ireduce_scatter_block(in_place ? MPI_IN_PLACE : c.in, c.got, rc, t->dt,
	                                rs_ops[op], comm, &req);
	if (ret != MPI_SUCCESS)
		RS_FAIL("%s: returned %d", what, ret);
	else
		complete(&req, (int)(rs_cases % 2), what);
	b = rs_snap();
	rs_cases++;
	check_route(what, t, op, rc, c.csize, is_world, &a, &b);
	bad = rs_compare(c.got, c.ref, t, op, c.csize, (size_t)c.crank * (size_t)rc, (size_t)rc,
	                 &first);
	if (bad)
		RS_FAIL("%s: %zu wrong, first [%zu] = %g, PMPI %g", what, bad, first,
		        rs_load(c.got, first, t), rs_load(c.ref, first, t));
	if (!in_place && memcmp(c.in, c.keep, c.n * es))
		RS_FAIL("%s: sendbuf modified", what);
	for (size_t i = (size_t)rc * es; !in_place && i < c.bytes; i++)
		if (c.got[i] != 0xa5) {
			RS_FAIL("%s: wrote past the block", what);
			break;
		}
	rs_release(&c);
}

static void run_all(MPI_Comm comm, const char *cname, int is_world)
{
	static const int rcounts[] = {0, 1, 7, 1000, 100003};

	for (int ti = 0; ti < RS_NTYPES; ti++)
		for (int op = 0; op < RS_NOPS; op++)
			for (size_t c = 0; c < sizeof(rcounts) / sizeof(rcounts[0]); c++)
				for (int ip = 0; ip < 2; ip++)
					run_case(comm, cname, is_world, &rs_types[ti], op,
					         rcounts[c], ip);
	if (rs_rank == 0)
		printf("%-24s done\n", cname);
}

/* Element i of the MPI_INT SUM of rs_input over every rank (ops index 0). */
static int int_sum(size_t i)
{
	int s = 0;

	for (int r = 0; r < rs_size; r++)
		s += (int)rs_input(&rs_types[2], 0, r, i);
	return s;
}

static void check_block(const int *got, size_t base, size_t n, const char *what)
{
	for (size_t k = 0; k < n; k++)
		if (got[k] != int_sum(base + k)) {
			RS_FAIL("%s: [%zu] = %d, want %d", what, k, got[k], int_sum(base + k));
			return;
		}
}

/*
 * Two reduce-scatters (one large), an MPI_Iallreduce on a dup and a ring exchange,
 * completed by MPI_Waitall or an MPI_Waitany loop.
 */
static void test_mixed(MPI_Comm dup, int waitany)
{
	enum { NREQ = 5, BIG = 200000, SMALL = 100 };
	const char *how = waitany ? "MPI_Waitany mix" : "MPI_Waitall mix";
	int *s = malloc(sizeof(int) * BIG * (size_t)rs_size), *r = malloc(sizeof(int) * BIG);
	int s2[SMALL * 8], r2[SMALL], s3[SMALL], r3[SMALL], out = rs_rank + 100, in = -1;
	int left = (rs_rank + rs_size - 1) % rs_size, right = (rs_rank + 1) % rs_size;
	MPI_Request req[NREQ];

	rs_fill(s, BIG * (size_t)rs_size, &rs_types[2], 0, rs_rank);
	rs_fill(s2, SMALL * (size_t)rs_size, &rs_types[2], 0, rs_rank);
	rs_fill(s3, SMALL, &rs_types[2], 0, rs_rank);
	MPI_Irecv(&in, 1, MPI_INT, left, TAG, MPI_COMM_WORLD, &req[0]);
	MPI_Ireduce_scatter_block(s, r, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[1]);
	MPI_Iallreduce(s3, r3, SMALL, MPI_INT, MPI_SUM, dup, &req[2]);
	MPI_Isend(&out, 1, MPI_INT, right, TAG, MPI_COMM_WORLD, &req[3]);
	MPI_Ireduce_scatter_block(s2, r2, SMALL, MPI_INT, MPI_SUM, dup, &req[4]);
	started += 2;
	if (waitany) {
		for (int k = 0; k < NREQ; k++) {
			int idx = MPI_UNDEFINED;
			MPI_Waitany(NREQ, req, &idx, MPI_STATUS_IGNORE);
			if (idx == MPI_UNDEFINED)
				RS_FAIL("%s: no active request left after %d", how, k);
		}
	} else {
		MPI_Waitall(NREQ, req, MPI_STATUSES_IGNORE);
	}
	for (int k = 0; k < NREQ; k++)
		if (req[k] != MPI_REQUEST_NULL)
			RS_FAIL("%s: request %d not freed", how, k);
	check_block(r, (size_t)rs_rank * BIG, BIG, how);
	check_block(r2, (size_t)rs_rank * SMALL, SMALL, how);
	check_block(r3, 0, SMALL, how);
	if (in != left + 100)
		RS_FAIL("%s: received %d from rank %d", how, in, left);
	free(s);
	free(r);
}

/*
 * MPI_Request_free of running operations: the first is done once a later one on its
 * communicator completed (start order), the second by MPI_Comm_free, the third is left
 * for MPI_Finalize (its buffers static).
 */
static void test_request_free(MPI_Comm keep)
{
	enum { BIG = 100000, SMALL = 64 };
	static int lf_in[SMALL * 8], lf_out[SMALL];
	int *s = malloc(sizeof(int) * BIG * (size_t)rs_size), *r = malloc(sizeof(int) * BIG);
	int s2[SMALL * 8], r2[SMALL], r3[SMALL];
	MPI_Request req, later;
	MPI_Comm dup;

	rs_fill(s, BIG * (size_t)rs_size, &rs_types[2], 0, rs_rank);
	rs_fill(s2, SMALL * (size_t)rs_size, &rs_types[2], 0, rs_rank);
	MPI_Ireduce_scatter_block(s, r, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
	MPI_Request_free(&req);
	if (req != MPI_REQUEST_NULL)
		RS_FAIL("MPI_Request_free left the request");
	MPI_Ireduce_scatter_block(s2, r2, SMALL, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &later);
	MPI_Wait(&later, MPI_STATUS_IGNORE);
	check_block(r, (size_t)rs_rank * BIG, BIG, "freed, then a later one waited");
	check_block(r2, (size_t)rs_rank * SMALL, SMALL, "the later one");
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Ireduce_scatter_block(s2, r3, SMALL, MPI_INT, MPI_SUM, dup, &req);
	MPI_Request_free(&req);
	MPI_Comm_free(&dup);
	check_block(r3, (size_t)rs_rank * SMALL, SMALL, "freed, then MPI_Comm_free");
	rs_fill(lf_in, SMALL * (size_t)rs_size, &rs_types[2], 0, rs_rank);
	MPI_Ireduce_scatter_block(lf_in, lf_out, SMALL, MPI_INT, MPI_SUM, keep, &req);
	MPI_Request_free(&req);
	started += 4;
	free(s);
	free(r);
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	for (int i = 0; i < *len; i++)
		((int *)inout)[i] += ((int *)in)[i];
}

/* A call that must go to PMPI_Ireduce_scatter_block for reason, with PMPI's result. */
static void expect_pmpi(const char *what, int reason, int rc, MPI_Op op, MPI_Comm comm)
{
	int csize, s[4 * 8], got[4] = {0}, ref[4] = {0};
	struct optireduce_pmpi_stats a, b;
	MPI_Request req;

	PMPI_Comm_size(comm, &csize);
	rs_fill(s, 4 * (size_t)csize, &rs_types[2], 0, rs_rank);
	PMPI_Reduce_scatter_block(s, ref, rc, MPI_INT, op, comm);
	a = rs_snap();
	if (MPI_Ireduce_scatter_block(s, got, rc, MPI_INT, op, comm, &req) != MPI_SUCCESS)
		RS_FAIL("%s: did not start", what);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	b = rs_snap();
	rs_cases++;
	if (b.to_pmpi_by_reason[reason] != a.to_pmpi_by_reason[reason] + 1 ||
	    b.ireduce_scatter_served != a.ireduce_scatter_served ||
	    b.ireduce_scatter_calls != a.ireduce_scatter_calls + 1)
		RS_FAIL("%s: not sent to PMPI as '%s'", what, rs_reason_name(reason));
	if (memcmp(got, ref, sizeof(got)))
		RS_FAIL("%s: result differs from PMPI_Reduce_scatter_block", what);
}

static void test_fallbacks(void)
{
	MPI_Op uop;

	MPI_Op_create(user_sum, 1, &uop);
	expect_pmpi("user op", OPTIREDUCE_PMPI_REASON_OP, 4, uop, MPI_COMM_WORLD);
	expect_pmpi("MPI_COMM_SELF", OPTIREDUCE_PMPI_REASON_SINGLE, 4, MPI_SUM, MPI_COMM_SELF);
	expect_pmpi("recvcount 0", OPTIREDUCE_PMPI_REASON_EMPTY, 0, MPI_SUM, MPI_COMM_WORLD);
	MPI_Op_free(&uop);
	if (rs_rank == 0)
		printf("%-24s done\n", "fallbacks");
}

int main(int argc, char **argv)
{
	struct optireduce_pmpi_stats a, b;
	MPI_Comm rev, dup, keep;
	int ret = rs_init(&argc, &argv);

	if (ret)
		return ret;
	bounded_run = argc > 1 && strcmp(argv[1], "-b") == 0;
	if (rs_rank == 0)
		printf("%d ranks%s\n", rs_size,
		       bounded_run ? ", bounded policy float,double:>=1k" : "");
	run_all(MPI_COMM_WORLD, "MPI_COMM_WORLD", 1);
	PMPI_Comm_split(MPI_COMM_WORLD, 0, rs_size - rs_rank, &rev);
	run_all(rev, "split, reversed ranks", 0);
	PMPI_Comm_free(&rev);
	/* Before the freed operation left for MPI_Finalize, whose completion moves the counters. */
	test_fallbacks();
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_dup(MPI_COMM_WORLD, &keep);
	a = rs_snap();
	test_mixed(dup, 0);
	test_mixed(dup, 1);
	test_request_free(keep);
	b = rs_snap();
	/* The last freed one may still be running; every other one was served and finished. */
	if (b.ireduce_scatter_calls - a.ireduce_scatter_calls != (uint64_t)started ||
	    b.ireduce_scatter_served - a.ireduce_scatter_served + 1 < (uint64_t)started ||
	    b.to_pmpi != a.to_pmpi)
		RS_FAIL("requests: %d calls made, %llu counted, %llu served, %llu to PMPI", started,
		        (unsigned long long)(b.ireduce_scatter_calls - a.ireduce_scatter_calls),
		        (unsigned long long)(b.ireduce_scatter_served - a.ireduce_scatter_served),
		        (unsigned long long)(b.to_pmpi - a.to_pmpi));
	if (rs_rank == 0)
		printf("%-24s done\n", "mixed requests, free");
	MPI_Comm_free(&dup);
	/* keep stays allocated with a freed operation pending: MPI_Finalize finishes it. */
	return rs_finish("MPI_Ireduce_scatter_block");
}
