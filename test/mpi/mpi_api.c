/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The API contract where peers are involved, in exact and bounded mode (test_api.c covers
 * one rank):
 *  - bad arguments on one rank only: the documented code at once, nothing written, nothing
 *    sent, and the next operation of every rank correct;
 *  - optireduce_comm_destroy with an operation in flight: -OPTIREDUCE_EBUSY, nothing freed,
 *    and the operation completes;
 *  - ranks that disagree on count, dtype or op: within the peer timeout every rank returns
 *    0 or an error, in exact mode -OPTIREDUCE_EMISMATCH on some rank when the byte sizes
 *    differ, and no byte outside the caller's buffers changes (the ASan build checks the
 *    rest).
 * Usage: mpi_api (2 or more ranks).
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optireduce.h"
#include "optireduce_mpi.h"
#include "mpi_check.h"

#define GUARD 64
#define PEER_TIMEOUT_MS "3000"

static const char *mode_name(enum optireduce_mode m)
{
	return m == OPTIREDUCE_MODE_BOUNDED ? "bounded" : "exact";
}

static optireduce_comm_t *world(optireduce_ctx_t *ctx, enum optireduce_mode mode)
{
	optireduce_comm_t *comm = NULL;
	int ret = optireduce_comm_from_mpi_mode(ctx, MPI_COMM_WORLD, mode, &comm);

	if (ret) {
		fprintf(stderr, "rank %d: %s communicator: %s\n", rank, mode_name(mode),
		        optireduce_strerror(ret));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	return comm;
}

/* Sum of every rank's input(r, i, 0), as the exact answer. */
static double expected(size_t i)
{
	double s = 0;
	for (int r = 0; r < nranks; r++)
		s += input(r, i, 0);
	return s;
}

/* A float32 SUM of n elements on every rank, checked against the exact sum. */
static void reduce_and_check(optireduce_comm_t *comm, enum optireduce_mode mode, size_t n,
                             const char *what)
{
	float *s = malloc(n * sizeof(float)), *r = malloc(n * sizeof(float));
	struct optireduce_status st;
	int ret;

	for (size_t i = 0; i < n; i++)
		s[i] = input(rank, i, 0);
	ret = optireduce_allreduce(comm, s, r, n, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &st);
	if (ret)
		FAIL("%s %s: %s\n", mode_name(mode), what, optireduce_strerror(ret));
	/* Bounded: exact up to rounding unless the status says data was estimated. */
	for (size_t i = 0; !ret && i < n; i++)
		if (fabs(r[i] - expected(i)) > 1e-4 && !(st.flags & OPTIREDUCE_STATUS_INCOMPLETE)) {
			FAIL("%s %s: element %zu is %g, want %g\n", mode_name(mode), what, i, r[i],
			     expected(i));
			break;
		}
	free(s);
	free(r);
}

/* Bad arguments on rank 0 only are local: the others never see them. */
static void test_local_bad_args(optireduce_comm_t *comm, enum optireduce_mode mode)
{
	float s[64], r[64];
	optireduce_req_t *req = NULL;

	for (int i = 0; i < 64; i++)
		s[i] = r[i] = -7;
	if (rank == 0) {
		if (optireduce_allreduce(comm, s, r, 64, (enum optireduce_dtype)77, OPTIREDUCE_SUM,
		                         NULL) != -OPTIREDUCE_EDTYPE ||
		    optireduce_allreduce(comm, s, r, 64, OPTIREDUCE_FLOAT32, (enum optireduce_op)9,
		                         NULL) != -OPTIREDUCE_EOP ||
		    optireduce_allreduce(comm, s, NULL, 64, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM,
		                         NULL) != -OPTIREDUCE_EINVAL ||
		    optireduce_iallreduce(comm, s, r, 64, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, NULL) !=
		        -OPTIREDUCE_EINVAL ||
		    optireduce_allreduce(comm, s, r, SIZE_MAX / 4, OPTIREDUCE_FLOAT32,
		                         OPTIREDUCE_SUM, NULL) != -OPTIREDUCE_EOVERFLOW ||
		    optireduce_allreduce(comm, s, s + 1, 32, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM,
		                         NULL) != -OPTIREDUCE_EINVAL)
			FAIL("%s: a bad argument was not refused with its code\n", mode_name(mode));
		for (int i = 0; i < 64; i++)
			if (s[i] != -7 || r[i] != -7) {
				FAIL("%s: a refused call wrote a buffer\n", mode_name(mode));
				break;
			}
		if (req)
			FAIL("%s: a refused call wrote *req\n", mode_name(mode));
	}
	reduce_and_check(comm, mode, 1000, "after bad arguments");
}

/* Rank 0 starts an operation, tries to destroy the communicator, and only then lets its
 * peers enter: the operation cannot have finished. */
static void test_destroy_in_flight(optireduce_comm_t *comm, enum optireduce_mode mode)
{
	size_t n = 20000;
	float *s = malloc(n * sizeof(float)), *r = malloc(n * sizeof(float));
	optireduce_req_t *req;
	struct optireduce_status st;
	int ret;

	for (size_t i = 0; i < n; i++)
		s[i] = input(rank, i, 0);
	if (rank == 0) {
		ret = optireduce_iallreduce(comm, s, r, n, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &req);
		if (ret)
			FAIL("%s in flight: iallreduce: %s\n", mode_name(mode),
			     optireduce_strerror(ret));
		ret = optireduce_comm_destroy(comm);
		if (ret != -OPTIREDUCE_EBUSY)
			FAIL("%s: destroy with an operation in flight returned %d (%s), want EBUSY\n",
			     mode_name(mode), ret, optireduce_strerror(ret));
		MPI_Barrier(MPI_COMM_WORLD);
		ret = optireduce_wait(req, &st);
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		ret = optireduce_allreduce(comm, s, r, n, OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM, &st);
	}
	if (ret)
		FAIL("%s in flight: %s\n", mode_name(mode), optireduce_strerror(ret));
	for (size_t i = 0; !ret && i < n; i++)
		if (fabs(r[i] - expected(i)) > 1e-4 && !(st.flags & OPTIREDUCE_STATUS_INCOMPLETE)) {
			FAIL("%s in flight: element %zu is %g, want %g\n", mode_name(mode), i, r[i],
			     expected(i));
			break;
		}
	free(s);
	free(r);
}

/* One disagreement: what rank 0 and the others pass. */
struct disagreement {
	const char *what;
	size_t count[2];
	enum optireduce_dtype dtype[2];
	enum optireduce_op op[2];
	int sizes_differ; /* the byte sizes differ: exact mode must say EMISMATCH */
};

static const struct disagreement cases[] = {
    {"count (recursive doubling)", {1000, 1037}, {OPTIREDUCE_FLOAT32, OPTIREDUCE_FLOAT32},
     {OPTIREDUCE_SUM, OPTIREDUCE_SUM}, 1},
    {"count (ring)", {100000, 99000}, {OPTIREDUCE_FLOAT32, OPTIREDUCE_FLOAT32},
     {OPTIREDUCE_SUM, OPTIREDUCE_SUM}, 1},
    {"dtype size", {3000, 3000}, {OPTIREDUCE_FLOAT32, OPTIREDUCE_FLOAT64},
     {OPTIREDUCE_SUM, OPTIREDUCE_SUM}, 1},
    {"dtype of one size", {3000, 3000}, {OPTIREDUCE_FLOAT32, OPTIREDUCE_INT32},
     {OPTIREDUCE_SUM, OPTIREDUCE_SUM}, 0},
    {"op", {3000, 3000}, {OPTIREDUCE_FLOAT32, OPTIREDUCE_FLOAT32},
     {OPTIREDUCE_SUM, OPTIREDUCE_MAX}, 0},
};

static int guard_intact(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0x5a)
			return 0;
	return 1;
}

/* Runs one disagreement on a fresh communicator and destroys it: a failed one is spent. */
static void test_mismatch(optireduce_ctx_t *ctx, enum optireduce_mode mode,
                          const struct disagreement *d)
{
	int me = rank == 0 ? 0 : 1, ret, any_mismatch = 0;
	size_t bytes = d->count[me] * optireduce_dtype_size(d->dtype[me]);
	uint8_t *sb = malloc(bytes + 2 * GUARD), *rb = malloc(bytes + 2 * GUARD);
	optireduce_comm_t *comm = world(ctx, mode);
	double t0;
	int *all = calloc((size_t)nranks, sizeof(int));

	memset(sb, 0x5a, bytes + 2 * GUARD);
	memset(rb, 0x5a, bytes + 2 * GUARD);
	memset(sb + GUARD, 0, bytes);
	t0 = MPI_Wtime();
	ret = optireduce_allreduce(comm, sb + GUARD, rb + GUARD, d->count[me], d->dtype[me],
	                           d->op[me], NULL);
	if (ret && ret != -OPTIREDUCE_EMISMATCH && ret != -OPTIREDUCE_ETIMEDOUT &&
	    ret != -OPTIREDUCE_EPEER)
		FAIL("%s, %s: returned %s\n", mode_name(mode), d->what, optireduce_strerror(ret));
	if (MPI_Wtime() - t0 > 3.0 * atof(PEER_TIMEOUT_MS) / 1000 + 5)
		FAIL("%s, %s: took %.1f s\n", mode_name(mode), d->what, MPI_Wtime() - t0);
	if (!guard_intact(sb, GUARD) || !guard_intact(sb + GUARD + bytes, GUARD) ||
	    !guard_intact(rb, GUARD) || !guard_intact(rb + GUARD + bytes, GUARD))
		FAIL("%s, %s: bytes outside the buffers changed\n", mode_name(mode), d->what);
	for (size_t i = 0; i < bytes; i++)
		if (sb[GUARD + i]) {
			FAIL("%s, %s: the send buffer changed\n", mode_name(mode), d->what);
			break;
		}
	MPI_Allgather(&ret, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
	for (int r = 0; r < nranks; r++)
		any_mismatch |= all[r] == -OPTIREDUCE_EMISMATCH;
	if (rank == 0 && mode == OPTIREDUCE_MODE_EXACT && d->sizes_differ && !any_mismatch)
		FAIL("%s, %s: no rank reported EMISMATCH (rank 0: %s)\n", mode_name(mode), d->what,
		     optireduce_strerror(all[0]));
	if (rank == 0)
		printf("%s, %s: rank 0 %s, rank 1 %s (%.2f s)\n", mode_name(mode), d->what,
		       optireduce_strerror(all[0]), optireduce_strerror(all[1]),
		       MPI_Wtime() - t0);
	ret = optireduce_comm_destroy(comm);
	if (ret)
		FAIL("%s, %s: destroy: %s\n", mode_name(mode), d->what, optireduce_strerror(ret));
	MPI_Barrier(MPI_COMM_WORLD);
	free(all);
	free(sb);
	free(rb);
}

int main(int argc, char **argv)
{
	static const enum optireduce_mode modes[] = {OPTIREDUCE_MODE_EXACT,
	                                             OPTIREDUCE_MODE_BOUNDED};
	optireduce_ctx_t *ctx;
	int total;

	mpi_world(&argc, &argv, 2);
	if (optireduce_init(OPTIREDUCE_API_VERSION, &ctx) ||
	    optireduce_ctx_set_param(ctx, "peer_timeout_ms", PEER_TIMEOUT_MS) ||
	    optireduce_ctx_set_param(ctx, "timeout_max_us", "300000"))
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		optireduce_comm_t *comm = world(ctx, modes[m]);
		test_local_bad_args(comm, modes[m]);
		test_destroy_in_flight(comm, modes[m]);
		reduce_and_check(comm, modes[m], 5000, "after the refused destroy");
		if (optireduce_comm_destroy(comm))
			FAIL("%s: destroy\n", mode_name(modes[m]));
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
			test_mismatch(ctx, modes[m], &cases[c]);
	}
	if (optireduce_finalize(ctx))
		FAIL("finalize\n");
	MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s: %d failures\n", total ? "FAIL" : "PASS", total);
	MPI_Finalize();
	return total ? 1 : 0;
}
