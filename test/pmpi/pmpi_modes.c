/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Settings and life cycle of liboptireduce_pmpi.so, one mode per run (the
 * environment is read once, at the first MPI_Allreduce):
 *
 *   pmpi_modes disabled    OPTIREDUCE_PMPI_ENABLE=0: every call to PMPI ("disabled")
 *   pmpi_modes badpolicy   OPTIREDUCE_PMPI_BOUNDED is malformed: a warning, and
 *                          float SUM runs exact, never bounded
 *   pmpi_modes unavailable OPTIREDUCE_PROVIDER=bogus: no liboptireduce communicator can
 *                          be created; every call to PMPI ("unavailable")
 *   pmpi_modes threads     MPI_THREAD_MULTIPLE: every call to PMPI ("thread-multiple")
 *   pmpi_modes threads-ok  MPI_THREAD_MULTIPLE with OPTIREDUCE_PMPI_THREAD_MULTIPLE=1:
 *                          two threads on two communicators at once, all served
 *
 * Every mode ends with PMPI_Finalize, not MPI_Finalize, as a Fortran program
 * does: the interposer must still destroy every cached communicator (from
 * its MPI_COMM_SELF attribute callback), which the counters show afterwards.
 * Built with plain mpicc; exit 77 without the preload.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "lib/pmpi/optireduce_pmpi.h"

static int (*get_stats)(struct optireduce_pmpi_stats *);
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

/* n calls of float SUM on comm, each checked against PMPI_Allreduce. */
static void sums(MPI_Comm comm, int n, int count)
{
	float *in = malloc(sizeof(float) * (size_t)count),
	      *got = malloc(sizeof(float) * (size_t)count),
	      *ref = malloc(sizeof(float) * (size_t)count);
	int crank;

	PMPI_Comm_rank(comm, &crank);
	for (int k = 0; k < n; k++) {
		for (int i = 0; i < count; i++)
			in[i] = (float)((i * 7 + crank * 13 + k) % 64) / 4.0f; /* exact sums */
		PMPI_Allreduce(in, ref, count, MPI_FLOAT, MPI_SUM, comm);
		CHECK(MPI_Allreduce(in, got, count, MPI_FLOAT, MPI_SUM, comm) == MPI_SUCCESS,
		      "MPI_Allreduce failed");
		CHECK(memcmp(got, ref, sizeof(float) * (size_t)count) == 0, "wrong sum");
	}
	free(in);
	free(got);
	free(ref);
}

static void *thread_main(void *arg)
{
	sums(*(MPI_Comm *)arg, 200, 1000);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int threaded = strncmp(mode, "threads", 7) == 0, provided = 0, total;
	struct optireduce_pmpi_stats s;

	if (threaded) {
		MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	} else {
		MPI_Init(&argc, &argv);
	}
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &nranks);
	*(void **)&get_stats = dlsym(RTLD_DEFAULT, "optireduce_pmpi_stats");
	if (!get_stats || (threaded && provided != MPI_THREAD_MULTIPLE)) {
		if (rank == 0)
			printf("%s: skipping\n", get_stats ? "no MPI_THREAD_MULTIPLE"
			                                   : "liboptireduce_pmpi not loaded");
		PMPI_Finalize();
		return 77;
	}

	if (!strcmp(mode, "disabled") || !strcmp(mode, "threads") || !strcmp(mode, "unavailable")) {
		int why = mode[0] == 'd'   ? OPTIREDUCE_PMPI_REASON_DISABLED
		          : mode[0] == 't' ? OPTIREDUCE_PMPI_REASON_THREADS
		                           : OPTIREDUCE_PMPI_REASON_UNAVAILABLE;
		sums(MPI_COMM_WORLD, 3, 100);
		get_stats(&s);
		CHECK(s.calls == 3 && s.to_pmpi == 3 && s.to_pmpi_by_reason[why] == 3 &&
		          s.served_exact == 0 && s.comms_created == 0,
		      "%s: %llu calls, %llu exact, %llu to PMPI", mode, (unsigned long long)s.calls,
		      (unsigned long long)s.served_exact, (unsigned long long)s.to_pmpi);
	} else if (!strcmp(mode, "badpolicy")) {
		sums(MPI_COMM_WORLD, 2, 1 << 18);
		get_stats(&s);
		CHECK(s.served_exact == 2 && s.served_bounded == 0 && s.bounded_declined == 0,
		      "badpolicy: %llu exact, %llu bounded, %llu declined",
		      (unsigned long long)s.served_exact, (unsigned long long)s.served_bounded,
		      (unsigned long long)s.bounded_declined);
	} else if (!strcmp(mode, "threads-ok")) {
		/* Legal MPI: concurrent collectives on different communicators. */
		MPI_Comm c[2];
		pthread_t t[2];
		MPI_Comm_dup(MPI_COMM_WORLD, &c[0]);
		MPI_Comm_dup(MPI_COMM_WORLD, &c[1]);
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, thread_main, &c[i]);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		MPI_Comm_free(&c[0]); /* c[1] stays: the shutdown must clean it up */
		get_stats(&s);
		CHECK(s.served_exact == 400 && s.to_pmpi == 0 && s.errors == 0,
		      "threads-ok: %llu exact, %llu to PMPI, %llu errors",
		      (unsigned long long)s.served_exact, (unsigned long long)s.to_pmpi,
		      (unsigned long long)s.errors);
	} else {
		CHECK(0, "unknown mode '%s'", mode);
	}

	PMPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	PMPI_Finalize();
	get_stats(&s);
	CHECK(s.comms_destroyed == s.comms_created,
	      "after PMPI_Finalize: %llu communicators created, %llu destroyed",
	      (unsigned long long)s.comms_created, (unsigned long long)s.comms_destroyed);
	total += failures > 0 && total == 0; /* a failure after the reduction of failures */
	if (rank == 0)
		printf("%s %s\n", total ? "FAIL" : "PASS", mode);
	return total ? 1 : 0;
}
