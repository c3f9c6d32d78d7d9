/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Loss injection for tests and experiments (parameter inject_loss): the sender drops a
 * seeded random fraction of its data packets instead of handing them to the endpoint.
 */
#include "lib/bounded/bounded_int.h"

/* splitmix64: cheap, seedable, good enough to choose which packets to drop. */
static uint64_t mix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* 1 if the next data packet is to be dropped. */
int or_bd_inject_drop(struct or_bounded *b)
{
	double p = or_bd_param_d(b, OR_P_INJECT_LOSS);

	return p > 0 && (double)(mix64(&b->inject_state) >> 11) * 0x1p-53 < p;
}
