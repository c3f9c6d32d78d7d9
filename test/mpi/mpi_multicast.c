/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multicast under bounded Transpose (docs/design.md, "Multicast"), on the emulated cloud
 * (test/cluster/cluster_multicast.sh), one rank per host, or on this host's loopback
 * (the mpi_multicast cases of test/cases.list, hierarchy=0).
 *
 *   mpi_multicast on        multicast works: every rank says so; results equal the exact sum
 *                           within the transform's rounding, the second phase went to the
 *                           group (bcast_multicast) and never to each peer; two communicators
 *                           at once have groups of their own and no datagram of one reaches
 *                           the other (packets_stranger, packets_invalid).
 *   mpi_multicast fallback  a host does not hear the group: multicast=auto falls back on
 *                           every rank, which says why, and operations complete by unicast.
 *   mpi_multicast fail      the same network: multicast=on fails creation on every rank
 *                           with -OPTIREDUCE_ENOTSUP; auto then succeeds, unicast.
 *
 * on and fail skip (77) where a rank cannot join a group at all (no route for the range).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "optireduce_mpi.h"

#include "mpi_check.h"

#define NOPS 20 /* operations of each communicator side by side */

static double exact_sum(size_t i, int trial)
{
	double s = 0;
	for (int r = 0; r < nranks; r++)
		s += input(r, i, trial);
	return s;
}

static optireduce_comm_t *make_comm(optireduce_ctx_t *ctx, int *ret)
{
	optireduce_comm_t *c = NULL;

	*ret = optireduce_comm_from_mpi_mode(ctx, MPI_COMM_WORLD, OPTIREDUCE_MODE_BOUNDED, &c);
	return *ret ? NULL : c;
}

/* Whether every rank's communicator multicasts; prints rank 0's line. */
static int all_multicast(optireduce_comm_t *c, char *why, size_t len)
{
	int on = optireduce_comm_multicast(c, why, len), all;

	if (on < 0)
		FAIL("optireduce_comm_multicast: %s\n", optireduce_strerror(on));
	MPI_Allreduce(&on, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (rank == 0)
		printf("multicast %s: %s\n", all > 0 ? "on" : "off", why);
	return all > 0;
}

/* Max error of rbuf against the exact sum of trial; float or double. */
static double max_error(const void *rbuf, size_t count, int dbl, int trial)
{
	double maxerr = 0;

	for (size_t i = 0; i < count; i++) {
		double v = dbl ? ((const double *)rbuf)[i] : ((const float *)rbuf)[i];
		double e = fabs(v - exact_sum(i, trial));
		maxerr = e > maxerr ? e : maxerr;
	}
	return maxerr;
}

static void fill(void *sbuf, size_t count, int dbl, int trial)
{
	for (size_t i = 0; i < count; i++) {
		if (dbl)
			((double *)sbuf)[i] = input(rank, i, trial);
		else
			((float *)sbuf)[i] = input(rank, i, trial);
	}
}

/*
 * Phase 2 went where it should: to the group (want_mc) or to each peer.  Only a rank that owns
 * a shard sends in it: shards are whole transform blocks (4096 elements), so below nranks
 * blocks some ranks send nothing.
 */
static void check_route(const struct optireduce_status *st, size_t count, int want_mc,
                        const char *what)
{
	int owns = count >= (size_t)nranks * 4096;

	if (nranks < 3)
		return;
	if (want_mc && (st->bcast_unicast || (owns && !st->bcast_multicast)))
		FAIL("%s: phase 2 sent %llu datagrams to the group, %llu to peers\n", what,
		     (unsigned long long)st->bcast_multicast,
		     (unsigned long long)st->bcast_unicast);
	if (!want_mc && (st->bcast_multicast || (owns && !st->bcast_unicast)))
		FAIL("%s: unicast expected, but %llu to the group, %llu to peers\n", what,
		     (unsigned long long)st->bcast_multicast,
		     (unsigned long long)st->bcast_unicast);
}

/* One allreduce; small ones must arrive whole on a clean network, large ones say if not. */
static void clean_case(optireduce_comm_t *c, size_t count, int dbl, int want_mc)
{
	size_t es = dbl ? 8 : 4;
	void *s = malloc(count * es), *r = malloc(count * es);
	struct optireduce_status st;
	double err;
	int ret, lost;

	fill(s, count, dbl, 0);
	MPI_Barrier(MPI_COMM_WORLD);
	ret = optireduce_allreduce(c, s, r, count, dbl ? OPTIREDUCE_FLOAT64 : OPTIREDUCE_FLOAT32,
	                           OPTIREDUCE_SUM, &st);
	if (ret) {
		FAIL("count %zu: %s\n", count, optireduce_strerror(ret));
		goto out;
	}
	lost = st.elements_received[0] < st.elements_expected[0] ||
	       st.elements_received[1] < st.elements_expected[1];
	MPI_Allreduce(MPI_IN_PLACE, &lost, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	err = max_error(r, count, dbl, 0);
	if (!lost && err > 1e-4 * nranks)
		FAIL("count %zu %s: max error %g\n", count, dbl ? "double" : "float", err);
	if (lost && count <= 16384)
		FAIL("count %zu: lost data on a clean network\n", count);
	check_route(&st, count, want_mc, "clean");
	if (rank == 0)
		printf("count %zu %s: max error %.3g%s; phase 2: %llu to the group, %llu to peers; "
		       "packets sent %llu\n",
		       count, dbl ? "double" : "float", err, lost ? " (lost some)" : "",
		       (unsigned long long)st.bcast_multicast, (unsigned long long)st.bcast_unicast,
		       (unsigned long long)st.packets_sent);
out:
	free(s);
	free(r);
}

/* Two communicators' operations side by side, different inputs: each result its own. */
static void two_comms(optireduce_comm_t *a, optireduce_comm_t *b)
{
	enum { COUNT = 16384 };
	float *s[2], *r[2];
	optireduce_comm_t *c[2] = {a, b};
	uint64_t strangers = 0, invalid = 0;
	double worst = 0;
	int nlost = 0;

	for (int k = 0; k < 2; k++) {
		s[k] = malloc(COUNT * 4);
		r[k] = malloc(COUNT * 4);
		fill(s[k], COUNT, 0, 1 + k);
	}
	for (int op = 0; op < NOPS; op++) {
		optireduce_req_t *req[2];
		struct optireduce_status st[2];
		MPI_Barrier(MPI_COMM_WORLD);
		for (int k = 0; k < 2; k++)
			if (optireduce_iallreduce(c[k], s[k], r[k], COUNT, OPTIREDUCE_FLOAT32,
			                          OPTIREDUCE_SUM, &req[k]))
				FAIL("iallreduce on communicator %d failed\n", k);
		/* Both in flight: a wait on one would progress only its own communicator, so
		 * progress each in turn (sleeping in the kernel up to 1 ms) until both are done. */
		for (int done = 0; done != 3;)
			for (int k = 0; k < 2; k++) {
				if (done & (1 << k))
					continue;
				optireduce_comm_progress(c[k], 1);
				if (optireduce_test(req[k]) == 0)
					done |= 1 << k;
			}
		for (int k = 0; k < 2; k++) {
			double e;
			int lost;
			if (optireduce_wait(req[k], &st[k]))
				FAIL("communicator %d: operation %d failed\n", k, op);
			/* A peer's loss in phase 1 reaches this rank's result through its shard. */
			lost = st[k].elements_received[0] < st[k].elements_expected[0] ||
			       st[k].elements_received[1] < st[k].elements_expected[1];
			MPI_Allreduce(MPI_IN_PLACE, &lost, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
			nlost += lost;
			e = max_error(r[k], COUNT, 0, 1 + k);
			worst = e > worst ? e : worst;
			if (e > 1e-4 * nranks && !lost)
				FAIL("communicator %d op %d: max error %g\n", k, op, e);
			strangers += st[k].packets_stranger;
			invalid += st[k].packets_invalid;
			check_route(&st[k], COUNT, 1, "two communicators");
		}
	}
	if (strangers || invalid)
		FAIL("two communicators: %llu datagrams of another communicator, %llu invalid\n",
		     (unsigned long long)strangers, (unsigned long long)invalid);
	if (rank == 0)
		printf("two communicators, %d operations each side by side: max error %.3g (%d of "
		       "%d operations lost data)\n",
		       NOPS, worst, nlost, 2 * NOPS);
	for (int k = 0; k < 2; k++) {
		free(s[k]);
		free(r[k]);
	}
}

static void case_on(optireduce_ctx_t *ctx)
{
	char why[256], why_b[256];
	optireduce_comm_t *a, *b;
	int ret;

	a = make_comm(ctx, &ret);
	if (!a) {
		FAIL("creation: %s\n", optireduce_strerror(ret));
		return;
	}
	if (!all_multicast(a, why, sizeof(why)))
		FAIL("multicast is off: %s\n", why);
	clean_case(a, 1000, 0, 1);
	clean_case(a, 16384, 0, 1);
	clean_case(a, 16384, 1, 1);
	clean_case(a, 100003, 0, 1);
	clean_case(a, 1 << 20, 0, 1);
	b = make_comm(ctx, &ret);
	if (!b) {
		FAIL("second communicator: %s\n", optireduce_strerror(ret));
	} else {
		if (!all_multicast(b, why_b, sizeof(why_b)))
			FAIL("second communicator: multicast is off: %s\n", why_b);
		if (!strcmp(why, why_b))
			FAIL("both communicators on one group: %s\n", why);
		two_comms(a, b);
		optireduce_comm_destroy(b);
	}
	optireduce_comm_destroy(a);
}

/* multicast=auto where it does not work: unicast on every rank, saying why (with want, that). */
static void case_fallback(optireduce_ctx_t *ctx, const char *want)
{
	char why[256];
	optireduce_comm_t *c;
	int ret;

	c = make_comm(ctx, &ret);
	if (!c) {
		FAIL("creation with multicast auto: %s\n", optireduce_strerror(ret));
		return;
	}
	if (all_multicast(c, why, sizeof(why)))
		FAIL("multicast on although a host does not hear the group\n");
	else if (want && !strstr(why, want))
		FAIL("the reason does not say \"%s\": %s\n", want, why);
	clean_case(c, 16384, 0, 0);
	clean_case(c, 100003, 0, 0);
	optireduce_comm_destroy(c);
}

static void case_fail(optireduce_ctx_t *ctx)
{
	optireduce_comm_t *c;
	int ret, bad;

	if (optireduce_ctx_set_param(ctx, "multicast", "on"))
		FAIL("set multicast=on\n");
	c = make_comm(ctx, &ret);
	bad = ret != -OPTIREDUCE_ENOTSUP;
	if (c)
		optireduce_comm_destroy(c);
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (bad)
		FAIL("multicast=on on a network without it: %s, want ENOTSUP everywhere\n",
		     optireduce_strerror(ret));
	else if (rank == 0)
		printf("multicast=on: creation failed on every rank (%s)\n",
		       optireduce_strerror(ret));
	if (optireduce_ctx_set_param(ctx, "multicast", "auto"))
		FAIL("set multicast=auto\n");
	case_fallback(ctx, NULL);
}

/* Where a host cannot join a group at all (no route), multicast cannot be tested: skip. */
static void skip_unless_joinable(optireduce_ctx_t *ctx)
{
	char why[256];
	int ok = optireduce_multicast_check(ctx, why, sizeof(why)) > 0, all;

	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (all)
		return;
	if (!ok)
		printf("rank %d cannot join a multicast group (%s): skip\n", rank, why);
	optireduce_finalize(ctx);
	MPI_Finalize();
	exit(77);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "on";
	optireduce_ctx_t *ctx;
	int total;

	mpi_world(&argc, &argv, 2);
	if (optireduce_init(OPTIREDUCE_API_VERSION, &ctx)) {
		fprintf(stderr, "rank %d: optireduce_init failed\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (strcmp(mode, "fallback") != 0)
		skip_unless_joinable(ctx);
	if (!strcmp(mode, "on"))
		case_on(ctx);
	else if (!strcmp(mode, "fallback"))
		case_fallback(ctx, "heard");
	else if (!strcmp(mode, "fail"))
		case_fail(ctx);
	else
		FAIL("unknown mode %s\n", mode);
	MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	optireduce_finalize(ctx);
	if (rank == 0)
		printf("mpi_multicast %s: %s (%d failures)\n", mode, total ? "FAIL" : "PASS",
		       total);
	MPI_Finalize();
	return total ? 1 : 0;
}
