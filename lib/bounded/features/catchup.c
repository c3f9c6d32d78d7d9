/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * catch_up (docs/design.md, "Catching up"): a sender whose whole contribution to an
 * operation's first phase was cut is waited for, up to the deadline, in the next
 * operation's first phase, once.  In data-parallel training the ranks meet only in the
 * allreduce: a rank that fell behind (its own final phase held by resends behind cross
 * traffic) enters the next operation late, its peers judge it absent and do not wait, and
 * it stays behind, cut from operation after operation.  One operation that waits for it
 * brings it back in step; a rank that is still cut after that wait is a straggler, and
 * the next operation does not wait for it again.
 */
#include <stdlib.h>

#include "../bounded_int.h"

static int catch_up_on(const struct or_bounded *b)
{
	return or_bd_param_i(b, OR_P_CATCH_UP) != 0;
}

void or_bd_catchup_begin(struct or_bounded *b, struct or_phase *ph, uint32_t size)
{
	if (!catch_up_on(b) || !b->catch_up)
		return;
	for (uint32_t i = 0, n = or_bd_inbound_slots(ph, size); i < n; i++) {
		struct or_inbound *in = &ph->in[i];
		if (in->npkts && in->peer < size && b->catch_up[in->peer]) {
			in->waited = 1;
			b->catch_up[in->peer] = 0;
		}
	}
}

void or_bd_catchup_closed(struct or_bounded *b, const struct or_phase *ph, uint32_t size)
{
	if (!catch_up_on(b))
		return;
	if (!b->catch_up && !(b->catch_up = calloc(size, 1)))
		return; /* out of memory: nobody is waited for, as with catch_up off */
	for (uint32_t i = 0, n = or_bd_inbound_slots(ph, size); i < n; i++) {
		const struct or_inbound *in = &ph->in[i];
		if (in->npkts && in->peer < size)
			b->catch_up[in->peer] = !in->got_pkts && !in->waited;
	}
}

void or_bd_catchup_free(struct or_bounded *b)
{
	free(b->catch_up);
	b->catch_up = NULL;
}
