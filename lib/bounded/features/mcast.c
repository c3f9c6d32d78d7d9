/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multicast on the bounded channel (docs/design.md, "Multicast"), on the data path: which
 * phases go to the group, its probes and looped-back datagrams on receipt, a group that
 * refuses sends.  The group itself (join, probe, decision) is mcast_group.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bounded_int.h"
#include "../wire.h"

unsigned or_bounded_mcast_state(const struct or_bounded *b)
{
	if (!b)
		return 0;
	return OR_MCAST_PRESENT | ((unsigned)b->mc.want & OR_MCAST_WANT) |
	       (b->mc.joined ? OR_MCAST_JOINED : 0);
}

int or_bd_mcast_rx(struct or_bounded *b, const struct or_wire_hdr *h, uint32_t src,
                   int check_source)
{
	struct or_wire_expect e = {.comm_id = b->comm->id, .nranks = b->comm->size};
	int ret;

	/* Our own datagram, looped back where IP_MULTICAST_LOOP could not be cleared. */
	if (b->mc.joined && h->sender == b->comm->rank && src == b->comm->rank)
		return 1;
	if (!(h->flags & OR_WIRE_FLAG_PROBE))
		return 0;
	ret = or_wire_validate_probe(h, &e);
	if (ret == OR_WIRE_ECOMM) {
		b->stats.packets_stranger++;
		return 1;
	}
	if (ret || h->sender == b->comm->rank ||
	    (check_source && src < b->comm->size && src != h->sender)) {
		b->stats.packets_invalid++;
		or_log(OR_LOG_PACKET, "dropped multicast probe: %s",
		       ret ? or_wire_reject_name(ret) : "not from its sender");
		return 1;
	}
	if (!b->mc.heard)
		return 1;
	if (h->offset == OR_WIRE_PROBE_UNICAST && !(b->mc.heard[h->sender] & 2)) {
		b->mc.heard[h->sender] |= 2;
		b->mc.nbegun++;
		b->mc.begun_us = or_now_us();
	} else if (h->offset != OR_WIRE_PROBE_UNICAST && !(b->mc.heard[h->sender] & 1)) {
		b->mc.heard[h->sender] |= 1;
		b->mc.nheard++;
	}
	return 1;
}

int or_bounded_mcast_describe(const struct or_bounded *b, char *buf, size_t len)
{
	snprintf(buf, len, "%s", b->mc.why[0] ? b->mc.why : "not decided");
	return b->mc.on;
}

void or_bd_mcast_failed(struct or_bounded *b, int code)
{
	if (!b->mc.on)
		return;
	b->mc.on = 0;
	snprintf(b->mc.why, sizeof(b->mc.why), "the group refused a datagram (%s): unicast since",
	         or_dg_send_error(b->ep));
	or_log(OR_LOG_WARN, "multicast off: %s (%s)", b->mc.why, optireduce_strerror(code));
}

/* Lost of the multicast phase (mc 1) or of the others, as a fraction of what was expected. */
static double phase_loss(const struct or_bounded_op *op, int mc)
{
	uint64_t exp = 0, got = 0;

	for (unsigned p = 0; p < op->nphases; p++) {
		if ((op->ph[p].bcast > 0) != mc)
			continue;
		exp += op->ph[p].bytes_expected;
		got += op->ph[p].bytes_received;
	}
	return exp ? 1.0 - (double)got / (double)exp : 0.0;
}

/*
 * Sent at the whole rate, a multicast phase gives each receiver N-1 senders' whole rate:
 * where egress is the limit that is the gain, where ingress is it overflows receivers.  So
 * it starts at each receiver's unicast share, 1/(N-1), and tries the whole rate after
 * clean_ops operations whose multicast phase lost no more than their others; one that did
 * brings it back, and the next try waits twice as long (docs/design.md, "Multicast").
 * Every rank sends and receives alike, so its own loss speaks for its receivers.  What
 * a try at the whole rate loses is this controller's to judge, as a deadline's cut is not
 * the network's: 1 tells the caller to teach pacing and the deadline nothing from it.
 */
int or_bd_mcast_op_end(struct or_bounded *b, const struct or_bounded_op *op)
{
	double lo = 1.0 / (double)(b->comm->size > 1 ? b->comm->size - 1 : 1);
	double mc, uc;
	int over, bcast = 0;

	for (unsigned p = 0; op->ph && p < op->nphases; p++)
		bcast |= op->ph[p].bcast > 0;
	if (!b->mc.on || !bcast || op->c->count * op->c->esize < OR_LOSS_MIN_PKTS * b->payload)
		return 0;
	/* Begun before the share rose, auto's phase went to each peer: no try to judge. */
	if (b->mc.share > lo && !op->bcast_multicast)
		return 0;
	mc = phase_loss(op, 1);
	uc = phase_loss(op, 0);
	over = mc > uc + OR_MCAST_EXCESS_LOSS;
	/* Ranks change phase at different times, so a try overflows its receivers' unicast
	 * phase as well: loss of the whole operation well above the usual level counts too. */
	if (b->mc.share > lo && b->pace.loss_ops >= OR_PACE_WARMUP &&
	    b->own_loss > 2.0 * b->pace.loss_avg + OR_MCAST_EXCESS_LOSS)
		over = 1;
	if (b->mc.share > lo) {
		if (!over)
			return 0;
		b->mc.share = lo;
		b->mc.clean = 0;
		if (b->mc.clean_ops < OR_MCAST_LAST_TRY)
			b->mc.clean_ops *= 2;
		or_log(OR_LOG_DEBUG,
		       "multicast phase lost %.3f at the whole rate (others %.3f): 1/%u of it, "
		       "again after %u clean operations",
		       mc, uc, b->comm->size - 1, b->mc.clean_ops);
		return 1;
	}
	/* Before its deadline is calibrated, a try that overflows receivers waits out the
	 * initial bound: 4 s for one 4 MiB operation, against 0.54 s. */
	if (!over && !or_tmo_calibrated(&b->tmo, op->user_bytes))
		return 0;
	b->mc.clean = over ? 0 : b->mc.clean + 1;
	if (b->mc.clean >= b->mc.clean_ops) {
		b->mc.share = 1.0;
		b->mc.clean = 0;
		or_log(OR_LOG_DEBUG, "multicast phase: the whole rate");
	}
	return 0;
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
	if (b->comm->size < 3 || ph->norder != b->comm->size - 1)
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
