/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * optireduce_bench: an allreduce latency benchmark in the style of the OSU
 * micro-benchmarks' osu_allreduce, for liboptireduce, with MPI_Allreduce as
 * an optional baseline measured in the same run.
 *
 * Same flags and columns as osu_allreduce where they overlap (-m MIN:MAX,
 * -i, -x, -f; "# Size  Avg Latency(us) ..."), plus per-iteration percentiles,
 * datatypes, operations, modes, library parameters, an interleaved MPI
 * baseline and a CSV of every iteration.  Run with -h for the options.
 *
 * Timing: a barrier (not timed; MPI_Ibarrier tested with sleeps of 100 us, growing to
 * 1 ms with --sync-start, so that a rank waiting in it leaves the CPU to ranks still working)
 * precedes every iteration (with
 * --sync-start, a start at a common clock time after it, as ReproMPI's
 * window-based synchronisation does); each rank times its own call; after the loop the
 * per-iteration times are reduced with MAX over ranks, so an iteration's latency is the time until
 * the slowest rank finished (completion time, like OSU's average).  Avg is the mean of those over
 * iterations, P50/P99 are nearest-rank percentiles.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <mpi.h>

#include "bench_util.h"
#include "test/mpi/dtype_value.h"
#include "optireduce_bench.h"
#include "optireduce_mpi.h"

int ob_rank, ob_nranks;
const char *const ob_impl_name[IMPL_COUNT] = {"optireduce", "optireduce-b", "mpi"};
static struct bench_progress prog;

static void progress(const char *what, size_t size, long it, long total)
{
	if (ob_rank == 0)
		bench_progress_note(&prog, what, size, it, total);
}

struct bench {
	const struct options *o;
	optireduce_comm_t *comm[2]; /* A, and B (--compare-param) */
	void *sbuf;
	void *rbuf[IMPL_COUNT];  /* one each: interleaved runs validate their own result */
	double *lat[IMPL_COUNT]; /* this rank's */
	/* rank 0's wall clock at each call (Unix seconds), so that a slow stretch can be set
	 * against the hypervisor's steal of the same moment (cpu_steal.sh) */
	double *start[IMPL_COUNT];
	double *maxlat; /* MAX over ranks (rank 0) */
	struct ob_iters iter[IMPL_COUNT]; /* for --csv */
	FILE *csv;
	int bounded;
};

/* One implementation's counts while a size runs. */
struct tally {
	/* contributions missing, expected; elements received, expected (both phases) */
	double sums[4];
	double last_loss; /* in the last operation: what validation must allow for */
	long late_starts;
	double cpu_s; /* this process's CPU time inside the timed calls, every thread */
};

/* One timed (or warm-up) call of impl, after its own barrier and synchronised start. */
static void time_one(struct bench *b, enum impl impl, size_t size, long it, long warmup,
                     struct tally *t)
{
	const struct options *o = b->o;
	size_t count = size / optireduce_dtype_size(o->dtype);
	struct optireduce_status st;
	double t0, t1, cpu0, start_at = 0, late_us = 0;
	int ret;

	ob_sleeping_barrier(o->sync_ms);
	if (o->sync_ms > 0)
		t->late_starts += ob_sync_start(o->sync_ms, &start_at);
	if (ob_straggles(o, it)) {
		struct timespec ts = {o->delay_us / 1000000, (o->delay_us % 1000000) * 1000};
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	cpu0 = ob_process_cpu_s();
	t0 = bench_now_s();
	if (it >= warmup) {
		b->start[impl][it - warmup] = bench_wall_s();
		if (o->sync_ms > 0)
			late_us = 1e6 * (b->start[impl][it - warmup] - start_at);
	}
	if (impl != IMPL_MPI) {
		ret = optireduce_allreduce(b->comm[impl == IMPL_OURS_B], b->sbuf, b->rbuf[impl],
		                           count, o->dtype, o->op, &st);
		t1 = bench_now_s();
		if (ret)
			ob_die("%s(%zu bytes, iteration %ld) failed: %s", ob_impl_name[impl], size,
			       it, optireduce_strerror(ret));
		double got = (double)(st.elements_received[0] + st.elements_received[1]);
		double want = (double)(st.elements_expected[0] + st.elements_expected[1]);
		if (it >= warmup)
			ob_iters_note(&b->iter[impl], it - warmup, late_us, &st);
		if (it >= warmup && b->bounded) {
			t->sums[0] += (double)st.contributions_missing;
			t->sums[1] += (double)st.contributions_expected;
			t->sums[2] += got;
			t->sums[3] += want;
		}
		if (b->bounded && want > 0)
			t->last_loss = 1.0 - got / want;
	} else {
		ret = MPI_Allreduce(b->sbuf, b->rbuf[impl], (int)count, ob_mpi_dtype(o->dtype),
		                    ob_mpi_op(o->op), MPI_COMM_WORLD);
		t1 = bench_now_s();
		if (ret != MPI_SUCCESS)
			ob_die("MPI_Allreduce(%zu bytes, iteration %ld) failed: error %d", size, it,
			       ret);
		if (it >= warmup)
			ob_iters_note(&b->iter[impl], it - warmup, late_us, NULL);
	}
	if (it >= warmup) {
		b->lat[impl][it - warmup] = (t1 - t0) * 1e6;
		t->cpu_s += ob_process_cpu_s() - cpu0;
	}
}

/* Checks impl's last result and reduces its latencies; rank 0 gets the statistics. */
static void summarize(struct bench *b, enum impl impl, size_t size, long iters,
                      const struct tally *t, struct result *res)
{
	const struct options *o = b->o;
	size_t count = size / optireduce_dtype_size(o->dtype);
	double tot[4], rel_err = 0, max_loss = 0, cpu = 0;
	long total_late = 0;
	int bad, anybad;

	/* The inputs never change, so the last result must be the known sum; a bounded one
	 * within what the data lost in that operation (on any rank) can explain. */
	MPI_Allreduce(&t->last_loss, &max_loss, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	bad = ob_validate(b->rbuf[impl], count, o->dtype,
	                  impl == IMPL_MPI && o->op == OPTIREDUCE_AVG ? OPTIREDUCE_SUM : o->op,
	                  impl == IMPL_MPI ? o->mpi_bounded : b->bounded, max_loss, &rel_err);
	MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (anybad) {
		if (ob_rank == 0)
			fprintf(stderr,
			        "optireduce_bench: %s: result at %zu bytes is wrong on some rank; "
			        "not reporting\n",
			        ob_impl_name[impl], size);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}

	MPI_Reduce(b->lat[impl], b->maxlat, (int)iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(t->sums, tot, 4, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&t->late_starts, &total_late, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&t->cpu_s, &cpu, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	if (o->csv)
		ob_iters_reduce(&b->iter[impl], iters);
	if (ob_rank != 0)
		return;
	res->cpu_ms = iters > 0 ? 1e3 * cpu / ((double)ob_nranks * (double)iters) : 0;
	if (total_late)
		printf("# %s, %zu bytes: %ld rank-iterations reached the synchronised start "
		       "late (raise --sync-start)\n",
		       ob_impl_name[impl], size, total_late);
	if (b->csv) {
		for (long it = 0; it < iters; it++)
			ob_iters_csv_row(b->csv, &b->iter[impl], ob_impl_name[impl], size, it,
			                 b->maxlat[it], b->start[impl][it]);
		fflush(b->csv);
	}
	bench_stats_of(b->maxlat, iters, &res->t);
	res->lost_pct = tot[1] > 0 ? 100.0 * tot[0] / tot[1] : 0;
	res->data_lost_pct = tot[3] > 0 ? 100.0 * (1.0 - tot[2] / tot[3]) : 0;
}

/*
 * Times n implementations at one size, interleaved per iteration, the order rotating
 * every iteration (A B, B A, ...) so that neither always runs right after the other or
 * first after the barrier: what the machine does meanwhile (hypervisor steal here comes
 * in bursts of seconds) falls on both alike.  res is indexed by implementation.
 */
static void run_size(struct bench *b, const enum impl *impls, int n, size_t size,
                     struct result *res)
{
	const struct options *o = b->o;
	long iters = bench_iters_at(&o->n, size);
	long warmup = bench_warmup_at(&o->n, size);
	struct tally t[IMPL_COUNT];

	memset(t, 0, sizeof(t));
	for (long it = 0; it < warmup + iters; it++) {
		for (int k = 0; k < n; k++) {
			enum impl impl = impls[(it + k) % n];
			time_one(b, impl, size, it, warmup, &t[impl]);
		}
		progress(n > 1 ? "optireduce A and B" : ob_impl_name[impls[0]], size, it + 1,
		         warmup + iters);
	}
	for (int k = 0; k < n; k++)
		summarize(b, impls[k], size, iters, &t[impls[k]], &res[impls[k]]);
}

/* On the context, so creation-only ones (provider, mode, calib_margin) work too. */
static void set_ctx_params(optireduce_ctx_t *ctx, const char *const *params, int n,
                           const char *option)
{
	for (int k = 0; k < n; k++) {
		char name[128];
		const char *eq = strchr(params[k], '=');
		size_t len = (size_t)(eq - params[k]);
		int ret;

		if (len >= sizeof(name))
			ob_usage_error("parameter name too long in '%s'", params[k]);
		memcpy(name, params[k], len);
		name[len] = '\0';
		ret = optireduce_ctx_set_param(ctx, name, eq + 1);
		if (ret)
			ob_usage_error("%s %s: %s", option, params[k], optireduce_strerror(ret));
	}
}

/*
 * B is created from the same context after A, with --compare-param applied on top of
 * --param: a communicator takes the context's parameters when it is created.
 */
static void create_variant_b(const struct options *o, optireduce_ctx_t *ctx, struct bench *b)
{
	int ret;

	set_ctx_params(ctx, o->bparams, o->nbparams, "--compare-param");
	ret = optireduce_comm_from_mpi_mode(ctx, MPI_COMM_WORLD, o->mode, &b->comm[1]);
	if (ret)
		ob_die("communicator B creation failed: %s", optireduce_strerror(ret));
	if (o->algorithm) {
		ret = optireduce_comm_set_param(b->comm[1], "algorithm", o->algorithm);
		if (ret)
			ob_die("--algorithm %s on B: %s", o->algorithm, optireduce_strerror(ret));
	}
}

static void *alloc_buf(size_t bytes)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, bytes ? bytes : 1))
		ob_die("cannot allocate %zu bytes", bytes);
	memset(p, 0, bytes);
	return p;
}

/* The library falls back to auto on an unknown name: measure what was asked, or stop. */
static void check_algorithm_name(const char *algorithm)
{
	const char *name;
	int id = 0;

	if (!algorithm || strchr(algorithm, ':') || strcasecmp(algorithm, "auto") == 0)
		return;
	while ((name = optireduce_algorithm_name(id)) && strcasecmp(name, algorithm) != 0)
		id++;
	if (name)
		return;
	if (ob_rank == 0) {
		fprintf(stderr, "optireduce_bench: unknown algorithm '%s'; known:", algorithm);
		for (id = 0; (name = optireduce_algorithm_name(id)); id++)
			fprintf(stderr, " %s", name);
		fprintf(stderr, "\n");
	}
	MPI_Finalize();
	exit(1);
}

/* Communicator A (and B with --compare-param) on a new context, which it returns. */
static optireduce_ctx_t *create_comms(struct options *o, struct bench *b)
{
	optireduce_ctx_t *ctx = NULL;
	int ret;

	check_algorithm_name(o->algorithm);
	ret = optireduce_init(OPTIREDUCE_API_VERSION, &ctx);
	if (ret)
		ob_die("optireduce_init: %s", optireduce_strerror(ret));
	set_ctx_params(ctx, o->params, o->nparams, "--param");
	ret = optireduce_comm_from_mpi_mode(ctx, MPI_COMM_WORLD, o->mode, &b->comm[0]);
	if (ret)
		ob_die("communicator creation (mode %s) failed: %s",
		       o->mode == OPTIREDUCE_MODE_BOUNDED ? "bounded" : "default/exact",
		       optireduce_strerror(ret));
	if (o->algorithm) {
		ret = optireduce_comm_set_param(b->comm[0], "algorithm", o->algorithm);
		if (ret)
			ob_die("--algorithm %s: %s", o->algorithm, optireduce_strerror(ret));
	}
	if (o->mode == OPTIREDUCE_MODE_DEFAULT) {
		char m[32] = "";
		optireduce_comm_get_param(b->comm[0], "mode", m, sizeof(m), NULL);
		o->mode =
		    strcasecmp(m, "bounded") == 0 ? OPTIREDUCE_MODE_BOUNDED : OPTIREDUCE_MODE_EXACT;
	}
	b->bounded = o->mode == OPTIREDUCE_MODE_BOUNDED && ob_is_float(o->dtype) &&
	             (o->op == OPTIREDUCE_SUM || o->op == OPTIREDUCE_AVG);
	if (o->nbparams)
		create_variant_b(o, ctx, b);
	return ctx;
}

/* The send buffer with this rank's inputs, a result buffer and latency arrays per way,
 * and the CSV file. */
static void alloc_bench(const struct options *o, struct bench *b, size_t maxcount)
{
	size_t esize = optireduce_dtype_size(o->dtype);
	long maxiters = o->n.iters > o->n.iters_large ? o->n.iters : o->n.iters_large;

	b->sbuf = alloc_buf(maxcount * esize);
	for (size_t i = 0; i < maxcount; i++)
		dtype_store(b->sbuf, i, o->dtype, ob_input(ob_rank, i, o->op));
	for (int k = 0; k < IMPL_COUNT; k++) {
		if (k == IMPL_OURS_B && !b->comm[1])
			continue;
		b->rbuf[k] = alloc_buf(maxcount * esize);
		b->lat[k] = calloc((size_t)maxiters, sizeof(double));
		b->start[k] = calloc((size_t)maxiters, sizeof(double));
		if (!b->lat[k] || !b->start[k])
			ob_die("out of memory");
		if (o->csv)
			ob_iters_alloc(&b->iter[k], maxiters);
	}
	b->maxlat = calloc((size_t)maxiters, sizeof(double));
	if (!b->maxlat)
		ob_die("out of memory");
	if (ob_rank == 0 && o->csv) {
		b->csv = fopen(o->csv, "w");
		if (!b->csv)
			ob_die("cannot write %s: %s", o->csv, strerror(errno));
		fputs(ob_iters_csv_head(), b->csv);
	}
}

/* One size: the ways timed, then (rank 0) their rows. */
static void bench_size(struct bench *b, size_t size)
{
	static const enum impl ours[] = {IMPL_OURS, IMPL_OURS_B}, mpi[] = {IMPL_MPI};
	const struct options *o = b->o;
	struct result res[IMPL_COUNT];
	const struct result *base = o->baseline_mpi ? &res[IMPL_MPI] : NULL;

	if (size / optireduce_dtype_size(o->dtype) > (size_t)INT32_MAX &&
	    (o->baseline_mpi || o->only_mpi))
		ob_die("%zu bytes: too many elements for MPI_Allreduce's int count", size);
	if (o->only_mpi) {
		run_size(b, mpi, 1, size, res);
		if (ob_rank == 0) {
			ob_print_row(o, NULL, size, &res[IMPL_MPI], NULL);
			ob_print_cpu(o, size, res, 0);
		}
		return;
	}
	run_size(b, ours, b->comm[1] ? 2 : 1, size, res);
	if (o->baseline_mpi)
		run_size(b, mpi, 1, size, res);
	if (ob_rank == 0) {
		ob_print_row(o, NULL, size, &res[IMPL_OURS], base);
		if (b->comm[1])
			ob_print_ab(o, size, &res[IMPL_OURS], &res[IMPL_OURS_B], base);
		ob_print_cpu(o, size, res, b->comm[1] != NULL);
	}
}

static void free_bench(struct bench *b, optireduce_ctx_t *ctx)
{
	int ret;

	if (b->csv)
		fclose(b->csv);
	for (int k = 0; k < 2; k++)
		if (b->comm[k] && (ret = optireduce_comm_destroy(b->comm[k])))
			ob_die("optireduce_comm_destroy: %s", optireduce_strerror(ret));
	if (ctx && (ret = optireduce_finalize(ctx)))
		ob_die("optireduce_finalize: %s", optireduce_strerror(ret));
	free(b->sbuf);
	for (int k = 0; k < IMPL_COUNT; k++) {
		free(b->rbuf[k]);
		free(b->lat[k]);
		free(b->start[k]);
		ob_iters_free(&b->iter[k]);
	}
	free(b->maxlat);
}

int main(int argc, char **argv)
{
	struct options o;
	struct bench b;
	optireduce_ctx_t *ctx = NULL;
	size_t esize, min, maxcount;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &ob_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ob_nranks);
	bench_progress_init(&prog);
	ob_parse_args(argc, argv, &o);
	memset(&b, 0, sizeof(b));
	b.o = &o;

	esize = optireduce_dtype_size(o.dtype);
	if ((o.baseline_mpi || o.only_mpi) && ob_mpi_dtype(o.dtype) == MPI_DATATYPE_NULL)
		ob_usage_error("MPI has no %s: no MPI baseline for it",
		               optireduce_dtype_name(o.dtype));
	if (ob_inputs_overflow(o.dtype, o.op))
		ob_usage_error("%d ranks: sums of the test inputs do not fit %s exactly", ob_nranks,
		               optireduce_dtype_name(o.dtype));
	/* Like OSU: sizes below one element start at one element. */
	min = o.n.min_size < esize ? esize : o.n.min_size;
	maxcount = o.n.max_size / esize;
	if (maxcount == 0)
		ob_usage_error("-m: MAX %zu is smaller than one %s", o.n.max_size,
		               optireduce_dtype_name(o.dtype));

	if (!o.only_mpi)
		ctx = create_comms(&o, &b);
	alloc_bench(&o, &b, maxcount);
	if (ob_rank == 0)
		ob_print_header(&o, b.comm[0]);
	for (size_t size = min; size <= o.n.max_size; size *= 2) {
		bench_size(&b, size);
		if (size > SIZE_MAX / 2)
			break;
	}
	if (ob_rank == 0) {
		bench_print_loadavg("at end");
		fflush(stdout);
	}
	free_bench(&b, ctx);
	MPI_Finalize();
	return 0;
}
