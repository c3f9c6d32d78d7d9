/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transpose allreduce (TAR), two dependent phases.
 *
 * The buffer is cut into N shards; rank i owns shard i.  Phase 1 sends shard j
 * straight to rank j, which adds what arrived from every sender to its own
 * copy.  Phase 2 sends each owner's reduced shard to every other rank.  The
 * bytes moved equal Ring's, but there are two dependent phases instead of
 * 2(N-1) steps, and on a lossy channel a dropped packet costs one sender's
 * contribution to a few elements instead of everything accumulated upstream.
 *
 * On the bounded channel, shards are whole Hadamard blocks and the core
 * packetizes, paces and stripes the sends; the incast parameter limits how
 * many senders target one receiver at a time (peers are visited in the
 * rotation r+1, r+2, ..., so in each round every receiver has one sender).
 * Phase 1 keeps every sender's shard apart so that each can be rescaled by
 * what arrived of it; a block that lost a whole sender is scaled up by the
 * senders that did arrive.  Phase 2 rescales what it lost, and a block that
 * lost everything falls back to this rank's own contribution times N.
 *
 * On the exact channel the same schedule runs over reliable tagged messages,
 * and the owner adds senders in rank order so that every rank ends with
 * bit-identical results.
 *
 * Phase 1 alone is a reduce-scatter (c->scatter, exact channel): shards are
 * then the equal blocks the caller asked for, sent straight from the caller's
 * contribution (c->src), and the owner's sum lands in c->rbuf.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/op/algorithm.h"
#include "lib/kernels/reduce.h"

struct tar_state {
	int stage;
	size_t unit; /* shards are multiples of this many elements */
	size_t units;
	size_t max_shard;
	char *inbox;  /* max_shard elements per sender */
	char *result; /* bounded: phase 2 lands here */
	uint32_t *present;
	/* exact channel */
	size_t nseg;
	size_t nxf;
	or_xfer_t *xf;
	uint8_t *posted;
};

static size_t shard_off(const struct or_coll *c, const struct tar_state *st, uint32_t j)
{
	return or_chunk_start(st->units, c->size, j) * st->unit;
}

static size_t shard_len(const struct or_coll *c, const struct tar_state *st, uint32_t j)
{
	return or_chunk_len(st->units, c->size, j) * st->unit;
}

/* ---- exact channel ---- */

/* Where shard j of this rank's contribution is read from when it is sent. */
static const char *contrib(const struct or_coll *c, const struct tar_state *st, uint32_t j)
{
	const char *base = c->scatter ? c->src : c->rbuf;
	return base + shard_off(c, st, j) * c->esize;
}

/* Where this rank's shard is reduced: its own result block for a reduce-scatter. */
static char *own_shard(const struct or_coll *c, const struct tar_state *st)
{
	return c->scatter ? c->rbuf : (char *)c->rbuf + shard_off(c, st, c->rank) * c->esize;
}

/* Transfers of one phase: for each peer, nseg receives then nseg sends. */
static int exact_post(struct or_coll *c, struct tar_state *st, uint32_t phase)
{
	size_t es = c->esize, seg = c->segment_bytes / es;
	char *rbuf = c->rbuf;

	for (uint32_t p = 0; p < c->size; p++) {
		if (p == c->rank)
			continue;
		for (size_t k = 0; k < st->nseg; k++) {
			size_t ri = ((size_t)p * st->nseg + k) * 2, si = ri + 1;
			/* Phase 0 receives p's copy of my shard; phase 1 receives p's shard. */
			size_t rlen = phase == 0 ? shard_len(c, st, c->rank) : shard_len(c, st, p);
			size_t slen = phase == 0 ? shard_len(c, st, p) : shard_len(c, st, c->rank);
			char *rdst = phase == 0 ? st->inbox + (size_t)p * st->max_shard * es
			                        : rbuf + shard_off(c, st, p) * es;
			const char *ssrc =
			    phase == 0 ? contrib(c, st, p) : rbuf + shard_off(c, st, c->rank) * es;
			size_t rl =
			    k * seg < rlen ? (rlen - k * seg < seg ? rlen - k * seg : seg) : 0;
			size_t sl =
			    k * seg < slen ? (slen - k * seg < seg ? slen - k * seg : seg) : 0;
			int ret;

			if (!st->posted[ri]) {
				if (!rl) {
					or_xfer_skip(&st->xf[ri]);
					st->posted[ri] = 1;
				} else {
					ret =
					    or_coll_recv(c, p, phase, (uint32_t)k,
					                 rdst + k * seg * es, rl * es, &st->xf[ri]);
					if (ret == 0)
						st->posted[ri] = 1;
					else if (ret != -OPTIREDUCE_EAGAIN)
						return ret;
				}
			}
			if (!st->posted[si]) {
				if (!sl) {
					or_xfer_skip(&st->xf[si]);
					st->posted[si] = 1;
				} else {
					ret =
					    or_coll_send(c, p, phase, (uint32_t)k,
					                 ssrc + k * seg * es, sl * es, &st->xf[si]);
					if (ret == 0)
						st->posted[si] = 1;
					else if (ret != -OPTIREDUCE_EAGAIN)
						return ret;
				}
			}
		}
	}
	return 0;
}

/* Resets the slots for a new phase; this rank's own slots never carry a transfer. */
static void mark_own_slots(struct or_coll *c, struct tar_state *st)
{
	memset(st->posted, 0, st->nxf);
	for (size_t k = 0; k < st->nseg * 2; k++) {
		size_t i = (size_t)c->rank * st->nseg * 2 + k;
		st->posted[i] = 1;
		or_xfer_skip(&st->xf[i]);
	}
}

static int exact_phase_done(struct tar_state *st)
{
	for (size_t i = 0; i < st->nxf; i++) {
		if (!st->posted[i] || !or_xfer_done(&st->xf[i]))
			return 0;
	}
	for (size_t i = 0; i < st->nxf; i++)
		if (or_xfer_error(&st->xf[i]))
			return or_xfer_error(&st->xf[i]);
	return 1;
}

static int exact_progress(struct or_coll *c, struct tar_state *st)
{
	int ret;

	while (st->stage < (c->scatter ? 1 : 2)) {
		ret = exact_post(c, st, (uint32_t)st->stage);
		if (ret)
			return ret;
		ret = exact_phase_done(st);
		if (ret <= 0)
			return ret < 0 ? ret : OPTIREDUCE_INPROGRESS;
		if (st->stage == 0) {
			char *own = own_shard(c, st);
			size_t n = shard_len(c, st, c->rank);
			for (uint32_t p = 0; p < c->size && n; p++) {
				if (p == c->rank)
					continue;
				ret =
				    or_reduce(own, st->inbox + (size_t)p * st->max_shard * c->esize,
				              n, c->dtype, c->op);
				if (ret)
					return ret;
			}
		}
		st->stage++;
		mark_own_slots(c, st);
	}
	st->stage = 2;
	return 0;
}

/* ---- bounded channel ---- */

static int bounded_setup(struct or_coll *c, struct tar_state *st)
{
	size_t es = c->esize;
	char *rbuf = c->rbuf;
	int ret = 0;

	st->result = or_bop_scratch(c, 1, (c->count + 1) * es);
	st->present = calloc(st->max_shard / st->unit + 1, sizeof(uint32_t));
	if (!st->result || !st->present)
		return -OPTIREDUCE_ENOMEM;
	/* The owner's shard is summed into; the others are phase 2's regions. */
	memset(st->result + shard_off(c, st, c->rank) * es, 0, shard_len(c, st, c->rank) * es);
	for (uint32_t p = 0; p < c->size && !ret; p++) {
		if (p == c->rank)
			continue;
		ret = or_bop_recv_region(c, 0, p, st->inbox + (size_t)p * st->max_shard * es,
		                         shard_len(c, st, c->rank) * es);
		if (!ret)
			ret = or_bop_send_region(c, 0, p, rbuf + shard_off(c, st, p) * es,
			                         shard_len(c, st, p) * es, 1);
		if (!ret)
			ret = or_bop_recv_region(c, 1, p, st->result + shard_off(c, st, p) * es,
			                         shard_len(c, st, p) * es);
		if (!ret)
			ret =
			    or_bop_send_region(c, 1, p, st->result + shard_off(c, st, c->rank) * es,
			                       shard_len(c, st, c->rank) * es,
			                       (uint16_t)(c->size > 65535 ? 65535 : c->size));
	}
	if (ret)
		return ret;
	or_bop_keep_sends(c);
	or_bop_regions_ready(c);
	return or_bop_phase_begin(c, 0);
}

/* result's own shard = own + remote senders, each block scaled by the senders that arrived. */
static int bounded_reduce(struct or_coll *c, struct tar_state *st)
{
	size_t es = c->esize, n = shard_len(c, st, c->rank), be = st->unit;
	size_t nb = n / be;
	char *dst = st->result + shard_off(c, st, c->rank) * es;
	const char *own = (const char *)c->rbuf + shard_off(c, st, c->rank) * es;
	uint32_t remote = c->size - 1;
	int ret;

	memset(st->present, 0, (nb + 1) * sizeof(uint32_t));
	for (uint32_t p = 0; p < c->size; p++) {
		if (p == c->rank)
			continue;
		ret = or_bop_accumulate(c, 0, p, dst, n, st->present);
		if (ret < 0)
			return ret;
		c->status->contributions_missing += (uint64_t)ret;
	}
	c->status->contributions_expected += (uint64_t)nb * remote;
	for (size_t b = 0; b < nb; b++) {
		char *d = dst + b * be * es;
		if (st->present[b] == 0 && remote) {
			/* Nobody's block arrived: own contribution stands for all N. */
			ret = or_reduce_scale(d, be, c->dtype, 0.0);
			if (!ret)
				ret = or_reduce(d, own + b * be * es, be, c->dtype, OPTIREDUCE_SUM);
			if (!ret)
				ret = or_reduce_scale(d, be, c->dtype, (double)c->size);
			c->status->blocks_fallback++;
		} else {
			if (st->present[b] < remote)
				ret = or_reduce_scale(d, be, c->dtype,
				                      (double)remote / (double)st->present[b]);
			else
				ret = 0;
			if (!ret)
				ret = or_reduce(d, own + b * be * es, be, c->dtype, OPTIREDUCE_SUM);
		}
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Parameter consistent: once every rank's loss bitmap is here, every owner's shard (this
 * rank's own too) loses what any rank lost and is rescaled by what is left, the same on
 * every rank (docs/design.md, "Replica-consistent results").
 */
static int bounded_agree(struct or_coll *c, struct tar_state *st)
{
	int ret = or_bop_consist_ready(c);

	if (ret <= 0)
		return ret < 0 ? ret : OPTIREDUCE_INPROGRESS;
	for (uint32_t p = 0; p < c->size; p++) {
		ret = or_bop_consist_apply(c, p, st->result + shard_off(c, st, p) * c->esize,
		                           shard_len(c, st, p));
		if (ret < 0)
			return ret;
	}
	c->rbuf = st->result; /* the core decodes from here: no copy back */
	st->stage = 2;
	return 0;
}

static int bounded_progress(struct or_coll *c, struct tar_state *st)
{
	int ret;
	size_t es = c->esize;

	if (st->stage == 0) {
		if (!or_bop_phase_try_close(c, 0))
			return OPTIREDUCE_INPROGRESS;
		ret = bounded_reduce(c, st);
		if (!ret)
			ret = or_bop_phase_begin(c, 1);
		if (ret)
			return ret;
		st->stage = 1;
	}
	if (st->stage == 1) {
		if (!or_bop_phase_try_close(c, 1))
			return OPTIREDUCE_INPROGRESS;
		if (or_bop_consistent(c)) {
			ret = or_bop_consist_close(c, 1);
			if (ret)
				return ret;
			st->stage = 3;
			return bounded_agree(c, st);
		}
		for (uint32_t p = 0; p < c->size; p++) {
			if (p == c->rank)
				continue;
			ret = or_bop_finalize_region(
			    c, 1, p, (const char *)c->rbuf + shard_off(c, st, p) * es,
			    shard_len(c, st, p));
			if (ret < 0)
				return ret;
			c->status->blocks_fallback += (uint64_t)ret;
		}
		c->rbuf = st->result; /* the core decodes from here: no copy back */
		st->stage = 2;
	}
	return 0;
}

/* ---- table entry ---- */

static int tar_start(struct or_coll *c)
{
	struct tar_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -OPTIREDUCE_ENOMEM;
	c->alg_state = st;
	st->unit = c->bounded ? or_bop_block_elems(c) : 1;
	st->units = c->count / st->unit;
	st->max_shard = or_chunk_len(st->units, c->size, 0) * st->unit;
	if (c->scatter && !c->bounded && c->count && c->rbuf != contrib(c, st, c->rank))
		memcpy(c->rbuf, contrib(c, st, c->rank), shard_len(c, st, c->rank) * c->esize);
	if (c->size == 1 || c->count == 0) {
		st->stage = 2;
		return 0;
	}
	if (c->bounded) {
		/* Reused across operations: a 16 MiB operation spent 20-35 ms allocating and
		 * faulting in fresh buffers before its first packet. */
		st->inbox = or_bop_scratch(c, 0, ((size_t)c->size * st->max_shard + 1) * c->esize);
		if (!st->inbox)
			return -OPTIREDUCE_ENOMEM;
		return bounded_setup(c, st);
	}
	st->inbox = calloc((size_t)c->size * st->max_shard + 1, c->esize);
	if (!st->inbox)
		return -OPTIREDUCE_ENOMEM;
	st->nseg = st->max_shard
	               ? (st->max_shard * c->esize + c->segment_bytes - 1) / c->segment_bytes
	               : 1;
	st->nxf = (size_t)c->size * st->nseg * 2;
	st->xf = calloc(st->nxf, sizeof(*st->xf));
	st->posted = calloc(st->nxf, 1);
	if (!st->xf || !st->posted)
		return -OPTIREDUCE_ENOMEM;
	mark_own_slots(c, st);
	return OPTIREDUCE_INPROGRESS;
}

static int tar_progress(struct or_coll *c)
{
	struct tar_state *st = c->alg_state;

	if (st->stage == 2)
		return 0;
	if (st->stage == 3)
		return bounded_agree(c, st);
	return c->bounded ? bounded_progress(c, st) : exact_progress(c, st);
}

static void tar_cleanup(struct or_coll *c)
{
	struct tar_state *st = c->alg_state;

	if (!st)
		return;
	if (!c->bounded) { /* bounded: inbox and result are the communicator's scratch */
		free(st->inbox);
		free(st->result);
	}
	free(st->present);
	free(st->xf);
	free(st->posted);
	free(st);
	c->alg_state = NULL;
}

const struct or_alg or_alg_transpose = {
    .id = 1,
    .name = "transpose",
    .desc = "Transpose AllReduce: shard j to rank j, then every owner to all; 2 phases, "
            "a drop costs one contribution; bounded and exact",
    .channels = OR_CHAN_EXACT | OR_CHAN_BOUNDED,
    .start = tar_start,
    .progress = tar_progress,
    .cleanup = tar_cleanup,
};
