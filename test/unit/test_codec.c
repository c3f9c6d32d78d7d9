/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of bounded mode's codec (lib/op/codec.c), which converts and rotates a
 * contribution a cache-sized chunk of blocks at a time: for every dtype it carries, with
 * the rotation on and off, counts from 0 to several chunks with odd tails, the encoded
 * buffer must equal, bit for bit, a reference made in one piece (the whole input converted,
 * then the whole buffer rotated by the Hadamard kernel), the padding must be zero, and
 * decoding must give the input back (exactly where no rounding can occur, within the
 * rotation's rounding otherwise).
 * Prints every check; exit 0 when all pass, 1 otherwise.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optireduce.h"
#include "lib/kernels/hadamard.h"
#include "lib/kernels/reduce.h"
#include "lib/op/codec.h"

#include "check.h"

#define SEED 0x5eed1234abcdULL
#define SEQ  7

/* x in [-1, 1), exactly representable in every dtype here (a multiple of 2^-7). */
static float value_at(size_t i)
{
	return (float)((int)((i * 2654435761u) % 256) - 128) / 128.0f;
}

static void fill(void *src, size_t count, enum optireduce_dtype dtype)
{
	for (size_t i = 0; i < count; i++) {
		float v = value_at(i);

		if (dtype == OPTIREDUCE_FLOAT64)
			((double *)src)[i] = v;
		else
			or_from_float((char *)src + i * optireduce_dtype_size(dtype), &v, 1, dtype);
	}
}

/* The encoded form made in one piece; NULL when the codec's buffer has another size. */
static void *reference(const struct or_codec *c, const void *src, size_t count,
                       enum optireduce_dtype dtype)
{
	size_t es = optireduce_dtype_size(c->dtype);
	void *ref = calloc(c->count + 1, es);

	if (!ref)
		return NULL;
	if (dtype == OPTIREDUCE_FLOAT64)
		memcpy(ref, src, count * es);
	else if (count)
		or_to_float(ref, src, count, dtype);
	if (c->hadamard && c->nblocks) {
		if (c->dtype == OPTIREDUCE_FLOAT64)
			or_had_encode_f64(ref, c->nblocks, c->log2_block, SEED, SEQ, 0);
		else
			or_had_encode(ref, c->nblocks, c->log2_block, SEED, SEQ, 0);
	}
	return ref;
}

/* Largest |decoded - input|, or INFINITY when decoding failed. */
static double roundtrip_error(struct or_codec *c, const void *src, size_t count,
                              enum optireduce_dtype dtype)
{
	size_t es = optireduce_dtype_size(dtype);
	void *dst = malloc(count * es + 1);
	double worst = 0;

	if (!dst || or_codec_decode(c, c->buf, dst, count, dtype)) {
		free(dst);
		return INFINITY;
	}
	for (size_t i = 0; i < count; i++) {
		float got;
		double d;

		if (dtype == OPTIREDUCE_FLOAT64)
			d = ((const double *)dst)[i] - ((const double *)src)[i];
		else {
			or_to_float(&got, (const char *)dst + i * es, 1, dtype);
			d = (double)got - (double)value_at(i);
		}
		if (fabs(d) > worst)
			worst = fabs(d);
	}
	free(dst);
	return worst;
}

/* Kept across cases, as a communicator keeps it: a smaller operation reuses a larger one's. */
static struct or_codec_cache cache;

static void check_case(enum optireduce_dtype dtype, size_t count, int hadamard)
{
	struct or_codec c = {.seed = SEED, .seq = SEQ, .hadamard = hadamard};
	size_t es = optireduce_dtype_size(dtype);
	void *src = malloc(count * es + 1), *ref;
	int same;
	double err, bound;

	fill(src, count, dtype);
	if (or_codec_encode(&c, &cache, src, count, dtype, 4, 4096)) {
		CHECK(0, "%s count %zu: encode failed", optireduce_dtype_name(dtype), count);
		free(src);
		return;
	}
	ref = reference(&c, src, count, dtype);
	same = ref && !memcmp(ref, c.buf, c.bytes);
	CHECK(same, "%s count %zu, hadamard %d: %zu blocks of 2^%u, encoded as in one piece",
	      optireduce_dtype_name(dtype), count, hadamard, c.nblocks, c.log2_block);
	/* Exact unless rotated; rotated, the rounding of log2(block) butterflies of |x| <= 1
	 * on values of magnitude up to sqrt(block), back to the input's precision. */
	bound = !hadamard ? 0 : dtype == OPTIREDUCE_FLOAT64 ? 1e-12 : 1e-4;
	err = roundtrip_error(&c, src, count, dtype);
	CHECK(err <= bound, "%s count %zu, hadamard %d: decoded back within %g (largest error %g)",
	      optireduce_dtype_name(dtype), count, hadamard, bound, err);
	free(ref);
	or_codec_release(&c, &cache);
	free(src);
}

int main(void)
{
	const enum optireduce_dtype dtypes[] = {OPTIREDUCE_FLOAT32, OPTIREDUCE_FLOAT64,
	                                        OPTIREDUCE_FLOAT16, OPTIREDUCE_BFLOAT16};
	/* 0, one element, under one block, a chunk of float32 (32768) +- 1, several chunks
	 * with an odd tail. */
	const size_t counts[] = {0, 1, 255, 4097, 32767, 32768, 32769, 100003, 300001};

	for (size_t d = 0; d < sizeof(dtypes) / sizeof(dtypes[0]); d++)
		for (size_t n = 0; n < sizeof(counts) / sizeof(counts[0]); n++)
			for (int h = 0; h <= 1; h++)
				check_case(dtypes[d], counts[n], h);
	or_codec_cache_free(&cache);
	printf("%s: %d failure(s)\n", check_failures ? "FAIL" : "PASS", check_failures);
	return check_failures ? 1 : 0;
}
