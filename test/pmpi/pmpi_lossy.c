/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An unmodified MPI program on a lossy network, run with liboptireduce_pmpi.so preloaded and
 * OPTIREDUCE_PMPI_BOUNDED=float (test/cluster/cluster_pmpi_loss.sh runs it on the emulated cloud).
 *
 * Float SUM of 64 KiB and 1 MiB, ITERS calls each: every call must return MPI_SUCCESS (the
 * program keeps MPI_ERRORS_ARE_FATAL, so a failed operation aborts the job), every call must
 * have run bounded (the interposer's counters), and the result must be the estimate the
 * loss allows: against the exact sum of the same inputs, the normalized squared error over
 * all calls stays within the transpose's bound 2 q / (1 - q) (with room, as in mpi_bounded)
 * for q = 3 P, P the loss the network applies: a datagram dropped at the sender or at the
 * receiver is one loss, and a few phases end at the deadline when a LAST is lost.
 *
 *   pmpi_lossy P [ITERS]
 *
 * Built with plain mpicc; exit 77 without the preload.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "lib/pmpi/optireduce_pmpi.h"

static int rank, nranks, failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__);             \
			fprintf(stderr, __VA_ARGS__);                                              \
			fprintf(stderr, "\n");                                                     \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* Inputs of mean zero: the error is judged against the sum's own energy. */
static float input(int r, int i, int k)
{
	unsigned x = (unsigned)i * 2654435761u ^ (unsigned)(r * 97 + k * 7919);
	x ^= x >> 13;
	x *= 0x5bd1e995u;
	x ^= x >> 15;
	return (float)((double)(x & 0xffff) / 32768.0 - 1.0);
}

/*
 * Calls of count floats, back to back as in a training loop; each call's squared error and
 * truth into err2[k], norm2[k].  The truth is computed here from every rank's inputs, not with
 * PMPI_Allreduce: TCP under the same loss waits out retransmission timeouts (200 ms), and a
 * rank that late is cut as a straggler, which is another test (mpi_straggler).
 */
static void sums(int count, int iters, double *err2, double *norm2)
{
	float *in = malloc(sizeof(float) * (size_t)count),
	      *got = malloc(sizeof(float) * (size_t)count);

	for (int k = 0; k < iters; k++) {
		for (int i = 0; i < count; i++)
			in[i] = input(rank, i, k);
		CHECK(MPI_Allreduce(in, got, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) ==
		          MPI_SUCCESS,
		      "MPI_Allreduce of %d floats failed", count);
		for (int i = 0; i < count; i++) {
			double ref = 0, e;
			for (int r = 0; r < nranks; r++)
				ref += input(r, i, k);
			e = (double)got[i] - ref;
			err2[k] += e * e;
			norm2[k] += ref * ref;
		}
	}
	free(in);
	free(got);
}

int main(int argc, char **argv)
{
	int (*get_stats)(struct optireduce_pmpi_stats *);
	struct optireduce_pmpi_stats s;
	double p, q, bound, err2 = 0, norm2 = 0, *local, *all;
	int iters, total, worst = 0;
	const int counts[] = {16384, 262144}; /* 64 KiB and 1 MiB */

	MPI_Init(&argc, &argv);
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &nranks);
	*(void **)&get_stats = dlsym(RTLD_DEFAULT, "optireduce_pmpi_stats");
	if (!get_stats) {
		if (rank == 0)
			printf("liboptireduce_pmpi not loaded: skipping\n");
		PMPI_Finalize();
		return 77;
	}
	p = argc > 1 ? atof(argv[1]) : 0;
	iters = argc > 2 ? atoi(argv[2]) : 20;
	if (p < 0 || p >= 0.3 || iters < 1) {
		if (rank == 0)
			fprintf(stderr, "usage: pmpi_lossy P [ITERS]  (0 <= P < 0.3)\n");
		PMPI_Finalize();
		return 2;
	}
	/* Per call: squared error at [k], truth at [2 iters + k]. */
	local = calloc((size_t)(4 * iters), sizeof(double));
	all = calloc((size_t)(4 * iters), sizeof(double));
	for (int c = 0; c < 2; c++)
		sums(counts[c], iters, local + c * iters, local + 2 * iters + c * iters);
	PMPI_Allreduce(local, all, 4 * iters, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	for (int k = 0; k < 2 * iters; k++) {
		err2 += all[k];
		norm2 += all[2 * iters + k];
		if (all[k] / all[2 * iters + k] > all[worst] / all[2 * iters + worst])
			worst = k;
	}
	q = 3 * p;
	bound = 1.3 * 2 * q / (1 - q) + 0.01;
	get_stats(&s);
	CHECK(s.served_bounded == (uint64_t)(2 * iters) && s.errors == 0,
	      "%llu calls ran bounded (want %d), %llu errors", (unsigned long long)s.served_bounded,
	      2 * iters, (unsigned long long)s.errors);
	CHECK(err2 / norm2 <= bound, "nmse %g above the bound %g for loss %g", err2 / norm2, bound,
	      p);
	if (rank == 0)
		printf(
		    "%d calls of 64 KiB and 1 MiB on %d ranks at loss %g: all bounded, nmse %.3g "
		    "(bound %.3g); worst call %d (%s), nmse %.3g\n",
		    2 * iters, nranks, p, err2 / norm2, bound, worst % iters,
		    worst < iters ? "64 KiB" : "1 MiB", all[worst] / all[2 * iters + worst]);
	free(local);
	free(all);
	PMPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Finalize();
	if (rank == 0)
		printf("%s: %d failures\n", total ? "FAIL" : "PASS", total);
	return total ? 1 : 0;
}
