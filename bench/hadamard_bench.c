/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Single-core throughput of the Hadamard codec next to memcpy of the same buffer.
 *
 *   hadamard_bench [-k auto|portable|avx2|avx512|all] [-s log2|elements]... [-m MiB] [-r reps]
 *
 * The buffer (64 MiB by default) is far larger than the caches, so both the codec and memcpy
 * stream from and to memory; the ratio column says what the codec costs relative to one copy of
 * the data, which is the budget it has to fit in.  Each figure is the best of -r runs, since the
 * question is what the code can do, not how noisy the machine is.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "lib/kernels/hadamard.h"

static const struct {
	const char *name;
	enum or_had_kernel k;
} knames[] = {
    {"portable", OR_HAD_KERNEL_PORTABLE},
    {"avx2", OR_HAD_KERNEL_AVX2},
    {"avx512", OR_HAD_KERNEL_AVX512},
    {"auto", OR_HAD_KERNEL_AUTO},
};

static void usage(const char *prog)
{
	fprintf(stderr,
	        "usage: %s [-k auto|portable|avx2|avx512|all] [-s log2|elements]... [-m MiB] "
	        "[-r reps]\n"
	        "  -s may be repeated; default 10 12 14 16.  -m default 64, -r default 5.\n",
	        prog);
}

/* Accepts a log2 (8..16) or an element count that is a power of two in range. */
static int parse_size(const char *s, unsigned *lg)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v == 0)
		return -1;
	if (v >= OR_HAD_LOG2_MIN && v <= OR_HAD_LOG2_MAX) {
		*lg = (unsigned)v;
		return 0;
	}
	for (unsigned l = OR_HAD_LOG2_MIN; l <= OR_HAD_LOG2_MAX; l++)
		if (v == 1ul << l) {
			*lg = l;
			return 0;
		}
	return -1;
}

struct opts {
	unsigned sizes[OR_HAD_LOG2_MAX + 1], nsizes;
	const char *ksel;
	size_t mib;
	int reps;
};

/* 0: run; 1: exit 0 (-h); -1: exit 1 (message printed). */
static int parse_args(int argc, char **argv, struct opts *o)
{
	static const unsigned defaults[] = {10, 12, 14, 16};
	int opt, known;

	*o = (struct opts){.ksel = "all", .mib = 64, .reps = 5};
	while ((opt = getopt(argc, argv, "k:s:m:r:h")) != -1) {
		switch (opt) {
		case 'k':
			o->ksel = optarg;
			break;
		case 's':
			if (o->nsizes == OR_HAD_LOG2_MAX + 1 ||
			    parse_size(optarg, &o->sizes[o->nsizes])) {
				fprintf(stderr, "bad -s %s: want log2 in 8..16 or 2^8..2^16\n",
				        optarg);
				return -1;
			}
			o->nsizes++;
			break;
		case 'm':
			o->mib = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			o->reps = atoi(optarg);
			break;
		default:
			usage(argv[0]);
			return opt == 'h' ? 1 : -1;
		}
	}
	if (!o->nsizes)
		for (unsigned i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
			o->sizes[o->nsizes++] = defaults[i];
	known = !strcmp(o->ksel, "all");
	for (size_t ki = 0; ki < sizeof(knames) / sizeof(knames[0]); ki++)
		known |= !strcmp(o->ksel, knames[ki].name);
	if (!known || o->mib == 0 || o->reps < 1) {
		usage(argv[0]);
		return -1;
	}
	return 0;
}

/* memcpy's rate over the buffer, best of reps: the budget the codec is measured against. */
static double memcpy_gbs(float *dst, const float *src, size_t bytes, int reps)
{
	double best = 1e30;

	for (int r = 0; r < reps; r++) {
		double t = bench_now_s();

		memcpy(dst, src, bytes);
		t = bench_now_s() - t;
		if (t < best)
			best = t;
	}
	return (double)bytes / best / 1e9;
}

/* One row per block size for the selected kernel; op numbers keep every run's signs new. */
static void bench_kernel(const struct opts *o, float *buf, size_t count, double mgbs, uint64_t *op)
{
	for (unsigned si = 0; si < o->nsizes; si++) {
		unsigned lg = o->sizes[si];
		size_t nb = count >> lg;
		double te = 1e30, td = 1e30;

		for (int r = 0; r < o->reps; r++) {
			double t = bench_now_s();

			or_had_encode(buf, nb, lg, 42, *op, 0);
			t = bench_now_s() - t;
			if (t < te)
				te = t;
			t = bench_now_s();
			or_had_decode(buf, nb, lg, 42, *op, 0);
			t = bench_now_s() - t;
			if (t < td)
				td = t;
			(*op)++;
		}
		double used = (double)(nb << lg) * sizeof(float);
		double egbs = used / te / 1e9, dgbs = used / td / 1e9;

		printf("%-9s %6u %7zu %12.2f %12.2f %10.2f\n", or_had_kernel_name(), lg,
		       (size_t)1 << lg, egbs, dgbs, egbs / mgbs);
	}
}

int main(int argc, char **argv)
{
	struct opts o;
	int ret = parse_args(argc, argv, &o);

	if (ret)
		return ret > 0 ? 0 : 1;

	size_t bytes = o.mib << 20, count = bytes / sizeof(float);
	float *buf = aligned_alloc(64, bytes), *dst = aligned_alloc(64, bytes);

	if (!buf || !dst) {
		fprintf(stderr, "cannot allocate 2 x %zu MiB\n", o.mib);
		return 1;
	}
	srand(1);
	for (size_t i = 0; i < count; i++)
		buf[i] = (float)rand() / (float)RAND_MAX - 0.5f;
	memset(dst, 0, bytes);

	double mgbs = memcpy_gbs(dst, buf, bytes, o.reps);
	uint64_t op = 0;

	printf("buffer %zu MiB, best of %d, single thread\n", o.mib, o.reps);
	printf("memcpy: %.2f GB/s\n\n", mgbs);
	printf("%-9s %6s %7s %12s %12s %10s\n", "kernel", "block", "floats", "encode GB/s",
	       "decode GB/s", "enc/memcpy");
	for (size_t ki = 0; ki < sizeof(knames) / sizeof(knames[0]); ki++) {
		int is_auto = knames[ki].k == OR_HAD_KERNEL_AUTO;

		if (strcmp(o.ksel, "all") ? strcmp(o.ksel, knames[ki].name) != 0 : is_auto)
			continue;
		if (or_had_select(knames[ki].k)) {
			printf("%-9s (not supported on this CPU)\n", knames[ki].name);
			continue;
		}
		bench_kernel(&o, buf, count, mgbs, &op);
	}
	free(buf);
	free(dst);
	return 0;
}
