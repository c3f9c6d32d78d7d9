/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tree allreduce: reduce up a tree, broadcast down, over a double binary tree.
 *
 * Two trees, each carrying half the buffer, as NCCL does.  Tree A is the in-order binary
 * tree over positions 1..N with position p = rank + 1: the node at p, whose lowest set bit
 * is b, spans positions [p - b + 1, min(p + b - 1, N)], its children are the roots of the
 * two sides, and its level (height) is log2 b.  Odd positions are leaves, so the odd ranks
 * are tree A's interior nodes.  Tree B is the same shape over positions that make the even
 * ranks interior: mirrored (p = N - rank) when N is even, shifted (p = (rank + 1) % N + 1)
 * when N is odd.  Every rank is then an interior node of at most one tree, so it receives
 * at most two half buffers and sends at most two half buffers each way: the trees share the
 * links instead of loading one rank.  docs/design.md, "Tree", says why this shape and not
 * a binomial tree.
 *
 * Every node's schedule follows from its level l (H is the roots') and its depth d: it sends
 * its partial sum up in step l (its children, of lower levels, have sent theirs by then),
 * receives the result in step H + d - 1 and forwards it in step H + d.  A step's senders
 * are then equally many hops from the leaves (up) or from the roots (down), so they are
 * ready at about the same time: with the level also down the tree, the rank that is a leaf
 * of both trees (N odd) took its two halves in one step from parents one hop apart, and the
 * step closed on the early one's data before the late one's began (a whole half lost).
 *
 * Exact channel: each tree's half is cut into segments of the channel's segment size, and
 * each segment walks up and down the tree on its own (a "lane"), so the tree pipelines:
 * while the root reduces segment k, the leaves send segment k + 1.  A node adds its
 * children in a fixed order and the result is copied down from the root, so every rank ends
 * with bit-identical results.
 *
 * Bounded channel: one phase per step, 2H phases, each with its own deadline (reduce steps
 * report in status slot 0, broadcast steps in slot 1).  Every partial sum travels with the
 * number of contributions it holds (its subtree's size) and is rescaled, block by block, by
 * what arrived of it; a block of which nothing came from a child is scaled from the
 * contributions present to those expected, so each block a node sends up estimates exactly
 * its subtree.  Down the tree a block that lost everything falls back to the node's own
 * partial sum times N / its subtree's size.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/op/algorithm.h"
#include "lib/kernels/reduce.h"
#include "tree_shape.h"

#define TREES     OR_TREE_TREES
#define MAX_CHILD OR_TREE_MAX_CHILD

enum lane_stage { UP_RECV, UP_SEND, DOWN_SEND, LANE_DONE };

struct tree_lane {
	uint8_t tree;
	uint8_t stage;
	uint8_t posted[2 * MAX_CHILD + 2];
	size_t seg;
	/* [0, nchild) from children, [MAX_CHILD, +nchild) to children, then up, then down */
	or_xfer_t x[2 * MAX_CHILD + 2];
};

#define X_UP   (2 * MAX_CHILD)
#define X_DOWN (2 * MAX_CHILD + 1)

struct tree_state {
	struct or_tree_node node[TREES];
	uint32_t height; /* H: the roots' level */
	size_t max_len;  /* elements of the larger half */
	char *inbox;     /* [TREES][MAX_CHILD][max_len] */
	/* exact */
	size_t seg_elems;
	size_t nlanes, lanes_done;
	struct tree_lane *lanes;
	/* bounded */
	unsigned phase;
	size_t unit;
	char *result;
	uint32_t *present, *got; /* per block of a half */
};

static char *inbox_of(const struct or_coll *c, const struct tree_state *st, uint32_t t, uint32_t i)
{
	return st->inbox + ((size_t)t * MAX_CHILD + i) * st->max_len * c->esize;
}

/* unit: the halves are whole multiples of it (Hadamard blocks when bounded). */
static void plan(struct or_coll *c, struct tree_state *st, size_t unit)
{
	size_t units = c->count / unit;

	st->height = or_tree_height(c->size);
	for (uint32_t t = 0; t < TREES; t++) {
		or_tree_plan_node(&st->node[t], t, c->rank, c->size);
		st->node[t].off = or_chunk_start(units, TREES, t) * unit;
		st->node[t].len = or_chunk_len(units, TREES, t) * unit;
	}
	st->max_len = st->node[0].len;
}

/* ---- exact channel ---- */

static int post(int ret, uint8_t *posted)
{
	if (ret == -OPTIREDUCE_EAGAIN)
		return 0;
	if (ret < 0)
		return ret;
	*posted = 1;
	return 0;
}

/* 1 when every transfer in slots [lo, lo + n) is posted and done, or a negative error. */
static int slots_done(const struct tree_lane *l, unsigned lo, unsigned n)
{
	for (unsigned i = lo; i < lo + n; i++)
		if (!l->posted[i] || !or_xfer_done(&l->x[i]))
			return 0;
	for (unsigned i = lo; i < lo + n; i++)
		if (or_xfer_error(&l->x[i]))
			return or_xfer_error(&l->x[i]);
	return 1;
}

/* Segment range of a lane: elements [*off, *off + return) of the buffer. */
static size_t lane_range(const struct tree_state *st, const struct tree_lane *l, size_t *off)
{
	const struct or_tree_node *nd = &st->node[l->tree];
	size_t lo = l->seg * st->seg_elems;

	*off = nd->off + lo;
	return nd->len - lo < st->seg_elems ? nd->len - lo : st->seg_elems;
}

/*
 * Up: receive every child's segment (posted first, so the transport places it), add them
 * in child order, send the sum to the parent and post the receive of the result into the
 * same memory: the parent's result cannot come before the sum it is computed from has left.
 */
static int lane_up(struct or_coll *c, struct tree_state *st, struct tree_lane *l)
{
	const struct or_tree_node *nd = &st->node[l->tree];
	size_t off, len = lane_range(st, l, &off), es = c->esize;
	uint32_t step = 2u * l->tree;
	char *mine = (char *)c->rbuf + off * es;
	int ret;

	if (l->stage == UP_RECV) {
		for (uint32_t i = 0; i < nd->nchild; i++) {
			char *dst = inbox_of(c, st, l->tree, i) + (off - nd->off) * es;
			if (!l->posted[i] &&
			    (ret = post(or_coll_recv(c, nd->child[i], step, (uint32_t)l->seg, dst,
			                             len * es, &l->x[i]),
			                &l->posted[i])))
				return ret;
		}
		if ((ret = slots_done(l, 0, nd->nchild)) <= 0)
			return ret;
		for (uint32_t i = 0; i < nd->nchild; i++) {
			ret = or_reduce(mine, inbox_of(c, st, l->tree, i) + (off - nd->off) * es,
			                len, c->dtype, c->op);
			if (ret)
				return ret;
		}
		l->stage = UP_SEND;
	}
	if (nd->parent < 0)
		return 1;
	if (!l->posted[X_DOWN] &&
	    (ret = post(or_coll_recv(c, (uint32_t)nd->parent, step + 1, (uint32_t)l->seg, mine,
	                             len * es, &l->x[X_DOWN]),
	                &l->posted[X_DOWN])))
		return ret;
	if (!l->posted[X_UP] &&
	    (ret = post(or_coll_send(c, (uint32_t)nd->parent, step, (uint32_t)l->seg, mine,
	                             len * es, &l->x[X_UP]),
	                &l->posted[X_UP])))
		return ret;
	return slots_done(l, X_UP, 2);
}

static int lane_progress(struct or_coll *c, struct tree_state *st, struct tree_lane *l)
{
	const struct or_tree_node *nd = &st->node[l->tree];
	size_t off, len = lane_range(st, l, &off), es = c->esize;
	int ret;

	if (l->stage == UP_RECV || l->stage == UP_SEND) {
		if ((ret = lane_up(c, st, l)) <= 0)
			return ret < 0 ? ret : OPTIREDUCE_INPROGRESS;
		l->stage = DOWN_SEND;
	}
	if (l->stage == DOWN_SEND) {
		for (uint32_t i = 0; i < nd->nchild; i++) {
			if (!l->posted[MAX_CHILD + i] &&
			    (ret = post(or_coll_send(c, nd->child[i], 2u * l->tree + 1,
			                             (uint32_t)l->seg, (char *)c->rbuf + off * es,
			                             len * es, &l->x[MAX_CHILD + i]),
			                &l->posted[MAX_CHILD + i])))
				return ret;
		}
		if ((ret = slots_done(l, MAX_CHILD, nd->nchild)) <= 0)
			return ret < 0 ? ret : OPTIREDUCE_INPROGRESS;
		l->stage = LANE_DONE;
	}
	return 0;
}

static int exact_start(struct or_coll *c, struct tree_state *st)
{
	size_t k = 0;

	st->seg_elems = c->segment_bytes / c->esize ? c->segment_bytes / c->esize : 1;
	for (uint32_t t = 0; t < TREES; t++)
		st->nlanes += (st->node[t].len + st->seg_elems - 1) / st->seg_elems;
	if (st->nlanes == 0)
		return 0;
	st->lanes = calloc(st->nlanes, sizeof(*st->lanes));
	st->inbox = malloc((size_t)TREES * MAX_CHILD * st->max_len * c->esize);
	if (!st->lanes || !st->inbox)
		return -OPTIREDUCE_ENOMEM;
	for (uint32_t t = 0; t < TREES; t++)
		for (size_t s = 0; s * st->seg_elems < st->node[t].len; s++, k++) {
			st->lanes[k].tree = (uint8_t)t;
			st->lanes[k].seg = s;
		}
	return OPTIREDUCE_INPROGRESS;
}

static int exact_progress(struct or_coll *c, struct tree_state *st)
{
	for (size_t k = st->lanes_done; k < st->nlanes; k++) {
		int ret = lane_progress(c, st, &st->lanes[k]);
		if (ret < 0)
			return ret;
		/* Lanes finish in any order; only the finished prefix is skipped later. */
		if (ret == 0 && k == st->lanes_done)
			st->lanes_done++;
	}
	return st->lanes_done == st->nlanes ? 0 : OPTIREDUCE_INPROGRESS;
}

/* ---- bounded channel ---- */

static uint16_t contrib16(uint32_t n)
{
	return (uint16_t)(n > 65535 ? 65535 : n);
}

/* Every phase's regions are declared up front, so a packet that comes early has a home. */
static int bounded_declare(struct or_coll *c, struct tree_state *st)
{
	uint32_t h = st->height;
	size_t es = c->esize;
	int ret = 0;

	for (uint32_t t = 0; t < TREES && !ret; t++) {
		const struct or_tree_node *nd = &st->node[t];
		char *mine = (char *)c->rbuf + nd->off * es, *res = st->result + nd->off * es;
		if (!nd->len)
			continue;
		for (uint32_t i = 0; i < nd->nchild && !ret; i++) {
			ret = or_bop_recv_region(c, nd->child_level[i], nd->child[i],
			                         inbox_of(c, st, t, i), nd->len * es);
			if (!ret)
				ret = or_bop_send_region(c, h + nd->depth, nd->child[i], res,
				                         nd->len * es, contrib16(c->size));
		}
		if (nd->parent >= 0 && !ret) {
			ret = or_bop_send_region(c, nd->level, (uint32_t)nd->parent, mine,
			                         nd->len * es, contrib16(nd->size));
			if (!ret)
				ret = or_bop_recv_region(c, h + nd->depth - 1, (uint32_t)nd->parent,
				                         res, nd->len * es);
		}
	}
	return ret;
}

static int bounded_start(struct or_coll *c, struct tree_state *st)
{
	size_t blocks = st->max_len / st->unit + 1;
	int ret;

	/* Reused across operations: fresh buffers cost a 16 MiB operation 20-35 ms. */
	st->inbox = or_bop_scratch(c, 0, (size_t)TREES * MAX_CHILD * st->max_len * c->esize + 1);
	st->result = or_bop_scratch(c, 1, (c->count + 1) * c->esize);
	st->present = calloc(2 * blocks, sizeof(uint32_t));
	if (!st->inbox || !st->result || !st->present)
		return -OPTIREDUCE_ENOMEM;
	st->got = st->present + blocks;
	ret = or_bop_set_phases(c, 2 * st->height, TREES * MAX_CHILD, st->height);
	if (!ret)
		ret = bounded_declare(c, st);
	if (ret)
		return ret;
	or_bop_regions_ready(c);
	ret = or_bop_phase_begin(c, 0);
	return ret ? ret : OPTIREDUCE_INPROGRESS;
}

/*
 * Reduce step `phase` closed: add what the children of this level sent.  A block that
 * missed a child is scaled from the contributions it holds to those it should, so it
 * leaves as an estimate of the whole subtree.
 */
static int bounded_reduce(struct or_coll *c, struct tree_state *st, uint32_t t, unsigned phase)
{
	const struct or_tree_node *nd = &st->node[t];
	size_t es = c->esize, be = st->unit, nb = nd->len / be;
	char *mine = (char *)c->rbuf + nd->off * es;
	uint32_t before = 1, expect = 0;
	int ret;

	for (uint32_t i = 0; i < nd->nchild; i++)
		if (nd->child_level[i] < phase)
			before += nd->child_size[i];
	for (size_t b = 0; b < nb; b++)
		st->got[b] = before;
	for (uint32_t i = 0; i < nd->nchild; i++) {
		if (nd->child_level[i] != phase)
			continue;
		memset(st->present, 0, nb * sizeof(uint32_t));
		ret = or_bop_accumulate(c, phase, nd->child[i], mine, nd->len, st->present);
		if (ret < 0)
			return ret;
		c->status->contributions_expected += (uint64_t)nb * nd->child_size[i];
		c->status->contributions_missing += (uint64_t)ret * nd->child_size[i];
		expect += nd->child_size[i];
		for (size_t b = 0; b < nb; b++)
			st->got[b] += st->present[b] ? nd->child_size[i] : 0;
	}
	for (size_t b = 0; b < nb && expect; b++) {
		if (st->got[b] == before + expect)
			continue;
		ret = or_reduce_scale(mine + b * be * es, be, c->dtype,
		                      (double)(before + expect) / (double)st->got[b]);
		if (ret)
			return ret;
		c->status->blocks_fallback++;
	}
	return 0;
}

/* Phase `phase` closed: reduce what came up, or finalize what came down. */
static int bounded_step(struct or_coll *c, struct tree_state *st, unsigned phase)
{
	size_t es = c->esize;
	int ret;

	for (uint32_t t = 0; t < TREES; t++) {
		const struct or_tree_node *nd = &st->node[t];
		if (!nd->len)
			continue;
		if (phase < st->height) {
			if ((ret = bounded_reduce(c, st, t, phase)))
				return ret;
			if (phase + 1 == st->height && nd->parent < 0)
				memcpy(st->result + nd->off * es, (char *)c->rbuf + nd->off * es,
				       nd->len * es);
		} else if (nd->parent >= 0 && phase == st->height + nd->depth - 1) {
			ret = or_bop_finalize_region_from(c, phase, (uint32_t)nd->parent,
			                                  (char *)c->rbuf + nd->off * es, nd->size,
			                                  nd->len);
			if (ret < 0)
				return ret;
			c->status->blocks_fallback += (uint64_t)ret;
		}
	}
	return 0;
}

static int bounded_progress(struct or_coll *c, struct tree_state *st)
{
	while (st->phase < 2 * st->height) {
		int ret = or_bop_phase_try_close(c, st->phase);
		if (ret < 0)
			return ret;
		if (!ret)
			return OPTIREDUCE_INPROGRESS;
		if ((ret = bounded_step(c, st, st->phase)))
			return ret;
		if (++st->phase < 2 * st->height && (ret = or_bop_phase_begin(c, st->phase)))
			return ret;
	}
	c->rbuf = st->result; /* the core decodes from here: no copy back */
	return 0;
}

/* ---- table entry ---- */

static int tree_start(struct or_coll *c)
{
	struct tree_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -OPTIREDUCE_ENOMEM;
	c->alg_state = st;
	st->unit = c->bounded ? or_bop_block_elems(c) : 1;
	if (c->size < 2 || c->count == 0)
		return 0;
	plan(c, st, st->unit);
	return c->bounded ? bounded_start(c, st) : exact_start(c, st);
}

static int tree_progress(struct or_coll *c)
{
	struct tree_state *st = c->alg_state;

	if (c->size < 2 || c->count == 0)
		return 0;
	return c->bounded ? bounded_progress(c, st) : exact_progress(c, st);
}

static void tree_cleanup(struct or_coll *c)
{
	struct tree_state *st = c->alg_state;

	if (!st)
		return;
	if (!c->bounded) /* bounded: inbox and result are the communicator's scratch */
		free(st->inbox);
	free(st->lanes);
	free(st->present);
	free(st);
	c->alg_state = NULL;
}

const struct or_alg or_alg_tree = {
    .id = 3,
    .name = "tree",
    .desc = "Double binary tree: reduce up, broadcast down, each tree half the data, "
            "2 floor(log2 N) steps (pipelined in segments when exact); bounded and exact",
    .channels = OR_CHAN_EXACT | OR_CHAN_BOUNDED,
    .start = tree_start,
    .progress = tree_progress,
    .cleanup = tree_cleanup,
};
