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

static int rotate(const struct or_codec *c, int decode)
{
	int ret;

	if (!c->hadamard || !c->nblocks)
		return 0;
	if (c->dtype == OPTIREDUCE_FLOAT64)
		ret =
		    decode
		        ? or_had_decode_f64(c->buf, c->nblocks, c->log2_block, c->seed, c->seq, 0)
		        : or_had_encode_f64(c->buf, c->nblocks, c->log2_block, c->seed, c->seq, 0);
	else
		ret = decode ? or_had_decode(c->buf, c->nblocks, c->log2_block, c->seed, c->seq, 0)
		             : or_had_encode(c->buf, c->nblocks, c->log2_block, c->seed, c->seq, 0);
	return ret ? -OPTIREDUCE_EINVAL : 0;
}

int or_codec_encode(struct or_codec *c, struct or_codec_cache *cache, const void *src, size_t count,
                    enum optireduce_dtype dtype, uint32_t nranks, size_t block)
{
	size_t es;
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
	if (c->dtype == OPTIREDUCE_FLOAT64)
		memcpy(c->buf, src, count * es);
	else if (count)
		ret = or_to_float(c->buf, src, count, dtype);
	if (!ret)
		ret = rotate(c, 0);
	if (ret)
		or_codec_release(c, cache);
	return ret;
}

int or_codec_decode(const struct or_codec *c, void *res, void *dst, size_t count,
                    enum optireduce_dtype dtype)
{
	struct or_codec at_res = *c;
	int ret;

	at_res.buf = res;
	ret = rotate(&at_res, 1);
	if (ret || !count)
		return ret;
	if (dtype == OPTIREDUCE_FLOAT64) {
		memcpy(dst, res, count * 8);
		return 0;
	}
	return or_from_float(dst, res, count, dtype);
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
