/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multicast's feature (docs/design.md, "Multicast"): the probes a communicator's ranks send
 * to the group on creation, received, and the share of the rate a multicast phase sends at,
 * learnt from each operation.  The group's endpoint and which phases use it are the
 * centre's (mcast_group.c).
 */
#include "lib/bounded/feature.h"
#include "lib/bounded/mcast.h"
#include "lib/bounded/ctl/pacing.h"
#include "lib/bounded/ctl/timeout.h"
#include "lib/bounded/wire.h"

/* A probe (OR_WIRE_KIND_PROBE): heard over the group, or its unicast copy. */
int or_mcast_probe_rx(struct or_chan *ch, const struct or_wire_hdr *h, const uint8_t *payload,
                      uint32_t src, int check_source)
{
	struct or_wire_expect e = {.comm_id = ch->comm->id, .nranks = ch->comm->size};
	int ret;

	(void)payload;
	ret = or_wire_validate_probe(h, &e);
	if (!or_chan_admit(ch, ret, h, src, check_source, "multicast probe"))
		return 0;
	if (!ch->mc->heard)
		return 0;
	if (h->offset == OR_WIRE_PROBE_UNICAST && !(ch->mc->heard[h->sender] & 2)) {
		ch->mc->heard[h->sender] |= 2;
		ch->mc->nbegun++;
		ch->mc->begun_us = or_now_us();
	} else if (h->offset != OR_WIRE_PROBE_UNICAST && !(ch->mc->heard[h->sender] & 1)) {
		ch->mc->heard[h->sender] |= 1;
		ch->mc->nheard++;
	}
	return 0;
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
 * the network's: such an operation teaches pacing and the deadline nothing.
 */
static void op_finish(struct or_chan *ch, struct or_bounded_op *op)
{
	double lo = 1.0 / (double)(ch->comm->size > 1 ? ch->comm->size - 1 : 1);
	const struct or_pacer *pace = or_chan_pacer(ch);
	double mc, uc;
	int over, bcast = 0;

	for (unsigned p = 0; op->ph && p < op->nphases; p++)
		bcast |= op->ph[p].bcast > 0;
	if (!ch->mc->on || !bcast || op->c->count * op->c->esize < OR_LOSS_MIN_PKTS * ch->payload)
		return;
	/* Begun before the share rose, auto's phase went to each peer: no try to judge. */
	if (ch->mc->share > lo && !op->bcast_multicast)
		return;
	mc = phase_loss(op, 1);
	uc = phase_loss(op, 0);
	over = mc > uc + OR_MCAST_EXCESS_LOSS;
	/* Ranks change phase at different times, so a try overflows its receivers' unicast
	 * phase as well: loss of the whole operation well above the usual level counts too. */
	if (ch->mc->share > lo && pace->loss_ops >= OR_PACE_WARMUP &&
	    ch->own_loss > 2.0 * pace->loss_avg + OR_MCAST_EXCESS_LOSS)
		over = 1;
	if (ch->mc->share > lo) {
		if (!over)
			return;
		ch->mc->share = lo;
		ch->mc->clean = 0;
		if (ch->mc->clean_ops < OR_MCAST_LAST_TRY)
			ch->mc->clean_ops *= 2;
		or_log(OR_LOG_DEBUG,
		       "multicast phase lost %.3f at the whole rate (others %.3f): 1/%u of it, "
		       "again after %u clean operations",
		       mc, uc, ch->comm->size - 1, ch->mc->clean_ops);
		/* This controller's try: pacing and the deadline learn nothing from it. */
		op->controllers_skip = 1;
		return;
	}
	/* Before its deadline is calibrated, a try that overflows receivers waits out a bound
	 * not yet learnt (initial_us for a class's first operations): 4 s for one 4 MiB
	 * operation, against 0.54 s. */
	if (!over && !or_tmo_calibrated(or_chan_tmo(ch), op->user_bytes))
		return;
	ch->mc->clean = over ? 0 : ch->mc->clean + 1;
	if (ch->mc->clean >= ch->mc->clean_ops) {
		ch->mc->share = 1.0;
		ch->mc->clean = 0;
		or_log(OR_LOG_DEBUG, "multicast phase: the whole rate");
	}
	return;
}

const struct or_bd_feature or_mcast_feature = {
    .name = "multicast",
    .op_finish = op_finish,
};
