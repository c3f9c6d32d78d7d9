/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The algorithm table, the interface between the core (lib/) and the algorithms
 * (algorithms/).  An algorithm is a schedule of sends, receives and
 * reductions over the channel services of lib/op/coll.h; adding one is one file
 * plus one line in algorithms/table.c.
 */
#ifndef OR_ALGORITHM_H
#define OR_ALGORITHM_H

#include "coll.h"

#define OR_CHAN_EXACT   0x1u
#define OR_CHAN_BOUNDED 0x2u

struct or_alg {
	int id;
	const char *name;
	const char *desc;
	unsigned channels; /* OR_CHAN_* it can run on */
	/* Set up c->alg_state and post the first transfers. */
	int (*start)(struct or_coll *c);
	/* Advance: 0 done, OPTIREDUCE_INPROGRESS, or a negative code. */
	int (*progress)(struct or_coll *c);
	/* Free c->alg_state; called once after done or error. */
	void (*cleanup)(struct or_coll *c);
};

extern const struct or_alg *const or_alg_table[];
extern const int or_alg_count;

const struct or_alg *or_alg_by_name(const char *name);

extern const struct or_alg or_alg_ring;
extern const struct or_alg or_alg_transpose;
extern const struct or_alg or_alg_recursive_doubling;
extern const struct or_alg or_alg_tree;
extern const struct or_alg or_alg_rabenseifner;

#endif /* OR_ALGORITHM_H */
