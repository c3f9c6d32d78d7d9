/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Ireduce_scatter (a count per rank, nonblocking) through liboptireduce_pmpi.so against a
 * reference the test computes itself (rs_reference: the op over every rank's inputs, no MPI).
 *
 * Built with plain mpicc, never linked with liboptireduce: run it under
 * LD_PRELOAD=liboptireduce_pmpi.so (without it, it skips: 77).
 *
 *   - Integer and floating datatypes x SUM, PROD, MIN, MAX x recvcounts patterns x in place
 *     or not, on MPI_COMM_WORLD and on a split in reversed rank order, completed in turn by
 *     MPI_Wait, an MPI_Test loop and MPI_Waitall with a plain point-to-point request.  The
 *     patterns: all 0 (PMPI, count-0), equal (served as MPI_Ireduce_scatter_block),
 *     different (served as an allreduce of the whole), different with an empty block on
 *     rank 0 (whose receive buffer is then NULL), different with every odd rank's block
 *     empty, and different past OPTIREDUCE_PMPI_UNEVEN_MAX bytes (PMPI, uneven-large, where
 *     the total is that large).  Each rank's block must equal the reference, the send
 *     buffer and everything past the block must be left alone, the status must be a
 *     collective's, and the counters must say where the call went.
 *   - Several of these started at once with an MPI_Iallreduce and point-to-point requests,
 *     completed by one MPI_Waitall; MPI_Request_free of one served with a scratch buffer,
 *     finished by a later one on its communicator.
 *   - Calls liboptireduce cannot serve (user op, one rank) go to PMPI_Ireduce_scatter with
 *     their reason and still complete as requests.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rs_check.h"

#define TAG 37

/* P_HUGE, past the cap on any number of ranks, is test_mixed's only. */
enum { P_ZERO, P_EQUAL, P_UNEVEN, P_UNEVEN_EMPTY, P_UNEVEN_ODD, P_UNEVEN_BIG, NPATTERNS, P_HUGE };
static const char *const pattern_names[NPATTERNS] = {"all 0",
                                                     "equal 7",
                                                     "different",
                                                     "different, rank 0 empty",
                                                     "different, odd ranks empty",
                                                     "different, large"};

static int pattern_count(int p, int r)
{
	switch (p) {
	case P_ZERO:
		return 0;
	case P_EQUAL:
		return 7;
	case P_UNEVEN:
		return 5 * r + 1;
	case P_UNEVEN_EMPTY:
		return r == 0 ? 0 : 1000 + r;
	case P_UNEVEN_ODD:
		return r % 2 ? 0 : 100 * r + 3;
	case P_HUGE:
		return 70000 + 7 * r;
	default:
		return 30000 + 7 * r;
	}
}

/* -1: served; else the reason it must go to PMPI. */
static int expected_reason(int p, size_t total, const struct rs_type *t)
{
	if (p == P_ZERO)
		return OPTIREDUCE_PMPI_REASON_EMPTY;
	if (p != P_EQUAL && total * (size_t)t->size > OPTIREDUCE_PMPI_UNEVEN_MAX)
		return OPTIREDUCE_PMPI_REASON_UNEVEN;
	return -1;
}

static void check_route(const char *what, int reason, const struct optireduce_pmpi_stats *a,
                        const struct optireduce_pmpi_stats *b)
{
	if (b->calls != a->calls + 1 ||
	    b->ireduce_scatter_v_calls != a->ireduce_scatter_v_calls + 1)
		RS_FAIL("%s: not counted as MPI_Ireduce_scatter", what);
	if (reason >= 0) {
		if (b->to_pmpi_by_reason[reason] != a->to_pmpi_by_reason[reason] + 1 ||
		    b->ireduce_scatter_v_served != a->ireduce_scatter_v_served)
			RS_FAIL("%s: not sent to PMPI as '%s'", what, rs_reason_name(reason));
	} else if (b->served_exact != a->served_exact + 1 ||
	           b->ireduce_scatter_v_served != a->ireduce_scatter_v_served + 1 ||
	           b->to_pmpi != a->to_pmpi || b->served_bounded != a->served_bounded ||
	           b->errors != a->errors) {
		RS_FAIL(
		    "%s: not served exact by liboptireduce (exact +%llu, served +%llu, to PMPI "
		    "+%llu)",
		    what, (unsigned long long)(b->served_exact - a->served_exact),
		    (unsigned long long)(b->ireduce_scatter_v_served - a->ireduce_scatter_v_served),
		    (unsigned long long)(b->to_pmpi - a->to_pmpi));
	}
}

/* Completes req by MPI_Wait (how 0), an MPI_Test loop (1) or MPI_Waitall with a ring
 * exchange on MPI_COMM_WORLD (2); checks the empty status of a served collective (Open MPI
 * leaves the count of its own undefined). */
static void complete(MPI_Request *req, int how, int served, const char *what)
{
	int flag = 0, count = -1, cancelled = -1, out = rs_rank, in = -1;
	int left = (rs_rank + rs_size - 1) % rs_size, right = (rs_rank + 1) % rs_size;
	MPI_Status st, sts[3];
	MPI_Request all[3];

	if (how == 0) {
		MPI_Wait(req, &st);
	} else if (how == 1) {
		while (!flag)
			MPI_Test(req, &flag, &st);
	} else {
		MPI_Irecv(&in, 1, MPI_INT, left, TAG, MPI_COMM_WORLD, &all[0]);
		all[1] = *req;
		MPI_Isend(&out, 1, MPI_INT, right, TAG, MPI_COMM_WORLD, &all[2]);
		MPI_Waitall(3, all, sts);
		*req = all[1];
		st = sts[1];
		if (in != left || all[0] != MPI_REQUEST_NULL || all[2] != MPI_REQUEST_NULL)
			RS_FAIL("%s: MPI_Waitall: received %d from rank %d", what, in, left);
	}
	MPI_Get_count(&st, MPI_BYTE, &count);
	MPI_Test_cancelled(&st, &cancelled);
	if (*req != MPI_REQUEST_NULL || (served && (count != 0 || cancelled)))
		RS_FAIL("%s: request %s, status count %d cancelled %d", what,
		        *req == MPI_REQUEST_NULL ? "freed" : "left", count, cancelled);
}

/* This rank's recvcounts for pattern p on comm: *displ and *total in elements. */
static int *counts_of(int p, int crank, int csize, size_t *displ, size_t *total)
{
	int *rc = malloc(sizeof(int) * (size_t)csize);

	*displ = *total = 0;
	for (int r = 0; r < csize; r++) {
		rc[r] = pattern_count(p, r);
		*displ += r < crank ? (size_t)rc[r] : 0;
		*total += (size_t)rc[r];
	}
	return rc;
}

static void check_result(const char *what, const unsigned char *got, const struct rs_type *t,
                         int op, int csize, size_t displ, size_t mine)
{
	unsigned char *ref = malloc(mine * (size_t)t->size + 1);
	size_t first, bad;

	rs_reference(ref, t, op, csize, displ, mine);
	bad = rs_compare(got, ref, t, op, csize, displ, mine, &first);
	if (bad)
		RS_FAIL("%s: %zu wrong, first [%zu] = %g, want %g", what, bad, first,
		        rs_load(got, first, t), rs_load(ref, first, t));
	free(ref);
}

static void run_case(MPI_Comm comm, const char *cname, const struct rs_type *t, int op, int p,
                     int in_place)
{
	size_t es = (size_t)t->size, total, displ, bytes, mine;
	struct optireduce_pmpi_stats a, b;
	unsigned char *in, *keep, *got;
	int crank, csize, ret, *rc, reason, how = (int)(rs_cases % 3);
	MPI_Request req = MPI_REQUEST_NULL;
	void *rbuf;
	char what[200];

	PMPI_Comm_rank(comm, &crank);
	PMPI_Comm_size(comm, &csize);
	rc = counts_of(p, crank, csize, &displ, &total);
	mine = (size_t)rc[crank];
	reason = expected_reason(p, total, t);
	snprintf(what, sizeof(what), "%s %s %s %s%s, %s", cname, t->name, rs_op_names[op],
	         pattern_names[p], in_place ? " in place" : "",
	         how == 0   ? "MPI_Wait"
	         : how == 1 ? "MPI_Test loop"
	                    : "MPI_Waitall");
	bytes = total * es + 1;
	in = malloc(bytes), keep = malloc(bytes), got = malloc(bytes);
	rs_fill(in, total, t, op, crank);
	memcpy(keep, in, total * es);
	if (in_place)
		memcpy(got, in, total * es);
	else
		memset(got, 0xa5, bytes);
	/* A rank with an empty block may pass no receive buffer. */
	rbuf = !in_place && mine == 0 && p != P_ZERO ? NULL : got;
	a = rs_snap();
	ret = MPI_Ireduce_scatter(in_place ? MPI_IN_PLACE : in, rbuf, rc, t->dt, rs_ops[op], comm,
	                          &req);
	if (ret != MPI_SUCCESS)
		RS_FAIL("%s: returned %d", what, ret);
	else
		complete(&req, how, reason < 0, what);
	b = rs_snap();
	rs_cases++;
	check_route(what, reason, &a, &b);
	check_result(what, got, t, op, csize, displ, mine);
	if (!in_place && memcmp(in, keep, total * es))
		RS_FAIL("%s: sendbuf modified", what);
	for (size_t i = mine * es; !in_place && i < bytes; i++)
		if (got[i] != 0xa5) {
			RS_FAIL("%s: wrote past the block", what);
			break;
		}
	free(in), free(keep), free(got), free(rc);
}

static void run_all(MPI_Comm comm, const char *cname)
{
	for (int ti = 0; ti < RS_NTYPES; ti++)
		for (int op = 0; op < RS_NOPS; op++)
			for (int p = 0; p < NPATTERNS; p++)
				for (int ip = 0; ip < 2; ip++)
					run_case(comm, cname, &rs_types[ti], op, p, ip);
	if (rs_rank == 0)
		printf("%-24s done\n", cname);
}

/* Input and block of pattern p for MPI_INT SUM on MPI_COMM_WORLD. */
struct ibuf {
	int *s, *r, *rc;
	size_t displ, total, mine;
};

static void ibuf_init(struct ibuf *b, int p)
{
	b->rc = counts_of(p, rs_rank, rs_size, &b->displ, &b->total);
	b->mine = (size_t)b->rc[rs_rank];
	b->s = malloc(sizeof(int) * (b->total + 1));
	b->r = malloc(sizeof(int) * (b->mine + 1));
	rs_fill(b->s, b->total, &rs_types[2], 0, rs_rank);
}

static void ibuf_check(struct ibuf *b, const char *what)
{
	check_result(what, (const unsigned char *)b->r, &rs_types[2], 0, rs_size, b->displ,
	             b->mine);
	free(b->s), free(b->r), free(b->rc);
}

/*
 * Three MPI_Ireduce_scatter (different blocks, served; equal blocks, served; different past
 * the cap, PMPI), an MPI_Iallreduce and a ring exchange, all in flight at once and completed
 * by one MPI_Waitall; then MPI_Request_free of a served one with a scratch buffer, finished
 * in start order by a later one that is waited for.
 */
static void test_mixed(void)
{
	enum { NREQ = 6, SMALL = 100 };
	struct ibuf u, e, big, freed, later;
	int ar_s[SMALL], ar_r[SMALL], ar_ref[SMALL], out = rs_rank + 100, in = -1;
	int left = (rs_rank + rs_size - 1) % rs_size, right = (rs_rank + 1) % rs_size;
	struct optireduce_pmpi_stats a, b;
	MPI_Request req[NREQ], fr;

	ibuf_init(&u, P_UNEVEN_EMPTY), ibuf_init(&e, P_EQUAL), ibuf_init(&big, P_HUGE);
	rs_fill(ar_s, SMALL, &rs_types[2], 0, rs_rank);
	rs_reference(ar_ref, &rs_types[2], 0, rs_size, 0, SMALL);
	a = rs_snap();
	MPI_Irecv(&in, 1, MPI_INT, left, TAG, MPI_COMM_WORLD, &req[0]);
	MPI_Ireduce_scatter(u.s, u.r, u.rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[1]);
	MPI_Ireduce_scatter(e.s, e.r, e.rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[2]);
	MPI_Iallreduce(ar_s, ar_r, SMALL, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[3]);
	MPI_Ireduce_scatter(big.s, big.r, big.rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[4]);
	MPI_Isend(&out, 1, MPI_INT, right, TAG, MPI_COMM_WORLD, &req[5]);
	MPI_Waitall(NREQ, req, MPI_STATUSES_IGNORE);
	for (int k = 0; k < NREQ; k++)
		if (req[k] != MPI_REQUEST_NULL)
			RS_FAIL("MPI_Waitall mix: request %d not freed", k);
	if (in != left + 100)
		RS_FAIL("MPI_Waitall mix: received %d from rank %d", in, left);
	if (memcmp(ar_r, ar_ref, sizeof(ar_r)))
		RS_FAIL("MPI_Waitall mix: MPI_Iallreduce differs from the reference");
	ibuf_check(&u, "MPI_Waitall mix, different blocks");
	ibuf_check(&e, "MPI_Waitall mix, equal blocks");
	ibuf_check(&big, "MPI_Waitall mix, different blocks past the cap");
	ibuf_init(&freed, P_UNEVEN), ibuf_init(&later, P_UNEVEN_ODD);
	MPI_Ireduce_scatter(freed.s, freed.r, freed.rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &fr);
	MPI_Request_free(&fr);
	if (fr != MPI_REQUEST_NULL)
		RS_FAIL("MPI_Request_free left the request");
	MPI_Ireduce_scatter(later.s, later.r, later.rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &fr);
	MPI_Wait(&fr, MPI_STATUS_IGNORE);
	ibuf_check(&freed, "freed, then a later one waited");
	ibuf_check(&later, "the later one");
	b = rs_snap();
	rs_cases += 6;
	if (b.ireduce_scatter_v_calls - a.ireduce_scatter_v_calls != 5 ||
	    b.ireduce_scatter_v_served - a.ireduce_scatter_v_served != 4 || b.errors != a.errors)
		RS_FAIL(
		    "mixed requests: 5 calls, 4 served expected; %llu counted, %llu served",
		    (unsigned long long)(b.ireduce_scatter_v_calls - a.ireduce_scatter_v_calls),
		    (unsigned long long)(b.ireduce_scatter_v_served - a.ireduce_scatter_v_served));
	if (rs_rank == 0)
		printf("%-24s done\n", "mixed requests, free");
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	for (int i = 0; i < *len; i++)
		((int *)inout)[i] += ((int *)in)[i];
}

/* A call that must go to PMPI_Ireduce_scatter for reason, with the reference's result. */
static void expect_pmpi(const char *what, int reason, MPI_Op op, MPI_Comm comm)
{
	int csize, crank, s[64], got[4] = {0}, ref[4] = {0}, rc[16];
	struct optireduce_pmpi_stats a, b;
	MPI_Request req;
	size_t displ = 0;

	PMPI_Comm_size(comm, &csize);
	PMPI_Comm_rank(comm, &crank);
	for (int r = 0; r < csize && r < 16; r++) {
		rc[r] = 1 + r % 3;
		displ += r < crank ? (size_t)rc[r] : 0;
	}
	rs_fill(s, 64, &rs_types[2], 0, crank);
	rs_reference(ref, &rs_types[2], 0, csize, displ, (size_t)rc[crank]);
	a = rs_snap();
	if (MPI_Ireduce_scatter(s, got, rc, MPI_INT, op, comm, &req) != MPI_SUCCESS)
		RS_FAIL("%s: did not start", what);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	b = rs_snap();
	rs_cases++;
	if (b.to_pmpi_by_reason[reason] != a.to_pmpi_by_reason[reason] + 1 ||
	    b.ireduce_scatter_v_served != a.ireduce_scatter_v_served ||
	    b.ireduce_scatter_v_calls != a.ireduce_scatter_v_calls + 1)
		RS_FAIL("%s: not sent to PMPI as '%s'", what, rs_reason_name(reason));
	if (memcmp(got, ref, sizeof(got)))
		RS_FAIL("%s: result differs from the reference", what);
}

static void test_fallbacks(void)
{
	MPI_Op uop;

	MPI_Op_create(user_sum, 1, &uop);
	expect_pmpi("user op", OPTIREDUCE_PMPI_REASON_OP, uop, MPI_COMM_WORLD);
	expect_pmpi("MPI_COMM_SELF", OPTIREDUCE_PMPI_REASON_SINGLE, MPI_SUM, MPI_COMM_SELF);
	MPI_Op_free(&uop);
	if (rs_rank == 0)
		printf("%-24s done\n", "fallbacks");
}

int main(int argc, char **argv)
{
	MPI_Comm rev;
	int ret = rs_init(&argc, &argv);

	if (ret)
		return ret;
	if (rs_rank == 0)
		printf("%d ranks, blocks of different sizes served up to %d bytes\n", rs_size,
		       OPTIREDUCE_PMPI_UNEVEN_MAX);
	run_all(MPI_COMM_WORLD, "MPI_COMM_WORLD");
	PMPI_Comm_split(MPI_COMM_WORLD, 0, rs_size - rs_rank, &rev);
	run_all(rev, "split, reversed ranks");
	PMPI_Comm_free(&rev);
	test_mixed();
	test_fallbacks();
	return rs_finish("MPI_Ireduce_scatter");
}
