/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which phases go to the multicast group (docs/design.md, "Multicast"): those that send one
 * region to every peer, at a share of the rate, while the group takes their datagrams.
 */
#include <stdio.h>

#include "lib/bounded/bounded_int.h"

void or_bd_mcast_failed(struct or_bounded *b, int code)
{
	if (!b->mc.on)
		return;
	b->mc.on = 0;
	snprintf(b->mc.why, sizeof(b->mc.why), "the group refused a datagram (%s): unicast since",
	         or_dg_send_error(b->ep));
	or_log(OR_LOG_WARN, "multicast off: %s (%s)", b->mc.why, optireduce_strerror(code));
}

/*
 * Where a receiver's ingress binds, a group phase at 1/(N-1) is at best as fast as unicast,
 * and in training it was slower (docs/design.md, "Multicast"): with auto such a phase goes
 * to each peer until a try at the whole rate showed that the group gains; with on, to
 * the group at the share.  Decided at the phase's first send, so that a phase never
 * changes route half-way: 1, the group, at *share of pace.rate_mbps; 0, each peer.
 */
int or_bd_mcast_phase(const struct or_bounded *b, const struct or_bounded_op *op,
                      struct or_phase *ph)
{
	if (ph->mc_share == 0) {
		if (b->mc.want == OR_MCAST_AUTO && b->mc.share < 1.0)
			ph->mc_share = -1.0;
		else
			ph->mc_share = or_bd_mcast_share(b, op);
	}
	return ph->mc_share > 0;
}

/*
 * mc.share is of what each sender's link carries, since that is what every receiver gets
 * N-1 times.  Where the link refuses sends the pacer holds a nominal rate far above it
 * (pacing.c, hold-link), and 1/(N-1) of that overflowed every receiver: 4 hosts at 100
 * Mbit/s, 400 nominal, a third of it lost the first operation's whole multicast phase.  So
 * the base is what the link took, over this operation's earlier phases when they were
 * refused sends, else as the pacer learnt it.
 */
double or_bd_mcast_share(const struct or_bounded *b, const struct or_bounded_op *op)
{
	double rate = b->pace.rate_mbps, base = rate;

	if (or_bd_op_took_mbps(op) > 0 && or_bd_op_link_bound(op))
		base = or_bd_op_took_mbps(op);
	else if (b->pace.took_mbps > 0)
		base = b->pace.took_mbps;
	if (!(base > 0) || base > rate)
		base = rate;
	return b->mc.share * base / rate;
}

/*
 * Every peer of ph gets one region: the same bytes from the same buffer, with the same
 * contributions.  Decided at the phase's first send, when its regions are all declared.
 */
int or_bd_phase_bcast(const struct or_bounded *b, struct or_phase *ph)
{
	const struct or_outbound *o0;

	if (ph->bcast)
		return ph->bcast > 0;
	ph->bcast = -1;
	if (b->ch.comm->size < 3 || ph->norder != b->ch.comm->size - 1)
		return 0;
	o0 = &ph->out[ph->order[0]];
	if (!o0->buf)
		return 0;
	for (uint32_t i = 1; i < ph->norder; i++) {
		const struct or_outbound *o = &ph->out[ph->order[i]];
		if (o->buf != o0->buf || o->bytes != o0->bytes || o->contrib != o0->contrib ||
		    o->stride != o0->stride || o->npkts != o0->npkts)
			return 0;
	}
	ph->bcast = o0->npkts > 0 ? 1 : -1;
	return ph->bcast > 0;
}
