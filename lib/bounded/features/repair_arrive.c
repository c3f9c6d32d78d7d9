/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What arrivals teach a receiver about repair (docs/design.md, "Repair inside the
 * deadline"): a first-pass packet says which packets its sender sent before it are gaps;
 * a resend, and a packet after an answered request, say which asked-for packets were lost
 * again; an answer to the latest request times a round trip.  repair.c asks from this.
 */
#include <stdlib.h>

#include "lib/bounded/features/repair.h"

/*
 * A packet of the first pass came: every packet its sender sent before it and that has not
 * come is a gap, lost on a path that keeps order.  Send positions only move forward, so
 * each is looked at once.
 */
static void note_order(struct or_chan *ch, struct or_bounded_op *op, const struct or_inbound *in,
                       struct or_rep_in *ri, uint32_t offset)
{
	size_t n = in->npkts, nth;

	if (n < 2)
		return;
	if (!ri->state) {
		size_t block = op->block_elems * op->c->esize;
		ri->state = calloc(n, 1);
		if (!ri->state)
			return;
		ri->stride = or_bd_stripe_stride(n, (block + ch->payload - 1) / ch->payload);
		ri->inv = or_rep_inverse(ri->stride, n);
	}
	/* Below 2^32 / 64 packets per region: the product fits in 64 bits. */
	nth = (size_t)((uint64_t)(offset / ch->payload) * ri->inv % n);
	for (; ri->passed < nth; ri->passed++) {
		size_t idx = (size_t)((uint64_t)ri->passed * ri->stride % n);
		if (!in->seen[idx] && ri->state[idx] == OR_PKT_UNKNOWN) {
			ri->state[idx] = OR_PKT_GAP;
			ri->ngap++;
		}
	}
	if (ri->passed == nth)
		ri->passed = nth + 1;
}

/*
 * Asked-for packets that can no longer be on their way are lost again (their request or
 * their resend), and become gaps, asked for at once instead of when the phase falls quiet.
 * A sender resends what a request names in packet order, before anything it sends after,
 * and paths keep order: a resend of packet q says that the packets below q its latest
 * request named, and those earlier requests named, were resent before it (upto = q, when
 * it answers the latest request); a first-pass packet that comes after the latest request
 * was answered says the same of all of them (upto = npkts).  Only packets the sender is
 * known to have sent count: behind a packet that came, or all once its LAST is in.
 */
static void lost_again(const struct or_inbound *in, struct or_rep_in *ri, size_t upto)
{
	size_t n = in->npkts;

	for (size_t p = 0; ri->state && p < n; p++) {
		uint8_t st = ri->state[p];
		if (in->seen[p] || st < OR_PKT_ASKED || (st == OR_PKT_ASKED_NOW && p >= upto))
			continue;
		if (!or_rep_known_sent(in, ri, p))
			continue;
		ri->state[p] = OR_PKT_GAP;
		ri->ngap++;
	}
}

/*
 * The round trip is the shortest of the last samples.  It decides whether a request still
 * fits before a phase's repair ends, which is asked near the phase's end, when the first
 * pass has drained from the queues; most samples come from gaps asked for while the first
 * pass still queues ahead of the request and its resend, and are longer than the round trip
 * the phase's end meets (docs/design.md, "Repair inside the deadline").  A request that
 * comes too late costs only its datagram: the phase still closes by its deadline.  A phase
 * that asks nothing leaves it as it was.
 */
static void rtt_sample(struct or_repair_chan *rc, double us)
{
	unsigned n;

	rc->rtt_sample[rc->nsamples++ % OR_REPAIR_RTT_SAMPLES] = us;
	n = rc->nsamples < OR_REPAIR_RTT_SAMPLES ? rc->nsamples : OR_REPAIR_RTT_SAMPLES;
	rc->rtt_us = rc->rtt_sample[0];
	for (unsigned i = 1; i < n; i++)
		if (rc->rtt_sample[i] < rc->rtt_us)
			rc->rtt_us = rc->rtt_sample[i];
}

void or_rep_arrived(struct or_chan *ch, struct or_bounded_op *op,
                          const struct or_wire_hdr *h, const struct or_inbound *in)
{
	struct or_repair *rep = or_bd_repair_on(ch) ? or_rep_of(op) : NULL;
	struct or_rep_in *ri;
	double now;

	if (!rep)
		return;
	now = ch->rx_clock_us;
	ri = &rep->in[h->step * rep->cap + (uint32_t)(in - op->ph[h->step].in)];
	if (!(h->flags & OR_WIRE_FLAG_RESENT)) {
		rep->first_pass_us[h->step] = now;
		note_order(ch, op, in, ri, h->offset);
		/* Once: until the next request is answered there is nothing new to learn, and a
		 * scan per packet would cost a 16 MiB phase npkts^2. */
		if (ri->answered) {
			ri->answered = 0;
			lost_again(in, ri, in->npkts);
		}
		return;
	}
	rep->recovered++;
	rep->recovered_bytes += h->length;
	if (ri->state && ri->state[h->offset / ch->payload] == OR_PKT_ASKED_NOW) {
		ri->answered = 1;
		lost_again(in, ri, h->offset / ch->payload);
	}
	/* Only an answer to the latest request times it: a resend that an earlier one asked for
	 * can arrive just after a new request goes, and timed it at a few microseconds. */
	if (!ri->rtt_open || !or_rep_chan(ch) ||
	    (ri->state && ri->state[h->offset / ch->payload] != OR_PKT_ASKED_NOW))
		return;
	ri->rtt_open = 0;
	rtt_sample(ch->repair, now - ri->req_us);
}
