/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rabenseifner's allreduce: reduce-scatter by recursive halving, then allgather by
 * recursive doubling (Thakur, Rabenseifner and Gropp, "Optimization of Collective
 * Communication Operations in MPICH", 2005).  Each rank sends and receives 2(N-1)/N of
 * the buffer, as on the ring, in 2 log2 N steps, as few as recursive doubling's log2 N
 * twice over: it is meant for medium messages (about 8-256 KiB), where the ring's 2(N-1)
 * dependent steps cost latency and recursive doubling's whole-buffer exchanges cost
 * bandwidth.
 *
 * With N = p a power of two, the buffer is cut into p blocks (the first count % p one
 * element longer, so sizes differ by at most one; some are empty when count < p).
 * Reduce-scatter step s (1 <= s <= log2 p) pairs rank r with r ^ m, m = p / 2^s: of the
 * 2m blocks both hold partial results of, r keeps the m aligned blocks that contain block
 * r, sends the other m to its partner and combines what it receives into what it keeps.
 * After log2 p steps rank r holds the full result of block r alone.  The allgather runs
 * the masks back up (m = 1, 2, .., p/2): r sends the m blocks it holds to r ^ m and
 * receives the partner's m straight into the result.
 *
 * Other N: fold first, as recursive_doubling.c does.  Let p be the largest power of two
 * below N and rem = N - p; ranks 0 .. 2 rem - 1 pair up, each even one hands its buffer
 * to the odd one above and sits out, the p remaining ranks (the odd ones among the first
 * 2 rem, then rem .. N-1) run the schedule above as ranks 0 .. p-1, and at the end each
 * odd rank of the first 2 rem hands the result back down.
 *
 * Bit-identical results: the full result of each block is computed on one rank only, the
 * one that holds it after the reduce-scatter; the allgather and the unfold copy it, bit
 * for bit, to every other rank.  That rank's combines are a fixed sequence too: partners
 * and block bounds depend only on (rank, N, count), every combine takes the lower rank's
 * operand first, and segments only cut element-wise combines into pieces.  So every rank
 * ends with the same bits, floats and NaN included, whatever the arrival order.
 *
 * Every transfer is cut into messages of at most the channel's segment size.  Every
 * receive of the operation is posted when it starts, each step's into a range of its own
 * (scratch for the steps that combine, else the result itself), because a message that
 * finds no receive may stall its whole connection: libfabric's net provider stops reading
 * a peer's socket while a large unexpected message waits, so a partner one step ahead
 * would block the message this step waits for.  A range written by a later step's
 * receive is one this rank has finished with: its data arrives only after the partner
 * got what this rank sent from it.  Sends go step by step (a step's sends read what the
 * previous step combined), and a step's receives are combined, in any order, once the
 * previous step is done.  Tag steps are 0 fold, 1 .. log2 p reduce-scatter, log2 p + 1
 * .. 2 log2 p allgather, 2 log2 p + 1 unfold; a message's segment is its index in the
 * step.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/op/algorithm.h"
#include "lib/kernels/reduce.h"

struct rab_step {
	uint32_t peer;
	uint32_t tag;      /* the same on both ends of a transfer */
	size_t soff, slen; /* elements of rbuf sent */
	size_t roff, rlen; /* elements of rbuf received */
	int combine;       /* receive into scratch and combine, else straight into rbuf */
};

struct rab_state {
	uint32_t nsteps;
	uint32_t step;
	struct rab_step steps[2 * 32 + 2]; /* fold + 2 log2 p <= 62 exchanges + unfold */
	size_t rbase[2 * 32 + 3];          /* step k's receives: rx[rbase[k] .. rbase[k + 1]) */
	size_t xbase[2 * 32 + 2];          /* elements of scratch before step k's range */
	size_t seg_elems;
	size_t rposted;        /* receives posted, of every step, in step order */
	size_t sposted, sdone; /* this step's sends posted, and finished in order */
	size_t rlanded;        /* this step's receives combined */
	char *scratch;         /* every combining step's range, in step order */
	or_xfer_t *rx;         /* every receive of the operation */
	or_xfer_t *sx;         /* one per segment of the largest send */
	uint8_t *landed;       /* receive i is combined */
};

/* Largest power of two <= n (n >= 1). */
static uint32_t pow2_floor(uint32_t n)
{
	uint32_t p = 1;
	while (p <= n / 2)
		p *= 2;
	return p;
}

/* Elements [*off, *off + return) of blocks b .. b + m - 1 of p. */
static size_t blocks(const struct or_coll *c, uint32_t p, uint32_t b, uint32_t m, size_t *off)
{
	*off = or_chunk_start(c->count, p, b);
	return or_chunk_start(c->count, p, b + m) - *off;
}

/* The exchange with schedule rank pn at mask m, tag tag, for schedule rank nr. */
static struct rab_step exchange(const struct or_coll *c, uint32_t p, uint32_t rem, uint32_t nr,
                                uint32_t m, uint32_t tag, int halving)
{
	uint32_t pn = nr ^ m;
	struct rab_step s = {pn < rem ? 2 * pn + 1 : pn + rem, tag, 0, 0, 0, 0, halving};
	size_t moff, mlen = blocks(c, p, nr & ~(m - 1), m, &moff);
	size_t toff, tlen = blocks(c, p, pn & ~(m - 1), m, &toff);

	/* Reduce-scatter sends the partner's blocks, allgather this rank's own. */
	s.soff = halving ? toff : moff;
	s.slen = halving ? tlen : mlen;
	s.roff = halving ? moff : toff;
	s.rlen = halving ? mlen : tlen;
	return s;
}

/* This rank's schedule. */
static void plan(struct rab_state *st, const struct or_coll *c)
{
	uint32_t rank = c->rank, p = pow2_floor(c->size), rem = c->size - p, lg = 0, nr, k = 0;
	size_t n = c->count;

	for (uint32_t m = 1; m < p; m *= 2)
		lg++;
	if (rank < 2 * rem && rank % 2 == 0) {
		/* Fold: hand the contribution to the odd rank above and sit out. */
		st->steps[k++] = (struct rab_step){rank + 1, 0, 0, n, 0, 0, 0};
		/* Unfold: the odd rank hands the result back, straight into rbuf. */
		st->steps[k++] = (struct rab_step){rank + 1, 2 * lg + 1, 0, 0, 0, n, 0};
		st->nsteps = k;
		return;
	}
	nr = rank < 2 * rem ? rank / 2 : rank - rem;
	/* Fold: take the even rank's contribution and combine it with this one. */
	if (rank < 2 * rem)
		st->steps[k++] = (struct rab_step){rank - 1, 0, 0, 0, 0, n, 1};
	/* Reduce-scatter: halve the blocks this rank combines, farthest partner first. */
	for (uint32_t m = p / 2, tag = 1; m > 0; m /= 2, tag++)
		st->steps[k++] = exchange(c, p, rem, nr, m, tag, 1);
	/* Allgather: double the blocks this rank holds, nearest partner first. */
	for (uint32_t m = 1, tag = lg + 1; m < p; m *= 2, tag++)
		st->steps[k++] = exchange(c, p, rem, nr, m, tag, 0);
	/* Unfold: hand the result back to the even rank that sat out. */
	if (rank < 2 * rem)
		st->steps[k++] = (struct rab_step){rank - 1, 2 * lg + 1, 0, n, 0, 0, 0};
	st->nsteps = k;
}

static size_t nsegs(const struct rab_state *st, size_t len)
{
	return (len + st->seg_elems - 1) / st->seg_elems;
}

/* Elements of segment i of a transfer of len elements. */
static size_t seg_len(const struct rab_state *st, size_t len, size_t i)
{
	size_t lo = i * st->seg_elems;
	return len - lo < st->seg_elems ? len - lo : st->seg_elems;
}

/* Where receive i (of step k, segment i - rbase[k]) lands. */
static char *recv_dst(struct or_coll *c, struct rab_state *st, uint32_t k, size_t i)
{
	const struct rab_step *s = &st->steps[k];
	size_t off = (i - st->rbase[k]) * st->seg_elems;

	if (s->combine)
		return st->scratch + (st->xbase[k] + off) * c->esize;
	return (char *)c->rbuf + (s->roff + off) * c->esize;
}

/* Posts what the transport takes of every step's receives, then of this step's sends. */
static int step_post(struct or_coll *c, struct rab_state *st, const struct rab_step *s)
{
	size_t es = c->esize, seg = st->seg_elems;
	uint32_t k = st->step;
	int ret = 0;

	while (st->rposted < st->rbase[st->nsteps]) {
		size_t i = st->rposted;
		const struct rab_step *rs;

		while (i >= st->rbase[k + 1])
			k++;
		rs = &st->steps[k];
		ret = or_coll_recv(c, rs->peer, rs->tag, (uint32_t)(i - st->rbase[k]),
		                   recv_dst(c, st, k, i),
		                   seg_len(st, rs->rlen, i - st->rbase[k]) * es, &st->rx[i]);
		if (ret)
			break;
		st->rposted++;
	}
	if (ret && ret != -OPTIREDUCE_EAGAIN)
		return ret;
	/* Sends go on even when a receive must wait: the peer may be waiting for them. */
	while (st->sposted < nsegs(st, s->slen)) {
		size_t i = st->sposted;

		ret = or_coll_send(c, s->peer, s->tag, (uint32_t)i,
		                   (char *)c->rbuf + (s->soff + i * seg) * es,
		                   seg_len(st, s->slen, i) * es, &st->sx[i]);
		if (ret == -OPTIREDUCE_EAGAIN)
			return 0;
		if (ret)
			return ret;
		st->sposted++;
	}
	return 0;
}

/* Combines each of this step's receives that landed, in any order: segments do not overlap. */
static int step_collect(struct or_coll *c, struct rab_state *st, const struct rab_step *s)
{
	size_t es = c->esize, seg = st->seg_elems, base = st->rbase[st->step];
	size_t end = st->rposted < st->rbase[st->step + 1] ? st->rposted : st->rbase[st->step + 1];
	/* Lower rank's operand first, whichever end this is: the order is fixed. */
	int low_first = s->peer < c->rank;
	int ret;

	for (size_t i = base; i < end; i++) {
		char *mine = (char *)c->rbuf + (s->roff + (i - base) * seg) * es;
		char *theirs = recv_dst(c, st, st->step, i);

		if (st->landed[i] || !or_xfer_done(&st->rx[i]))
			continue;
		if ((ret = or_xfer_error(&st->rx[i])))
			return ret;
		if (s->combine &&
		    (ret = or_reduce3(mine, low_first ? theirs : mine, low_first ? mine : theirs,
		                      seg_len(st, s->rlen, i - base), c->dtype, c->op)))
			return ret;
		st->landed[i] = 1;
		st->rlanded++;
	}
	/* Sends only need finishing; a prefix scan is enough. */
	while (st->sdone < st->sposted && or_xfer_done(&st->sx[st->sdone])) {
		if ((ret = or_xfer_error(&st->sx[st->sdone])))
			return ret;
		st->sdone++;
	}
	return 0;
}

static int rab_progress(struct or_coll *c)
{
	struct rab_state *st = c->alg_state;
	int ret;

	while (st->step < st->nsteps) {
		const struct rab_step *s = &st->steps[st->step];

		if ((ret = step_post(c, st, s)) || (ret = step_collect(c, st, s)))
			return ret;
		if (st->rlanded < nsegs(st, s->rlen) || st->sdone < nsegs(st, s->slen))
			return OPTIREDUCE_INPROGRESS;
		/* Step done: the next one's sends may read what this one combined. */
		st->sposted = st->rlanded = st->sdone = 0;
		st->step++;
	}
	return 0;
}

static int rab_start(struct or_coll *c)
{
	struct rab_state *st = calloc(1, sizeof(*st));
	size_t scratch = 0, maxseg = 0;

	if (!st)
		return -OPTIREDUCE_ENOMEM;
	c->alg_state = st;
	if (c->size < 2 || c->count == 0)
		return 0;
	st->seg_elems = c->segment_bytes / c->esize;
	if (st->seg_elems == 0)
		st->seg_elems = 1;
	plan(st, c);
	/* Lay out every step's receives and scratch, and size the sends for the largest step. */
	for (uint32_t k = 0; k < st->nsteps; k++) {
		const struct rab_step *s = &st->steps[k];

		st->rbase[k + 1] = st->rbase[k] + nsegs(st, s->rlen);
		st->xbase[k] = scratch;
		if (s->combine)
			scratch += s->rlen;
		if (nsegs(st, s->slen) > maxseg)
			maxseg = nsegs(st, s->slen);
	}
	st->scratch = malloc(scratch * c->esize + 1);
	st->rx = calloc(st->rbase[st->nsteps] + 1, sizeof(*st->rx));
	st->sx = calloc(maxseg + 1, sizeof(*st->sx));
	st->landed = calloc(st->rbase[st->nsteps] + 1, 1);
	if (!st->scratch || !st->rx || !st->sx || !st->landed)
		return -OPTIREDUCE_ENOMEM;
	return rab_progress(c);
}

static void rab_cleanup(struct or_coll *c)
{
	struct rab_state *st = c->alg_state;

	if (!st)
		return;
	free(st->scratch);
	free(st->rx);
	free(st->sx);
	free(st->landed);
	free(st);
	c->alg_state = NULL;
}

const struct or_alg or_alg_rabenseifner = {
    .id = 4,
    .name = "rabenseifner",
    .desc = "Reduce-scatter by recursive halving, allgather by recursive doubling: "
            "2 log2(N) steps (+2 when N is not a power of two) moving 2(N-1)/N of the "
            "buffer; for medium messages; exact only",
    .channels = OR_CHAN_EXACT,
    .start = rab_start,
    .progress = rab_progress,
    .cleanup = rab_cleanup,
};
