/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Iallreduce through liboptireduce_pmpi.so, as an unmodified program
 * uses it: completed by MPI_Wait, an MPI_Test loop, MPI_Waitall over a mix
 * with plain point-to-point requests, MPI_Waitany, MPI_Testany,
 * MPI_Waitsome, MPI_Testsome, and abandoned with MPI_Request_free.
 *
 * Every input is integer-valued (exact in float and double), so the sum,
 * max and min have a closed form computed here without MPI: results must
 * match it bit for bit.  Statuses of the collectives must be empty and not
 * cancelled; those of the receives must name their source, tag and count.
 * The interposer's counters (optireduce_pmpi_stats, found with dlsym) must
 * show every MPI_Iallreduce served by liboptireduce; without the preload
 * the program skips (77).  Built plain (run under LD_PRELOAD), or with the
 * interposer's sources and AddressSanitizer (pmpi_nonblocking_asan).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "lib/pmpi/optireduce_pmpi.h"

#define N_BIG   (1 << 20) /* 4 MiB of float: many segments, so progress matters */
#define N_SMALL 1000
#define TAG     77

static int (*get_stats)(struct optireduce_pmpi_stats *);
static int rank, size, failures, started;

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "rank %d: line %d: ", rank, __LINE__);                             \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		failures++;                                                                        \
	} while (0)

/* Input of rank r at index i, salted per case: small integers. */
static int value(int r, long i, int salt)
{
	return (int)((r * 7 + i * 3 + salt) % 101) - 50;
}

static void fill_float(float *b, long n, int salt)
{
	for (long i = 0; i < n; i++)
		b[i] = (float)value(rank, i, salt);
}

static void check_sum_float(const float *b, long n, int salt, const char *what)
{
	for (long i = 0; i < n; i++) {
		long want = 0;
		for (int r = 0; r < size; r++)
			want += value(r, i, salt);
		if (b[i] != (float)want) {
			FAIL("%s: [%ld] = %g, want %ld", what, i, b[i], want);
			return;
		}
	}
}

static void check_max_double(const double *b, long n, int salt, const char *what)
{
	for (long i = 0; i < n; i++) {
		int want = value(0, i, salt);
		for (int r = 1; r < size; r++)
			if (value(r, i, salt) > want)
				want = value(r, i, salt);
		if (b[i] != (double)want) {
			FAIL("%s: [%ld] = %g, want %d", what, i, b[i], want);
			return;
		}
	}
}

/*
 * A collective's status: empty, not cancelled.  MPI_ERROR is defined only after the calls
 * that complete several requests (MPI_Waitall, MPI_Testall, MPI_Waitsome, MPI_Testsome).
 */
static void check_coll_status(const MPI_Status *st, const char *what, int error_set)
{
	int count = -1, cancelled = -1;

	MPI_Get_count(st, MPI_BYTE, &count);
	MPI_Test_cancelled(st, &cancelled);
	if (count != 0 || cancelled || (error_set && st->MPI_ERROR != MPI_SUCCESS))
		FAIL("%s: status count %d cancelled %d error %d", what, count, cancelled,
		     st->MPI_ERROR);
}

static void iallreduce_float(const void *sbuf, float *rbuf, long n, MPI_Comm comm, MPI_Request *req)
{
	started++;
	MPI_Iallreduce(sbuf, rbuf, (int)n, MPI_FLOAT, MPI_SUM, comm, req);
}

static void test_wait(void)
{
	float *s = malloc(N_BIG * sizeof(float)), *r = malloc(N_BIG * sizeof(float));
	double d[N_SMALL];
	MPI_Request req;
	MPI_Status st;

	fill_float(s, N_BIG, 1);
	iallreduce_float(s, r, N_BIG, MPI_COMM_WORLD, &req);
	MPI_Wait(&req, &st);
	if (req != MPI_REQUEST_NULL)
		FAIL("MPI_Wait left the request");
	check_sum_float(r, N_BIG, 1, "wait");
	check_coll_status(&st, "wait", 0);
	/* In place, MPI_MAX of doubles. */
	for (int i = 0; i < N_SMALL; i++)
		d[i] = value(rank, i, 2);
	started++;
	MPI_Iallreduce(MPI_IN_PLACE, d, N_SMALL, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &req);
	MPI_Wait(&req, MPI_STATUS_IGNORE);
	check_max_double(d, N_SMALL, 2, "in place max");
	free(s);
	free(r);
}

static void test_test_loop(void)
{
	float *s = malloc(N_BIG * sizeof(float)), *r = malloc(N_BIG * sizeof(float));
	MPI_Request req;
	MPI_Status st;
	long polls = 0;
	int flag = 0;

	fill_float(s, N_BIG, 3);
	iallreduce_float(s, r, N_BIG, MPI_COMM_WORLD, &req);
	while (!flag) {
		MPI_Test(&req, &flag, &st);
		polls++;
	}
	check_sum_float(r, N_BIG, 3, "test loop");
	check_coll_status(&st, "test loop", 0);
	if (rank == 0)
		printf("test loop: %ld MPI_Test calls\n", polls);
	free(s);
	free(r);
}

/* Two collectives and a ring exchange, completed by one of the multi-request calls. */
static void test_mixed(const char *how, MPI_Comm dup)
{
	enum { NREQ = 4 };
	float *s = malloc(N_BIG * sizeof(float)), *r = malloc(N_BIG * sizeof(float));
	float s2[N_SMALL], r2[N_SMALL];
	int out[N_SMALL], in[N_SMALL], done[NREQ] = {0}, ndone = 0, idx[NREQ];
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	MPI_Request req[NREQ];
	MPI_Status st[NREQ];

	fill_float(s, N_BIG, 4);
	fill_float(s2, N_SMALL, 5);
	for (int i = 0; i < N_SMALL; i++)
		out[i] = rank * 1000 + i;
	/* The receive first, so it is pending while the collectives start. */
	MPI_Irecv(in, N_SMALL, MPI_INT, left, TAG, MPI_COMM_WORLD, &req[0]);
	iallreduce_float(s, r, N_BIG, MPI_COMM_WORLD, &req[1]);
	MPI_Isend(out, N_SMALL, MPI_INT, right, TAG, MPI_COMM_WORLD, &req[2]);
	iallreduce_float(s2, r2, N_SMALL, dup, &req[3]);
	while (ndone < NREQ) {
		int flag = 0, k = 0, one;
		if (!strcmp(how, "waitall")) {
			MPI_Waitall(NREQ, req, st);
			for (int i = 0; i < NREQ; i++)
				idx[k++] = i;
		} else if (!strcmp(how, "testall")) {
			while (!flag)
				MPI_Testall(NREQ, req, &flag, st);
			for (int i = 0; i < NREQ; i++)
				idx[k++] = i;
		} else if (!strcmp(how, "waitany") || !strcmp(how, "testany")) {
			MPI_Status one_st;
			if (how[0] == 'w')
				MPI_Waitany(NREQ, req, &one, &one_st);
			else
				while (!flag)
					MPI_Testany(NREQ, req, &one, &flag, &one_st);
			if (one == MPI_UNDEFINED) {
				FAIL("%s: no active request left, %d done", how, ndone);
				break;
			}
			st[one] = one_st;
			idx[k++] = one;
		} else {
			int outcount = 0, got[NREQ];
			MPI_Status some[NREQ];
			if (how[0] == 'w')
				MPI_Waitsome(NREQ, req, &outcount, got, some);
			else
				MPI_Testsome(NREQ, req, &outcount, got, some);
			for (int i = 0; i < outcount; i++) {
				st[got[i]] = some[i];
				idx[k++] = got[i];
			}
		}
		for (int i = 0; i < k; i++) {
			if (done[idx[i]]++)
				FAIL("%s: request %d completed twice", how, idx[i]);
			ndone++;
		}
	}
	check_sum_float(r, N_BIG, 4, how);
	check_sum_float(r2, N_SMALL, 5, how);
	check_coll_status(&st[1], how, !strstr(how, "any"));
	check_coll_status(&st[3], how, !strstr(how, "any"));
	{
		int count = -1;
		MPI_Get_count(&st[0], MPI_INT, &count);
		if (st[0].MPI_SOURCE != left || st[0].MPI_TAG != TAG || count != N_SMALL)
			FAIL("%s: receive status source %d tag %d count %d", how, st[0].MPI_SOURCE,
			     st[0].MPI_TAG, count);
	}
	for (int i = 0; i < N_SMALL; i++)
		if (in[i] != left * 1000 + i) {
			FAIL("%s: received [%d] = %d", how, i, in[i]);
			break;
		}
	for (int i = 0; i < NREQ; i++)
		if (req[i] != MPI_REQUEST_NULL)
			FAIL("%s: request %d not freed", how, i);
	free(s);
	free(r);
}

/*
 * Rank 0 blocks in MPI_Recv while rank 1 waits for the collective and only
 * then sends: rank 0's share of the collective must move inside MPI_Recv.
 */
static void test_progress_in_recv(void)
{
	float *s = malloc(N_BIG * sizeof(float)), *r = malloc(N_BIG * sizeof(float));
	MPI_Request req;
	int token = 0;

	fill_float(s, N_BIG, 6);
	iallreduce_float(s, r, N_BIG, MPI_COMM_WORLD, &req);
	if (rank == 0) {
		MPI_Recv(&token, 1, MPI_INT, size - 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	} else {
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		if (rank == size - 1)
			MPI_Send(&token, 1, MPI_INT, 0, TAG, MPI_COMM_WORLD);
	}
	check_sum_float(r, N_BIG, 6, "progress in MPI_Recv");
	free(s);
	free(r);
}

/*
 * MPI_Request_free of a running operation: the library keeps the buffers
 * and finishes it.  Operations on one communicator complete in start
 * order, so once a later one is waited for, the freed one is done.  A
 * second freed one on a dup is finished by MPI_Comm_free, and a third is
 * left for MPI_Finalize.
 */
static void test_request_free(MPI_Comm world_dup)
{
	static float left_for_finalize[N_SMALL], lf_out[N_SMALL];
	float *s = malloc(N_BIG * sizeof(float)), *r = malloc(N_BIG * sizeof(float));
	float s2[N_SMALL], r2[N_SMALL], r3[N_SMALL];
	MPI_Request req, later;
	MPI_Comm dup;

	fill_float(s, N_BIG, 7);
	fill_float(s2, N_SMALL, 8);
	iallreduce_float(s, r, N_BIG, MPI_COMM_WORLD, &req);
	MPI_Request_free(&req);
	if (req != MPI_REQUEST_NULL)
		FAIL("MPI_Request_free left the request");
	iallreduce_float(s2, r2, N_SMALL, MPI_COMM_WORLD, &later);
	MPI_Wait(&later, MPI_STATUS_IGNORE);
	check_sum_float(r, N_BIG, 7, "freed, then a later one waited");
	check_sum_float(r2, N_SMALL, 8, "the later one");

	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	iallreduce_float(s2, r3, N_SMALL, dup, &req);
	MPI_Request_free(&req);
	MPI_Comm_free(&dup);
	check_sum_float(r3, N_SMALL, 8, "freed, then MPI_Comm_free");

	fill_float(left_for_finalize, N_SMALL, 9);
	iallreduce_float(left_for_finalize, lf_out, N_SMALL, world_dup, &req);
	MPI_Request_free(&req);
	free(s);
	free(r);
}

/* Several in flight on one communicator, waited for in reverse order. */
static void test_many(void)
{
	enum { K = 8 };
	float s[K][N_SMALL], r[K][N_SMALL];
	MPI_Request req[K];

	for (int k = 0; k < K; k++) {
		fill_float(s[k], N_SMALL, 10 + k);
		iallreduce_float(s[k], r[k], N_SMALL, MPI_COMM_WORLD, &req[k]);
	}
	for (int k = K - 1; k >= 0; k--)
		MPI_Wait(&req[k], MPI_STATUS_IGNORE);
	for (int k = 0; k < K; k++)
		check_sum_float(r[k], N_SMALL, 10 + k, "eight in flight");
}

int main(int argc, char **argv)
{
	static const char *const multi[] = {"waitall", "testall",  "waitany",
	                                    "testany", "waitsome", "testsome"};
	struct optireduce_pmpi_stats a, b;
	MPI_Comm dup, keep;
	int total = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	*(void **)&get_stats = dlsym(RTLD_DEFAULT, "optireduce_pmpi_stats");
	if (!get_stats) {
		if (rank == 0)
			printf("liboptireduce_pmpi not loaded (LD_PRELOAD it): skipping\n");
		MPI_Finalize();
		return 77;
	}
	get_stats(&a);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_dup(MPI_COMM_WORLD, &keep);
	test_wait();
	test_test_loop();
	for (size_t i = 0; i < sizeof(multi) / sizeof(multi[0]); i++)
		test_mixed(multi[i], dup);
	test_progress_in_recv();
	test_many();
	test_request_free(keep);
	MPI_Comm_free(&dup);
	/* keep stays allocated with a freed operation pending: MPI_Finalize finishes it. */
	get_stats(&b);
	if (b.nonblocking_calls - a.nonblocking_calls != (uint64_t)started)
		FAIL("%llu MPI_Iallreduce calls counted, %d made",
		     (unsigned long long)(b.nonblocking_calls - a.nonblocking_calls), started);
	/* The last freed one may still be running; every other one was served and finished. */
	if (b.nonblocking_served - a.nonblocking_served + 1 < (uint64_t)started)
		FAIL("%llu of %d MPI_Iallreduce served by liboptireduce",
		     (unsigned long long)(b.nonblocking_served - a.nonblocking_served), started);
	if (b.to_pmpi != a.to_pmpi || b.errors)
		FAIL("%llu calls went to PMPI, %llu errors",
		     (unsigned long long)(b.to_pmpi - a.to_pmpi), (unsigned long long)b.errors);
	PMPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s: %d MPI_Iallreduce per rank, %llu served, %d failures\n",
		       total ? "FAIL" : "PASS", started,
		       (unsigned long long)(b.nonblocking_served - a.nonblocking_served), total);
	MPI_Finalize();
	return total ? 1 : 0;
}
