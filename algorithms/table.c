/* SPDX-License-Identifier: BSD-3-Clause */
#include <strings.h>

#include "lib/op/algorithm.h"

/* Order is the id: keep it stable, append new algorithms at the end. */
const struct or_alg *const or_alg_table[] = {
    &or_alg_ring,
    &or_alg_transpose,
    &or_alg_recursive_doubling,
    &or_alg_tree,
    &or_alg_rabenseifner,
};

const int or_alg_count = (int)(sizeof(or_alg_table) / sizeof(or_alg_table[0]));

const struct or_alg *or_alg_by_name(const char *name)
{
	for (int i = 0; i < or_alg_count; i++)
		if (strcasecmp(or_alg_table[i]->name, name) == 0)
			return or_alg_table[i];
	return NULL;
}

const char *optireduce_algorithm_name(int id)
{
	return id >= 0 && id < or_alg_count ? or_alg_table[id]->name : NULL;
}

const char *optireduce_algorithm_desc(int id)
{
	return id >= 0 && id < or_alg_count ? or_alg_table[id]->desc : NULL;
}
