/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How long optireduce_comm_create takes: the first communicator of the process (with
 * optireduce_init and whatever libfabric initialises once per process) and the later ones,
 * each the slowest rank's time, after a barrier.
 *
 *   comm_create_bench [-n COUNT] [-b BAR_MS]
 *     -n: communicators after the first (default 5)
 *     -b: exit 1 when the median of the later ones exceeds BAR_MS on any rank
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "optireduce_mpi.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One creation, timed on every rank; returns the slowest rank's milliseconds or -1. */
static double timed_create(optireduce_ctx_t **ctx, int with_init, optireduce_comm_t **comm)
{
	double t0, mine, worst;
	int ret = 0;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now_ms();
	if (with_init)
		ret = optireduce_init(OPTIREDUCE_API_VERSION, ctx);
	if (!ret)
		ret = optireduce_comm_from_mpi(*ctx, MPI_COMM_WORLD, comm);
	mine = ret ? -1e9 : now_ms() - t0;
	MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	if (ret)
		fprintf(stderr, "comm_create: %s\n", optireduce_strerror(ret));
	return worst < 0 ? -1 : worst;
}

int main(int argc, char **argv)
{
	optireduce_ctx_t *ctx = NULL;
	optireduce_comm_t *comm;
	double first, *later, bar = 0;
	int n = 5, rank, opt, fail = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	while ((opt = getopt(argc, argv, "n:b:")) != -1) {
		if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 'b')
			bar = atof(optarg);
	}
	if (n < 1)
		n = 1;
	later = calloc((size_t)n, sizeof(*later));
	first = timed_create(&ctx, 1, &comm);
	if (first < 0 || !later)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int i = 0; i < n; i++) {
		optireduce_comm_t *c;
		later[i] = timed_create(&ctx, 0, &c);
		if (later[i] < 0)
			MPI_Abort(MPI_COMM_WORLD, 1);
		optireduce_comm_destroy(c);
	}
	optireduce_comm_destroy(comm);
	qsort(later, (size_t)n, sizeof(*later), cmp_double);
	if (rank == 0) {
		printf("first (with optireduce_init): %.1f ms\n", first);
		printf("later (%d): median %.1f ms, min %.1f, max %.1f\n", n, later[n / 2], later[0],
		       later[n - 1]);
	}
	if (bar > 0 && later[n / 2] > bar) {
		if (rank == 0)
			printf("median %.1f ms above the bar of %.1f ms\n", later[n / 2], bar);
		fail = 1;
	}
	optireduce_finalize(ctx);
	free(later);
	MPI_Finalize();
	return fail;
}
