/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The double binary tree's shape: which rank is whose parent and child in each of the
 * two trees, at which level and depth (algorithms/tree.c says why this shape).
 */
#ifndef OR_TREE_SHAPE_H
#define OR_TREE_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#define OR_TREE_TREES     2
#define OR_TREE_MAX_CHILD 2

/* This rank in one tree. */
struct or_tree_node {
	int64_t parent; /* -1: root */
	uint32_t level;
	uint32_t depth;
	uint32_t size; /* contributions in the subtree, this rank's included */
	uint32_t nchild;
	uint32_t child[OR_TREE_MAX_CHILD];
	uint32_t child_level[OR_TREE_MAX_CHILD];
	uint32_t child_size[OR_TREE_MAX_CHILD];
	size_t off, len; /* the tree's part of the buffer, elements (set by the algorithm) */
};

/* The roots' level H for n ranks: floor(log2 n). */
uint32_t or_tree_height(uint32_t n);

/* Rank's node in tree t (0 or 1) of n ranks; off and len are left 0. */
void or_tree_plan_node(struct or_tree_node *nd, uint32_t t, uint32_t rank, uint32_t n);

#endif
