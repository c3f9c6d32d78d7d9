/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exact-mode allreduce on N ranks: every dtype x op x count in
 * {0, 1, N-1, N+1, 1000003, 8 MiB worth} x {in place, not}, against a
 * reference each rank computes on its own from the deterministic inputs of
 * all ranks.  Integers must match bit for bit; floats within
 * 2 N eps sum|x_i| (one rounding per reduction step, half types rounding
 * each step too); every rank must hold a bit-identical result.
 *
 *   mpi_allreduce [-q] [-a NAME] [-s]
 *     -q: skip the two large counts
 *     -a: run every case with algorithm NAME (parameter "algorithm"), and check
 *         each operation's status says it ran
 *     -s: optireduce_reduce_scatter_block instead, recvcount in {0, 1, 3, 257,
 *         65537, 1 MiB worth}: each rank checks its block of the same reference,
 *         and that a send buffer is left unchanged
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "dtype_value.h"
#include "optireduce_mpi.h"

static int rank, nranks, failures;
static int want_alg = -1; /* -a: the algorithm every operation must report */
static int mode_bounded;  /* OPTIREDUCE_MODE=bounded: the communicator is bounded */

/* Small values so integer sums and products stay in range of every type. */
static double input(int r, size_t i, enum optireduce_dtype dt, enum optireduce_op op)
{
	int fl = dt >= OPTIREDUCE_FLOAT16;
	int uns = dt == OPTIREDUCE_UINT8 || dt == OPTIREDUCE_UINT32 || dt == OPTIREDUCE_UINT64;

	if (op == OPTIREDUCE_PROD)
		return fl ? 0.5 + (double)((i * 3 + (size_t)r * 5) % 9) / 8.0
		          : (double)(1 + (i + (size_t)r) % 3);
	if (fl)
		return (double)((i * 7 + (size_t)r * 13) % 101) / 16.0 - 3.0;
	return (double)((i * 7 + (size_t)r * 13) % 17) - (uns ? 0 : 8);
}

static double eps_of(enum optireduce_dtype dt)
{
	switch (dt) {
	case OPTIREDUCE_FLOAT16:
		return ldexp(1, -11);
	case OPTIREDUCE_BFLOAT16:
		return ldexp(1, -8);
	case OPTIREDUCE_FLOAT32:
		return ldexp(1, -24);
	case OPTIREDUCE_FLOAT64:
		return ldexp(1, -53);
	default:
		return 0;
	}
}

/* The inputs as stored (after rounding to the dtype), read back as doubles. */
static double stored_input(int r, size_t i, enum optireduce_dtype dt, enum optireduce_op op)
{
	unsigned char tmp[8];
	dtype_store(tmp, 0, dt, input(r, i, dt, op));
	return dtype_load(tmp, 0, dt);
}

/* Returns the expected value and, through tol, how far a correct result may be. */
static double reference(size_t i, enum optireduce_dtype dt, enum optireduce_op op, double *tol)
{
	double acc = stored_input(0, i, dt, op), mag = fabs(acc);

	for (int r = 1; r < nranks; r++) {
		double x = stored_input(r, i, dt, op);
		mag += fabs(x);
		switch (op) {
		case OPTIREDUCE_SUM:
		case OPTIREDUCE_AVG:
			acc += x;
			break;
		case OPTIREDUCE_PROD:
			acc *= x;
			break;
		case OPTIREDUCE_MIN:
			acc = x < acc ? x : acc;
			break;
		case OPTIREDUCE_MAX:
			acc = x > acc ? x : acc;
			break;
		default:
			break;
		}
	}
	if (op == OPTIREDUCE_PROD)
		mag = fabs(acc);
	if (op == OPTIREDUCE_AVG) {
		mag /= nranks;
		acc = eps_of(dt) > 0 ? acc / nranks : trunc(acc / nranks);
	}
	*tol = 2.0 * nranks * eps_of(dt) * mag;
	return acc;
}

/* Inputs repeat with a period dividing 101 * 17 * 9, so the reference is tabulated once. */
#define PERIOD (101 * 17 * 9)
static double ref_val[PERIOD], ref_tol[PERIOD];

static void tabulate(enum optireduce_dtype dt, enum optireduce_op op)
{
	for (size_t i = 0; i < PERIOD; i++)
		ref_val[i] = reference(i, dt, op, &ref_tol[i]);
}

static uint64_t checksum(const void *buf, size_t n)
{
	const unsigned char *b = buf;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static void run_case(optireduce_comm_t *comm, enum optireduce_dtype dt, enum optireduce_op op,
                     size_t count, int in_place)
{
	size_t es = optireduce_dtype_size(dt), bad = 0, first_bad = 0;
	unsigned char *sbuf = malloc(count * es + 1), *rbuf = malloc(count * es + 1);
	double got_bad = 0, want_bad = 0;
	struct optireduce_status st;
	uint64_t sum, lo, hi;
	int ret;

	for (size_t i = 0; i < count; i++)
		dtype_store(in_place ? rbuf : sbuf, i, dt, input(rank, i, dt, op));
	if (!in_place)
		memset(rbuf, 0xA5, count * es);
	ret = optireduce_allreduce(comm, in_place ? OPTIREDUCE_IN_PLACE : sbuf, rbuf, count, dt, op,
	                           &st);
	if (ret) {
		fprintf(stderr, "rank %d: %s %s count %zu%s: %s\n", rank, optireduce_dtype_name(dt),
		        optireduce_op_name(op), count, in_place ? " in place" : "",
		        optireduce_strerror(ret));
		failures++;
		goto out;
	}
	if (want_alg >= 0 && st.algorithm != want_alg) {
		fprintf(stderr, "rank %d: %s %s count %zu ran algorithm %d, not %d\n", rank,
		        optireduce_dtype_name(dt), optireduce_op_name(op), count, st.algorithm,
		        want_alg);
		failures++;
	}
	for (size_t i = 0; i < count; i++) {
		double tol = ref_tol[i % PERIOD], want = ref_val[i % PERIOD];
		double got = dtype_load(rbuf, i, dt);
		if (!(fabs(got - want) <= tol)) {
			if (!bad++) {
				first_bad = i;
				got_bad = got;
				want_bad = want;
			}
		}
	}
	if (bad) {
		fprintf(stderr,
		        "rank %d: %s %s count %zu%s: %zu wrong, first [%zu] = %.9g, want %.9g\n",
		        rank, optireduce_dtype_name(dt), optireduce_op_name(op), count,
		        in_place ? " in place" : "", bad, first_bad, got_bad, want_bad);
		failures++;
	}
	sum = checksum(rbuf, count * es);
	MPI_Allreduce(&sum, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
	MPI_Allreduce(&sum, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
	if (lo != hi) {
		if (rank == 0)
			fprintf(stderr, "%s %s count %zu: ranks hold different results\n",
			        optireduce_dtype_name(dt), optireduce_op_name(op), count);
		failures++;
	}
out:
	free(sbuf);
	free(rbuf);
}

/* Rank r's block of the reduction of size * rcount elements, in place or not. */
static void run_scatter_case(optireduce_comm_t *comm, enum optireduce_dtype dt,
                             enum optireduce_op op, size_t rcount, int in_place)
{
	size_t es = optireduce_dtype_size(dt), total = rcount * (size_t)nranks, bad = 0;
	size_t base = (size_t)rank * rcount, first_bad = 0;
	unsigned char *sbuf = malloc(total * es + 1), *rbuf = malloc(total * es + 1);
	double got_bad = 0, want_bad = 0;
	struct optireduce_status st;
	int ret;

	for (size_t i = 0; i < total; i++)
		dtype_store(in_place ? rbuf : sbuf, i, dt, input(rank, i, dt, op));
	if (!in_place)
		memset(rbuf, 0xA5, total * es);
	ret = optireduce_reduce_scatter_block(comm, in_place ? OPTIREDUCE_IN_PLACE : sbuf, rbuf,
	                                      rcount, dt, op, &st);
	if (ret) {
		fprintf(stderr, "rank %d: scatter %s %s recvcount %zu%s: %s\n", rank,
		        optireduce_dtype_name(dt), optireduce_op_name(op), rcount,
		        in_place ? " in place" : "", optireduce_strerror(ret));
		failures++;
		goto out;
	}
	/* Exact, also on a bounded communicator (OPTIREDUCE_MODE=bounded), and flat it says so. */
	if (st.mode != OPTIREDUCE_MODE_EXACT ||
	    (mode_bounded && !(st.flags & OPTIREDUCE_STATUS_FELL_BACK))) {
		fprintf(stderr, "rank %d: scatter ran in mode %d, flags 0x%x\n", rank, st.mode,
		        st.flags);
		failures++;
	}
	for (size_t k = 0; k < rcount; k++) {
		size_t i = base + k;
		double tol = ref_tol[i % PERIOD], want = ref_val[i % PERIOD];
		double got = dtype_load(rbuf, k, dt);
		if (!(fabs(got - want) <= tol) && !bad++) {
			first_bad = k;
			got_bad = got;
			want_bad = want;
		}
	}
	/* Not in place, the send buffer is the caller's and stays as it was; nothing past
	 * the block is written. */
	for (size_t i = 0; !in_place && i < total && !bad; i++) {
		if (dtype_load(sbuf, i, dt) != stored_input(rank, i, dt, op)) {
			fprintf(stderr, "rank %d: scatter: send buffer [%zu] changed\n", rank, i);
			bad++;
		}
	}
	for (size_t i = rcount * es; !in_place && i < total * es && !bad; i++) {
		if (rbuf[i] != 0xA5) {
			fprintf(stderr, "rank %d: scatter: byte %zu past the block written\n", rank,
			        i);
			bad++;
		}
	}
	if (bad) {
		fprintf(stderr,
		        "rank %d: scatter %s %s recvcount %zu%s: %zu wrong, first [%zu] = %.9g, "
		        "want %.9g\n",
		        rank, optireduce_dtype_name(dt), optireduce_op_name(op), rcount,
		        in_place ? " in place" : "", bad, first_bad, got_bad, want_bad);
		failures++;
	}
out:
	free(sbuf);
	free(rbuf);
}

int main(int argc, char **argv)
{
	optireduce_ctx_t *ctx;
	optireduce_comm_t *comm;
	const char *alg = NULL;
	int quick = 0, scatter = 0, total;
	int ret;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-q") == 0) {
			quick = 1;
		} else if (strcmp(argv[i], "-s") == 0) {
			scatter = 1;
		} else if (strcmp(argv[i], "-a") == 0 && i + 1 < argc) {
			alg = argv[++i];
		} else {
			if (rank == 0)
				fprintf(stderr, "usage: mpi_allreduce [-q] [-a ALGORITHM] [-s]\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	/* Flat (no host hierarchy) on a bounded communicator, a reduce-scatter falls back. */
	mode_bounded =
	    getenv("OPTIREDUCE_MODE") && strcmp(getenv("OPTIREDUCE_MODE"), "bounded") == 0 &&
	    getenv("OPTIREDUCE_HIERARCHY") && strcmp(getenv("OPTIREDUCE_HIERARCHY"), "0") == 0;
	ret = optireduce_init(OPTIREDUCE_API_VERSION, &ctx);
	if (!ret)
		ret = optireduce_comm_from_mpi(ctx, MPI_COMM_WORLD, &comm);
	if (!ret && alg) {
		ret = optireduce_comm_set_param(comm, "algorithm", alg);
		while (optireduce_algorithm_name(++want_alg) &&
		       strcmp(optireduce_algorithm_name(want_alg), alg) != 0)
			;
		if (!ret && !optireduce_algorithm_name(want_alg))
			ret = -OPTIREDUCE_EINVAL;
	}
	if (ret) {
		fprintf(stderr, "rank %d: setup failed: %s\n", rank, optireduce_strerror(ret));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (rank == 0)
		printf("%d ranks, provider %s, %s, algorithm %s\n", nranks,
		       optireduce_comm_provider(comm, OPTIREDUCE_MODE_EXACT),
		       scatter ? "reduce-scatter" : "allreduce", alg ? alg : "auto");
	for (int dt = 0; dt < OPTIREDUCE_DTYPE_COUNT; dt++) {
		size_t es = optireduce_dtype_size(dt);
		size_t counts[] = {
		    0, 1, (size_t)nranks - 1, (size_t)nranks + 1, 1000003, (8u << 20) / es};
		size_t rcounts[] = {0, 1, 3, 257, 65537, (1u << 20) / es};
		int ncounts = quick ? 4 : 6;
		for (int op = 0; op < OPTIREDUCE_OP_COUNT; op++) {
			tabulate(dt, op);
			for (int c = 0; c < ncounts; c++)
				for (int ip = 0; ip < 2; ip++)
					if (scatter)
						run_scatter_case(comm, dt, op, rcounts[c], ip);
					else
						run_case(comm, dt, op, counts[c], ip);
		}
		if (rank == 0)
			printf("%-8s done\n", optireduce_dtype_name(dt));
	}
	MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	optireduce_comm_destroy(comm);
	optireduce_finalize(ctx);
	if (rank == 0)
		printf("%s: %d failures\n", total ? "FAIL" : "PASS", total);
	MPI_Finalize();
	return total ? 1 : 0;
}
