/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Recursive doubling allreduce: log2(N) exchanges of the whole buffer, for
 * small messages where the 2(N-1) steps of the ring cost more than the bytes.
 *
 * With N a power of two, in step s (1 <= s <= log2 N) rank r swaps its whole
 * partial result with rank r ^ 2^(s-1) and both combine the two halves; after
 * the last step every rank holds the reduction of all N contributions.  Each
 * rank sends and receives log2(N) full buffers, against 2(N-1)/N for the ring,
 * so this wins only while latency, not bandwidth, dominates.
 *
 * Other N: let p be the largest power of two below N and rem = N - p.  Ranks
 * 0 .. 2 rem - 1 pair up first (step 0): each even rank sends its buffer to
 * the odd rank above it and sits out.  The p remaining ranks (the odd ones
 * among the first 2 rem, then rem .. N-1 renumbered) run the power-of-two
 * schedule, and in the last step each odd rank of the first 2 rem sends the
 * result back down to its even partner, which receives it in place.  That
 * costs two extra latencies on those ranks only.
 *
 * Every combine takes the lower rank's operand first, on both ends of an
 * exchange, so the two partners compute the same bits; the fold and unfold
 * steps copy, so all ranks end bit-identical, floats and NaN included.
 *
 * Like the ring, the buffer is cut into segments no larger than the channel's
 * segment size, and each segment walks the steps on its own (a "lane"), so a
 * forced recursive doubling on a large buffer still pipelines and never sends
 * a message the provider cannot carry.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/op/algorithm.h"
#include "lib/kernels/reduce.h"

enum rd_action {
	RD_SEND,     /* send my buffer, keep it (fold: hand data up; unfold: hand result down) */
	RD_RECV_ADD, /* receive a lower rank's buffer and combine it with mine */
	RD_EXCHANGE, /* swap buffers with a partner and combine both */
	RD_RECV_SET, /* receive the final result in place */
};

struct rd_step {
	enum rd_action action;
	uint32_t peer;
	uint32_t tag_step; /* the same on both ends of a transfer */
};

struct rd_lane {
	uint32_t step; /* index into rd_state.steps */
	uint8_t recv_posted;
	uint8_t send_posted;
	or_xfer_t rx;
	or_xfer_t sx;
};

struct rd_state {
	uint32_t nsteps;
	struct rd_step steps[34]; /* fold + at most 32 exchanges + unfold */
	size_t nlanes;
	size_t seg_elems;
	size_t lanes_done;
	char *scratch; /* receive side, the size of the buffer */
	struct rd_lane *lanes;
};

/* Largest power of two <= n (n >= 1). */
static uint32_t pow2_floor(uint32_t n)
{
	uint32_t p = 1;
	while (p <= n / 2)
		p *= 2;
	return p;
}

/* This rank's schedule; tag steps are 0 fold, 1..log2 p exchanges, log2 p + 1 unfold. */
static void plan(struct rd_state *st, uint32_t rank, uint32_t n)
{
	uint32_t p = pow2_floor(n), rem = n - p, nr, unfold = 1, k = 0;

	for (uint32_t m = 1; m < p; m *= 2)
		unfold++;
	if (rank < 2 * rem && rank % 2 == 0) {
		st->steps[k++] = (struct rd_step){RD_SEND, rank + 1, 0};
		st->steps[k++] = (struct rd_step){RD_RECV_SET, rank + 1, unfold};
		st->nsteps = k;
		return;
	}
	if (rank < 2 * rem) {
		st->steps[k++] = (struct rd_step){RD_RECV_ADD, rank - 1, 0};
		nr = rank / 2;
	} else {
		nr = rank - rem;
	}
	for (uint32_t m = 1, s = 1; m < p; m *= 2, s++) {
		uint32_t pn = nr ^ m;
		uint32_t peer = pn < rem ? 2 * pn + 1 : pn + rem;
		st->steps[k++] = (struct rd_step){RD_EXCHANGE, peer, s};
	}
	if (rank < 2 * rem)
		st->steps[k++] = (struct rd_step){RD_SEND, rank - 1, unfold};
	st->nsteps = k;
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

static void mark_posted(uint8_t *posted, or_xfer_t *x)
{
	or_xfer_skip(x);
	*posted = 1;
}

static int lane_progress(struct or_coll *c, struct rd_state *st, size_t k)
{
	struct rd_lane *l = &st->lanes[k];
	size_t off = k * st->seg_elems;
	size_t len = c->count - off < st->seg_elems ? c->count - off : st->seg_elems;
	size_t bytes = len * c->esize;
	char *mine = (char *)c->rbuf + off * c->esize;
	char *theirs = st->scratch + off * c->esize;

	while (l->step < st->nsteps) {
		const struct rd_step *s = &st->steps[l->step];
		int sends = s->action == RD_SEND || s->action == RD_EXCHANGE;
		int recvs = !sends || s->action == RD_EXCHANGE;
		int ret;

		/* Receive first, so the transport can place the data instead of buffering it. */
		if (!l->recv_posted) {
			if (!recvs)
				mark_posted(&l->recv_posted, &l->rx);
			else if ((ret = post(or_coll_recv(c, s->peer, s->tag_step, (uint32_t)k,
			                                  s->action == RD_RECV_SET ? mine : theirs,
			                                  bytes, &l->rx),
			                     &l->recv_posted)))
				return ret;
		}
		if (!l->send_posted) {
			if (!sends)
				mark_posted(&l->send_posted, &l->sx);
			else if ((ret = post(or_coll_send(c, s->peer, s->tag_step, (uint32_t)k,
			                                  mine, bytes, &l->sx),
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
		if (s->action == RD_RECV_ADD || s->action == RD_EXCHANGE) {
			/* Lower rank's operand first, whichever end we are: both ends agree. */
			int low_first = s->peer < c->rank;
			ret = or_reduce3(mine, low_first ? theirs : mine, low_first ? mine : theirs,
			                 len, c->dtype, c->op);
			if (ret)
				return ret;
		}
		l->step++;
		l->recv_posted = l->send_posted = 0;
	}
	return 0;
}

static int rd_start(struct or_coll *c)
{
	struct rd_state *st;

	st = calloc(1, sizeof(*st));
	if (!st)
		return -OPTIREDUCE_ENOMEM;
	c->alg_state = st;
	if (c->size < 2 || c->count == 0)
		return 0;
	plan(st, c->rank, c->size);
	st->seg_elems = c->segment_bytes / c->esize;
	if (st->seg_elems == 0)
		st->seg_elems = 1;
	st->nlanes = (c->count + st->seg_elems - 1) / st->seg_elems;
	st->lanes = calloc(st->nlanes, sizeof(*st->lanes));
	st->scratch = malloc(c->count * c->esize);
	if (!st->lanes || !st->scratch)
		return -OPTIREDUCE_ENOMEM;
	return OPTIREDUCE_INPROGRESS;
}

static int rd_progress(struct or_coll *c)
{
	struct rd_state *st = c->alg_state;

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

static void rd_cleanup(struct or_coll *c)
{
	struct rd_state *st = c->alg_state;

	if (!st)
		return;
	free(st->lanes);
	free(st->scratch);
	free(st);
	c->alg_state = NULL;
}

const struct or_alg or_alg_recursive_doubling = {
    .id = 2,
    .name = "recursive_doubling",
    .desc = "Pairwise exchange of the whole buffer, log2(N) steps (+2 when N is not a "
            "power of two); latency-optimal for small messages",
    .channels = OR_CHAN_EXACT,
    .start = rd_start,
    .progress = rd_progress,
    .cleanup = rd_cleanup,
};
