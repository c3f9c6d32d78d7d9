/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Allreduce without MPI: every process of a PMIx job (mpirun, prterun,
 * srun --mpi=pmix) builds a communicator through optireduce_pmix.h, sums a
 * vector, and checks the result against the sum it computes itself.
 *
 *   cc pmix_allreduce.c $(pkg-config --cflags --libs optireduce pmix)
 *   mpirun -np 4 ./a.out [-n COUNT] [-r REPEAT] [-H]
 *
 * -r creates and destroys the communicator REPEAT times (each one is a fresh
 * PMIx exchange).  -H holds PMIx initialized from start to end, as a program
 * that uses PMIx itself would; without it the helper initializes PMIx at
 * its first call and finalizes it at exit.  Exit 0 when every result
 * matches, 1 on a mismatch or an error, 77 when the process was not started
 * by a PMIx launcher.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <optireduce_pmix.h>

/* Integers, so the reference is exact whatever order the library sums in. */
static int64_t input(uint32_t rank, size_t i)
{
	return (int64_t)((i * 7 + rank * 13) % 1001) - 500;
}

static int run(optireduce_ctx_t *ctx, size_t count, int *bad)
{
	optireduce_comm_t *comm;
	int64_t *sbuf, *rbuf;
	uint32_t rank, size;
	int ret;

	ret = optireduce_comm_from_pmix(ctx, &comm);
	if (ret)
		return ret;
	rank = (uint32_t)optireduce_comm_rank(comm);
	size = (uint32_t)optireduce_comm_size(comm);
	sbuf = malloc(count * sizeof(*sbuf) + 1);
	rbuf = malloc(count * sizeof(*rbuf) + 1);
	if (!sbuf || !rbuf) {
		ret = -OPTIREDUCE_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < count; i++)
		sbuf[i] = input(rank, i);
	ret = optireduce_allreduce(comm, sbuf, rbuf, count, OPTIREDUCE_INT64, OPTIREDUCE_SUM, NULL);
	for (size_t i = 0; !ret && i < count; i++) {
		int64_t want = 0;
		for (uint32_t r = 0; r < size; r++)
			want += input(r, i);
		if (rbuf[i] != want) {
			if (*bad < 5)
				fprintf(stderr, "rank %u: element %zu is %lld, expected %lld\n",
				        rank, i, (long long)rbuf[i], (long long)want);
			(*bad)++;
		}
	}
	if (!ret && rank == 0)
		printf("rank 0 of %u: %zu int64 summed over %s\n", size, count,
		       optireduce_comm_provider(comm, OPTIREDUCE_MODE_EXACT));
out:
	free(sbuf);
	free(rbuf);
	optireduce_comm_destroy(comm);
	return ret;
}

int main(int argc, char **argv)
{
	optireduce_ctx_t *ctx = NULL;
	pmix_proc_t self;
	size_t count = 100000;
	int opt, repeat = 1, hold = 0, bad = 0, ret = 0;

	while ((opt = getopt(argc, argv, "n:r:H")) != -1) {
		if (opt == 'n')
			count = strtoul(optarg, NULL, 0);
		else if (opt == 'r')
			repeat = atoi(optarg);
		else if (opt == 'H')
			hold = 1;
		else {
			fprintf(stderr, "usage: %s [-n COUNT] [-r REPEAT] [-H]\n", argv[0]);
			return 1;
		}
	}
	/* A PMIx launcher tells its clients their namespace in the environment. */
	if (!getenv("PMIX_NAMESPACE")) {
		fprintf(stderr, "not started by a PMIx launcher (try mpirun -np 2 %s)\n", argv[0]);
		return 77;
	}
	if (hold && PMIx_Init(&self, NULL, 0) != PMIX_SUCCESS) {
		fprintf(stderr, "PMIx_Init failed\n");
		return 1;
	}
	ret = optireduce_init(OPTIREDUCE_API_VERSION, &ctx);
	for (int i = 0; !ret && i < repeat; i++)
		ret = run(ctx, count, &bad);
	if (ret)
		fprintf(stderr, "rank %s: %s\n", getenv("PMIX_RANK"), optireduce_strerror(ret));
	else if (bad)
		fprintf(stderr, "rank %s: %d wrong elements\n", getenv("PMIX_RANK"), bad);
	if (ctx)
		optireduce_finalize(ctx);
	if (hold)
		PMIx_Finalize(NULL, 0);
	return ret || bad ? 1 : 0;
}
