/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exact-mode allreduce on N ranks: every dtype x op x count in
 * {0, 1, N-1, N+1, 1000003, 8 MiB worth + 3} x {in place, not} (100003 and 2 MiB
 * worth + 3 under AddressSanitizer), against a
 * reference each rank computes on its own from the deterministic inputs of
 * all ranks.  Integers must match bit for bit; floats within
 * 2 N eps sum|x_i| (one rounding per reduction step, half types rounding
 * each step too); every rank must hold a bit-identical result.
 *
 * On a flat bounded communicator (OPTIREDUCE_MODE=bounded, OPTIREDUCE_HIERARCHY=0, no
 * injected loss) the same matrix checks both halves of the mode: floating-point SUM and AVG
 * report bounded mode, lose nothing and match within the Hadamard transform's rounding
 * (rotation_tol); every other dtype x op reports the fall back to exact and matches as above.
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

/* The two large counts: an odd one, and a size that crosses several segments
 * (segment_size 512 KiB) and, at 8 MiB, the shared-memory chunk (shm_chunk 4 MiB).
 * Under AddressSanitizer they are smaller: the sanitizer checks the same edges (the
 * segments, the odd tail) at a quarter of the time, and the plain pass keeps 8 MiB. */
#if defined(__SANITIZE_ADDRESS__)
#define LARGE_ODD   100003
#define LARGE_BYTES (2u << 20)
#else
#define LARGE_ODD   1000003
#define LARGE_BYTES (8u << 20)
#endif

static int rank, nranks, failures;
static int want_alg = -1;        /* -a: the algorithm every operation must report */
static int mode_bounded;         /* OPTIREDUCE_MODE=bounded: the communicator is bounded */
static double had_block = 65536; /* parameter hadamard_block: the largest rotated block */
/* Phase-2 datagrams of the bounded operations, sent to the group and to each peer. */
static unsigned long long sent_multicast, sent_unicast;

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

/* Bounded mode serves these (lib/op/allreduce.c, bounded_eligible); the rest runs exact. */
static int bounded_eligible(enum optireduce_dtype dt, enum optireduce_op op)
{
	return eps_of(dt) > 0 && (op == OPTIREDUCE_SUM || op == OPTIREDUCE_AVG);
}

/*
 * How far bounded Transpose may be from the exact sum with nothing lost.  It rotates blocks
 * of B = 2^L <= hadamard_block elements, adds the N rotated vectors and rotates back, all in
 * the working precision w (float32, float64 for float64).  Each of the 2L butterfly stages
 * is orthogonal up to its rounding, which adds at most about w times the vector's 2-norm to
 * the error's 2-norm (a factor 2 covers the stage's scaling); each of the N - 1 additions
 * adds w times the partial sum's.  A block's norm is at most N sqrt(B) max|x| summed, so
 * every element is off by at most 2 (2L + N) w N sqrt(B) max|x|.  Unlike the exact error it
 * does not shrink with the element itself, as the rotation spreads a block's rounding over
 * all of it, zeros included.  The result's rounding to a half type is in the exact part.
 * mpi_bounded's test_clean allows 1e-4 N on float32 inputs within 0.5, a statistical bound
 * for one dtype; this one holds for all four, and stays below the 1/16 that one missing
 * contribution of these inputs would add.
 */
static double rotation_tol(enum optireduce_dtype dt, double xmax)
{
	double w = dt == OPTIREDUCE_FLOAT64 ? ldexp(1, -53) : ldexp(1, -24);

	return 2.0 * (2.0 * log2(had_block) + nranks) * w * nranks * sqrt(had_block) * xmax;
}

/* bounded: the allreduce runs on the bounded channel, and may be off by its rounding too. */
static void tabulate(enum optireduce_dtype dt, enum optireduce_op op, int bounded)
{
	double xmax = 0, slack;

	for (size_t i = 0; i < PERIOD; i++)
		for (int r = 0; r < nranks; r++)
			xmax = fmax(xmax, fabs(stored_input(r, i, dt, op)));
	slack = bounded ? rotation_tol(dt, xmax) : 0;
	for (size_t i = 0; i < PERIOD; i++) {
		ref_val[i] = reference(i, dt, op, &ref_tol[i]);
		ref_tol[i] += slack;
	}
}

static uint64_t checksum(const void *buf, size_t n)
{
	const unsigned char *b = buf;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/*
 * On a bounded communicator: bounded mode for what it serves, and nothing lost, since no loss
 * is injected and the deadline waits for everything (main); the fall back for the rest.
 */
static int check_mode(enum optireduce_dtype dt, enum optireduce_op op, size_t count,
                      const struct optireduce_status *st)
{
	int want_bounded = bounded_eligible(dt, op);
	int fell_back = (st->flags & OPTIREDUCE_STATUS_FELL_BACK) != 0;
	int ran_bounded = st->mode == OPTIREDUCE_MODE_BOUNDED &&
	                  (st->flags & OPTIREDUCE_STATUS_BOUNDED) && !fell_back;
	int ok = want_bounded ? ran_bounded : st->mode == OPTIREDUCE_MODE_EXACT && fell_back;
	int lost = 0;

	sent_multicast += st->bcast_multicast;
	sent_unicast += st->bcast_unicast;
	for (int p = 0; p < OPTIREDUCE_STATUS_PHASES; p++)
		lost |= st->elements_received[p] < st->elements_expected[p];
	lost |= st->contributions_missing > 0 || (st->flags & OPTIREDUCE_STATUS_INCOMPLETE);
	if (ok && !lost)
		return 0;
	fprintf(stderr,
	        "rank %d: %s %s count %zu: mode %d flags 0x%x, want %s; received %llu/%llu "
	        "%llu/%llu elements, %llu of %llu contributions missing\n",
	        rank, optireduce_dtype_name(dt), optireduce_op_name(op), count, st->mode, st->flags,
	        want_bounded ? "bounded, nothing lost" : "exact (fell back)",
	        (unsigned long long)st->elements_received[0],
	        (unsigned long long)st->elements_expected[0],
	        (unsigned long long)st->elements_received[1],
	        (unsigned long long)st->elements_expected[1],
	        (unsigned long long)st->contributions_missing,
	        (unsigned long long)st->contributions_expected);
	return 1;
}

/*
 * With multicast=on, the matrix is also Transpose's second phase sent to the group: on 3
 * ranks or more some datagram must have gone there (on 2 the one peer gets it by unicast).
 */
static int check_multicast(void)
{
	unsigned long long sent[2] = {sent_multicast, sent_unicast}, all[2];
	const char *mc = getenv("OPTIREDUCE_MULTICAST");
	int want = mc && strcmp(mc, "on") == 0 && nranks >= 3;

	MPI_Allreduce(sent, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("phase-2 datagrams: %llu to the group, %llu to single peers\n", all[0],
		       all[1]);
	if (!want || all[0] > 0)
		return 0;
	if (rank == 0)
		fprintf(stderr, "multicast on, but no datagram went to the group\n");
	return 1;
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
	/* A rank still filling its buffer drains no datagrams: start together. */
	if (mode_bounded)
		MPI_Barrier(MPI_COMM_WORLD);
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
	if (mode_bounded)
		failures += check_mode(dt, op, count, &st);
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

/* -a: every operation runs algorithm alg, whose id want_alg the status must report. */
static int set_algorithm(optireduce_comm_t *comm, const char *alg)
{
	int ret = optireduce_comm_set_param(comm, "algorithm", alg);

	while (optireduce_algorithm_name(++want_alg) &&
	       strcmp(optireduce_algorithm_name(want_alg), alg) != 0)
		;
	if (!ret && !optireduce_algorithm_name(want_alg))
		ret = -OPTIREDUCE_EINVAL;
	return ret;
}

/*
 * The matrix judges the arithmetic, not the deadlines (mpi_bounded does): on shared vCPUs an
 * adaptive deadline, or a quiet spell closing a phase early, cuts data while a rank is
 * descheduled.  A fixed 2 s deadline without early close waits for everything a clean
 * loopback delivers, repair included (early_timeout is set on the context, before the
 * communicator exists).  Reads the block size rotation_tol assumes.
 */
static int bounded_setup(optireduce_comm_t *comm)
{
	char val[64], *end;
	double b;
	int ret = optireduce_comm_set_param(comm, "timeout_us", "2000000");

	if (!ret)
		ret = optireduce_comm_get_param(comm, "hadamard_block", val, sizeof(val), NULL);
	/* A size with a suffix ("64k") keeps the largest block allowed: a looser bound. */
	b = ret ? 0 : strtod(val, &end);
	if (b >= 1 && *end == '\0')
		had_block = b;
	return ret;
}

int main(int argc, char **argv)
{
	optireduce_ctx_t *ctx;
	optireduce_comm_t *comm;
	const char *alg = NULL;
	int quick = 0, scatter = 0, env_bounded, total;
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
	/* Flat (no host hierarchy) on a bounded communicator, a reduce-scatter falls back and an
	 * allreduce runs bounded where it can. */
	env_bounded = getenv("OPTIREDUCE_MODE") && strcmp(getenv("OPTIREDUCE_MODE"), "bounded") == 0;
	mode_bounded = env_bounded && getenv("OPTIREDUCE_HIERARCHY") &&
	               strcmp(getenv("OPTIREDUCE_HIERARCHY"), "0") == 0;
	/* With the hierarchy, a bounded allreduce keeps the adaptive deadline and may estimate:
	 * the matrix compares exact sums, so it judges the flat communicator only. */
	if (env_bounded && !mode_bounded && !scatter) {
		if (rank == 0)
			fprintf(stderr, "mpi_allreduce: OPTIREDUCE_MODE=bounded needs "
			                "OPTIREDUCE_HIERARCHY=0 (a flat communicator)\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	ret = optireduce_init(OPTIREDUCE_API_VERSION, &ctx);
	/* Fixed at a communicator's creation; see bounded_setup for why. */
	if (!ret && mode_bounded)
		ret = optireduce_ctx_set_param(ctx, "early_timeout", "0");
	if (!ret)
		ret = optireduce_comm_from_mpi(ctx, MPI_COMM_WORLD, &comm);
	if (!ret && alg)
		ret = set_algorithm(comm, alg);
	if (!ret && mode_bounded)
		ret = bounded_setup(comm);
	if (ret) {
		fprintf(stderr, "rank %d: setup failed: %s\n", rank, optireduce_strerror(ret));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (rank == 0)
		printf("%d ranks, provider %s, %s, algorithm %s%s\n", nranks,
		       optireduce_comm_provider(comm, OPTIREDUCE_MODE_EXACT),
		       scatter ? "reduce-scatter" : "allreduce", alg ? alg : "auto",
		       mode_bounded ? ", bounded" : "");
	for (int dt = 0; dt < OPTIREDUCE_DTYPE_COUNT; dt++) {
		size_t es = optireduce_dtype_size(dt);
		size_t counts[] = {
		    0, 1, (size_t)nranks - 1, (size_t)nranks + 1, LARGE_ODD, LARGE_BYTES / es + 3};
		size_t rcounts[] = {0, 1, 3, 257, 65537, (1u << 20) / es};
		int ncounts = quick ? 4 : 6;
		for (int op = 0; op < OPTIREDUCE_OP_COUNT; op++) {
			tabulate(dt, op, mode_bounded && !scatter && bounded_eligible(dt, op));
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
	if (mode_bounded)
		total += check_multicast();
	if (rank == 0)
		printf("%s: %d failures\n", total ? "FAIL" : "PASS", total);
	MPI_Finalize();
	return total ? 1 : 0;
}
