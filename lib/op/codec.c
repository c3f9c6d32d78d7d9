/* SPDX-License-Identifier: BSD-3-Clause */
/* The codec stage of bounded operations: see codec.h. */
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "lib/kernels/hadamard.h"
#include "lib/kernels/reduce.h"

static unsigned log2_of(size_t x)
{
	unsigned l = 0;
	while (((size_t)1 << (l + 1)) <= x)
		l++;
	return l;
}

/* Blocks no larger than a rank's share, so every rank owns some; at least 2^8. */
static unsigned block_log2(size_t count, uint32_t nranks, size_t block)
{
	size_t per_rank = (count + nranks - 1) / nranks;

	while (block > 256 && block / 2 >= per_rank)
		block /= 2;
	return log2_of(block);
}

static void *take_buffer(struct or_codec_cache *cache, size_t bytes)
{
	void *w;

	if (cache->buf && cache->cap >= bytes) {
		w = cache->buf;
		cache->buf = NULL;
		cache->cap = 0;
		return w;
	}
	return malloc(bytes);
}

/*
 * Blocks converted and rotated together: a chunk stays in the core's cache from the copy to
 * the transform (and from the inverse to the copy out), so 16 MiB pass through memory once
 * per direction, not twice.
 */
#define CHUNK_BYTES (128 * 1024)

static size_t chunk_blocks(const struct or_codec *c)
{
	size_t per = CHUNK_BYTES / optireduce_dtype_size(c->dtype) >> c->log2_block;

	return per ? per : 1;
}

/* Rotates (or undoes the rotation of) nb blocks from block first, of src into dst (the same
 * buffer, or two that do not overlap). */
static int rotate(const struct or_codec *c, void *dst, const void *src, size_t first, size_t nb,
                  int decode)
{
	size_t at = first << c->log2_block;
	int ret;

	if (!nb)
		return 0;
	if (c->dtype == OPTIREDUCE_FLOAT64) {
		double *y = (double *)dst + at;
		const double *x = (const double *)src + at;
		ret = decode
		          ? or_had_decode_f64_to(y, x, nb, c->log2_block, c->seed, c->seq, first)
		          : or_had_encode_f64_to(y, x, nb, c->log2_block, c->seed, c->seq, first);
	} else {
		float *y = (float *)dst + at;
		const float *x = (const float *)src + at;
		ret = decode ? or_had_decode_to(y, x, nb, c->log2_block, c->seed, c->seq, first)
		             : or_had_encode_to(y, x, nb, c->log2_block, c->seed, c->seq, first);
	}
	return ret ? -OPTIREDUCE_EINVAL : 0;
}

/* Elements [lo, hi) of src (dtype) into c->buf, converted to c->dtype. */
static int convert_in(const struct or_codec *c, const void *src, size_t lo, size_t hi,
                      enum optireduce_dtype dtype)
{
	size_t es = optireduce_dtype_size(dtype);

	if (lo >= hi)
		return 0;
	if (c->dtype == OPTIREDUCE_FLOAT64) {
		memcpy((double *)c->buf + lo, (const double *)src + lo, (hi - lo) * es);
		return 0;
	}
	return or_to_float((float *)c->buf + lo, (const char *)src + lo * es, hi - lo, dtype);
}

/* Elements [lo, hi) of res (c->dtype) into dst, converted to dtype. */
static int convert_out(const struct or_codec *c, const void *res, void *dst, size_t lo, size_t hi,
                       enum optireduce_dtype dtype)
{
	size_t es = optireduce_dtype_size(dtype);

	if (lo >= hi)
		return 0;
	if (c->dtype == OPTIREDUCE_FLOAT64) {
		memcpy((double *)dst + lo, (const double *)res + lo, (hi - lo) * es);
		return 0;
	}
	return or_from_float((char *)dst + lo * es, (const float *)res + lo, hi - lo, dtype);
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Blocks [b, b + nb) that lie wholly within count elements, from b on. */
static size_t whole_blocks(const struct or_codec *c, size_t count, size_t b, size_t nb)
{
	size_t whole = count >> c->log2_block;

	return whole > b ? min_size(nb, whole - b) : 0;
}

/*
 * Blocks [b, b + nb) of src into c->buf.  Whole blocks of the codec's own type go through
 * the transform's copy (rotate from src); the rest is converted into place first.
 */
static int encode_chunk(struct or_codec *c, const void *src, size_t count,
                        enum optireduce_dtype dtype, size_t b, size_t nb)
{
	size_t direct = c->hadamard && dtype == c->dtype ? whole_blocks(c, count, b, nb) : 0;
	int ret;

	ret = rotate(c, c->buf, src, b, direct, 0);
	if (!ret)
		ret = convert_in(c, src, min_size(count, (b + direct) << c->log2_block),
		                 min_size(count, (b + nb) << c->log2_block), dtype);
	if (!ret && c->hadamard)
		ret = rotate(c, c->buf, c->buf, b + direct, nb - direct, 0);
	return ret;
}

int or_codec_encode(struct or_codec *c, struct or_codec_cache *cache, const void *src, size_t count,
                    enum optireduce_dtype dtype, uint32_t nranks, size_t block)
{
	size_t es, per;
	int ret = 0;

	c->dtype = dtype == OPTIREDUCE_FLOAT64 ? OPTIREDUCE_FLOAT64 : OPTIREDUCE_FLOAT32;
	es = optireduce_dtype_size(c->dtype);
	c->log2_block = block_log2(count, nranks, block);
	c->nblocks = or_had_nblocks(count, c->log2_block);
	c->count = c->nblocks << c->log2_block;
	c->bytes = (c->count + 1) * es;
	c->buf = take_buffer(cache, c->bytes);
	if (!c->buf)
		return -OPTIREDUCE_ENOMEM;
	/* the padding of the last block must be zero for the transform */
	memset((char *)c->buf + count * es, 0, c->bytes - count * es);
	per = chunk_blocks(c);
	for (size_t b = 0; b < c->nblocks && !ret; b += per)
		ret = encode_chunk(c, src, count, dtype, b, min_size(per, c->nblocks - b));
	if (ret)
		or_codec_release(c, cache);
	return ret;
}

/* Blocks [b, b + nb) of res into dst: whole blocks of dst's type straight from the inverse
 * transform, the rest undone in res and converted out. */
static int decode_chunk(const struct or_codec *c, void *res, void *dst, size_t count,
                        enum optireduce_dtype dtype, size_t b, size_t nb)
{
	size_t direct = c->hadamard && dtype == c->dtype ? whole_blocks(c, count, b, nb) : 0;
	int ret;

	ret = rotate(c, dst, res, b, direct, 1);
	if (!ret && c->hadamard)
		ret = rotate(c, res, res, b + direct, nb - direct, 1);
	if (!ret)
		ret = convert_out(c, res, dst, min_size(count, (b + direct) << c->log2_block),
		                  min_size(count, (b + nb) << c->log2_block), dtype);
	return ret;
}

int or_codec_decode(const struct or_codec *c, void *res, void *dst, size_t count,
                    enum optireduce_dtype dtype)
{
	size_t per = chunk_blocks(c);
	int ret = 0;

	for (size_t b = 0; b < c->nblocks && !ret; b += per)
		ret = decode_chunk(c, res, dst, count, dtype, b, min_size(per, c->nblocks - b));
	return ret;
}

void or_codec_release(struct or_codec *c, struct or_codec_cache *cache)
{
	if (c->buf && c->bytes > cache->cap) {
		free(cache->buf);
		cache->buf = c->buf;
		cache->cap = c->bytes;
	} else {
		free(c->buf);
	}
	c->buf = NULL;
	c->bytes = 0;
}

void or_codec_cache_free(struct or_codec_cache *cache)
{
	free(cache->buf);
	cache->buf = NULL;
	cache->cap = 0;
}
