/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Allreduce through liboptireduce_pmpi.so against PMPI_Allreduce.
 *
 * Built with plain mpicc, never linked with liboptireduce: run it under
 * LD_PRELOAD=liboptireduce_pmpi.so.  Without the preload the counters
 * (optireduce_pmpi_stats, found with dlsym) are missing and it skips (77).
 *
 * For every served datatype and op, counts {0, 1, 7, 1000, 100003}, in place
 * or not, on MPI_COMM_WORLD, a dup (freed, then a new dup used), a split in
 * reversed rank order and a split leaving the last rank alone: the result
 * must equal PMPI_Allreduce's on the same inputs (integers and MIN/MAX bit
 * for bit; SUM/PROD of floats within 2 N eps of the magnitudes, since the
 * ring sums in another order), be the same on every rank, leave sendbuf
 * alone, and be counted where it belongs.  Then each kind of call that must
 * go to PMPI does, with the right reason and the right result.
 *
 *   pmpi_suite [-b]   -b: OPTIREDUCE_PMPI_BOUNDED="float,double:>=1k" is set;
 *                     float/double SUM of >= 1 KiB on MPI_COMM_WORLD must then
 *                     run bounded, or exact counted as bounded_declined
 */
#include <dlfcn.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "lib/pmpi/optireduce_pmpi.h"

#define BOUNDED_MIN_BYTES 1024

enum kind { SIGNED, UNSIGNED, FLOAT };

struct type {
	MPI_Datatype dt;
	const char *name;
	enum kind kind;
	int size;
};

static struct type types[40];
static int ntypes;

static const struct {
	const char *name;
	int index;
} ops[] = {{"SUM", 0}, {"PROD", 1}, {"MIN", 2}, {"MAX", 3}};
static MPI_Op op_handles[4];

static int (*get_stats)(struct optireduce_pmpi_stats *);
static const char *(*reason_name)(int);
static int world_rank, world_size, failures, bounded_run;
static long cases;

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		if (failures++ < 30) {                                                             \
			fprintf(stderr, "rank %d: ", world_rank);                                  \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
		}                                                                                  \
	} while (0)

static void add_type(MPI_Datatype dt, const char *name, enum kind kind)
{
	int size = 0;

	if (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &size) != MPI_SUCCESS)
		return;
	if (kind == FLOAT ? size != 4 && size != 8 : size != 1 && size != 4 && size != 8)
		return; /* not one the library has: checked with the fallbacks */
	types[ntypes].dt = dt;
	types[ntypes].name = name;
	types[ntypes].kind = kind;
	types[ntypes].size = size;
	ntypes++;
}

static void init_types(void)
{
	add_type(MPI_CHAR, "MPI_CHAR", CHAR_MIN < 0 ? SIGNED : UNSIGNED);
	add_type(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", SIGNED);
	add_type(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", UNSIGNED);
	add_type(MPI_INT, "MPI_INT", SIGNED);
	add_type(MPI_UNSIGNED, "MPI_UNSIGNED", UNSIGNED);
	add_type(MPI_LONG, "MPI_LONG", SIGNED);
	add_type(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", UNSIGNED);
	add_type(MPI_LONG_LONG, "MPI_LONG_LONG", SIGNED);
	add_type(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", UNSIGNED);
	add_type(MPI_INT8_T, "MPI_INT8_T", SIGNED);
	add_type(MPI_UINT8_T, "MPI_UINT8_T", UNSIGNED);
	add_type(MPI_INT32_T, "MPI_INT32_T", SIGNED);
	add_type(MPI_UINT32_T, "MPI_UINT32_T", UNSIGNED);
	add_type(MPI_INT64_T, "MPI_INT64_T", SIGNED);
	add_type(MPI_UINT64_T, "MPI_UINT64_T", UNSIGNED);
	add_type(MPI_AINT, "MPI_AINT", SIGNED);
	add_type(MPI_COUNT, "MPI_COUNT", SIGNED);
	add_type(MPI_FLOAT, "MPI_FLOAT", FLOAT);
	add_type(MPI_DOUBLE, "MPI_DOUBLE", FLOAT);
	add_type(MPI_INTEGER, "MPI_INTEGER", SIGNED);
	add_type(MPI_REAL, "MPI_REAL", FLOAT);
	add_type(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", FLOAT);
#ifdef MPI_INTEGER1
	add_type(MPI_INTEGER1, "MPI_INTEGER1", SIGNED);
#endif
#ifdef MPI_INTEGER8
	add_type(MPI_INTEGER8, "MPI_INTEGER8", SIGNED);
#endif
#ifdef MPI_REAL4
	add_type(MPI_REAL4, "MPI_REAL4", FLOAT);
#endif
#ifdef MPI_REAL8
	add_type(MPI_REAL8, "MPI_REAL8", FLOAT);
#endif
	op_handles[0] = MPI_SUM;
	op_handles[1] = MPI_PROD;
	op_handles[2] = MPI_MIN;
	op_handles[3] = MPI_MAX;
}

/* Inputs: small enough that no integer sum or product overflows any type on 3 ranks. */
static double input(const struct type *t, int op, int r, size_t i)
{
	if (t->kind == FLOAT) {
		if (op == 1)
			return 0.5 + (double)((i * 3 + (size_t)r * 5) % 9) / 7.0;
		return (double)((i * 7 + (size_t)r * 13) % 1001) / 7.0 - 70.0;
	}
	if (op == 1) {
		double v = (double)(1 + (i + (size_t)r) % 3);
		return t->kind == SIGNED && (i + 2 * (size_t)r) % 4 == 0 ? -v : v;
	}
	/* Spread over the high bits of wide types, with negatives for signed ones. */
	double scale = t->size == 8 ? 0x1p40 : t->size == 4 ? 0x1p20 : 1.0;
	if (t->kind == SIGNED)
		return scale * (double)((long)((i * 7 + (size_t)r * 13) % 81) - 40);
	return scale * (double)((i * 7 + (size_t)r * 13) % 83);
}

static void store(void *buf, size_t i, const struct type *t, double v)
{
	unsigned char *b = (unsigned char *)buf + i * (size_t)t->size;

	if (t->kind == FLOAT) {
		if (t->size == 4) {
			float f = (float)v;
			memcpy(b, &f, 4);
		} else {
			memcpy(b, &v, 8);
		}
	} else if (t->size == 1) {
		int8_t x = (int8_t)v;
		memcpy(b, &x, 1);
	} else if (t->size == 4) {
		int32_t x = (int32_t)v;
		memcpy(b, &x, 4);
	} else {
		int64_t x = (int64_t)v;
		memcpy(b, &x, 8);
	}
}

static double load_float(const void *buf, size_t i, const struct type *t)
{
	const unsigned char *b = (const unsigned char *)buf + i * (size_t)t->size;

	if (t->size == 4) {
		float f;
		memcpy(&f, b, 4);
		return f;
	}
	double d;
	memcpy(&d, b, 8);
	return d;
}

static void fill(void *buf, const struct type *t, int op, int r, size_t count)
{
	for (size_t i = 0; i < count; i++)
		store(buf, i, t, input(t, op, r, i));
}

static uint64_t checksum(const void *buf, size_t n)
{
	const unsigned char *b = buf;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static struct optireduce_pmpi_stats snap(void)
{
	struct optireduce_pmpi_stats s;

	get_stats(&s);
	return s;
}

/*
 * A result that ran bounded is an estimate (exact only if nothing was lost),
 * so only its sanity is checked: finite everywhere.  How far it is from the
 * exact sum, and whether ranks agree, is reported, not judged: that is
 * liboptireduce's own tests' business.
 */
static double bounded_worst_rel;
static int bounded_diverged;

static size_t check_estimate(const void *got, const void *ref, const struct type *t, size_t count,
                             size_t *first)
{
	double err2 = 0, ref2 = 0;
	size_t bad = 0;

	for (size_t i = 0; i < count; i++) {
		double g = load_float(got, i, t), w = load_float(ref, i, t);
		if (!isfinite(g)) {
			if (!bad++)
				*first = i;
			continue;
		}
		err2 += (g - w) * (g - w);
		ref2 += w * w;
	}
	if (ref2 > 0 && sqrt(err2 / ref2) > bounded_worst_rel)
		bounded_worst_rel = sqrt(err2 / ref2);
	return bad;
}

/* Compare got against the PMPI reference; returns the number of bad elements. */
static size_t compare(const void *got, const void *ref, const struct type *t, int op, int csize,
                      size_t count, size_t *first)
{
	size_t bad = 0;
	double eps = t->size == 4 ? FLT_EPSILON : DBL_EPSILON;

	if (t->kind != FLOAT || op >= 2) {
		if (memcmp(got, ref, count * (size_t)t->size) == 0)
			return 0;
		for (size_t i = 0; i < count; i++)
			if (memcmp((const char *)got + i * (size_t)t->size,
			           (const char *)ref + i * (size_t)t->size, (size_t)t->size)) {
				if (!bad++)
					*first = i;
			}
		return bad;
	}
	for (size_t i = 0; i < count; i++) {
		double g = load_float(got, i, t), w = load_float(ref, i, t), mag = 0;
		if (op == 0)
			for (int r = 0; r < csize; r++)
				mag += fabs(input(t, op, r, i));
		else
			mag = fabs(w);
		if (!(fabs(g - w) <= 2.0 * csize * eps * mag)) {
			if (!bad++)
				*first = i;
		}
	}
	return bad;
}

struct comm_case {
	MPI_Comm comm;
	const char *name;
	int is_world;
};

static void run_case(const struct comm_case *cc, const struct type *t, int op, int count,
                     int in_place)
{
	size_t n = count ? (size_t)count : 1, bytes = n * (size_t)t->size, first = 0, bad;
	unsigned char *in = malloc(bytes), *got = malloc(bytes), *ref = malloc(bytes),
	              *keep = malloc(bytes);
	struct optireduce_pmpi_stats a, b;
	int crank, csize, ret, want_bounded, ran_bounded = 0;
	uint64_t sum, lo, hi;
	const char *where = in_place ? " in place" : "";

	PMPI_Comm_rank(cc->comm, &crank);
	PMPI_Comm_size(cc->comm, &csize);
	fill(in, t, op, crank, (size_t)count);
	memcpy(keep, in, (size_t)count * (size_t)t->size);
	memset(ref, 0x5a, bytes);
	PMPI_Allreduce(in, ref, count, t->dt, op_handles[op], cc->comm);
	if (in_place)
		memcpy(got, in, bytes);
	else
		memset(got, 0xa5, bytes);
	a = snap();
	ret = MPI_Allreduce(in_place ? MPI_IN_PLACE : in, got, count, t->dt, op_handles[op],
	                    cc->comm);
	b = snap();
	cases++;
	if (ret != MPI_SUCCESS)
		FAIL("%s %s %s count %d%s: returned %d", cc->name, t->name, ops[op].name, count,
		     where, ret);
	/* Where the call went. */
	want_bounded = bounded_run && cc->is_world && op == 0 && t->kind == FLOAT &&
	               (size_t)count * (size_t)t->size >= BOUNDED_MIN_BYTES;
	if (b.calls != a.calls + 1)
		FAIL("%s %s: calls counter moved by %llu", cc->name, t->name,
		     (unsigned long long)(b.calls - a.calls));
	if (count == 0 || csize == 1) {
		int reason =
		    count == 0 ? OPTIREDUCE_PMPI_REASON_EMPTY : OPTIREDUCE_PMPI_REASON_SINGLE;
		if (b.to_pmpi_by_reason[reason] != a.to_pmpi_by_reason[reason] + 1 ||
		    b.to_pmpi != a.to_pmpi + 1)
			FAIL("%s %s %s count %d: not sent to PMPI as %s", cc->name, t->name,
			     ops[op].name, count, reason_name(reason));
	} else if (want_bounded) {
		int declined = b.served_exact == a.served_exact + 1 &&
		               b.bounded_declined == a.bounded_declined + 1;
		ran_bounded = b.served_bounded == a.served_bounded + 1;
		if (!ran_bounded && !declined)
			FAIL("%s %s SUM count %d: policy chose bounded, counters do not say so",
			     cc->name, t->name, count);
	} else if (b.served_exact != a.served_exact + 1 || b.to_pmpi != a.to_pmpi ||
	           b.served_bounded != a.served_bounded) {
		FAIL("%s %s %s count %d%s: not served exact (exact +%llu, pmpi +%llu)", cc->name,
		     t->name, ops[op].name, count, where,
		     (unsigned long long)(b.served_exact - a.served_exact),
		     (unsigned long long)(b.to_pmpi - a.to_pmpi));
	}
	/* What it computed. */
	if (count == 0) {
		for (size_t i = 0; i < bytes; i++)
			if (!in_place && got[i] != 0xa5) {
				FAIL("%s %s count 0 wrote recvbuf", cc->name, t->name);
				break;
			}
	} else {
		bad = ran_bounded ? check_estimate(got, ref, t, (size_t)count, &first)
		                  : compare(got, ref, t, op, csize, (size_t)count, &first);
		if (bad)
			FAIL("%s %s %s count %d%s: %zu wrong, first [%zu]", cc->name, t->name,
			     ops[op].name, count, where, bad, first);
		if (!in_place && memcmp(in, keep, (size_t)count * (size_t)t->size))
			FAIL("%s %s %s count %d: sendbuf modified", cc->name, t->name, ops[op].name,
			     count);
	}
	sum = checksum(got, (size_t)count * (size_t)t->size);
	PMPI_Allreduce(&sum, &lo, 1, MPI_UINT64_T, MPI_MIN, cc->comm);
	PMPI_Allreduce(&sum, &hi, 1, MPI_UINT64_T, MPI_MAX, cc->comm);
	if (lo != hi && ran_bounded)
		bounded_diverged++;
	else if (lo != hi)
		FAIL("%s %s %s count %d%s: ranks hold different results", cc->name, t->name,
		     ops[op].name, count, where);
	free(in);
	free(got);
	free(ref);
	free(keep);
}

static void run_all(const struct comm_case *cc, int ntypes_to_run)
{
	static const int counts[] = {0, 1, 7, 1000, 100003};

	for (int ti = 0; ti < ntypes_to_run; ti++)
		for (int op = 0; op < 4; op++)
			for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
				for (int ip = 0; ip < 2; ip++)
					run_case(cc, &types[ti], op, counts[c], ip);
	if (world_rank == 0)
		printf("%-28s done\n", cc->name);
}

/* One call that must go to PMPI for reason; its result must equal PMPI's (bit for bit). */
static void expect_pmpi(const char *what, int reason, const void *sbuf, size_t bytes, int count,
                        MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	unsigned char *got = malloc(bytes + 1), *ref = malloc(bytes + 1);
	struct optireduce_pmpi_stats a, b;
	int ret;

	memset(got, 0, bytes + 1);
	memset(ref, 0, bytes + 1);
	PMPI_Allreduce(sbuf, ref, count, dt, op, comm);
	a = snap();
	ret = MPI_Allreduce(sbuf, got, count, dt, op, comm);
	b = snap();
	cases++;
	if (ret != MPI_SUCCESS)
		FAIL("%s: returned %d", what, ret);
	if (b.to_pmpi_by_reason[reason] != a.to_pmpi_by_reason[reason] + 1 ||
	    b.served_exact != a.served_exact || b.served_bounded != a.served_bounded)
		FAIL("%s: not sent to PMPI as '%s'", what, reason_name(reason));
	if (memcmp(got, ref, bytes))
		FAIL("%s: result differs from PMPI_Allreduce", what);
	free(got);
	free(ref);
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	for (int i = 0; i < *len; i++)
		((int *)inout)[i] += ((int *)in)[i];
}

/* For MPI_Type_contiguous(2, MPI_INT): Open MPI refuses predefined ops on derived types. */
static void user_sum_pairs(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	for (int i = 0; i < 2 * *len; i++)
		((int *)inout)[i] += ((int *)in)[i];
}

static void test_fallbacks(void)
{
	int ints[16], pairs[8][2];
	double dbls[8];
	struct {
		double v;
		int i;
	} dpairs[4];
	short shorts[8];
	unsigned char bytes[8];
	char bools[8];
	long double ld[4];
	MPI_Datatype contig, dup;
	MPI_Op uop, uop2;
	int64_t offs[8];

	for (int i = 0; i < 16; i++)
		ints[i] = (i * 5 + world_rank * 3) % 11 - 5;
	for (int i = 0; i < 8; i++) {
		pairs[i][0] = (i + world_rank * 7) % 5;
		pairs[i][1] = world_rank;
		dbls[i] = i * 0.25 - world_rank;
		shorts[i] = (short)(i - world_rank);
		bytes[i] = (unsigned char)(1u << ((i + world_rank) % 8));
		bools[i] = (char)((i + world_rank) % 2);
		offs[i] = (int64_t)i - 3 * world_rank;
	}
	for (int i = 0; i < 4; i++) {
		dpairs[i].v = (double)((i * 3 + world_rank) % 4);
		dpairs[i].i = world_rank;
		ld[i] = (long double)i / 3 + world_rank;
	}
	MPI_Type_contiguous(2, MPI_INT, &contig);
	MPI_Type_commit(&contig);
	MPI_Type_dup(MPI_INT, &dup);
	MPI_Op_create(user_sum, 1, &uop);
	MPI_Op_create(user_sum_pairs, 1, &uop2);

	expect_pmpi("MPI_Type_contiguous(2, MPI_INT)", OPTIREDUCE_PMPI_REASON_DTYPE, ints,
	            sizeof(ints), 8, contig, uop2, MPI_COMM_WORLD);
	expect_pmpi("MPI_Type_dup(MPI_INT)", OPTIREDUCE_PMPI_REASON_DTYPE, ints, sizeof(ints), 16,
	            dup, uop, MPI_COMM_WORLD);
	expect_pmpi("user op on MPI_INT", OPTIREDUCE_PMPI_REASON_OP, ints, sizeof(ints), 16,
	            MPI_INT, uop, MPI_COMM_WORLD);
	expect_pmpi("MPI_MINLOC on MPI_2INT", OPTIREDUCE_PMPI_REASON_DTYPE, pairs, sizeof(pairs), 8,
	            MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
	expect_pmpi("MPI_MAXLOC on MPI_DOUBLE_INT", OPTIREDUCE_PMPI_REASON_DTYPE, dpairs,
	            sizeof(dpairs), 4, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
	expect_pmpi("MPI_LAND on MPI_INT", OPTIREDUCE_PMPI_REASON_OP, ints, sizeof(ints), 16,
	            MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	expect_pmpi("MPI_BXOR on MPI_INT", OPTIREDUCE_PMPI_REASON_OP, ints, sizeof(ints), 16,
	            MPI_INT, MPI_BXOR, MPI_COMM_WORLD);
	expect_pmpi("MPI_SHORT SUM", OPTIREDUCE_PMPI_REASON_DTYPE, shorts, sizeof(shorts), 8,
	            MPI_SHORT, MPI_SUM, MPI_COMM_WORLD);
	expect_pmpi("MPI_UNSIGNED_SHORT MAX", OPTIREDUCE_PMPI_REASON_DTYPE, shorts, sizeof(shorts),
	            8, MPI_UNSIGNED_SHORT, MPI_MAX, MPI_COMM_WORLD);
	expect_pmpi("MPI_BYTE BOR", OPTIREDUCE_PMPI_REASON_DTYPE, bytes, sizeof(bytes), 8, MPI_BYTE,
	            MPI_BOR, MPI_COMM_WORLD);
	expect_pmpi("MPI_C_BOOL LOR", OPTIREDUCE_PMPI_REASON_DTYPE, bools, sizeof(bools), 8,
	            MPI_C_BOOL, MPI_LOR, MPI_COMM_WORLD);
	/* Open MPI reduces MPI_OFFSET as unsigned: left to it. */
	expect_pmpi("MPI_OFFSET MIN", OPTIREDUCE_PMPI_REASON_DTYPE, offs, sizeof(offs), 8,
	            MPI_OFFSET, MPI_MIN, MPI_COMM_WORLD);
	expect_pmpi("MPI_LONG_DOUBLE SUM", OPTIREDUCE_PMPI_REASON_DTYPE, ld, sizeof(ld), 4,
	            MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	expect_pmpi("MPI_COMM_SELF", OPTIREDUCE_PMPI_REASON_SINGLE, dbls, sizeof(dbls), 8,
	            MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
	expect_pmpi("count 0", OPTIREDUCE_PMPI_REASON_EMPTY, dbls, sizeof(dbls), 0, MPI_DOUBLE,
	            MPI_SUM, MPI_COMM_WORLD);
	MPI_Type_free(&contig);
	MPI_Type_free(&dup);
	MPI_Op_free(&uop);
	MPI_Op_free(&uop2);

	/* Intercommunicator: even ranks and odd ranks; each side gets the other's reduction. */
	if (world_size >= 2) {
		MPI_Comm local, inter;
		int color = world_rank % 2;
		MPI_Comm_split(MPI_COMM_WORLD, color, world_rank, &local);
		MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 1, 17, &inter);
		expect_pmpi("intercommunicator SUM", OPTIREDUCE_PMPI_REASON_INTERCOMM, ints,
		            sizeof(ints), 16, MPI_INT, MPI_SUM, inter);
		expect_pmpi("intercommunicator again", OPTIREDUCE_PMPI_REASON_INTERCOMM, dbls,
		            sizeof(dbls), 8, MPI_DOUBLE, MPI_MAX, inter);
		MPI_Comm_free(&inter);
		MPI_Comm_free(&local);
	}
	if (world_rank == 0)
		printf("%-28s done\n", "fallbacks");
}

/* A freed communicator's state goes with it; a new dup (maybe at the same address) starts anew. */
static void test_free_and_reuse(void)
{
	struct optireduce_pmpi_stats a, b;
	struct comm_case cc = {MPI_COMM_NULL, "dup again", 0};
	const struct type *dbl = NULL;

	for (int i = 0; i < ntypes; i++)
		if (types[i].dt == MPI_DOUBLE)
			dbl = &types[i];
	for (int round = 0; round < 20; round++) {
		MPI_Comm_dup(MPI_COMM_WORLD, &cc.comm);
		a = snap();
		run_case(&cc, dbl, 0, 1000, round % 2);
		run_case(&cc, &types[0], 3, 7, 0);
		MPI_Comm_free(&cc.comm);
		b = snap();
		if (world_size > 1 && (b.comms_created != a.comms_created + 1 ||
		                       b.comms_destroyed != a.comms_destroyed + 1))
			FAIL("dup/free round %d: created +%llu destroyed +%llu", round,
			     (unsigned long long)(b.comms_created - a.comms_created),
			     (unsigned long long)(b.comms_destroyed - a.comms_destroyed));
	}
	if (world_rank == 0)
		printf("%-28s done\n", "dup, free, dup again x20");
}

int main(int argc, char **argv)
{
	struct comm_case world = {MPI_COMM_WORLD, "MPI_COMM_WORLD", 1};
	struct comm_case dupc = {MPI_COMM_NULL, "dup of world", 0};
	struct comm_case rev = {MPI_COMM_NULL, "split, reversed ranks", 0};
	struct comm_case tail = {MPI_COMM_NULL, "split, last rank alone", 0};
	struct optireduce_pmpi_stats s;
	int total;

	bounded_run = argc > 1 && strcmp(argv[1], "-b") == 0;
	MPI_Init(&argc, &argv);
	PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
	*(void **)&get_stats = dlsym(RTLD_DEFAULT, "optireduce_pmpi_stats");
	*(void **)&reason_name = dlsym(RTLD_DEFAULT, "optireduce_pmpi_reason_name");
	if (!get_stats || !reason_name) {
		if (world_rank == 0)
			printf("liboptireduce_pmpi not loaded (LD_PRELOAD it): skipping\n");
		MPI_Finalize();
		return 77;
	}
	init_types();
	if (world_rank == 0)
		printf("%d ranks, %d datatypes%s\n", world_size, ntypes,
		       bounded_run ? ", bounded policy float,double:>=1k" : "");

	run_all(&world, ntypes);
	MPI_Comm_dup(MPI_COMM_WORLD, &dupc.comm);
	run_all(&dupc, ntypes);
	MPI_Comm_free(&dupc.comm);
	MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &rev.comm);
	run_all(&rev, ntypes);
	MPI_Comm_split(MPI_COMM_WORLD, world_rank == world_size - 1, world_rank, &tail.comm);
	run_all(&tail, 4);
	MPI_Comm_free(&tail.comm);
	test_free_and_reuse();
	test_fallbacks();
	/* rev.comm stays allocated: MPI_Finalize must clean its cached state up. */

	get_stats(&s);
	if (world_rank == 0)
		printf("stats: %llu calls, %llu exact, %llu bounded (%llu declined), %llu to PMPI, "
		       "%llu errors\n",
		       (unsigned long long)s.calls, (unsigned long long)s.served_exact,
		       (unsigned long long)s.served_bounded, (unsigned long long)s.bounded_declined,
		       (unsigned long long)s.to_pmpi, (unsigned long long)s.errors);
	if (world_rank == 0 && s.served_bounded)
		printf("bounded: worst relative L2 error %.3g, %d results differing across ranks "
		       "(reported, not judged)\n",
		       bounded_worst_rel, bounded_diverged);
	if (bounded_run && s.served_bounded + s.bounded_declined == 0)
		FAIL("bounded policy set, yet no call chose bounded mode");
	if (s.errors)
		FAIL("%llu operations failed in liboptireduce", (unsigned long long)s.errors);
	PMPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (world_rank == 0)
		printf("%s: %ld cases, %d failures\n", total ? "FAIL" : "PASS", cases, total);
	MPI_Finalize();
	return total ? 1 : 0;
}
