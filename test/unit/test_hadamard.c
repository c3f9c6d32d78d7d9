/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the randomized Hadamard codec (lib/kernels/hadamard.c): definition, inverse, kernel
 * agreement, out of place, linearity, energy, sign generator and argument checking.
 * Exit 0 pass, 1 fail (77 is never needed: the portable kernel always runs).
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/kernels/hadamard.h"
#include "optireduce.h"

static int failures;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return;
	failures++;
	printf("  FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static uint64_t rng_state = 0x5eed;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double unif(void)
{
	return (double)(rng() >> 11) * 0x1p-53;
}

/* Values spanning several binades, both signs, so rounding is exercised like real gradients. */
static void fill(float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x[i] = (float)((unif() - 0.5) * ldexp(1.0, (int)(unif() * 12) - 6));
}

static double norm2(const float *x, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += (double)x[i] * x[i];
	return s;
}

static double dist2(const float *a, const float *b, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
	return s;
}

/*
 * Each of the lg butterfly levels and the scale add at most one rounding per element; relative
 * to the vector norm that is at most about (levels) * FLT_EPSILON / 2 each way.  A factor of 2
 * slack covers the accumulation constants.
 */
static double tol(unsigned lg, double eps)
{
	return (lg + 1) * eps;
}

static const struct {
	enum or_had_kernel k;
	const char *name;
} kernels[] = {
    {OR_HAD_KERNEL_PORTABLE, "portable"},
    {OR_HAD_KERNEL_AVX2, "avx2"},
    {OR_HAD_KERNEL_AVX512, "avx512"},
};
#define NKERNELS (sizeof(kernels) / sizeof(kernels[0]))

/* The definition, straight from the matrix: y_i = n^-1/2 sum_j (-1)^popcount(i&j) d_j x_j. */
static void check_definition(void)
{
	printf("encode/decode equal the matrix definition (n = 2^8, 2^9, every kernel)\n");
	for (unsigned lg = 8; lg <= 9; lg++) {
		size_t n = (size_t)1 << lg;
		float *x = malloc(n * sizeof(*x)), *y = malloc(n * sizeof(*y));
		double *ref = malloc(n * sizeof(*ref)), *yd = malloc(n * sizeof(*yd));
		uint64_t seed = 7, op = 3, blk = 11;

		fill(x, n);
		for (size_t i = 0; i < n; i++) {
			double s = 0;

			for (size_t j = 0; j < n; j++) {
				int neg = (or_had_sign_word(seed, op, blk, j >> 6) >> (j & 63)) & 1;
				int h = __builtin_popcountll(i & j) & 1;

				s += ((neg ^ h) ? -1.0 : 1.0) * x[j];
			}
			ref[i] = s / sqrt((double)n);
		}
		double rn = 0;

		for (size_t i = 0; i < n; i++)
			rn += ref[i] * ref[i];
		for (size_t k = 0; k < NKERNELS; k++) {
			if (or_had_select(kernels[k].k))
				continue;
			memcpy(y, x, n * sizeof(*x));
			or_had_encode(y, 1, lg, seed, op, blk);
			double e = 0;

			for (size_t i = 0; i < n; i++)
				e += (y[i] - ref[i]) * (y[i] - ref[i]);
			check(sqrt(e / rn) <= tol(lg, FLT_EPSILON),
			      "%s 2^%u encode vs definition: %g", kernels[k].name, lg,
			      sqrt(e / rn));
			/* decode applies H then D, so decoding the reference must give x back */
			for (size_t i = 0; i < n; i++)
				y[i] = (float)ref[i];
			or_had_decode(y, 1, lg, seed, op, blk);
			double d = dist2(y, x, n) / norm2(x, n);
			check(sqrt(d) <= tol(lg, FLT_EPSILON), "%s 2^%u decode vs definition: %g",
			      kernels[k].name, lg, sqrt(d));
		}
		for (size_t i = 0; i < n; i++)
			yd[i] = x[i];
		or_had_encode_f64(yd, 1, lg, seed, op, blk);
		double e = 0;

		for (size_t i = 0; i < n; i++)
			e += (yd[i] - ref[i]) * (yd[i] - ref[i]);
		check(sqrt(e / rn) <= 1e-13, "f64 2^%u encode vs definition: %g", lg, sqrt(e / rn));
		free(x);
		free(y);
		free(ref);
		free(yd);
	}
}

/* From src into dst: the same bits as a copy and the in-place call, src untouched, nothing
 * written past the blocks (every kernel, f32 and f64, each size). */
static void check_out_of_place(void)
{
	const size_t nb = 2, guard = 16;
	const uint64_t seed = 77, op = 3, first = 9;

	printf("out of place equals copy + in place, bitwise (n = 2^8..2^16, every kernel)\n");
	for (unsigned lg = OR_HAD_LOG2_MIN; lg <= OR_HAD_LOG2_MAX; lg++) {
		size_t len = nb << lg;
		float *x = malloc(len * sizeof(*x)), *keep = malloc(len * sizeof(*x));
		float *ref = malloc(len * sizeof(*x)), *y = malloc((len + guard) * sizeof(*x));
		double *xd = malloc(len * sizeof(*xd)), *refd = malloc(len * sizeof(*xd));
		double *yd = malloc(len * sizeof(*yd));

		fill(x, len);
		memcpy(keep, x, len * sizeof(*x));
		for (size_t k = 0; k < NKERNELS; k++) {
			if (or_had_select(kernels[k].k))
				continue;
			for (int dec = 0; dec < 2; dec++) {
				memcpy(ref, x, len * sizeof(*x));
				memset(y, 0x7f, (len + guard) * sizeof(*y));
				check((dec ? or_had_decode(ref, nb, lg, seed, op, first)
				           : or_had_encode(ref, nb, lg, seed, op, first)) == 0 &&
				          (dec ? or_had_decode_to(y, x, nb, lg, seed, op, first)
				               : or_had_encode_to(y, x, nb, lg, seed, op, first)) ==
				              0,
				      "%s 2^%u failed", kernels[k].name, lg);
				check(!memcmp(ref, y, len * sizeof(*y)), "%s 2^%u %s_to differs",
				      kernels[k].name, lg, dec ? "decode" : "encode");
				check(!memcmp(keep, x, len * sizeof(*x)), "%s 2^%u source written",
				      kernels[k].name, lg);
				for (size_t i = len; i < len + guard; i++)
					check(y[i] == y[len], "%s 2^%u wrote past the blocks",
					      kernels[k].name, lg);
			}
		}
		for (size_t i = 0; i < len; i++)
			xd[i] = refd[i] = x[i];
		or_had_encode_f64(refd, nb, lg, seed, op, first);
		check(or_had_encode_f64_to(yd, xd, nb, lg, seed, op, first) == 0 &&
		          !memcmp(refd, yd, len * sizeof(*yd)),
		      "f64 2^%u encode_to differs", lg);
		or_had_decode_f64(refd, nb, lg, seed, op, first);
		check(or_had_decode_f64_to(xd, yd, nb, lg, seed, op, first) == 0 &&
		          !memcmp(refd, xd, len * sizeof(*xd)),
		      "f64 2^%u decode_to differs", lg);
		free(x);
		free(keep);
		free(ref);
		free(y);
		free(xd);
		free(refd);
		free(yd);
	}
	or_had_select(OR_HAD_KERNEL_AUTO);
}

/*
 * Round trip, energy, agreement with the double path and between kernels, for every block
 * size.  Kernels are required to agree bitwise: ranks on different CPUs must decode a sum to
 * the same bits (see hadamard.h).
 */
static void check_sizes(void)
{
	const size_t nb = 3;
	const uint64_t seed = 0xabcdef, op = 99, first = 5;

	printf("roundtrip, energy, f32 vs f64, kernel agreement (n = 2^8..2^16, 3 blocks)\n");
	for (unsigned lg = OR_HAD_LOG2_MIN; lg <= OR_HAD_LOG2_MAX; lg++) {
		size_t n = (size_t)1 << lg, len = nb * n;
		float *x = malloc(len * sizeof(*x)), *y = malloc(len * sizeof(*y));
		float *first_y = malloc(len * sizeof(*y));
		double *yd = malloc(len * sizeof(*yd));
		double worst_rt = 0, worst_en = 0, worst_64 = 0;
		int have_first = 0;

		fill(x, len);
		double xn = norm2(x, len);

		for (size_t i = 0; i < len; i++)
			yd[i] = x[i];
		or_had_encode_f64(yd, nb, lg, seed, op, first);
		for (size_t k = 0; k < NKERNELS; k++) {
			if (or_had_select(kernels[k].k))
				continue;
			memcpy(y, x, len * sizeof(*x));
			check(or_had_encode(y, nb, lg, seed, op, first) == 0, "encode failed");
			double en = fabs(sqrt(norm2(y, len) / xn) - 1);
			double d64 = 0;

			for (size_t i = 0; i < len; i++)
				d64 += (y[i] - yd[i]) * (y[i] - yd[i]);
			d64 = sqrt(d64 / xn);
			if (!have_first) {
				memcpy(first_y, y, len * sizeof(*y));
				have_first = 1;
			} else {
				check(!memcmp(first_y, y, len * sizeof(*y)),
				      "%s 2^%u encode differs from portable bitwise",
				      kernels[k].name, lg);
				check(sqrt(dist2(first_y, y, len) / xn) <= tol(lg, FLT_EPSILON),
				      "%s 2^%u encode differs from portable beyond rounding",
				      kernels[k].name, lg);
			}
			check(or_had_decode(y, nb, lg, seed, op, first) == 0, "decode failed");
			double rt = sqrt(dist2(y, x, len) / xn);

			check(rt <= 2 * tol(lg, FLT_EPSILON), "%s 2^%u roundtrip error %g > %g",
			      kernels[k].name, lg, rt, 2 * tol(lg, FLT_EPSILON));
			check(en <= tol(lg, FLT_EPSILON), "%s 2^%u energy changed by %g",
			      kernels[k].name, lg, en);
			check(d64 <= tol(lg, FLT_EPSILON), "%s 2^%u f32 vs f64 %g", kernels[k].name,
			      lg, d64);
			worst_rt = fmax(worst_rt, rt);
			worst_en = fmax(worst_en, en);
			worst_64 = fmax(worst_64, d64);
		}
		or_had_decode_f64(yd, nb, lg, seed, op, first);
		double rt64 = 0;

		for (size_t i = 0; i < len; i++)
			rt64 += (yd[i] - x[i]) * (yd[i] - x[i]);
		rt64 = sqrt(rt64 / xn);
		check(rt64 <= 2 * tol(lg, DBL_EPSILON), "f64 2^%u roundtrip %g", lg, rt64);
		printf(
		    "  2^%-2u roundtrip %.1e (tol %.1e)  energy %.1e  f32-f64 %.1e  f64 rt %.1e\n",
		    lg, worst_rt, 2 * tol(lg, FLT_EPSILON), worst_en, worst_64, rt64);
		free(x);
		free(y);
		free(first_y);
		free(yd);
	}
}

static void check_linearity(void)
{
	const unsigned lg = 12;
	const size_t n = (size_t)1 << lg, nb = 4, len = nb * n;
	float *a = malloc(len * sizeof(*a)), *b = malloc(len * sizeof(*b));
	float *s = malloc(len * sizeof(*s));

	printf("linearity: encode(a) + encode(b) == encode(a + b) within rounding (2^12)\n");
	for (size_t k = 0; k < NKERNELS; k++) {
		if (or_had_select(kernels[k].k))
			continue;
		fill(a, len);
		fill(b, len);
		for (size_t i = 0; i < len; i++)
			s[i] = a[i] + b[i];
		double scale = sqrt(norm2(a, len)) + sqrt(norm2(b, len));

		or_had_encode(a, nb, lg, 1, 2, 0);
		or_had_encode(b, nb, lg, 1, 2, 0);
		or_had_encode(s, nb, lg, 1, 2, 0);
		for (size_t i = 0; i < len; i++)
			a[i] += b[i];
		double e = sqrt(dist2(a, s, len)) / scale;

		check(e <= 2 * tol(lg, FLT_EPSILON), "%s linearity error %g", kernels[k].name, e);
		printf("  %-8s relative error %.1e\n", kernels[k].name, e);
	}
	free(a);
	free(b);
	free(s);
}

static double mean_flipped_bits(uint64_t (*pair)(uint64_t i, uint64_t *b), unsigned count)
{
	double flips = 0;

	for (unsigned i = 0; i < count; i++) {
		uint64_t other, w = pair(i, &other);

		flips += __builtin_popcountll(w ^ other);
	}
	return flips / count;
}

static uint64_t pair_op(uint64_t i, uint64_t *b)
{
	*b = or_had_sign_word(42, 1001, i / 64, i % 64);
	return or_had_sign_word(42, 1000, i / 64, i % 64);
}

static uint64_t pair_block(uint64_t i, uint64_t *b)
{
	*b = or_had_sign_word(42, 7, 2 * i + 1, 3);
	return or_had_sign_word(42, 7, 2 * i, 3);
}

static uint64_t pair_word(uint64_t i, uint64_t *b)
{
	*b = or_had_sign_word(42, 7, 5, 2 * i + 1);
	return or_had_sign_word(42, 7, 5, 2 * i);
}

static uint64_t pair_seed(uint64_t i, uint64_t *b)
{
	*b = or_had_sign_word(i + 1, 7, 5, 0);
	return or_had_sign_word(i, 7, 5, 0);
}

static void check_signs(void)
{
	/* 4096 words = 262144 bits: the mean of 4096 binomial(64, 1/2) is 32 +- 0.0625 (1 sd) */
	const unsigned count = 4096;
	const double sd = sqrt(64 * 0.25 / count);
	struct {
		const char *what;
		uint64_t (*pair)(uint64_t, uint64_t *);
	} pairs[] = {
	    {"op_seq", pair_op},
	    {"block", pair_block},
	    {"word", pair_word},
	    {"seed", pair_seed},
	};
	double ones = 0;

	printf("sign generator: pure, frozen, fresh per op_seq/block/word/seed\n");
	check(or_had_sign_word(3, 4, 5, 6) == or_had_sign_word(3, 4, 5, 6), "not pure");
	/*
	 * Every rank must compute the same signs, including ranks running another build of the
	 * library, so the generator is part of the wire format: these values must never change.
	 */
	check(or_had_sign_word(0, 0, 0, 0) == 0x2ce809ae01cab7d7ULL, "generator changed (0,0,0,0)");
	check(or_had_sign_word(1, 2, 3, 4) == 0x33b854ec1b5b32abULL, "generator changed (1,2,3,4)");
	check(or_had_sign_word(~0ULL, 1ULL << 40, 12345, 1023) == 0x156532fdb014bb58ULL,
	      "generator changed (large key)");
	for (unsigned i = 0; i < count; i++)
		ones += __builtin_popcountll(or_had_sign_word(9, 9, i, 0));
	ones /= count;
	printf("  mean set bits per word %.3f (expect 32 +- %.3f)\n", ones, 4 * sd);
	check(fabs(ones - 32) < 4 * sd, "sign bits unbalanced: %g", ones);
	for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
		double f = mean_flipped_bits(pairs[k].pair, count);

		printf("  neighbouring %-6s: %.3f of 64 bits differ (expect 32 +- %.3f)\n",
		       pairs[k].what, f, 4 * sd);
		check(fabs(f - 32) < 4 * sd, "%s: %g bits differ", pairs[k].what, f);
	}

	/* a sub-range coded on its own, with first_block set, matches the whole-buffer result */
	const unsigned lg = 10;
	const size_t n = (size_t)1 << lg, nb = 8;
	float *x = malloc(nb * n * sizeof(*x)), *y = malloc(nb * n * sizeof(*y));

	printf("sub-range with first_block and repeated keys give identical bits\n");
	fill(x, nb * n);
	memcpy(y, x, nb * n * sizeof(*x));
	or_had_select(OR_HAD_KERNEL_AUTO);
	or_had_encode(x, nb, lg, 5, 6, 100);
	or_had_encode(y, 3, lg, 5, 6, 100);
	or_had_encode(y + 3 * n, 5, lg, 5, 6, 103);
	check(!memcmp(x, y, nb * n * sizeof(*x)), "sub-range encode differs");
	or_had_decode(y, 2, lg, 5, 6, 100);
	or_had_decode(y + 2 * n, 6, lg, 5, 6, 102);
	or_had_decode(x, nb, lg, 5, 6, 100);
	check(!memcmp(x, y, nb * n * sizeof(*x)), "sub-range decode differs");
	free(x);
	free(y);
}

static void check_args(void)
{
	float buf[256], canary[256];
	double dbuf[256], dcanary[256];
	const unsigned bad_lg[] = {0, 7, 17, 64, 1000};

	printf("bad arguments return -22 and leave the buffer alone\n");
	fill(canary, 256);
	for (size_t i = 0; i < 256; i++)
		dcanary[i] = canary[i];
	for (size_t i = 0; i < sizeof(bad_lg) / sizeof(bad_lg[0]); i++) {
		memcpy(buf, canary, sizeof(buf));
		memcpy(dbuf, dcanary, sizeof(dbuf));
		check(or_had_encode(buf, 1, bad_lg[i], 1, 1, 0) == -OPTIREDUCE_EINVAL,
		      "encode lg %u", bad_lg[i]);
		check(or_had_decode(buf, 1, bad_lg[i], 1, 1, 0) == -22, "decode lg %u", bad_lg[i]);
		check(or_had_encode_f64(dbuf, 1, bad_lg[i], 1, 1, 0) == -22, "encode_f64 lg %u",
		      bad_lg[i]);
		check(or_had_decode_f64(dbuf, 1, bad_lg[i], 1, 1, 0) == -22, "decode_f64 lg %u",
		      bad_lg[i]);
		check(!memcmp(buf, canary, sizeof(buf)) && !memcmp(dbuf, dcanary, sizeof(dbuf)),
		      "buffer touched on error (lg %u)", bad_lg[i]);
		check(or_had_nblocks(100, bad_lg[i]) == 0, "nblocks with lg %u", bad_lg[i]);
	}
	check(or_had_encode(NULL, 1, 8, 1, 1, 0) == -22, "encode NULL");
	check(or_had_decode(NULL, 1, 8, 1, 1, 0) == -22, "decode NULL");
	check(or_had_encode_f64(NULL, 2, 8, 1, 1, 0) == -22, "encode_f64 NULL");
	check(or_had_decode_f64(NULL, 2, 8, 1, 1, 0) == -22, "decode_f64 NULL");
	check(or_had_encode(NULL, 0, 8, 1, 1, 0) == 0, "encode NULL, 0 blocks is a no-op");
	check(or_had_decode_f64(NULL, 0, 16, 1, 1, 0) == 0, "decode_f64 NULL, 0 blocks");
	check(or_had_select((enum or_had_kernel)17) == -22, "select bad kernel");

	check(or_had_nblocks(0, 12) == 0, "nblocks(0)");
	check(or_had_nblocks(1, 12) == 1, "nblocks(1)");
	check(or_had_nblocks(4096, 12) == 1, "nblocks(4096)");
	check(or_had_nblocks(4097, 12) == 2, "nblocks(4097)");
	check(or_had_nblocks((size_t)1 << 40, 16) == (size_t)1 << 24, "nblocks(2^40)");
	check(or_had_nblocks(SIZE_MAX, 8) == SIZE_MAX / 256 + 1, "nblocks(SIZE_MAX)");
}

int main(void)
{
	printf("kernels on this CPU:");
	for (size_t k = 0; k < NKERNELS; k++) {
		int rc = or_had_select(kernels[k].k);

		check(rc == 0 || rc == -OPTIREDUCE_ENOTSUP, "select %s returned %d",
		      kernels[k].name, rc);
		printf(" %s%s", kernels[k].name, rc ? "(unsupported)" : "");
	}
	or_had_select(OR_HAD_KERNEL_AUTO);
	printf("; auto picks %s\n", or_had_kernel_name());

	check_definition();
	check_sizes();
	check_out_of_place();
	check_linearity();
	check_signs();
	check_args();

	printf("%s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
