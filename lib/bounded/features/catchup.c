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

#include "lib/bounded/feature.h"

static int catch_up_on(const struct or_chan *ch)
{
	return or_chan_param_i(ch, OR_P_CATCH_UP) != 0;
}

static void phase_begin(struct or_chan *ch, struct or_bounded_op *op, unsigned phase)
{
	struct or_phase *ph = &op->ph[phase];
	uint32_t size = op->c->size;

	if (phase != 0 || !catch_up_on(ch) || !ch->catch_up)
		return;
	for (uint32_t i = 0, n = or_bd_inbound_slots(ph, size); i < n; i++) {
		struct or_inbound *in = &ph->in[i];
		if (in->npkts && in->peer < size && ch->catch_up[in->peer]) {
			in->waited = 1;
			ch->catch_up[in->peer] = 0;
		}
	}
}

static void phase_closed(struct or_chan *ch, struct or_bounded_op *op, unsigned phase)
{
	const struct or_phase *ph = &op->ph[phase];
	uint32_t size = op->c->size;

	if (phase != 0 || !catch_up_on(ch))
		return;
	if (!ch->catch_up && !(ch->catch_up = calloc(size, 1)))
		return; /* out of memory: nobody is waited for, as with catch_up off */
	for (uint32_t i = 0, n = or_bd_inbound_slots(ph, size); i < n; i++) {
		const struct or_inbound *in = &ph->in[i];
		if (in->npkts && in->peer < size)
			ch->catch_up[in->peer] = !in->got_pkts && !in->waited;
	}
}

static void close_chan(struct or_chan *ch)
{
	free(ch->catch_up);
	ch->catch_up = NULL;
}

const struct or_bd_feature or_catchup_feature = {
    .name = "catch_up",
    .close = close_chan,
    .phase_begin = phase_begin,
    .phase_closed = phase_closed,
};
