/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the bounded-mode MPI tests (mpi_bounded, mpi_hostile, mpi_straggler,
 * mpi_slow_sender): the failure counter every rank keeps, the deterministic inputs whose
 * exact sums the tests compare against, MPI start-up, and the bounded communicator they
 * run on.
 * Included once per test program, after <mpi.h> and "optireduce_mpi.h".
 */
#ifndef OR_TEST_MPI_CHECK_H
#define OR_TEST_MPI_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, nranks, failures;

/* Every rank reports its own failures: loss and its errors are not even across ranks. */
#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "rank %d: ", rank);                                                \
		fprintf(stderr, __VA_ARGS__);                                                      \
		failures++;                                                                        \
	} while (0)

/* Deterministic, different per rank, element and trial, mean about zero. */
static inline float input(int r, size_t i, int trial)
{
	uint64_t z = (uint64_t)r * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull +
	             (uint64_t)trial * 0x94d049bb133111ebull;
	z ^= z >> 31;
	z *= 0xd6e8feb86659fd93ull;
	z ^= z >> 32;
	return (float)((double)(z & 0xffffff) / (double)0x1000000 - 0.5);
}

/* MPI_Init, rank and nranks; with fewer than min_ranks ranks the test is skipped (exit 77). */
static void mpi_world(int *argc, char ***argv, int min_ranks)
{
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (nranks < min_ranks) {
		if (rank == 0)
			printf("needs at least %d ranks: skip\n", min_ranks);
		MPI_Finalize();
		exit(77);
	}
}

/*
 * A bounded-mode communicator on MPI_COMM_WORLD.  payload (NULL: the default) is set on the
 * context first, as it is fixed when the bounded channel is created.  Without a datagram
 * provider the test is skipped (exit 77); any other error aborts.
 */
static inline optireduce_comm_t *bounded_world(optireduce_ctx_t **ctx, const char *payload)
{
	optireduce_comm_t *comm = NULL;
	int ret = optireduce_init(OPTIREDUCE_API_VERSION, ctx);

	if (!ret && payload)
		ret = optireduce_ctx_set_param(*ctx, "packet_payload", payload);
	if (!ret)
		ret = optireduce_comm_from_mpi_mode(*ctx, MPI_COMM_WORLD, OPTIREDUCE_MODE_BOUNDED,
		                                    &comm);
	if (ret == -OPTIREDUCE_ENOPROVIDER) {
		if (rank == 0)
			printf("no datagram provider: skip\n");
		MPI_Finalize();
		exit(77);
	}
	if (ret) {
		fprintf(stderr, "rank %d: setup: %s\n", rank, optireduce_strerror(ret));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	return comm;
}

/*
 * Runs trial(arg, t) for t = 0, 1, ... until one passes on every rank, at most attempts
 * times: a loaded host can disturb a trial (a rank descheduled for 100 ms), so a failed
 * trial's failures are forgiven when another follows.  label names the case in rank 0's
 * line per trial.
 */
static inline void retry_trials(const char *label, int attempts, int (*trial)(void *arg, int t),
                                void *arg)
{
	int ok = 0;

	for (int t = 0; t < attempts && !ok; t++) {
		int f0 = failures, failed = trial(arg, t);
		MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
		if (rank == 0)
			printf("%s trial %d: %s\n", label, t, failed ? "a check failed" : "ok");
		ok = !failed;
		if (failed && t + 1 < attempts)
			failures = f0; /* judged again on the next trial */
	}
}

/*
 * The end of a test's main(): destroys comm and ctx, sums the failures of every rank,
 * prints the verdict on rank 0 and finalizes MPI; returns main's exit status.
 */
static inline int finish_world(optireduce_comm_t *comm, optireduce_ctx_t *ctx)
{
	int total;

	if (optireduce_comm_destroy(comm) || optireduce_finalize(ctx))
		FAIL("destroy or finalize failed\n");
	MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s: %d failure(s)\n", total ? "FAIL" : "PASS", total);
	MPI_Finalize();
	return total ? 1 : 0;
}

#endif /* OR_TEST_MPI_CHECK_H */
