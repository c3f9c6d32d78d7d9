/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ring allreduce: reduce-scatter, then allgather, over 2(N-1) steps.
 *
 * The buffer is cut into N chunks (the first count % N one element longer).
 * In reduce-scatter step s (0 <= s < N-1) rank r sends chunk (r - s) to its
 * right neighbour and receives chunk (r - s - 1) from its left neighbour,
 * adding it into its own copy; after N-1 steps rank r holds the full sum of
 * chunk (r + 1).  In allgather step t (0 <= t < N-1) rank r forwards chunk
 * (r + 1 - t) and receives chunk (r - t) straight into the result.
 *
 * Each chunk is further cut into segments no larger than the channel's
 * segment size, and every segment index is an independent "lane" that walks
 * through all 2(N-1) steps on its own: segment k of step s+1 only waits for
 * segment k of step s.  That pipelines the network with the reductions, and
 * keeps every step's receive in flight before its send so that the
 * transport never buffers an unexpected message it could have placed.
 *
 * Every chunk is reduced in the same order on its way round the ring and then
 * copied, so all ranks end with bit-identical results, floats included.
 *
 * On the bounded channel chunks are whole Hadamard blocks, and each of the
 * 2(N-1) steps is a phase of its own with its own deadline: step s+1 begins
 * when step s closed (all data, early timeout or deadline), whatever came.
 * Reduce-scatter step s receives the left neighbour's estimate of the sum of
 * s+1 contributions (the packets' contrib field says s+1), rescales each block
 * by what arrived of it (unbiased under the random rotation when losses at
 * different steps are independent), and adds this rank's own.  A block of
 * which nothing arrived lost those s+1 contributions: this rank's own block,
 * times s+2, stands for the sum instead, so every block this rank forwards is
 * an estimate of exactly s+2 contributions and one contrib per packet is exact
 * (packets straddle blocks, so per-block counts could not travel in headers).
 * Allgather step t forwards the chunk finalized at step t-1; a block that lost
 * everything falls back to this rank's partial sum of that chunk from
 * reduce-scatter, an estimate of t+1 contributions, times N / (t+1).
 */
#include <stdlib.h>
#include <string.h>

#include "lib/op/algorithm.h"
#include "lib/kernels/reduce.h"

struct ring_lane {
	uint32_t step;
	uint8_t recv_posted;
	uint8_t send_posted;
	or_xfer_t rx;
	or_xfer_t sx;
};

struct ring_state {
	uint32_t nsteps;
	size_t nlanes;
	size_t seg_elems;
	size_t lanes_done;
	char *scratch; /* one chunk, receive side of reduce-scatter */
	struct ring_lane *lanes;
};

static uint32_t mod_n(int64_t x, uint32_t n)
{
	int64_t m = x % (int64_t)n;
	return (uint32_t)(m < 0 ? m + n : m);
}

/* Elements [*off, *off + return) of segment k of chunk i. */
static size_t seg_range(const struct or_coll *c, const struct ring_state *st, uint32_t chunk,
                        size_t k, size_t *off)
{
	size_t start = or_chunk_start(c->count, c->size, chunk);
	size_t len = or_chunk_len(c->count, c->size, chunk);
	size_t lo = k * st->seg_elems;

	*off = start + lo;
	if (lo >= len)
		return 0;
	return len - lo < st->seg_elems ? len - lo : st->seg_elems;
}

static int post(int ret, uint8_t *posted)
{
	if (ret == -OPTIREDUCE_EAGAIN)
		return 0;
	if (ret < 0)
		return ret;
	*posted = 1;
	return 0;
}

static int lane_progress(struct or_coll *c, struct ring_state *st, size_t k)
{
	struct ring_lane *l = &st->lanes[k];
	uint32_t n = c->size, r = c->rank;
	uint32_t right = (r + 1) % n, left = (r + n - 1) % n;
	char *rbuf = c->rbuf;

	while (l->step < st->nsteps) {
		int rs = l->step < n - 1;
		uint32_t t = rs ? l->step : l->step - (n - 1);
		uint32_t schunk = rs ? mod_n((int64_t)r - t, n) : mod_n((int64_t)r + 1 - t, n);
		uint32_t rchunk = rs ? mod_n((int64_t)r - t - 1, n) : mod_n((int64_t)r - t, n);
		size_t soff, roff;
		size_t slen = seg_range(c, st, schunk, k, &soff);
		size_t rlen = seg_range(c, st, rchunk, k, &roff);
		char *rdst =
		    rs ? st->scratch + k * st->seg_elems * c->esize : rbuf + roff * c->esize;
		int ret;

		if (!l->recv_posted) {
			if (rlen == 0) {
				or_xfer_skip(&l->rx);
				l->recv_posted = 1;
			} else if ((ret = post(or_coll_recv(c, left, l->step, (uint32_t)k, rdst,
			                                    rlen * c->esize, &l->rx),
			                       &l->recv_posted)))
				return ret;
		}
		if (!l->send_posted) {
			if (slen == 0) {
				or_xfer_skip(&l->sx);
				l->send_posted = 1;
			} else if ((ret = post(or_coll_send(c, right, l->step, (uint32_t)k,
			                                    rbuf + soff * c->esize, slen * c->esize,
			                                    &l->sx),
			                       &l->send_posted)))
				return ret;
		}
		if (!l->recv_posted || !l->send_posted || !or_xfer_done(&l->rx) ||
		    !or_xfer_done(&l->sx))
			return OPTIREDUCE_INPROGRESS;
		if (or_xfer_error(&l->rx))
			return or_xfer_error(&l->rx);
		if (or_xfer_error(&l->sx))
			return or_xfer_error(&l->sx);
		if (rs && rlen) {
			ret = or_reduce(rbuf + roff * c->esize, rdst, rlen, c->dtype, c->op);
			if (ret)
				return ret;
		}
		l->step++;
		l->recv_posted = l->send_posted = 0;
	}
	return 0;
}

/* ---- bounded channel ---- */

struct ring_bstate {
	uint32_t step; /* the phase being waited for */
	uint32_t nsteps;
	size_t unit; /* chunks are whole blocks of this many elements */
	size_t units;
	size_t max_chunk; /* elements */
	char *inbox;      /* one chunk per reduce-scatter step: a late step must not overwrite */
	char *result;     /* allgather lands here */
	uint32_t *present;
};

static size_t bchunk_off(const struct or_coll *c, const struct ring_bstate *st, uint32_t j)
{
	return or_chunk_start(st->units, c->size, j) * st->unit;
}

static size_t bchunk_len(const struct or_coll *c, const struct ring_bstate *st, uint32_t j)
{
	return or_chunk_len(st->units, c->size, j) * st->unit;
}

/* Every step's regions are declared up front, so a packet that comes early has a home. */
static int bounded_setup(struct or_coll *c, struct ring_bstate *st)
{
	uint32_t n = c->size, r = c->rank, right = (r + 1) % n, left = (r + n - 1) % n;
	uint16_t all = (uint16_t)(n > 65535 ? 65535 : n);
	size_t es = c->esize;
	char *rbuf = c->rbuf;
	int ret;

	st->inbox = calloc((size_t)(n - 1) * st->max_chunk + 1, es);
	st->result = calloc(c->count + 1, es);
	st->present = calloc(st->max_chunk / st->unit + 1, sizeof(uint32_t));
	if (!st->inbox || !st->result || !st->present)
		return -OPTIREDUCE_ENOMEM;
	ret = or_bop_set_phases(c, st->nsteps, 1, n - 1);
	for (uint32_t s = 0; s < n - 1 && !ret; s++) {
		uint32_t schunk = mod_n((int64_t)r - s, n), rchunk = mod_n((int64_t)r - s - 1, n);
		ret = or_bop_recv_region(c, s, left, st->inbox + (size_t)s * st->max_chunk * es,
		                         bchunk_len(c, st, rchunk) * es);
		if (!ret)
			ret = or_bop_send_region(c, s, right, rbuf + bchunk_off(c, st, schunk) * es,
			                         bchunk_len(c, st, schunk) * es,
			                         (uint16_t)(s + 1 > 65535 ? 65535 : s + 1));
	}
	for (uint32_t t = 0; t < n - 1 && !ret; t++) {
		uint32_t schunk = mod_n((int64_t)r + 1 - t, n), rchunk = mod_n((int64_t)r - t, n);
		ret = or_bop_recv_region(c, n - 1 + t, left,
		                         st->result + bchunk_off(c, st, rchunk) * es,
		                         bchunk_len(c, st, rchunk) * es);
		if (!ret)
			ret = or_bop_send_region(c, n - 1 + t, right,
			                         st->result + bchunk_off(c, st, schunk) * es,
			                         bchunk_len(c, st, schunk) * es, all);
	}
	if (ret)
		return ret;
	or_bop_regions_ready(c);
	ret = or_bop_phase_begin(c, 0);
	return ret ? ret : OPTIREDUCE_INPROGRESS;
}

/* Reduce-scatter step s closed: own chunk r-s-1 += the left's estimate of s+1 contributions. */
static int bounded_reduce(struct or_coll *c, struct ring_bstate *st, uint32_t s)
{
	uint32_t n = c->size, j = mod_n((int64_t)c->rank - s - 1, n);
	size_t es = c->esize, len = bchunk_len(c, st, j), be = st->unit, nb = len / be;
	char *dst = (char *)c->rbuf + bchunk_off(c, st, j) * es;
	int ret, missing;

	memset(st->present, 0, (nb + 1) * sizeof(uint32_t));
	missing = or_bop_accumulate(c, s, (c->rank + n - 1) % n, dst, len, st->present);
	if (missing < 0)
		return missing;
	c->status->contributions_expected += (uint64_t)nb * (s + 1);
	c->status->contributions_missing += (uint64_t)missing * (s + 1);
	for (size_t b = 0; b < nb && missing; b++) {
		if (st->present[b])
			continue;
		/* Nothing came: own block stands for all s+2 contributions it should carry. */
		ret = or_reduce_scale(dst + b * be * es, be, c->dtype, (double)(s + 2));
		if (ret)
			return ret;
		c->status->blocks_fallback++;
	}
	return 0;
}

/* Allgather step t closed: chunk r-t is rescaled, empty blocks from the partial sum. */
static int bounded_finalize(struct or_coll *c, struct ring_bstate *st, uint32_t t)
{
	uint32_t n = c->size, j = mod_n((int64_t)c->rank - t, n);
	size_t off = bchunk_off(c, st, j) * c->esize;
	int ret;

	/* Chunk r is this rank's own (1 contribution); chunk r-t was reduced at step t-1 (t+1). */
	ret = or_bop_finalize_region_from(c, n - 1 + t, (c->rank + n - 1) % n,
	                                  (const char *)c->rbuf + off, t + 1, bchunk_len(c, st, j));
	if (ret < 0)
		return ret;
	c->status->blocks_fallback += (uint64_t)ret;
	return 0;
}

static int bounded_progress(struct or_coll *c, struct ring_bstate *st)
{
	uint32_t n = c->size;
	size_t es = c->esize;
	int ret;

	while (st->step < st->nsteps) {
		uint32_t s = st->step;
		ret = or_bop_phase_try_close(c, s);
		if (ret < 0)
			return ret;
		if (!ret)
			return OPTIREDUCE_INPROGRESS;
		ret = s < n - 1 ? bounded_reduce(c, st, s) : bounded_finalize(c, st, s - (n - 1));
		if (ret)
			return ret;
		if (s == n - 2) {
			/* Reduce-scatter done: this rank's chunk r+1 is the full sum; share it. */
			uint32_t j = (c->rank + 1) % n;
			size_t off = bchunk_off(c, st, j) * es;
			memcpy(st->result + off, (char *)c->rbuf + off, bchunk_len(c, st, j) * es);
		}
		st->step++;
		if (st->step < st->nsteps && (ret = or_bop_phase_begin(c, st->step)))
			return ret;
	}
	memcpy(c->rbuf, st->result, c->count * es);
	return 0;
}

static int ring_bounded_start(struct or_coll *c)
{
	struct ring_bstate *st = calloc(1, sizeof(*st));

	if (!st)
		return -OPTIREDUCE_ENOMEM;
	c->alg_state = st;
	st->nsteps = 2 * (c->size - 1);
	st->unit = or_bop_block_elems(c);
	st->units = c->count / st->unit;
	st->max_chunk = or_chunk_len(st->units, c->size, 0) * st->unit;
	if (c->size == 1 || c->count == 0) {
		st->step = st->nsteps;
		return 0;
	}
	return bounded_setup(c, st);
}

/* ---- table entry ---- */

static int ring_start(struct or_coll *c)
{
	struct ring_state *st;
	size_t max_chunk = or_chunk_len(c->count, c->size, 0);

	if (c->bounded)
		return ring_bounded_start(c);
	st = calloc(1, sizeof(*st));
	if (!st)
		return -OPTIREDUCE_ENOMEM;
	c->alg_state = st;
	st->nsteps = 2 * (c->size - 1);
	st->seg_elems = c->segment_bytes / c->esize;
	if (st->seg_elems == 0)
		st->seg_elems = 1;
	st->nlanes = max_chunk ? (max_chunk + st->seg_elems - 1) / st->seg_elems : 0;
	if (st->nsteps == 0 || st->nlanes == 0)
		return 0;
	st->lanes = calloc(st->nlanes, sizeof(*st->lanes));
	st->scratch = malloc(max_chunk * c->esize);
	if (!st->lanes || !st->scratch)
		return -OPTIREDUCE_ENOMEM;
	return OPTIREDUCE_INPROGRESS;
}

static int ring_progress(struct or_coll *c)
{
	struct ring_state *st = c->alg_state;

	if (c->bounded) {
		struct ring_bstate *bst = c->alg_state;
		return bst->step == bst->nsteps ? 0 : bounded_progress(c, bst);
	}
	if (st->nsteps == 0)
		return 0;
	for (size_t k = st->lanes_done; k < st->nlanes; k++) {
		int ret = lane_progress(c, st, k);
		if (ret < 0)
			return ret;
		/* Lanes finish in any order; only the finished prefix is skipped later. */
		if (ret == 0 && k == st->lanes_done)
			st->lanes_done++;
	}
	return st->lanes_done == st->nlanes ? 0 : OPTIREDUCE_INPROGRESS;
}

static void ring_cleanup(struct or_coll *c)
{
	struct ring_state *st = c->alg_state;

	if (!st)
		return;
	if (c->bounded) {
		struct ring_bstate *bst = c->alg_state;
		free(bst->inbox);
		free(bst->result);
		free(bst->present);
		free(bst);
		c->alg_state = NULL;
		return;
	}
	free(st->lanes);
	free(st->scratch);
	free(st);
	c->alg_state = NULL;
}

const struct or_alg or_alg_ring = {
    .id = 0,
    .name = "ring",
    .desc = "Reduce-scatter then allgather around a ring, 2(N-1) steps (pipelined when "
            "exact); bandwidth-optimal, a drop costs every contribution upstream; bounded and "
            "exact",
    .channels = OR_CHAN_EXACT | OR_CHAN_BOUNDED,
    .start = ring_start,
    .progress = ring_progress,
    .cleanup = ring_cleanup,
};
