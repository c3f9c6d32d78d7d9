/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The estimate (docs/design.md, "The estimate"): what arrived of a sender's region,
 * rescaled block by block into an unbiased estimate of what was sent.
 */
#include <string.h>

#include "lib/bounded/bounded_int.h"
#include "lib/kernels/reduce.h"

/* Elements of [off, off + len) (bytes of the sender's region) that arrived. */
static size_t arrived_elems(const struct or_bounded *b, const struct or_inbound *in, size_t off,
                            size_t len, size_t esize)
{
	size_t got = 0;

	if (in->got_pkts == in->npkts)
		return len / esize;
	for (size_t p = off / b->ch.payload; p * b->ch.payload < off + len && p < in->npkts; p++) {
		size_t lo = p * b->ch.payload, hi = lo + b->ch.payload;
		if (!in->seen[p])
			continue;
		if (lo < off)
			lo = off;
		if (hi > off + len)
			hi = off + len;
		if (hi > in->bytes)
			hi = in->bytes;
		got += (hi - lo) / esize;
	}
	return got;
}

/* The inbound region of sender in phase, or NULL if the phase expects nothing from it. */
static struct or_inbound *region_of(struct or_coll *c, unsigned phase, uint32_t sender)
{
	return phase < c->bop->nphases ? or_bd_inbound_of(&c->bop->ph[phase], c->size, sender)
	                               : NULL;
}

/*
 * dst (whole blocks) += what sender's packets of phase brought, block by block.  A block
 * with k of n elements is scaled by n/k: with random rotation signs every element of a
 * block is equally likely to be any coordinate, so this is unbiased for any drop pattern.
 * Returns the number of blocks that brought nothing.
 */
int or_bop_accumulate(struct or_coll *c, unsigned phase, uint32_t sender, void *dst, size_t elems,
                      uint32_t *present)
{
	struct or_bounded *b = c->comm->bounded;
	struct or_inbound *in = region_of(c, phase, sender);
	size_t be = c->bop->block_elems, es = c->esize;
	int rescale = (int)or_bd_param_i(b, OR_P_RESCALE), missing = 0;

	if (!in || !in->region || elems * es > in->bytes)
		return -OPTIREDUCE_EINVAL;

	for (size_t lo = 0; lo < elems; lo += be) {
		size_t n = elems - lo < be ? elems - lo : be;
		size_t k = arrived_elems(b, in, lo * es, n * es, es);
		char *d = (char *)dst + lo * es;
		const char *s = (const char *)in->region + lo * es;
		if (k == 0) {
			/* The caller estimates the block from the senders that did arrive. */
			c->status->flags |= OPTIREDUCE_STATUS_INCOMPLETE;
			missing++;
			continue;
		}
		if (present)
			present[lo / be]++;
		if (k < n && rescale) {
			or_reduce_scale((void *)s, n, c->dtype, (double)n / (double)k);
			c->status->flags |= OPTIREDUCE_STATUS_INCOMPLETE;
		} else if (k < n) {
			c->status->flags |= OPTIREDUCE_STATUS_INCOMPLETE;
		}
		or_reduce(d, s, n, c->dtype, OPTIREDUCE_SUM);
	}
	return missing;
}

/*
 * The final phase placed sender's reduced shard at its region; blocks that lost packets are
 * rescaled, and blocks that lost everything fall back to own, an unbiased estimate of the
 * sum of own_contrib contributions, times N / own_contrib.  Returns the number of fallback
 * blocks.
 */
int or_bop_finalize_region_from(struct or_coll *c, unsigned phase, uint32_t sender, const void *own,
                                uint32_t own_contrib, size_t elems)
{
	struct or_bounded *b = c->comm->bounded;
	struct or_inbound *in = region_of(c, phase, sender);
	size_t be = c->bop->block_elems, es = c->esize;
	int rescale = (int)or_bd_param_i(b, OR_P_RESCALE), fallback = 0;

	if (!in || !in->region || elems * es > in->bytes || own_contrib == 0)
		return -OPTIREDUCE_EINVAL;
	if (in->got_pkts == in->npkts)
		return 0;
	for (size_t lo = 0; lo < elems; lo += be) {
		size_t n = elems - lo < be ? elems - lo : be;
		size_t k = arrived_elems(b, in, lo * es, n * es, es);
		char *d = (char *)in->region + lo * es;
		if (k == n)
			continue;
		c->status->flags |= OPTIREDUCE_STATUS_INCOMPLETE;
		if (k == 0) {
			if (rescale) {
				memcpy(d, (const char *)own + lo * es, n * es);
				or_reduce_scale(d, n, c->dtype,
				                (double)c->size / (double)own_contrib);
			}
			fallback++;
		} else if (rescale) {
			or_reduce_scale(d, n, c->dtype, (double)n / (double)k);
		}
	}
	return fallback;
}

int or_bop_finalize_region(struct or_coll *c, unsigned phase, uint32_t sender, const void *own,
                           size_t elems)
{
	return or_bop_finalize_region_from(c, phase, sender, own, 1, elems);
}
