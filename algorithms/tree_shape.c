/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The double binary tree's shape: the in-order binary tree over positions, and the two
 * numberings of ranks as positions that make tree A's and tree B's interior nodes
 * disjoint (algorithms/tree.c, at its top, describes both).
 */
#include <string.h>

#include "tree_shape.h"

static uint32_t lowbit(uint32_t x)
{
	return x & (~x + 1);
}

static uint32_t log2u(uint32_t x)
{
	uint32_t l = 0;
	while (x >>= 1)
		l++;
	return l;
}

/* The in-order tree's root over positions [lo, hi]: the one with most trailing zeros. */
static uint32_t range_root(uint32_t lo, uint32_t hi)
{
	if (lo > hi)
		return 0;
	for (uint32_t b = 1u << log2u(hi); b; b >>= 1)
		if (hi / b * b >= lo)
			return hi / b * b;
	return 0;
}

static uint32_t pos_of(uint32_t t, uint32_t rank, uint32_t n)
{
	if (t == 0)
		return rank + 1;
	return n % 2 == 0 ? n - rank : (rank + 1) % n + 1;
}

static uint32_t rank_of(uint32_t t, uint32_t pos, uint32_t n)
{
	if (t == 0)
		return pos - 1;
	return n % 2 == 0 ? n - pos : (pos + n - 2) % n;
}

static uint32_t span_size(uint32_t pos, uint32_t n)
{
	uint32_t b = lowbit(pos), hi = pos + b - 1 < n ? pos + b - 1 : n;
	return hi - (pos - b + 1) + 1;
}

void or_tree_plan_node(struct or_tree_node *nd, uint32_t t, uint32_t rank, uint32_t n)
{
	uint32_t p = pos_of(t, rank, n), b = lowbit(p), lo = 1, hi = n, q = range_root(1, n);
	uint32_t kids[2];

	memset(nd, 0, sizeof(*nd));
	nd->parent = -1;
	while (q != p) {
		nd->parent = rank_of(t, q, n);
		nd->depth++;
		if (p < q)
			hi = q - 1;
		else
			lo = q + 1;
		q = range_root(lo, hi);
	}
	nd->level = log2u(b);
	nd->size = span_size(p, n);
	kids[0] = range_root(p - b + 1, p - 1);
	kids[1] = range_root(p + 1, p + b - 1 < n ? p + b - 1 : n);
	for (int i = 0; i < 2; i++) {
		if (!kids[i])
			continue;
		nd->child[nd->nchild] = rank_of(t, kids[i], n);
		nd->child_level[nd->nchild] = log2u(lowbit(kids[i]));
		nd->child_size[nd->nchild++] = span_size(kids[i], n);
	}
}

uint32_t or_tree_height(uint32_t n)
{
	return log2u(n);
}
