/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Repair inside the deadline (docs/design.md, "Repair inside the deadline").  A receiver
 * that knows what a sender's phase misses (the sender's LAST came, or the phase fell quiet)
 * asks that sender for exactly those packets in one request of ranges; the sender resends
 * them from the region it sent them from, paced by the channel's token bucket.  Requests
 * stop once the phase's deadline leaves less than a round trip, and in a phase followed by
 * sends of this rank's own, before its peers stop waiting for those.  Nothing is sent again
 * on a timer: a request is answered or not, and a receiver asks again only when the phase
 * stays quiet, at most OR_REPAIR_ROUNDS times.  Requests and resends are datagrams like any
 * other: validated on arrival, lost by injection like data.  What arrivals say is missing
 * is learnt in repair_arrive.c.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/bounded/feature.h"
#include "lib/bounded/features/repair.h"
#include "lib/bounded/ctl/timeout.h"

static double rtt_us(const struct or_chan *ch)
{
	return ch->repair && ch->repair->rtt_us > 0 ? ch->repair->rtt_us : OR_REPAIR_RTT0_US;
}

/* How long an unanswered request stands before it is asked again. */
static double wait_us(const struct or_chan *ch)
{
	double w = 2.0 * rtt_us(ch);
	return w > OR_REPAIR_WAIT_MIN_US ? w : OR_REPAIR_WAIT_MIN_US;
}

/* ---- the receiver's side: asking ---- */

/*
 * When the peers this rank sends to in the next phase began it, as far as this rank knows:
 * its earliest packet of that phase from one of them (or_now_us()), 0 when none came yet.
 */
static double next_begun_us(struct or_bounded_op *op, unsigned phase)
{
	struct or_phase *next = &op->ph[phase + 1];
	double first = 0;

	for (uint32_t i = 0, n = or_bd_inbound_slots(next, op->c->size); i < n; i++) {
		const struct or_inbound *in = &next->in[i];
		const struct or_outbound *o;
		if (!in->first_us || (first && in->first_us >= first))
			continue;
		o = or_bd_outbound_of(next, op->c->size, in->peer);
		if (o && o->npkts)
			first = in->first_us;
	}
	return first;
}

/* Whether this rank sends anything in the phase. */
static int sends_in(const struct or_bounded_op *op, unsigned phase)
{
	const struct or_phase *ph = &op->ph[phase];

	for (uint32_t i = 0, n = or_bd_slots(ph, op->c->size, 1); i < n; i++)
		if (ph->out[i].npkts)
			return 1;
	return 0;
}

/*
 * When repair of a begun phase must be over, on or_now_us()'s clock; requests stop, and early
 * timeout stops waiting for their answers, a round trip before.  By the phase's deadline;
 * and, when this rank sends in the next phase, a normal phase's length (t_C) before its
 * peers stop waiting for those sends (docs/design.md, "Repair inside the deadline"): that
 * much is left for them to reach peers that are descheduled and draining like any.  A peer
 * judges a sender it has heard nothing from in a phase absent absent_factor x t_C after it
 * began the phase, or meets the phase's deadline first, and then loses all that sender
 * sends it there: holding this phase for a packet would cost every peer a whole send.
 * Peers began the next phase when this one's first pass ended: at the later of its newest
 * first-pass packet here and this rank's own last send, or when one of them sent a packet
 * of it, if that was earlier.  One that did so before this rank's own sends were out
 * closed this phase without all of them and waits for this rank little or not at all.
 */
static double repair_end_us(struct or_chan *ch, struct or_bounded_op *op, unsigned phase,
                            double now)
{
	const struct or_phase *ph = &op->ph[phase];
	double end = ph->start_us + (double)ph->deadline_us, ref = op->rep->first_pass_us[phase];
	double begun, next_end;
	uint64_t t_c, absent = or_tmo_absent_us(or_chan_tmo(ch), op->c->count * op->c->esize, &t_c);

	if (!absent || phase + 1 >= op->nphases || !sends_in(op, phase + 1))
		return end;
	begun = next_begun_us(op, phase);
	if (begun && (!ph->sent_all || begun < ph->sent_all_us))
		return ph->start_us;
	if (!ph->sent_all)
		ref = now > ref ? now : ref;
	else if (ph->sent_all_us > ref)
		ref = ph->sent_all_us;
	if (begun && begun < ref)
		ref = begun;
	ref += (double)absent;
	/* Phase p ends by phase 0's anchor + (p + 1) deadlines (phase.c, phase_deadline). */
	next_end = or_bd_phase_anchor_us(&op->ph[0]) +
	           (double)(phase + 2) * or_bd_phase_base_deadline_us(&op->ph[0]);
	ref = (ref < next_end ? ref : next_end) - (double)t_c;
	return ref < end ? ref : end;
}

/* Which missing packets a request names. */
enum ask_what {
	ASK_GAPS,  /* passed over in the sender's order, not asked yet */
	ASK_NEW,   /* every one not asked yet */
	ASK_AGAIN, /* every one */
};

static int wanted(const struct or_rep_in *ri, size_t p, enum ask_what what)
{
	uint8_t st = ri->state ? ri->state[p] : OR_PKT_UNKNOWN;

	return what == ASK_AGAIN || (what == ASK_NEW ? st < OR_PKT_ASKED : st == OR_PKT_GAP);
}

/* A new request names its packets ASKED_NOW: those of earlier ones become ASKED. */
static void age_asked(struct or_rep_in *ri, size_t npkts)
{
	for (size_t p = 0; ri->state && p < npkts; p++)
		if (ri->state[p] == OR_PKT_ASKED_NOW)
			ri->state[p] = OR_PKT_ASKED;
}

/* Ranges of in's missing packets into r, marked asked; returns how many, *pkts the packets
 * they hold. */
static size_t missing_ranges(const struct or_inbound *in, struct or_rep_in *ri, enum ask_what what,
                             struct or_wire_range *r, size_t *pkts)
{
	size_t n = 0;

	*pkts = 0;
	for (size_t p = 0; p < in->npkts && n < OR_REPAIR_RANGES; p++) {
		if (in->seen[p] || !wanted(ri, p, what) || !or_rep_known_sent(in, ri, p))
			continue;
		if (!*pkts)
			age_asked(ri, in->npkts);
		if (ri->state) {
			ri->ngap -= ri->state[p] == OR_PKT_GAP;
			ri->state[p] = OR_PKT_ASKED_NOW;
		}
		if (n && r[n - 1].first + r[n - 1].count == p && r[n - 1].count < UINT16_MAX)
			r[n - 1].count++;
		else
			r[n++] = (struct or_wire_range){(uint32_t)p, 1};
		(*pkts)++;
	}
	return n;
}

/* The packets a request that could not be sent named (ASKED_NOW) are gaps again. */
static void unask(const struct or_inbound *in, struct or_rep_in *ri)
{
	for (size_t p = 0; ri->state && p < in->npkts; p++)
		if (ri->state[p] == OR_PKT_ASKED_NOW) {
			ri->state[p] = OR_PKT_GAP;
			ri->ngap++;
		}
}

static int send_request(struct or_chan *ch, struct or_bounded_op *op, unsigned step,
                        const struct or_inbound *in, struct or_rep_in *ri, enum ask_what what)
{
	struct or_wire_range r[OR_REPAIR_RANGES];
	uint8_t payload[OR_REPAIR_RANGES * OR_WIRE_RANGE_SIZE];
	struct or_wire_hdr h;
	size_t pkts, n = missing_ranges(in, ri, what, r, &pkts);

	if (!n)
		return 0;
	or_chan_header(ch, op->c->seq, (uint16_t)step, &h);
	h.flags = OR_WIRE_FLAG_REQUEST;
	h.length = (uint16_t)or_wire_ranges_encode(r, n, payload);
	/*
	 * Not sent: no send buffer was free (the first pass of a large phase keeps them all in
	 * use), or the endpoint refused.  What it named is a gap again, asked for at the next
	 * chance (at most once per OR_REPAIR_GAP_US); marked asked, it waited for a quiet phase
	 * and a round of its own, which a large phase rarely had left.
	 */
	if (!or_chan_send_lossy(ch, op, in->peer, &h, payload)) {
		unask(in, ri);
		ri->gap_req_us = or_now_us();
		return 0;
	}
	or_chan_spend(ch, h.length + OR_WIRE_HDR_SIZE);
	ri->req_us = or_now_us();
	if (what == ASK_GAPS)
		ri->gap_req_us = ri->req_us;
	if (what != ASK_GAPS || in->last_seen)
		ri->rounds++;
	ri->rtt_open = 1;
	ri->answered = 0;
	op->rep->requested += pkts;
	op->rep->asked[step] = 1;
	return 1;
}

/* Whether in's missing packets are worth asking for now, or will be: the sender is heard
 * from, can resend, and has not been asked too often. */
static int repairable(const struct or_inbound *in, const struct or_rep_in *ri)
{
	return in->npkts && in->got_pkts < in->npkts && (in->last_seen || in->got_pkts) &&
	       !ri->refused;
}

/* Asks the senders of an open phase for what they are known to miss; returns requests. */
static int ask(struct or_chan *ch, struct or_bounded_op *op, unsigned step, double now)
{
	struct or_phase *ph = &op->ph[step];
	struct or_repair *rep = op->rep;
	double rtt = rtt_us(ch), quiet_from;
	int sent = 0;

	if (!ph->begun || ph->closed || repair_end_us(ch, op, step, now) - now < rtt)
		return 0;
	for (uint32_t i = 0, n = or_bd_slots(ph, op->c->size, 0); i < n; i++) {
		struct or_inbound *in = &ph->in[i];
		struct or_rep_in *ri = &rep->in[step * rep->cap + i];
		if (!repairable(in, ri))
			continue;
		/* A packet the sender sent before one that came is lost: asked for at once.  After
		 * the LAST, gaps are asked-for packets whose request or resend was lost.  Each gap
		 * comes from an arrival that showed it lost, so gaps are not limited to the quiet
		 * rounds below (after the LAST they are to OR_REPAIR_ROUNDS_AFTER_LAST), and early
		 * timeout holds the phase for them (phase_hold). */
		if (ri->ngap && or_rep_gaps_askable(in, ri) &&
		    now - ri->gap_req_us >= OR_REPAIR_GAP_US)
			sent += send_request(ch, op, step, in, ri, ASK_GAPS);
		/* The sender's LAST says the rest is lost too: asked once, whatever the rounds. */
		if (in->last_seen && !ri->after_last) {
			ri->after_last = 1;
			sent += send_request(ch, op, step, in, ri, ASK_NEW);
			continue;
		}
		if (ri->rounds >= OR_REPAIR_ROUNDS)
			continue;
		/* Quiet for two round trips since the last request: asked again, all it is known to
		 * have sent (the rest is on its way: overlapping operations share the link). */
		quiet_from = ri->req_us > ph->last_arrival_us ? ri->req_us : ph->last_arrival_us;
		quiet_from = ri->quiet_us > quiet_from ? ri->quiet_us : quiet_from;
		if (now - quiet_from < wait_us(ch))
			continue;
		if (send_request(ch, op, step, in, ri, ASK_AGAIN))
			sent++;
		else
			ri->quiet_us = now;
	}
	return sent;
}

static int phase_hold(struct or_chan *ch, struct or_bounded_op *op, unsigned phase)
{
	struct or_phase *ph = &op->ph[phase];
	struct or_repair *rep = op->rep;
	double now = or_now_us(), end;
	int can_ask;

	if (!rep || !or_bd_repair_on(ch))
		return 0;
	end = repair_end_us(ch, op, phase, now);
	if (now >= end)
		return 0;
	can_ask = end - now >= rtt_us(ch);
	for (uint32_t i = 0, n = or_bd_slots(ph, op->c->size, 0); i < n; i++) {
		const struct or_rep_in *ri = &rep->in[phase * rep->cap + i];
		if (!repairable(&ph->in[i], ri))
			continue;
		/* Asked and not answered yet: the answer may come up to the end, also after the
		 * last round trip that fits has begun (the measured one is the shortest). */
		if (ri->req_us > 0 && now - ri->req_us < wait_us(ch))
			return 1;
		/* Still to ask, while a round trip fits. */
		if (can_ask &&
		    (ri->rounds < OR_REPAIR_ROUNDS || (ph->in[i].last_seen && !ri->after_last) ||
		     (ri->ngap && or_rep_gaps_askable(&ph->in[i], ri))))
			return 1;
	}
	return 0;
}

/* ---- each pass, and at the end of a phase ---- */

static int pump_op(struct or_chan *ch, struct or_bounded_op *op, double now)
{
	struct or_repair *rep = or_rep_of(op);
	int sent = 0;

	if (!rep)
		return 0;
	for (unsigned p = 0; p < op->nphases; p++) {
		struct or_phase *ph = &op->ph[p];
		sent += ask(ch, op, p, now);
		for (uint32_t i = 0, n = or_bd_slots(ph, op->c->size, 1);
		     or_rep_live(op, p) && i < n; i++)
			if (rep->out[p * rep->cap + i].pending)
				sent += or_rep_resend(ch, op, op->c->seq, (uint16_t)p, &ph->out[i],
				                      &rep->out[p * rep->cap + i], &rep->resent);
	}
	return sent;
}

static int progress(struct or_chan *ch)
{
	struct or_repair_chan *rc;
	double now = or_now_us();
	int sent = 0;

	if (!or_bd_repair_on(ch) || !(rc = or_rep_chan(ch)))
		return 0;
	or_chan_refill(ch);
	for (unsigned i = 0; or_chan_op(ch, i); i++)
		sent += pump_op(ch, or_chan_op(ch, i), now);
	for (unsigned k = 0; k < OR_REPAIR_KEPT; k++) {
		struct or_kept *kp = &rc->kept[k];
		for (uint32_t i = 0; kp->valid && i < kp->n; i++)
			if (kp->rout[i].pending)
				sent += or_rep_resend(ch, &rc->nobody, kp->seq, kp->step,
				                      &kp->out[i], &kp->rout[i], &rc->resent_kept);
	}
	return sent;
}

void or_bop_keep_sends(struct or_coll *c)
{
	c->bop->sends_kept = 1;
}

/* What repair did for op, in its status and for the controllers: the loss it recovered,
 * and each phase that asked judged by its first pass (docs/design.md, "Repair inside the
 * deadline"). */
static void op_status(struct or_chan *ch, struct or_bounded_op *op)
{
	struct optireduce_status *st = op->c->status;

	if (op->rep) {
		st->repair_requested = op->rep->requested;
		st->repair_resent = op->rep->resent;
		st->repair_recovered = op->rep->recovered;
		op->recovered_bytes = op->rep->recovered_bytes;
		for (unsigned p = 0; p < op->nphases && p < op->rep->nphases; p++)
			op->ph[p].first_pass_us = op->rep->asked[p] ? op->rep->first_pass_us[p] : 0;
	}
	if (ch->repair) {
		st->repair_resent += ch->repair->resent_kept;
		ch->repair->resent_kept = 0;
	}
}

const struct or_bd_feature or_repair_feature = {
    .name = "repair",
    .close = or_rep_close,
    .arrived = or_rep_arrived,
    .op_status = op_status,
    .op_end = or_rep_op_end,
    .phase_closed = or_rep_phase_closed,
    .phase_hold = phase_hold,
    .progress = progress,
};
