/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * algorithms/tree_shape.c for every communicator size up to 130: each tree is one tree
 * (one root of level H spanning every rank, parent and child lists that agree, a subtree's
 * size its own plus its children's), levels fall and depths grow by one down every edge,
 * so reduce steps by level and broadcast steps by depth are well ordered, and no rank is
 * an interior node of both trees, which is what spreads the load over the links.
 */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "algorithms/tree_shape.h"

#define MAX_N 130

static struct or_tree_node nodes[OR_TREE_TREES][MAX_N];

/* Failures of one tree of n ranks; each kind counted once per tree. */
static int tree_faults(uint32_t t, uint32_t n)
{
	uint32_t roots = 0, bad_edge = 0, bad_size = 0, H = or_tree_height(n);

	for (uint32_t r = 0; r < n; r++) {
		const struct or_tree_node *nd = &nodes[t][r];
		uint32_t sum = 1;

		if (nd->parent < 0) {
			roots++;
			bad_size += nd->size != n || nd->level != H || nd->depth != 0;
		} else {
			const struct or_tree_node *p = &nodes[t][nd->parent];
			int listed = 0;
			for (uint32_t i = 0; i < p->nchild; i++)
				listed += p->child[i] == r && p->child_level[i] == nd->level &&
				          p->child_size[i] == nd->size;
			bad_edge +=
			    listed != 1 || nd->depth != p->depth + 1 || nd->level >= p->level;
		}
		for (uint32_t i = 0; i < nd->nchild; i++) {
			bad_edge +=
			    nd->child[i] >= n || nodes[t][nd->child[i]].parent != (int64_t)r;
			sum += nd->child_size[i];
		}
		bad_size += sum != nd->size;
	}
	CHECK(roots == 1, "n=%u tree %u: one root (%u)", n, t, roots);
	CHECK(bad_edge == 0, "n=%u tree %u: parents and children agree (%u faults)", n, t,
	      bad_edge);
	CHECK(bad_size == 0, "n=%u tree %u: subtree sizes add up, root spans all (%u)", n, t,
	      bad_size);
	return roots != 1 || bad_edge || bad_size;
}

int main(void)
{
	for (uint32_t n = 1; n <= MAX_N; n++) {
		uint32_t both = 0;

		for (uint32_t t = 0; t < OR_TREE_TREES; t++)
			for (uint32_t r = 0; r < n; r++)
				or_tree_plan_node(&nodes[t][r], t, r, n);
		for (uint32_t t = 0; t < OR_TREE_TREES; t++)
			tree_faults(t, n);
		for (uint32_t r = 0; r < n; r++)
			both += nodes[0][r].nchild > 0 && nodes[1][r].nchild > 0;
		CHECK(both == 0, "n=%u: no rank interior in both trees (%u are)", n, both);
	}
	printf("%d failures\n", check_failures);
	return check_failures ? 1 : 0;
}
