/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The codec stage of bounded operations (docs/design.md, "The estimate"): the core
 * converts the contribution to float32 (float64 stays float64), rotates it block by
 * block with a randomized Hadamard transform before the algorithm runs, and undoes
 * both on the result after it, so every bounded algorithm works on whole blocks in
 * the rotated domain and none re-implements the codec.
 */
#ifndef OR_CODEC_H
#define OR_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "optireduce.h"

/* The encoded buffer of the last operation, kept: fresh pages cost a fault each. */
struct or_codec_cache {
	void *buf;
	size_t cap;
};

/* One operation's encoded form. */
struct or_codec {
	void *buf;                   /* whole blocks of dtype; zero padding after count */
	size_t bytes;                /* of buf */
	enum optireduce_dtype dtype; /* float32, or float64 for float64 */
	size_t count;                /* elements in whole blocks */
	unsigned log2_block;
	size_t nblocks;
	uint64_t seed; /* the rotation's signs: communicator and operation */
	uint64_t seq;
	int hadamard; /* 0: converted only, not rotated */
};

/*
 * Encodes count elements of dtype at src into c->buf (from cache when it is large enough)
 * with the rotation the caller set in c->seed, c->seq and c->hadamard.
 * Blocks are at most block elements, halved while a rank's share (count / nranks) fits
 * in half of one, so every rank owns some; at least 256.  0 or a negative code, and then
 * nothing is held.
 */
int or_codec_encode(struct or_codec *c, struct or_codec_cache *cache, const void *src, size_t count,
                    enum optireduce_dtype dtype, uint32_t nranks, size_t block);

/* Decodes res (c->count elements of c->dtype: c->buf or the algorithm's own buffer) into
 * count elements of dtype at dst.  res is overwritten. */
int or_codec_decode(const struct or_codec *c, void *res, void *dst, size_t count,
                    enum optireduce_dtype dtype);

/* Gives c->buf back to the cache (or frees it); c holds nothing afterwards. */
void or_codec_release(struct or_codec *c, struct or_codec_cache *cache);
void or_codec_cache_free(struct or_codec_cache *cache);

#endif /* OR_CODEC_H */
