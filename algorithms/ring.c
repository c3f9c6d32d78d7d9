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
 */
#include <stdlib.h>

#include "algorithm.h"
#include "../lib/reduce.h"

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
		char *rdst = rs ? st->scratch + k * st->seg_elems * c->esize : rbuf + roff * c->esize;
		int ret;

		if (!l->recv_posted) {
			if (rlen == 0) {
				l->rx.done = 1;
				l->rx.error = 0;
				l->recv_posted = 1;
			} else if ((ret = post(or_coll_recv(c, left, l->step, (uint32_t)k, rdst,
							    rlen * c->esize, &l->rx),
					       &l->recv_posted)))
				return ret;
		}
		if (!l->send_posted) {
			if (slen == 0) {
				l->sx.done = 1;
				l->sx.error = 0;
				l->send_posted = 1;
			} else if ((ret = post(or_coll_send(c, right, l->step, (uint32_t)k,
							    rbuf + soff * c->esize,
							    slen * c->esize, &l->sx),
					       &l->send_posted)))
				return ret;
		}
		if (!l->recv_posted || !l->send_posted || !l->rx.done || !l->sx.done)
			return OPTIREDUCE_INPROGRESS;
		if (l->rx.error)
			return l->rx.error;
		if (l->sx.error)
			return l->sx.error;
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

static int ring_start(struct or_coll *c)
{
	struct ring_state *st;
	size_t max_chunk = or_chunk_len(c->count, c->size, 0);

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
	free(st->lanes);
	free(st->scratch);
	free(st);
	c->alg_state = NULL;
}

const struct or_alg or_alg_ring = {
	.id = 0,
	.name = "ring",
	.desc = "Reduce-scatter then allgather around a ring, 2(N-1) pipelined steps; "
		"bandwidth-optimal",
	.channels = OR_CHAN_EXACT,
	.start = ring_start,
	.progress = ring_progress,
	.cleanup = ring_cleanup,
};
