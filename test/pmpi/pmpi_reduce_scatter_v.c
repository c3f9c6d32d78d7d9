/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Reduce_scatter (a count per rank) through liboptireduce_pmpi.so against
 * PMPI_Reduce_scatter on the same inputs.
 *
 * Built with plain mpicc, never linked with liboptireduce: run it under
 * LD_PRELOAD=liboptireduce_pmpi.so (without it, it skips: 77).
 *
 * Integer and floating datatypes x SUM, PROD, MIN, MAX x recvcounts patterns x in place or
 * not, on MPI_COMM_WORLD and on a split in reversed rank order.  The patterns: all 0 (PMPI,
 * count-0), equal small and large (served as MPI_Reduce_scatter_block), different small
 * (served as an allreduce of the whole), different with an empty block on rank 0 (whose
 * receive buffer is then NULL), and different past OPTIREDUCE_PMPI_UNEVEN_MAX bytes (PMPI,
 * uneven-large; the 1-byte types stay under it and are served).  Each rank's block must
 * equal PMPI's, the send buffer and everything past the block must be left alone, and the
 * counters must say where the call went.  Then calls liboptireduce cannot serve (user op,
 * one rank, intercommunicator) go to PMPI with their reason and PMPI's result.
 *
 *   pmpi_reduce_scatter_v [-b]   -b: OPTIREDUCE_PMPI_BOUNDED="float,double:>=1k" is set:
 *                                floating SUM of >= 1 KiB in all on MPI_COMM_WORLD
 *                                chooses bounded, runs exact and counts as bounded_declined
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rs_check.h"

static int bounded_run;

enum { P_ZERO, P_EQUAL, P_EQUAL_BIG, P_UNEVEN, P_UNEVEN_EMPTY, P_UNEVEN_BIG, NPATTERNS };
static const char *const pattern_names[NPATTERNS] = {
    "all 0", "equal 7", "equal 100003", "different", "different, rank 0 empty", "different, large"};

static int pattern_count(int p, int r)
{
	switch (p) {
	case P_ZERO:
		return 0;
	case P_EQUAL:
		return 7;
	case P_EQUAL_BIG:
		return 100003;
	case P_UNEVEN:
		return 5 * r + 1;
	case P_UNEVEN_EMPTY:
		return r == 0 ? 0 : 1000 + r;
	default:
		return 30000 + 7 * r;
	}
}

/* -1: served; else the reason it must go to PMPI. */
static int expected_reason(int p, size_t total, const struct rs_type *t)
{
	if (p == P_ZERO)
		return OPTIREDUCE_PMPI_REASON_EMPTY;
	if (p != P_EQUAL && p != P_EQUAL_BIG &&
	    total * (size_t)t->size > OPTIREDUCE_PMPI_UNEVEN_MAX)
		return OPTIREDUCE_PMPI_REASON_UNEVEN;
	return -1;
}

/* reason: -1 when served, declines: 1 when served and the policy picks bounded. */
static void check_route(const char *what, int reason, int declines,
                        const struct optireduce_pmpi_stats *a,
                        const struct optireduce_pmpi_stats *b)
{
	if (b->calls != a->calls + 1 || b->reduce_scatter_v_calls != a->reduce_scatter_v_calls + 1)
		RS_FAIL("%s: not counted as MPI_Reduce_scatter", what);
	if (reason >= 0) {
		if (b->to_pmpi_by_reason[reason] != a->to_pmpi_by_reason[reason] + 1 ||
		    b->reduce_scatter_v_served != a->reduce_scatter_v_served)
			RS_FAIL("%s: not sent to PMPI as '%s'", what, rs_reason_name(reason));
	} else if (b->served_exact != a->served_exact + 1 ||
	           b->reduce_scatter_v_served != a->reduce_scatter_v_served + 1 ||
	           b->to_pmpi != a->to_pmpi || b->served_bounded != a->served_bounded ||
	           b->bounded_declined != a->bounded_declined + (uint64_t)declines) {
		RS_FAIL("%s: not served exact by liboptireduce (exact +%llu, to PMPI +%llu, "
		        "declined +%llu)",
		        what, (unsigned long long)(b->served_exact - a->served_exact),
		        (unsigned long long)(b->to_pmpi - a->to_pmpi),
		        (unsigned long long)(b->bounded_declined - a->bounded_declined));
	}
}

static void run_case(MPI_Comm comm, const char *cname, int is_world, const struct rs_type *t,
                     int op, int p, int in_place)
{
	size_t es = (size_t)t->size, total = 0, displ = 0, bytes, first, bad, mine;
	unsigned char *in, *keep, *got, *ref;
	struct optireduce_pmpi_stats a, b;
	int crank, csize, ret, *rc, reason, declines;
	void *rbuf;
	char what[160];

	PMPI_Comm_rank(comm, &crank);
	PMPI_Comm_size(comm, &csize);
	rc = malloc(sizeof(int) * (size_t)csize);
	for (int r = 0; r < csize; r++) {
		rc[r] = pattern_count(p, r);
		displ += r < crank ? (size_t)rc[r] : 0;
		total += (size_t)rc[r];
	}
	mine = (size_t)rc[crank];
	snprintf(what, sizeof(what), "%s %s %s %s%s", cname, t->name, rs_op_names[op],
	         pattern_names[p], in_place ? " in place" : "");
	bytes = total * es + 1;
	in = malloc(bytes), keep = malloc(bytes), got = malloc(bytes), ref = malloc(bytes);
	rs_fill(in, total, t, op, crank);
	memcpy(keep, in, total * es);
	memset(ref, 0x5a, bytes);
	PMPI_Reduce_scatter(in, ref, rc, t->dt, rs_ops[op], comm);
	if (in_place)
		memcpy(got, in, total * es);
	else
		memset(got, 0xa5, bytes);
	/* A rank with an empty block may pass no receive buffer. */
	rbuf = !in_place && mine == 0 && p == P_UNEVEN_EMPTY ? NULL : got;
	a = rs_snap();
	ret = MPI_Reduce_scatter(in_place ? MPI_IN_PLACE : in, rbuf, rc, t->dt, rs_ops[op], comm);
	b = rs_snap();
	rs_cases++;
	if (ret != MPI_SUCCESS)
		RS_FAIL("%s: returned %d", what, ret);
	reason = expected_reason(p, total, t);
	declines =
	    bounded_run && is_world && reason < 0 && op == 0 && t->is_float && total * es >= 1024;
	check_route(what, reason, declines, &a, &b);
	bad = rs_compare(got, ref, t, op, csize, displ, mine, &first);
	if (bad)
		RS_FAIL("%s: %zu wrong, first [%zu] = %g, PMPI %g", what, bad, first,
		        rs_load(got, first, t), rs_load(ref, first, t));
	if (!in_place && memcmp(in, keep, total * es))
		RS_FAIL("%s: sendbuf modified", what);
	for (size_t i = mine * es; !in_place && i < bytes; i++)
		if (got[i] != 0xa5) {
			RS_FAIL("%s: wrote past the block", what);
			break;
		}
	free(in), free(keep), free(got), free(ref), free(rc);
}

static void run_all(MPI_Comm comm, const char *cname, int is_world)
{
	for (int ti = 0; ti < RS_NTYPES; ti++)
		for (int op = 0; op < RS_NOPS; op++)
			for (int p = 0; p < NPATTERNS; p++)
				for (int ip = 0; ip < 2; ip++)
					run_case(comm, cname, is_world, &rs_types[ti], op, p, ip);
	if (rs_rank == 0)
		printf("%-24s done\n", cname);
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	for (int i = 0; i < *len; i++)
		((int *)inout)[i] += ((int *)in)[i];
}

/* One call that must go to PMPI_Reduce_scatter for reason, with PMPI's result bit for bit. */
static void expect_pmpi(const char *what, int reason, MPI_Op op, MPI_Comm comm, int inter)
{
	int csize = 0, s[64], got[8] = {0}, ref[8] = {0}, rc[16];
	struct optireduce_pmpi_stats a, b;

	if (inter)
		PMPI_Comm_remote_size(comm, &csize);
	else
		PMPI_Comm_size(comm, &csize);
	for (int r = 0; r < csize && r < 16; r++)
		rc[r] = 1 + r % 3;
	rs_fill(s, 64, &rs_types[2], 0, rs_rank);
	PMPI_Reduce_scatter(s, ref, rc, MPI_INT, op, comm);
	a = rs_snap();
	if (MPI_Reduce_scatter(s, got, rc, MPI_INT, op, comm) != MPI_SUCCESS)
		RS_FAIL("%s: returned an error", what);
	b = rs_snap();
	rs_cases++;
	if (b.to_pmpi_by_reason[reason] != a.to_pmpi_by_reason[reason] + 1 ||
	    b.reduce_scatter_v_served != a.reduce_scatter_v_served)
		RS_FAIL("%s: not sent to PMPI as '%s'", what, rs_reason_name(reason));
	if (memcmp(got, ref, sizeof(got)))
		RS_FAIL("%s: result differs from PMPI_Reduce_scatter", what);
}

static void test_fallbacks(void)
{
	MPI_Op uop;

	MPI_Op_create(user_sum, 1, &uop);
	expect_pmpi("user op", OPTIREDUCE_PMPI_REASON_OP, uop, MPI_COMM_WORLD, 0);
	expect_pmpi("MPI_BXOR", OPTIREDUCE_PMPI_REASON_OP, MPI_BXOR, MPI_COMM_WORLD, 0);
	expect_pmpi("MPI_COMM_SELF", OPTIREDUCE_PMPI_REASON_SINGLE, MPI_SUM, MPI_COMM_SELF, 0);
	MPI_Op_free(&uop);
	/* Even and odd ranks; groups of equal size (Open MPI 4.1 truncates otherwise). */
	if (rs_size % 2 == 0) {
		MPI_Comm local, inter;
		int color = rs_rank % 2;
		MPI_Comm_split(MPI_COMM_WORLD, color, rs_rank, &local);
		MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 1, 17, &inter);
		expect_pmpi("intercommunicator", OPTIREDUCE_PMPI_REASON_INTERCOMM, MPI_SUM, inter,
		            1);
		MPI_Comm_free(&inter);
		MPI_Comm_free(&local);
	}
	if (rs_rank == 0)
		printf("%-24s done\n", "fallbacks");
}

int main(int argc, char **argv)
{
	MPI_Comm rev;
	int ret;

	bounded_run = argc > 1 && strcmp(argv[1], "-b") == 0;
	ret = rs_init(&argc, &argv);
	if (ret)
		return ret;
	if (rs_rank == 0)
		printf("%d ranks, blocks of different sizes served up to %d bytes\n", rs_size,
		       OPTIREDUCE_PMPI_UNEVEN_MAX);
	run_all(MPI_COMM_WORLD, "MPI_COMM_WORLD", 1);
	PMPI_Comm_split(MPI_COMM_WORLD, 0, rs_size - rs_rank, &rev);
	run_all(rev, "split, reversed ranks", 0);
	PMPI_Comm_free(&rev);
	test_fallbacks();
	return rs_finish("MPI_Reduce_scatter");
}
