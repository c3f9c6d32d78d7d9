/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Many operations in flight on one communicator (docs/design.md, "Operations in flight").
 * Each batch starts 32 operations of mixed sizes (8 B to 1 MiB) back to back and completes
 * them in an order of each rank's own: half polled with optireduce_test, half waited for,
 * shuffled.  Every operation's inputs depend on the operation, so data delivered to the
 * wrong one shows.
 *
 *  exact:   several dtypes and ops (sum, prod, min, max, avg); inputs are small dyadic
 *           numbers, so every result is exact whatever the order of reduction: each must
 *           equal the reference each rank computes from all ranks' inputs (avg within a
 *           rounding).
 *  bounded: float32 and float64 sum and avg, and an int32 sum that runs exact on the same
 *           communicator.  Without injected loss: the exact sum within the Hadamard
 *           transform's rounding, unless the status reports loss (a loaded host's socket),
 *           then within the estimator's error for the loss it reports.  With injected loss
 *           (inject_loss 0.05) over repeated batches: no element biased (its mean error over
 *           the batches within 5 standard errors) and the error energy of the larger
 *           operations within the theory of test/mpi/mpi_bounded.c.
 *
 * Overlap, without timing: in one batch rank 0 starts all 32 operations before the others
 * start any (they wait in MPI_Barrier, which rank 0 enters after its 32 starts).  None of its
 * operations can end before its peers' data comes (exact), or before its 10 s deadline
 * (bounded), so the status of its k-th operation, k < max_inflight, must say k + 1
 * operations were in flight when it started.  No status may say more than max_inflight
 * (with 1, every status says 1).
 *
 * With -p every batch completes through optireduce_comm_progress instead: the whole
 * communicator progressed, and each operation collected once optireduce_test says it is done.
 *
 *   mpi_multireq exact|bounded [-q] [-p]
 */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "dtype_value.h"
#include "optireduce_mpi.h"

#include "mpi_check.h"

#define NOPS 32

static int bounded;
static int by_progress; /* -p: complete through optireduce_comm_progress */

struct kind {
	enum optireduce_dtype dt;
	enum optireduce_op op;
};

static const struct kind exact_kinds[] = {
    {OPTIREDUCE_INT32, OPTIREDUCE_SUM},   {OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM},
    {OPTIREDUCE_INT64, OPTIREDUCE_MAX},   {OPTIREDUCE_FLOAT64, OPTIREDUCE_SUM},
    {OPTIREDUCE_UINT8, OPTIREDUCE_MIN},   {OPTIREDUCE_FLOAT16, OPTIREDUCE_SUM},
    {OPTIREDUCE_INT32, OPTIREDUCE_PROD},  {OPTIREDUCE_FLOAT64, OPTIREDUCE_AVG},
    {OPTIREDUCE_FLOAT32, OPTIREDUCE_MAX}, {OPTIREDUCE_UINT64, OPTIREDUCE_SUM},
};
static const struct kind bounded_kinds[] = {
    {OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM}, {OPTIREDUCE_FLOAT64, OPTIREDUCE_SUM},
    {OPTIREDUCE_FLOAT32, OPTIREDUCE_AVG}, {OPTIREDUCE_FLOAT64, OPTIREDUCE_AVG},
    {OPTIREDUCE_FLOAT32, OPTIREDUCE_SUM}, {OPTIREDUCE_INT32, OPTIREDUCE_SUM},
};

/* Bytes of operation k: every size class from 8 B to 1 MiB, large and small interleaved. */
static const size_t sizes[] = {8, 1 << 20, 40, 16384, 1000, 262144, 4104, 65536};
/* With injected loss: up to 64 KiB, so that 30 batches stay quick. */
static const size_t small_sizes[] = {8, 65536, 40, 16384, 1000, 32768, 4104, 65536};

struct opdesc {
	struct kind k;
	size_t count;
	int in_place;
	void *sbuf, *rbuf;
	optireduce_req_t *req;
	struct optireduce_status st;
};

static void describe(struct opdesc *d, int k, int small)
{
	size_t nk = bounded ? sizeof(bounded_kinds) / sizeof(bounded_kinds[0])
	                    : sizeof(exact_kinds) / sizeof(exact_kinds[0]);
	size_t bytes = (small ? small_sizes : sizes)[k % 8];

	d->k = bounded ? bounded_kinds[(size_t)k % nk] : exact_kinds[(size_t)k % nk];
	d->count = bytes / optireduce_dtype_size(d->k.dt);
	if (d->count == 0)
		d->count = 1;
	d->in_place = k % 5 == 0;
}

/* Exact mode: small dyadic values, so that sums, products, min and max are exact in every
 * dtype (float16 included) and different per rank, element, operation and batch. */
static double exact_input(int r, size_t i, int k, int batch, const struct kind *kd)
{
	size_t h = i * 7 + (size_t)r * 13 + (size_t)k * 5 + (size_t)batch * 11;
	int uns = kd->dt == OPTIREDUCE_UINT8 || kd->dt == OPTIREDUCE_UINT64;

	if (kd->op == OPTIREDUCE_PROD)
		return (double)(1 + h % 2);
	if (kd->dt >= OPTIREDUCE_FLOAT16)
		return (double)(h % 97) / 16.0 - 3.0;
	return (double)(h % 17) - (uns ? 0 : 8);
}

static double value_in(int r, size_t i, int k, int batch, const struct kind *kd)
{
	if (!bounded || kd->dt == OPTIREDUCE_INT32)
		return exact_input(r, i, k, batch, kd);
	return input(r, i, k * 131 + batch * 7919);
}

static double reference(size_t i, int k, int batch, const struct kind *kd)
{
	double acc = value_in(0, i, k, batch, kd);

	for (int r = 1; r < nranks; r++) {
		double v = value_in(r, i, k, batch, kd);
		switch (kd->op) {
		case OPTIREDUCE_PROD:
			acc *= v;
			break;
		case OPTIREDUCE_MIN:
			acc = v < acc ? v : acc;
			break;
		case OPTIREDUCE_MAX:
			acc = v > acc ? v : acc;
			break;
		default:
			acc += v;
		}
	}
	return kd->op == OPTIREDUCE_AVG ? acc / nranks : acc;
}

static void fill(struct opdesc *d, int k, int batch)
{
	size_t es = optireduce_dtype_size(d->k.dt);

	d->rbuf = malloc(d->count * es);
	d->sbuf = d->in_place ? (void *)OPTIREDUCE_IN_PLACE : malloc(d->count * es);
	if (!d->rbuf || !d->sbuf) {
		fprintf(stderr, "rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (size_t i = 0; i < d->count; i++)
		dtype_store(d->in_place ? d->rbuf : d->sbuf, i, d->k.dt,
		            value_in(rank, i, k, batch, &d->k));
}

static void release(struct opdesc *d)
{
	if (!d->in_place)
		free(d->sbuf);
	free(d->rbuf);
	d->sbuf = d->rbuf = NULL;
}

/* What one batch's checks add up (bounded: the estimator's error). */
struct tally {
	double err2, norm2;    /* of operations of at least 8 packets per block */
	double norm_k[NOPS];   /* their truth's energy, by operation */
	int packets_k[NOPS];   /* and their packets per block */
	double lost, expected; /* elements, over every bounded operation */
	double *mean, *m2;     /* per element of the whole batch, over batches */
};

static void set(optireduce_comm_t *comm, const char *name, const char *value)
{
	if (optireduce_comm_set_param(comm, name, value))
		FAIL("set_param %s=%s failed\n", name, value);
}

/* Starts the batch's operations back to back. */
static void start_all(optireduce_comm_t *comm, struct opdesc *d, int batch, int small)
{
	for (int k = 0; k < NOPS; k++) {
		int ret;
		describe(&d[k], k, small);
		fill(&d[k], k, batch);
		ret = optireduce_iallreduce(comm, d[k].sbuf, d[k].rbuf, d[k].count, d[k].k.dt,
		                            d[k].k.op, &d[k].req);
		if (ret) {
			FAIL("iallreduce %d: %s\n", k, optireduce_strerror(ret));
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
}

/* Completes them in a shuffled order of this rank's own: even positions by polling
 * optireduce_test until done, odd ones by optireduce_wait. */
static void complete_all(struct opdesc *d, unsigned seed)
{
	int order[NOPS];

	srand(seed * 7919u + (unsigned)rank * 104729u + 1);
	for (int k = 0; k < NOPS; k++)
		order[k] = k;
	for (int k = NOPS - 1; k > 0; k--) {
		int j = rand() % (k + 1), t = order[k];
		order[k] = order[j];
		order[j] = t;
	}
	for (int n = 0; n < NOPS; n++) {
		struct opdesc *o = &d[order[n]];
		int ret;
		if (n % 2 == 0) {
			/* Ranks may outnumber cores: the peers need this one too. */
			while ((ret = optireduce_test(o->req)) == OPTIREDUCE_INPROGRESS)
				sched_yield();
			if (ret)
				FAIL("test of operation %d: %s\n", order[n],
				     optireduce_strerror(ret));
		}
		ret = optireduce_wait(o->req, &o->st);
		if (ret)
			FAIL("wait of operation %d: %s\n", order[n], optireduce_strerror(ret));
		o->req = NULL;
	}
}

/* -p: progress the whole communicator, then collect whatever test says is done, in any
 * order.  The calls' counts add up to at most the operations, and never go negative. */
static void complete_by_progress(optireduce_comm_t *comm, struct opdesc *d)
{
	int left = NOPS, counted = 0;

	while (left > 0) {
		int ret = optireduce_comm_progress(comm, 5);
		if (ret < 0 || ret > NOPS) {
			FAIL("optireduce_comm_progress returned %d\n", ret);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		counted += ret;
		for (int k = 0; k < NOPS; k++) {
			if (!d[k].req || (ret = optireduce_test(d[k].req)) == OPTIREDUCE_INPROGRESS)
				continue;
			if (ret)
				FAIL("test of operation %d: %s\n", k, optireduce_strerror(ret));
			ret = optireduce_wait(d[k].req, &d[k].st);
			if (ret)
				FAIL("wait of operation %d: %s\n", k, optireduce_strerror(ret));
			d[k].req = NULL;
			left--;
		}
	}
	if (counted > NOPS)
		FAIL("optireduce_comm_progress counted %d completions of %d\n", counted, NOPS);
	if (optireduce_comm_progress(comm, 0) != 0)
		FAIL("optireduce_comm_progress: not 0 with nothing pending\n");
}

/* Exact results must equal the reference; avg may differ by the division's rounding. */
static void check_exact(struct opdesc *d, int k, int batch)
{
	size_t bad = 0, first = 0;

	for (size_t i = 0; i < d->count; i++) {
		unsigned char want[8];
		double ref = reference(i, k, batch, &d->k), got = dtype_load(d->rbuf, i, d->k.dt);
		dtype_store(want, 0, d->k.dt, ref);
		if (d->k.op == OPTIREDUCE_AVG ? fabs(got - ref) > 1e-12 * (1 + fabs(ref))
		                              : got != dtype_load(want, 0, d->k.dt)) {
			if (!bad++)
				first = i;
		}
	}
	if (bad)
		FAIL("batch %d op %d (%s %s, %zu elements): %zu wrong, first at %zu: %g, want %g\n",
		     batch, k, optireduce_dtype_name(d->k.dt), optireduce_op_name(d->k.op),
		     d->count, bad, first, dtype_load(d->rbuf, first, d->k.dt),
		     reference(first, k, batch, &d->k));
}

/* Error energy of a block that lost each of its m packets with probability p, rescaled
 * (test/mpi/mpi_bounded.c, block_gain). */
static double block_gain(double p, int m)
{
	double g = 0, binom = 1;

	for (int x = 0; x < m; x++) {
		g += binom * pow(p, x) * pow(1 - p, m - x) * x / (m - x);
		binom = binom * (m - x) / (x + 1);
	}
	return g;
}

/* Packets per Hadamard block of an operation: blocks of 4096 elements halved while half
 * still covers a rank's share, at least 256, over the udp provider's 1424-byte payloads. */
static int block_packets(const struct opdesc *d)
{
	size_t block = 4096, per_rank = (d->count + nranks - 1) / nranks;
	size_t es = d->k.dt == OPTIREDUCE_FLOAT64 ? 8 : 4;

	while (block > 256 && block / 2 >= per_rank)
		block /= 2;
	return (int)((block * es + 1423) / 1424);
}

/* Bounded: the error against the exact sum, its energy, and what the status says was lost. */
static void check_bounded(struct opdesc *d, int k, int batch, struct tally *t, size_t base)
{
	double err2 = 0, norm2 = 0, maxerr = 0, q, whole;
	double lost = (double)(d->st.elements_expected[0] - d->st.elements_received[0] +
	                       d->st.elements_expected[1] - d->st.elements_received[1]);
	double expected = (double)(d->st.elements_expected[0] + d->st.elements_expected[1]);
	int lost_any = lost > 0;

	if (d->k.dt == OPTIREDUCE_INT32) {
		check_exact(d, k, batch);
		return;
	}
	if (!(d->st.flags & OPTIREDUCE_STATUS_BOUNDED) && nranks > 1)
		FAIL("batch %d op %d: did not run bounded\n", batch, k);
	for (size_t i = 0; i < d->count; i++) {
		double ref = reference(i, k, batch, &d->k),
		       e = dtype_load(d->rbuf, i, d->k.dt) - ref;
		/* In units of a sum, for avg too: one scale for the statistics. */
		if (d->k.op == OPTIREDUCE_AVG) {
			e *= nranks;
			ref *= nranks;
		}
		err2 += e * e;
		norm2 += ref * ref;
		maxerr = fabs(e) > maxerr ? fabs(e) : maxerr;
		if (t->mean) {
			t->mean[base + i] += e;
			t->m2[base + i] += e * e;
		}
	}
	t->lost += lost;
	t->expected += expected;
	/* A peer's loss shows in this rank's result through the shard that peer reduced. */
	q = expected > 0 ? lost / expected : 0;
	MPI_Allreduce(MPI_IN_PLACE, &q, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	lost_any = q > 0;
	if (!t->mean && !lost_any && maxerr > 1e-4 * nranks)
		FAIL("batch %d op %d (%zu elements): max error %g without loss\n", batch, k,
		     d->count, maxerr);
	/* Real socket loss on a loaded host, reported: at most a few times the theory.  The
	 * theory is that of packets lost independently; a contribution missing whole (a rank
	 * descheduled past the deadline) is judged by the statistics tests, not here. */
	whole = (double)(d->st.contributions_missing + d->st.blocks_fallback);
	MPI_Allreduce(MPI_IN_PLACE, &whole, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	if (!t->mean && lost_any && whole == 0 && norm2 > 0 && err2 / norm2 > 8 * q / (1 - q) + 0.05)
		FAIL("batch %d op %d: nmse %g with up to %.4f of its data lost\n", batch, k,
		     err2 / norm2, q);
	if (block_packets(d) >= 8) {
		t->err2 += err2;
		t->norm2 += norm2;
		t->norm_k[k] += norm2;
		t->packets_k[k] = block_packets(d);
	}
}

/*
 * One batch.  overlap: rank 0 starts everything before the others start anything, and
 * checks what the statuses say of the operations in flight.
 */
static void batch(optireduce_comm_t *comm, int b, int max_inflight, int overlap, int small,
                  struct tally *t)
{
	struct opdesc d[NOPS];
	size_t base = 0;
	char buf[16];

	memset(d, 0, sizeof(d));
	snprintf(buf, sizeof(buf), "%d", max_inflight);
	set(comm, "max_inflight", buf);
	MPI_Barrier(MPI_COMM_WORLD);
	if (overlap && rank != 0)
		MPI_Barrier(MPI_COMM_WORLD);
	start_all(comm, d, b, small);
	if (overlap && rank == 0)
		MPI_Barrier(MPI_COMM_WORLD);
	if (by_progress)
		complete_by_progress(comm, d);
	else
		complete_all(d, (unsigned)b);
	for (int k = 0; k < NOPS; k++) {
		unsigned want = (unsigned)k + 1;
		if (d[k].st.ops_in_flight < 1 || d[k].st.ops_in_flight > (unsigned)max_inflight)
			FAIL("batch %d op %d: %u in flight, max_inflight %d\n", b, k,
			     d[k].st.ops_in_flight, max_inflight);
		/* Later ones start as earlier ones end, several of which may have ended. */
		if (overlap && rank == 0 && k < max_inflight && d[k].st.ops_in_flight != want)
			FAIL("batch %d op %d: started with %u in flight, want %u\n", b, k,
			     d[k].st.ops_in_flight, want);
		if (bounded)
			check_bounded(&d[k], k, b, t, base);
		else
			check_exact(&d[k], k, b);
		base += d[k].count;
		release(&d[k]);
	}
	if (rank == 0 && !small)
		printf("batch %d: max_inflight %d%s: done\n", b, max_inflight,
		       overlap ? ", rank 0 first" : "");
}

/*
 * Injected loss over repeated batches of up to 64 KiB.  Returns 1 when the host added
 * much more loss than was injected and final is 0: that run is not judged but repeated
 * (test/mpi/mpi_bounded.c, test_loss).
 */
static int loss_case(optireduce_comm_t *comm, double p, int trials, int final, int repair)
{
	struct tally t = {0};
	struct opdesc d[NOPS];
	double all[2], seen, nmse, theory;
	size_t biased = 0, n = 0;
	char buf[32];

	for (int k = 0; k < NOPS; k++) {
		describe(&d[k], k, 1);
		n += d[k].count;
	}
	t.mean = calloc(n, sizeof(double));
	t.m2 = calloc(n, sizeof(double));
	snprintf(buf, sizeof(buf), "%g", p);
	set(comm, "inject_loss", buf);
	set(comm, "repair", repair ? "1" : "0");
	for (int b = 0; b < trials; b++)
		batch(comm, 100 + b, 4, 0, 1, &t);
	set(comm, "inject_loss", "0");
	set(comm, "repair", "0");
	for (size_t i = 0; i < n; i++) {
		double mu = t.mean[i] / trials, var = t.m2[i] / trials - mu * mu;
		if (fabs(mu) > 5 * (sqrt(var / trials) + 1e-6))
			biased++;
	}
	all[0] = t.lost;
	all[1] = t.expected;
	MPI_Allreduce(MPI_IN_PLACE, all, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	seen = all[1] > 0 ? all[0] / all[1] : 0;
	nmse = t.norm2 > 0 ? t.err2 / t.norm2 : 0;
	/* Transpose: a phase-1 and a phase-2 rescale (test/mpi/mpi_bounded.c), by the loss seen. */
	theory = 0;
	for (int k = 0; k < NOPS; k++)
		if (t.norm_k[k] > 0)
			theory += t.norm_k[k] * 2 * block_gain(seen, t.packets_k[k]) / t.norm2;
	free(t.mean);
	free(t.m2);
	if (rank == 0)
		printf("loss %.2f%s: observed %.4f, nmse %.4f (theory %.4f), %zu of %zu elements "
		       "outside 5 s.e.\n",
		       p, repair ? " repaired" : "", seen, nmse, theory, biased, n);
	if (seen > 1.25 * p + 0.001 && !final) {
		if (rank == 0)
			printf("loss %.2f: %.4f lost, beyond what was injected: run again\n", p,
			       seen);
		return 1;
	}
	/* Repair with operations in flight: below what was injected (undisturbed runs without
	 * repair see 0.7-1.0 of it), unbiased, and no worse than the estimator's bound. */
	if (repair && seen >= p)
		FAIL("loss %g: repaired %g, not below what was injected\n", p, seen);
	if (repair && nmse > 2 * p / (1 - p) * 1.3 + 0.01)
		FAIL("loss %g: repaired nmse %g\n", p, nmse);
	if (!repair && seen < 0.5 * p)
		FAIL("loss %g: observed %g\n", p, seen);
	if (!repair && (nmse > theory * 1.3 + 0.01 || nmse < 0.1 * p))
		FAIL("loss %g: nmse %g outside [%g, %g]\n", p, nmse, 0.1 * p, theory * 1.3 + 0.01);
	if (biased > n / 1000 + 2)
		FAIL("loss %g: %zu elements look biased\n", p, biased);
	return 0;
}

static optireduce_comm_t *exact_world(optireduce_ctx_t **ctx)
{
	optireduce_comm_t *comm = NULL;
	int ret = optireduce_init(OPTIREDUCE_API_VERSION, ctx);

	if (!ret)
		ret = optireduce_comm_from_mpi_mode(*ctx, MPI_COMM_WORLD, OPTIREDUCE_MODE_EXACT,
		                                    &comm);
	if (ret) {
		fprintf(stderr, "rank %d: setup: %s\n", rank, optireduce_strerror(ret));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	return comm;
}

int main(int argc, char **argv)
{
	optireduce_ctx_t *ctx;
	optireduce_comm_t *comm;
	struct tally t = {0};
	int quick = 0, total;

	for (int i = 1; i < argc; i++) {
		quick |= strcmp(argv[i], "-q") == 0;
		bounded |= strcmp(argv[i], "bounded") == 0;
		by_progress |= strcmp(argv[i], "-p") == 0;
	}
	mpi_world(&argc, &argv, 2);
	/*
	 * Bounded: rank 0 enters the overlap batches' operations long before its peers, and a
	 * sender silent that long after a phase began is judged a straggler and cut
	 * (docs/design.md, "Deadlines and the timeout controller"): here it must be waited for,
	 * so that a result without loss is the exact sum.  Fixed at creation, so from the
	 * environment.
	 */
	if (bounded)
		setenv("OPTIREDUCE_ABSENT_FACTOR", "0", 1);
	comm = bounded ? bounded_world(&ctx, NULL) : exact_world(&ctx);
	/* Bounded: no phase ends before rank 0's peers start (overlap), and the statistics
	 * see loss, not deadlines. */
	if (bounded)
		set(comm, "timeout_us", "10000000");
	batch(comm, 0, 8, 1, 0, &t);
	batch(comm, 1, 32, 1, 0, &t);
	batch(comm, 2, 4, 0, 0, &t);
	batch(comm, 3, 1, 0, 0, &t);
	if (!quick)
		batch(comm, 4, 32, 0, 0, &t);
	if (bounded) {
		for (int attempt = 1; attempt <= 3; attempt++)
			if (!loss_case(comm, 0.05, quick ? 30 : 60, attempt == 3, 0))
				break;
		for (int attempt = 1; attempt <= 3; attempt++)
			if (!loss_case(comm, 0.05, quick ? 30 : 60, attempt == 3, 1))
				break;
	}
	MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	optireduce_comm_destroy(comm);
	optireduce_finalize(ctx);
	if (rank == 0)
		printf("%s: %d failures\n", total ? "FAIL" : "PASS", total);
	MPI_Finalize();
	return total ? 1 : 0;
}
