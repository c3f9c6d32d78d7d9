/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Reduce_scatter_block through liboptireduce_pmpi.so against
 * PMPI_Reduce_scatter_block on the same inputs.
 *
 * Built with plain mpicc, never linked with liboptireduce: run it under
 * LD_PRELOAD=liboptireduce_pmpi.so (without it, it skips: 77).
 *
 * For integer and floating datatypes x SUM, PROD, MIN, MAX x recvcount
 * {0, 1, 7, 1000, 100003} x in place or not, on MPI_COMM_WORLD and on a split
 * in reversed rank order: each rank's block must equal PMPI's (integers and
 * MIN/MAX bit for bit, floating SUM and PROD within 2 N eps of the
 * magnitudes), the send buffer and everything past the block must be left
 * alone, and the call must be counted where it belongs.  Then each kind of
 * call liboptireduce cannot serve (derived datatype, user op, unsupported
 * datatype, one rank, intercommunicator, count 0) must go to PMPI with its
 * reason and PMPI's result.
 *
 *   pmpi_reduce_scatter [-b]   -b: OPTIREDUCE_PMPI_BOUNDED="float,double:>=1k" is
 *                              set: floating SUM of >= 1 KiB on MPI_COMM_WORLD
 *                              chooses bounded and must run exact all the same,
 *                              counted as bounded_declined
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rs_check.h"

static int bounded_run;

/* Counters: served exact (bounded_declined too when the policy chose bounded), or PMPI. */
static void check_route(const char *cname, const struct rs_type *t, int op, int rc, int csize,
                        int is_world, const struct optireduce_pmpi_stats *a,
                        const struct optireduce_pmpi_stats *b)
{
	int declines = bounded_run && is_world && op == 0 && t->is_float &&
	               (size_t)rc * (size_t)csize * (size_t)t->size >= 1024;

	if (b->calls != a->calls + 1 || b->reduce_scatter_calls != a->reduce_scatter_calls + 1)
		RS_FAIL("%s %s: call not counted as MPI_Reduce_scatter_block", cname, t->name);
	if (rc == 0) {
		if (b->to_pmpi_by_reason[OPTIREDUCE_PMPI_REASON_EMPTY] !=
		    a->to_pmpi_by_reason[OPTIREDUCE_PMPI_REASON_EMPTY] + 1)
			RS_FAIL("%s %s %s recvcount 0: not sent to PMPI", cname, t->name,
			        rs_op_names[op]);
	} else if (b->served_exact != a->served_exact + 1 ||
	           b->reduce_scatter_served != a->reduce_scatter_served + 1 ||
	           b->to_pmpi != a->to_pmpi || b->served_bounded != a->served_bounded ||
	           b->bounded_declined != a->bounded_declined + (uint64_t)declines) {
		RS_FAIL("%s %s %s recvcount %d: not served exact (exact +%llu, declined +%llu)",
		        cname, t->name, rs_op_names[op], rc,
		        (unsigned long long)(b->served_exact - a->served_exact),
		        (unsigned long long)(b->bounded_declined - a->bounded_declined));
	}
}

static void run_case(MPI_Comm comm, const char *cname, int is_world, const struct rs_type *t,
                     int op, int rc, int in_place)
{
	size_t es = (size_t)t->size, first = 0, bad;
	struct optireduce_pmpi_stats a, b;
	struct rs_case c;
	int ret;

	rs_prepare(&c, comm, t, op, rc, in_place);
	a = rs_snap();
	ret = MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : c.in, c.got, rc, t->dt, rs_ops[op],
	                               comm);
	b = rs_snap();
	rs_cases++;
	if (ret != MPI_SUCCESS)
		RS_FAIL("%s %s %s recvcount %d: returned %d", cname, t->name, rs_op_names[op], rc,
		        ret);
	check_route(cname, t, op, rc, c.csize, is_world, &a, &b);
	bad = rs_compare(c.got, c.ref, t, op, c.csize, (size_t)c.crank * (size_t)rc, (size_t)rc,
	                 &first);
	if (bad)
		RS_FAIL("%s %s %s recvcount %d%s: %zu wrong, first [%zu] = %g, PMPI %g", cname,
		        t->name, rs_op_names[op], rc, in_place ? " in place" : "", bad, first,
		        rs_load(c.got, first, t), rs_load(c.ref, first, t));
	if (!in_place && memcmp(c.in, c.keep, c.n * es))
		RS_FAIL("%s %s %s recvcount %d: sendbuf modified", cname, t->name, rs_op_names[op],
		        rc);
	for (size_t i = (size_t)rc * es; !in_place && i < c.bytes; i++)
		if (c.got[i] != 0xa5) {
			RS_FAIL("%s %s %s recvcount %d: wrote past the block", cname, t->name,
			        rs_op_names[op], rc);
			break;
		}
	rs_release(&c);
}

static void run_all(MPI_Comm comm, const char *cname, int is_world)
{
	static const int rcounts[] = {0, 1, 7, 1000, 100003};

	for (int ti = 0; ti < RS_NTYPES; ti++)
		for (int op = 0; op < 4; op++)
			for (size_t c = 0; c < sizeof(rcounts) / sizeof(rcounts[0]); c++)
				for (int ip = 0; ip < 2; ip++)
					run_case(comm, cname, is_world, &rs_types[ti], op,
					         rcounts[c], ip);
	if (rs_rank == 0)
		printf("%-24s done\n", cname);
}

/* One call that must go to PMPI for reason, with PMPI's result bit for bit. */
static void expect_pmpi(const char *what, int reason, const void *sbuf, size_t rbytes, int rc,
                        MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	unsigned char *got = calloc(1, rbytes + 1), *ref = calloc(1, rbytes + 1);
	struct optireduce_pmpi_stats a, b;
	int ret;

	PMPI_Reduce_scatter_block(sbuf, ref, rc, dt, op, comm);
	a = rs_snap();
	ret = MPI_Reduce_scatter_block(sbuf, got, rc, dt, op, comm);
	b = rs_snap();
	rs_cases++;
	if (ret != MPI_SUCCESS)
		RS_FAIL("%s: returned %d", what, ret);
	if (b.to_pmpi_by_reason[reason] != a.to_pmpi_by_reason[reason] + 1 ||
	    b.served_exact != a.served_exact || b.reduce_scatter_served != a.reduce_scatter_served)
		RS_FAIL("%s: not sent to PMPI as '%d'", what, reason);
	if (memcmp(got, ref, rbytes))
		RS_FAIL("%s: result differs from PMPI_Reduce_scatter_block", what);
	free(got);
	free(ref);
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	for (int i = 0; i < *len; i++)
		((int *)inout)[i] += ((int *)in)[i];
}

static void user_sum_pairs(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	for (int i = 0; i < 2 * *len; i++)
		((int *)inout)[i] += ((int *)in)[i];
}

static void test_fallbacks(void)
{
	int *ints = malloc(sizeof(int) * 4 * (size_t)rs_size);
	short *shorts = malloc(sizeof(short) * 4 * (size_t)rs_size);
	double dbls[4];
	MPI_Datatype contig;
	MPI_Op uop, uop2;

	for (int i = 0; i < 4 * rs_size; i++) {
		ints[i] = (i * 5 + rs_rank * 3) % 11 - 5;
		shorts[i] = (short)(i - rs_rank);
	}
	for (int i = 0; i < 4; i++)
		dbls[i] = i * 0.25 - rs_rank;
	MPI_Type_contiguous(2, MPI_INT, &contig);
	MPI_Type_commit(&contig);
	MPI_Op_create(user_sum, 1, &uop);
	MPI_Op_create(user_sum_pairs, 1, &uop2);
	expect_pmpi("MPI_Type_contiguous(2, MPI_INT)", OPTIREDUCE_PMPI_REASON_DTYPE, ints,
	            2 * sizeof(int), 1, contig, uop2, MPI_COMM_WORLD);
	expect_pmpi("user op on MPI_INT", OPTIREDUCE_PMPI_REASON_OP, ints, 4 * sizeof(int), 4,
	            MPI_INT, uop, MPI_COMM_WORLD);
	expect_pmpi("MPI_BXOR on MPI_INT", OPTIREDUCE_PMPI_REASON_OP, ints, 4 * sizeof(int), 4,
	            MPI_INT, MPI_BXOR, MPI_COMM_WORLD);
	expect_pmpi("MPI_SHORT SUM", OPTIREDUCE_PMPI_REASON_DTYPE, shorts, 4 * sizeof(short), 4,
	            MPI_SHORT, MPI_SUM, MPI_COMM_WORLD);
	expect_pmpi("MPI_COMM_SELF", OPTIREDUCE_PMPI_REASON_SINGLE, dbls, sizeof(dbls), 4,
	            MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
	expect_pmpi("recvcount 0", OPTIREDUCE_PMPI_REASON_EMPTY, dbls, sizeof(dbls), 0, MPI_DOUBLE,
	            MPI_SUM, MPI_COMM_WORLD);
	MPI_Type_free(&contig);
	MPI_Op_free(&uop);
	MPI_Op_free(&uop2);
	/* Intercommunicator (even and odd ranks): each group's sum is scattered over the other
	 * group, one element each.  Groups of equal size: Open MPI 4.1 truncates otherwise. */
	if (rs_size % 2 == 0) {
		MPI_Comm local, inter;
		int color = rs_rank % 2;
		MPI_Comm_split(MPI_COMM_WORLD, color, rs_rank, &local);
		MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 1, 17, &inter);
		expect_pmpi("intercommunicator SUM", OPTIREDUCE_PMPI_REASON_INTERCOMM, ints,
		            sizeof(int), 1, MPI_INT, MPI_SUM, inter);
		MPI_Comm_free(&inter);
		MPI_Comm_free(&local);
	}
	free(ints);
	free(shorts);
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
		printf("%d ranks, %d datatypes%s\n", rs_size, RS_NTYPES,
		       bounded_run ? ", bounded policy float,double:>=1k" : "");
	run_all(MPI_COMM_WORLD, "MPI_COMM_WORLD", 1);
	MPI_Comm_split(MPI_COMM_WORLD, 0, rs_size - rs_rank, &rev);
	run_all(rev, "split, reversed ranks", 0);
	MPI_Comm_free(&rev);
	test_fallbacks();
	{
		struct optireduce_pmpi_stats s = rs_snap();
		if (rs_rank == 0)
			printf("stats: %llu MPI_Reduce_scatter_block calls, %llu served, "
			       "%llu declined bounded\n",
			       (unsigned long long)s.reduce_scatter_calls,
			       (unsigned long long)s.reduce_scatter_served,
			       (unsigned long long)s.bounded_declined);
	}
	return rs_finish("MPI_Reduce_scatter_block");
}
