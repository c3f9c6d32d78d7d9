/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Measured choice of the exact algorithm (measure_exact, measure_calls), on 2-5 ranks:
 *  - the first measure_calls calls per algorithm of a size class alternate the range's
 *    algorithms, in order; every later call of the class takes one of them, the same on
 *    every rank, and optireduce_comm_algorithm_rule says which;
 *  - an algorithm made slower (one rank sleeps 50 ms before each of its trials) loses,
 *    whichever order the range lists the two in;
 *  - with operations in flight the agreement still completes, and every result is exact;
 *  - a new measure_exact starts over, and "none" leaves the built-in rule.
 */
#include <mpi.h>
#include <string.h>

#include "optireduce.h"
#include "optireduce_mpi.h"
#include "mpi_check.h"

#define MAXN     8192 /* floats: 32 KiB */
#define INFLIGHT 16

static int alg_id(const char *name)
{
	for (int i = 0; optireduce_algorithm_name(i); i++)
		if (strcmp(optireduce_algorithm_name(i), name) == 0)
			return i;
	return -1;
}

/* Integers in float: every sum is exact whatever the order of additions. */
static float value(int r, size_t i, int call)
{
	return (float)((r + 1) * 1000 + (int)(i % 97) + call % 13);
}

static void fill(float *s, size_t n, int call)
{
	for (size_t i = 0; i < n; i++)
		s[i] = value(rank, i, call);
}

static void check_sum(const float *r, size_t n, int call, const char *what)
{
	for (size_t i = 0; i < n; i++) {
		double want = 0;
		for (int k = 0; k < nranks; k++)
			want += value(k, i, call);
		if ((double)r[i] != want) {
			FAIL("%s call %d: element %zu is %g, want %g\n", what, call, i,
			     (double)r[i], want);
			return;
		}
	}
}

/* The same on every rank. */
static int agreed(int v)
{
	int lo, hi;

	MPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	MPI_Allreduce(&v, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return lo == hi;
}

static void set(optireduce_comm_t *comm, const char *name, const char *value)
{
	int ret = optireduce_comm_set_param(comm, name, value);

	if (ret)
		FAIL("set %s=%s: %s\n", name, value, optireduce_strerror(ret));
}

/*
 * Blocking calls of n floats under measure_exact spec, measure_calls per: the trials
 * alternate a then b (slow: the one rank 1 delays by 50 ms, -1 none); returns the choice.
 */
static int blocking_case(optireduce_comm_t *comm, const char *spec, int a, int b, int slow,
                         size_t n, int per)
{
	static float s[MAXN], r[MAXN];
	char rule[1024], want[64], calls[16];
	int chosen = -1;

	snprintf(calls, sizeof(calls), "%d", per);
	set(comm, "measure_calls", calls);
	set(comm, "measure_exact", spec);
	for (int call = 0; call < 2 * per + 10; call++) {
		struct optireduce_status st;
		int trial = call < 2 * per, alg = call % 2 ? b : a;
		set(comm, "inject_delay", trial && alg == slow ? "1:50000" : "");
		fill(s, n, call);
		if (optireduce_allreduce(comm, s, r, n, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &st)) {
			FAIL("%s: call %d failed\n", spec, call);
			return -1;
		}
		check_sum(r, n, call, spec);
		if (trial && st.algorithm != alg)
			FAIL("%s: trial %d ran %d, want %d\n", spec, call, st.algorithm, alg);
		if (!trial && chosen < 0)
			chosen = st.algorithm;
		if (!trial && st.algorithm != chosen)
			FAIL("%s: call %d ran %d after choosing %d\n", spec, call, st.algorithm,
			     chosen);
	}
	set(comm, "inject_delay", "");
	if (chosen != a && chosen != b)
		FAIL("%s: chose %d, not one of %d and %d\n", spec, chosen, a, b);
	if (!agreed(chosen))
		FAIL("%s: ranks chose differently (%d here)\n", spec, chosen);
	if (optireduce_comm_algorithm_rule(comm, OPTIREDUCE_MODE_EXACT, rule, sizeof(rule)))
		FAIL("algorithm_rule failed\n");
	snprintf(want, sizeof(want), ":%s", chosen >= 0 ? optireduce_algorithm_name(chosen) : "?");
	if (!strstr(rule, "measured so far: ") || !strstr(strstr(rule, "so far"), want))
		FAIL("rule \"%s\" does not say %s\n", rule, want);
	if (rank == 0)
		printf("%s, %zu bytes, slow %d: chose %s\n", spec, n * 4, slow,
		       chosen >= 0 ? optireduce_algorithm_name(chosen) : "?");
	return chosen;
}

/* INFLIGHT operations posted at once: the agreement happens while trials are in flight. */
static void inflight_case(optireduce_comm_t *comm, int rd, int rab)
{
	static float s[INFLIGHT][MAXN], r[INFLIGHT][MAXN];
	optireduce_req_t *req[INFLIGHT];
	struct optireduce_status st[INFLIGHT];
	size_t n = 6144; /* 24 KiB */
	int chosen = -1;

	set(comm, "measure_exact", "16k-32k:recursive_doubling|rabenseifner");
	set(comm, "measure_calls", "4");
	for (int k = 0; k < INFLIGHT; k++) {
		fill(s[k], n, k);
		if (optireduce_iallreduce(comm, s[k], r[k], n, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM,
		                          &req[k]))
			FAIL("iallreduce %d failed\n", k);
	}
	for (int k = INFLIGHT - 1; k >= 0; k--)
		if (optireduce_wait(req[k], &st[k]))
			FAIL("wait %d failed\n", k);
	for (int k = 0; k < INFLIGHT; k++) {
		check_sum(r[k], n, k, "in flight");
		if (k < 8 && st[k].algorithm != (k % 2 ? rab : rd))
			FAIL("in flight: trial %d ran %d\n", k, st[k].algorithm);
		if (k >= 8 && chosen < 0)
			chosen = st[k].algorithm;
		if (k >= 8 && st[k].algorithm != chosen)
			FAIL("in flight: %d ran %d after %d\n", k, st[k].algorithm, chosen);
	}
	if ((chosen != rd && chosen != rab) || !agreed(chosen))
		FAIL("in flight: chose %d\n", chosen);
	set(comm, "measure_calls", "16");
}

int main(int argc, char **argv)
{
	optireduce_ctx_t *ctx = NULL;
	optireduce_comm_t *comm = NULL;
	int rd = alg_id("recursive_doubling"), rab = alg_id("rabenseifner");
	int ring = alg_id("ring"), tree = alg_id("tree");
	int ret;

	mpi_world(&argc, &argv, 2);
	ret = optireduce_init(OPTIREDUCE_API_VERSION, &ctx);
	if (!ret)
		ret = optireduce_comm_from_mpi_mode(ctx, MPI_COMM_WORLD, OPTIREDUCE_MODE_EXACT,
		                                    &comm);
	if (ret) {
		fprintf(stderr, "rank %d: setup: %s\n", rank, optireduce_strerror(ret));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	/* Whichever is made slow loses, in either order of the list. */
	if (blocking_case(comm, "4097-32769:recursive_doubling|rabenseifner", rd, rab, rd, 1536,
	                  4) != rab)
		FAIL("a slow recursive doubling was chosen\n");
	if (blocking_case(comm, "4097-32769:rabenseifner|recursive_doubling", rab, rd, rab, 1536,
	                  4) != rd)
		FAIL("a slow Rabenseifner was chosen\n");
	/* Undisturbed, two other algorithms, another class. */
	blocking_case(comm, "0-64k:ring|tree", ring, tree, -1, 4096, 3);
	inflight_case(comm, rd, rab);
	/* none: the built-in rule (Rabenseifner's from 4 KiB to 32 KiB). */
	{
		static float s[MAXN], r[MAXN];
		struct optireduce_status st;
		set(comm, "measure_exact", "none");
		fill(s, 1536, 0);
		if (optireduce_allreduce(comm, s, r, 1536, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM,
		                         &st) ||
		    st.algorithm != rab)
			FAIL("measure_exact none: ran %d, want %d\n", st.algorithm, rab);
		check_sum(r, 1536, 0, "none");
	}
	return finish_world(comm, ctx);
}
