/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * 10,000 consecutive operations on one bounded-mode communicator, of mixed sizes (1 to 65,536
 * elements) and both modes (float32 SUM runs bounded, int32 SUM and float32 MAX run exact
 * on the same communicator), each result checked.  After operation 1,000 or so and after
 * the last, with no operation running: the bytes the library itself holds on the heap
 * (lib_heap.h) may grow by LIB_SLACK_BYTES at most, and the open file descriptors not at
 * all.
 *
 * Not the process's heap or RSS: libfabric's pools grow by whole chunks the first time a
 * busy moment needs one more buffer, and never shrink.  On two cores shared with other
 * work, once in a run, ofi_rxm's receive pool grows by 1,024 buffers of 16 KiB (16.3 MiB)
 * during an exact operation, at a different operation on each rank, and not again in the
 * next 20,000; RSS also grows as pages of those pools are touched the first time.  Both
 * are printed, not asserted.
 * Usage: mpi_soak [operations] (2 or more ranks; default 10000).
 */
#include <dirent.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "optireduce.h"
#include "optireduce_mpi.h"
#include "lib_heap.h"
#include "mpi_check.h"

#define WARM_OPS 1000
/*
 * A leak of 64 bytes an operation adds 575,232 bytes over the 8,988 operations between the
 * samples of a default run, one of 8 bytes 71,904: both exceed the slack.  The library's
 * heap between two samples differs only by buffers that grow to the largest operation
 * seen, reached in the first cycle of sizes.
 */
#define LIB_SLACK_BYTES 65536

static long rss_kib(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident < 0 ? -1 : resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own descriptor */
}

static int estimated_ops; /* bounded operations some rank estimated: not compared */

static const size_t sizes[] = {1, 7, 256, 1024, 4096, 16384, 65536};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define CYCLE  ((int)NSIZES * 3) /* operations before a (size, kind) comes again */
#define MAXN   65536

/* Operation i: its size, and which of float SUM (bounded), int SUM, float MAX (exact). */
static int run_op(optireduce_comm_t *comm, int i, float *fs, float *fr, int32_t *is,
                  int32_t *ir)
{
	size_t n = sizes[(size_t)i % NSIZES];
	int kind = (i / (int)NSIZES) % 3, ret, estimated;
	struct optireduce_status st;

	if (kind == 1) {
		for (size_t k = 0; k < n; k++)
			is[k] = (int32_t)(rank + 1) * (int32_t)(k % 1000) + i;
		ret = optireduce_allreduce(comm, is, ir, n, OPTIREDUCE_INT32, OPTIREDUCE_SUM, &st);
		for (size_t k = 0; !ret && k < n; k++)
			if (ir[k] != (int32_t)(nranks * (nranks + 1) / 2) * (int32_t)(k % 1000) +
			                 nranks * i) {
				FAIL("op %d: int32 element %zu wrong\n", i, k);
				return -1;
			}
		return ret;
	}
	for (size_t k = 0; k < n; k++)
		fs[k] = input(rank, k, i % 5);
	ret = optireduce_allreduce(comm, fs, fr, n, OPTIREDUCE_FLOAT32,
	                           kind == 0 ? OPTIREDUCE_SUM : OPTIREDUCE_MAX, &st);
	/* A bounded result is exact up to rounding unless some rank estimated a part of it:
	 * a shard its owner estimated reaches the others as data (on two CPUs shared by
	 * other work, a 300 us deadline often cuts a phase). */
	estimated = !ret && (st.flags & OPTIREDUCE_STATUS_INCOMPLETE);
	MPI_Allreduce(MPI_IN_PLACE, &estimated, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
	if (kind == 0 && estimated) {
		estimated_ops++;
		return ret;
	}
	for (size_t k = 0; !ret && k < n; k++) {
		double want = kind == 0 ? 0 : -1e30;
		for (int r = 0; r < nranks; r++)
			want = kind == 0 ? want + input(r, k, i % 5) : fmax(want, input(r, k, i % 5));
		if (fabs(fr[k] - want) > 1e-4) {
			FAIL("op %d: float element %zu is %g, want %g\n", i, k, fr[k], want);
			return -1;
		}
	}
	return ret;
}

/* What is measured after operation WARM_OPS or so and after the last. */
struct sample {
	long rss_kib, heap_kib;
	int fds;
	struct lib_heap lib;
};

/* After a barrier: no rank is inside an operation, so no packet is parked or in flight. */
static void take_sample(struct sample *s)
{
	MPI_Barrier(MPI_COMM_WORLD);
	lib_heap_read(&s->lib);
	s->rss_kib = rss_kib();
	s->heap_kib = (long)(lib_heap_process_bytes() / 1024);
	s->fds = open_fds();
}

static void check_flat(const struct sample *w, const struct sample *e, int lib_counted, int ops,
                       int warm)
{
	long grew = (long)e->lib.live_bytes - (long)w->lib.live_bytes;

	printf("rank %d: after %d and %d operations: process heap %ld and %ld KiB (%+ld), RSS %ld "
	       "and %ld KiB (%+ld), open descriptors %d and %d; %d bounded results estimated\n",
	       rank, warm, ops, w->heap_kib, e->heap_kib, e->heap_kib - w->heap_kib, w->rss_kib,
	       e->rss_kib, e->rss_kib - w->rss_kib, w->fds, e->fds, estimated_ops);
	if (e->fds != w->fds)
		FAIL("open descriptors went from %d to %d\n", w->fds, e->fds);
	if (!lib_counted) {
		if (rank == 0)
			printf("library heap not measured: liboptireduce.so is not loaded (linked "
			       "statically?) or this build cannot count allocations\n");
		return;
	}
	printf("rank %d: library heap %zu and %zu bytes (%+ld) in %zu and %zu blocks; %.2f "
	       "allocations an operation\n",
	       rank, w->lib.live_bytes, e->lib.live_bytes, grew, w->lib.live_blocks,
	       e->lib.live_blocks,
	       (double)(e->lib.allocations - w->lib.allocations) / (ops - warm));
	if (e->lib.overflow)
		FAIL("more live library blocks than the table holds\n");
	else if (grew > LIB_SLACK_BYTES)
		FAIL("the library's heap grew by %ld bytes in %d operations (slack %d)\n", grew,
		     ops - warm, LIB_SLACK_BYTES);
}

int main(int argc, char **argv)
{
	int ops = argc > 1 ? atoi(argv[1]) : 10000, total, warm, lib_counted;
	struct sample at_warm, at_end;
	optireduce_ctx_t *ctx;
	optireduce_comm_t *comm;
	float *fs, *fr;
	int32_t *is, *ir;
	double t0;

	mpi_world(&argc, &argv, 2);
	lib_counted = lib_heap_start("liboptireduce.so") == 0;
	comm = bounded_world(&ctx, NULL);
	fs = malloc(MAXN * sizeof(*fs));
	fr = malloc(MAXN * sizeof(*fr));
	is = malloc(MAXN * sizeof(*is));
	ir = malloc(MAXN * sizeof(*ir));
	/* Whole cycles of (size, kind) between the two samples: each sample follows the same
	 * operation of the cycle. */
	warm = ops >= WARM_OPS ? WARM_OPS + (ops - WARM_OPS) % CYCLE : ops;
	t0 = MPI_Wtime();
	for (int i = 0; i < ops && !failures; i++) {
		int ret = run_op(comm, i, fs, fr, is, ir);
		if (ret > 0 || ret < -1)
			FAIL("op %d: %s\n", i, optireduce_strerror(ret));
		if (i + 1 == warm)
			take_sample(&at_warm);
	}
	if (rank == 0)
		printf("%d operations in %.1f s\n", ops, MPI_Wtime() - t0);
	if (!failures && ops > warm) {
		take_sample(&at_end);
		check_flat(&at_warm, &at_end, lib_counted, ops, warm);
	}
	if (optireduce_comm_destroy(comm) || optireduce_finalize(ctx))
		FAIL("destroy or finalize failed\n");
	free(fs);
	free(fr);
	free(is);
	free(ir);
	MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%s: %d failures\n", total ? "FAIL" : "PASS", total);
	MPI_Finalize();
	return total ? 1 : 0;
}
