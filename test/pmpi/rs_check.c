/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers of the interposer's reduce-scatter tests: see rs_check.h. */
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rs_check.h"

struct rs_type rs_types[RS_NTYPES];
MPI_Op rs_ops[RS_NOPS];
const char *const rs_op_names[RS_NOPS] = {"SUM", "PROD", "MIN", "MAX"};
int rs_rank, rs_size, rs_failures;
long rs_cases;
static int (*get_stats)(struct optireduce_pmpi_stats *);

static void add_type(int i, MPI_Datatype dt, const char *name, int is_float, int is_signed)
{
	int size = 0;

	PMPI_Type_size(dt, &size);
	rs_types[i] = (struct rs_type){dt, name, is_float, is_signed, size};
}

int rs_init(int *argc, char ***argv)
{
	MPI_Init(argc, argv);
	PMPI_Comm_rank(MPI_COMM_WORLD, &rs_rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &rs_size);
	*(void **)&get_stats = dlsym(RTLD_DEFAULT, "optireduce_pmpi_stats");
	if (!get_stats) {
		if (rs_rank == 0)
			printf("liboptireduce_pmpi not loaded (LD_PRELOAD it): skipping\n");
		MPI_Finalize();
		return 77;
	}
	add_type(0, MPI_INT8_T, "MPI_INT8_T", 0, 1);
	add_type(1, MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 0, 0);
	add_type(2, MPI_INT, "MPI_INT", 0, 1);
	add_type(3, MPI_UINT32_T, "MPI_UINT32_T", 0, 0);
	add_type(4, MPI_LONG_LONG, "MPI_LONG_LONG", 0, 1);
	add_type(5, MPI_UINT64_T, "MPI_UINT64_T", 0, 0);
	add_type(6, MPI_FLOAT, "MPI_FLOAT", 1, 1);
	add_type(7, MPI_DOUBLE, "MPI_DOUBLE", 1, 1);
	rs_ops[0] = MPI_SUM;
	rs_ops[1] = MPI_PROD;
	rs_ops[2] = MPI_MIN;
	rs_ops[3] = MPI_MAX;
	return 0;
}

int rs_finish(const char *what)
{
	struct optireduce_pmpi_stats s = rs_snap();
	int total = 0;

	if (s.errors)
		RS_FAIL("%llu operations failed in liboptireduce", (unsigned long long)s.errors);
	PMPI_Allreduce(&rs_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rs_rank == 0)
		printf("%s: %s, %ld cases, %d failures\n", total ? "FAIL" : "PASS", what, rs_cases,
		       total);
	MPI_Finalize();
	return total ? 1 : 0;
}

struct optireduce_pmpi_stats rs_snap(void)
{
	struct optireduce_pmpi_stats s;

	get_stats(&s);
	return s;
}

const char *rs_reason_name(int reason)
{
	const char *(*name)(int);

	*(void **)&name = dlsym(RTLD_DEFAULT, "optireduce_pmpi_reason_name");
	return name ? name(reason) : "?";
}

void rs_prepare(struct rs_case *c, MPI_Comm comm, const struct rs_type *t, int op, int rc,
                int in_place)
{
	size_t es = (size_t)t->size;

	PMPI_Comm_rank(comm, &c->crank);
	PMPI_Comm_size(comm, &c->csize);
	c->n = (size_t)rc * (size_t)c->csize;
	c->bytes = c->n * es + 1;
	c->in = malloc(c->bytes), c->keep = malloc(c->bytes);
	c->got = malloc(c->bytes), c->ref = malloc(c->bytes);
	rs_fill(c->in, c->n, t, op, c->crank);
	memcpy(c->keep, c->in, c->n * es);
	memset(c->ref, 0x5a, c->bytes);
	PMPI_Reduce_scatter_block(c->in, c->ref, rc, t->dt, rs_ops[op], comm);
	if (in_place)
		memcpy(c->got, c->in, c->n * es);
	else
		memset(c->got, 0xa5, c->bytes);
}

void rs_release(struct rs_case *c)
{
	free(c->in), free(c->keep), free(c->got), free(c->ref);
}

double rs_input(const struct rs_type *t, int op, int r, size_t i)
{
	if (op == 1)
		return t->is_float ? 0.5 + (double)((i * 3 + (size_t)r * 5) % 9) / 8.0
		                   : (double)(1 + (i + (size_t)r) % 2);
	if (t->is_float)
		return (double)((i * 7 + (size_t)r * 13) % 101) / 16.0 - 3.0;
	return (double)((i * 7 + (size_t)r * 13) % 17) - (t->is_signed ? 8 : 0);
}

static void store(void *buf, size_t i, const struct rs_type *t, double v)
{
	char *p = (char *)buf + i * (size_t)t->size;

	if (t->is_float && t->size == 4) {
		float f = (float)v;
		memcpy(p, &f, 4);
	} else if (t->is_float) {
		memcpy(p, &v, 8);
	} else {
		int64_t x = (int64_t)v;
		memcpy(p, &x, (size_t)t->size); /* little-endian: the low bytes */
	}
}

void rs_fill(void *buf, size_t n, const struct rs_type *t, int op, int r)
{
	for (size_t i = 0; i < n; i++)
		store(buf, i, t, rs_input(t, op, r, i));
}

/* In double: exact for every integer result (they stay small), one rounding for floats. */
void rs_reference(void *buf, const struct rs_type *t, int op, int csize, size_t base, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		double v = rs_input(t, op, 0, base + k);
		for (int r = 1; r < csize; r++) {
			double x = rs_input(t, op, r, base + k);
			if (op == 0)
				v += x;
			else if (op == 1)
				v *= x;
			else if (op == 2)
				v = x < v ? x : v;
			else
				v = x > v ? x : v;
		}
		store(buf, k, t, v);
	}
}

double rs_load(const void *buf, size_t i, const struct rs_type *t)
{
	const char *p = (const char *)buf + i * (size_t)t->size;
	float f;
	double d;

	if (!t->is_float)
		return 0.0;
	if (t->size == 4) {
		memcpy(&f, p, 4);
		return f;
	}
	memcpy(&d, p, 8);
	return d;
}

size_t rs_compare(const void *got, const void *ref, const struct rs_type *t, int op, int csize,
                  size_t base, size_t n, size_t *first)
{
	double eps = t->size == 4 ? FLT_EPSILON : DBL_EPSILON;
	size_t bad = 0, es = (size_t)t->size;

	*first = 0;
	for (size_t k = 0; k < n; k++) {
		int same = memcmp((const char *)got + k * es, (const char *)ref + k * es, es) == 0;
		if (t->is_float && op < 2 && !same) {
			double g = rs_load(got, k, t), w = rs_load(ref, k, t), mag = 0;
			for (int r = 0; r < csize && op == 0; r++)
				mag += fabs(rs_input(t, op, r, base + k));
			if (op == 1)
				mag = fabs(w);
			same = fabs(g - w) <= 2.0 * csize * eps * mag;
		}
		if (!same && !bad++)
			*first = k;
	}
	return bad;
}
