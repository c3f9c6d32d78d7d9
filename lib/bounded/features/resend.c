/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sender's side of repair (docs/design.md, "Repair inside the deadline"): requests are
 * validated like any datagram (communicator, sender, operation window, phase, and every
 * range inside the region this rank sent that peer), the asked-for packets resent from the
 * regions they were sent from, paced by the channel's token bucket.  A phase that cannot be
 * resent any more is refused, so the asker stops waiting.  The final phase is copied when
 * it closes, since the core decodes it in place right after.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/bounded/features/repair.h"

static struct or_outbound *outbound_to(struct or_phase *ph, uint32_t size, uint32_t peer)
{
	for (uint32_t i = 0, n = or_bd_slots(ph, size, 1); ph->out && i < n; i++)
		if (ph->out[i].peer == peer && ph->out[i].npkts)
			return &ph->out[i];
	return NULL;
}

/*
 * Marks the asked-for packets of o that have been sent (a receiver asks for the gaps it sees
 * while the phase still sends); 0, or -1 when a range lies outside o.
 */
static int mark_wanted(struct or_rep_out *ro, const struct or_outbound *o, const uint8_t *payload,
                       size_t len)
{
	struct or_wire_range r[OR_REPAIR_RANGES];
	int n = or_wire_ranges_decode(payload, len, o->npkts, r, OR_REPAIR_RANGES);
	size_t inv = o->next < o->npkts ? or_rep_inverse(o->stride, o->npkts) : 0;

	if (n < 0)
		return -1;
	if (!ro->want && !(ro->want = calloc(o->npkts, 1)))
		return 0;
	for (int k = 0; k < n; k++)
		for (size_t p = r[k].first; p < (size_t)r[k].first + r[k].count; p++)
			if (!ro->want[p] &&
			    (o->next >= o->npkts || (uint64_t)p * inv % o->npkts < o->next)) {
				ro->want[p] = 1;
				ro->pending++;
			}
	return 0;
}

/* Resends what o's peer asked for while tokens last; returns the packets resent. */
int or_rep_resend(struct or_chan *ch, struct or_bounded_op *op, uint64_t seq, uint16_t step,
                  const struct or_outbound *o, struct or_rep_out *ro, uint64_t *count)
{
	int sent = 0;

	for (size_t k = 0; ro->pending && k < o->npkts; k++) {
		size_t p = (ro->cursor + k) % o->npkts, off = p * ch->payload;
		size_t len = o->bytes - off < ch->payload ? o->bytes - off : ch->payload;
		struct or_wire_hdr h;
		if (!ro->want[p])
			continue;
		if (!or_chan_may_send(ch, len + OR_WIRE_HDR_SIZE)) {
			ro->cursor = p;
			return sent;
		}
		or_chan_header(ch, seq, step, &h);
		h.flags = OR_WIRE_FLAG_RESENT;
		h.offset = (uint32_t)off;
		h.length = (uint16_t)len;
		h.contrib = o->contrib;
		if (!or_chan_send_lossy(ch, op, o->peer, &h, o->buf + off)) {
			ro->cursor = p;
			return sent;
		}
		or_chan_spend(ch, len + OR_WIRE_HDR_SIZE);
		ro->want[p] = 0;
		ro->pending--;
		(*count)++;
		sent++;
	}
	/* The next request is resent in packet order from its lowest: the asker infers from
	 * that order which resends were lost (repair.c, lost_again). */
	ro->cursor = 0;
	return sent;
}

/* "Cannot resend": the phase is gone here, so the asker stops waiting for it. */
static void refuse(struct or_chan *ch, const struct or_wire_hdr *req)
{
	struct or_wire_hdr h;

	or_chan_header(ch, req->seq, req->step, &h);
	h.flags = OR_WIRE_FLAG_CONTROL | OR_WIRE_FLAG_RESENT;
	or_chan_send_lossy(ch, &ch->repair->nobody, req->sender, &h, (const uint8_t *)"");
}

static struct or_kept *kept_of(struct or_repair_chan *rc, uint64_t seq, uint16_t step)
{
	for (unsigned k = 0; k < OR_REPAIR_KEPT; k++)
		if (rc->kept[k].valid && rc->kept[k].seq == seq && rc->kept[k].step == step)
			return &rc->kept[k];
	return NULL;
}

/* The live send regions of op's phase can be resent: sent, and not changed since. */
int or_rep_live(const struct or_bounded_op *op, unsigned step)
{
	const struct or_phase *ph = &op->ph[step];

	return ph->begun && !op->ph[op->nphases - 1].closed && (!ph->closed || op->sends_kept);
}

/* A request that passed validation: 0, or -1 if it is malformed after all. */
static int serve(struct or_chan *ch, struct or_bounded_op *op, const struct or_wire_hdr *h,
                 const uint8_t *payload)
{
	struct or_repair_chan *rc = ch->repair;
	struct or_kept *kp = kept_of(rc, h->seq, h->step);
	struct or_outbound *o;
	struct or_rep_out *ro;
	struct or_repair *rep;
	uint32_t i;

	/* Answered at once, also by the progress thread while the application is away. */
	or_chan_refill(ch);
	if (op && op->ph && h->step < op->nphases && or_rep_live(op, h->step) &&
	    (rep = or_rep_of(op))) {
		o = outbound_to(&op->ph[h->step], op->c->size, h->sender);
		if (!o)
			return -1;
		i = (uint32_t)(o - op->ph[h->step].out);
		ro = &rep->out[h->step * rep->cap + i];
		if (mark_wanted(ro, o, payload, h->length))
			return -1;
		or_rep_resend(ch, op, h->seq, h->step, o, ro, &rep->resent);
		return 0;
	}
	if (kp) {
		for (i = 0; i < kp->n && kp->out[i].peer != h->sender; i++)
			;
		if (i == kp->n || !kp->out[i].npkts)
			return -1;
		if (mark_wanted(&kp->rout[i], &kp->out[i], payload, h->length))
			return -1;
		or_rep_resend(ch, &rc->nobody, h->seq, h->step, &kp->out[i], &kp->rout[i],
		              &rc->resent_kept);
		return 0;
	}
	if (op && !(op->ph && h->step < op->nphases))
		return -1;
	if (op && !op->ph[h->step].begun)
		return 0; /* not sent yet: nothing can be missing */
	refuse(ch, h);
	return 0;
}

/* A refusal: the sender of h stops being asked in that phase. */
static int refused(struct or_chan *ch, const struct or_wire_hdr *h)
{
	struct or_bounded_op *op = or_chan_find_op(ch, h->seq);
	struct or_inbound *in;

	if (!op || !op->ph || h->step >= op->nphases || !or_rep_of(op)) {
		ch->stats.packets_stale++;
		return 0;
	}
	in = or_bd_inbound_of(&op->ph[h->step], op->c->size, h->sender);
	if (!in || !in->npkts)
		return -1;
	op->rep->in[h->step * op->rep->cap + (uint32_t)(in - op->ph[h->step].in)].refused = 1;
	return 0;
}

int or_rep_rx(struct or_chan *ch, const struct or_wire_hdr *h, const uint8_t *payload,
              uint32_t src, int check_source)
{
	/* Requests may come for an operation finished here: from OR_SEQ_WINDOW before the
	 * oldest running one. */
	struct or_wire_expect e = {
	    .comm_id = ch->comm->id,
	    .nranks = ch->comm->size,
	    .nsteps = or_bd_max_steps(ch->comm->size),
	};
	int ret;

	/* A member must not ask in another one's name; with repair off, not ours: both are
	 * judged as data (which refuses them). */
	if ((check_source && src < ch->comm->size && src != h->sender) || !or_bd_repair_on(ch) ||
	    !or_rep_chan(ch))
		return 1;
	or_chan_window(ch, &e.seq_lo, &e.seq_hi);
	e.seq_lo = e.seq_lo > OR_SEQ_WINDOW ? e.seq_lo - OR_SEQ_WINDOW : 0;
	ret = or_wire_validate(h, &e);
	if (!ret && h->sender == ch->comm->rank)
		ret = OR_WIRE_ERANK;
	if (!ret && (h->flags & OR_WIRE_FLAG_REQUEST))
		ret = serve(ch, or_chan_find_op(ch, h->seq), h, payload) ? OR_WIRE_ERANGE : 0;
	else if (!ret)
		ret = (h->flags & OR_WIRE_FLAG_RESENT) && !refused(ch, h) ? 0 : OR_WIRE_EFLAGS;
	if (ret) {
		ch->stats.packets_invalid++;
		or_log(OR_LOG_PACKET, "dropped repair packet: %s", or_wire_reject_name(ret));
	}
	return 0;
}

/* Room for a copy of ph's send regions in kp; the bytes, or 0 when out of memory. */
static size_t kept_room(struct or_kept *kp, const struct or_phase *ph, uint32_t n)
{
	size_t bytes = 0;

	for (uint32_t i = 0; i < n; i++)
		bytes += ph->out[i].bytes;
	if (bytes > kp->data_cap) {
		free(kp->data);
		kp->data = malloc(bytes);
		kp->data_cap = kp->data ? bytes : 0;
	}
	or_rep_free_wants(kp->rout, kp->n);
	free(kp->out);
	free(kp->rout);
	kp->out = calloc(n ? n : 1, sizeof(*kp->out));
	kp->rout = calloc(n ? n : 1, sizeof(*kp->rout));
	kp->n = n;
	return kp->out && kp->rout && kp->data_cap >= bytes ? bytes + 1 : 0;
}

/*
 * The final phase's send regions are copied when it closes (1/N of the buffer for
 * Transpose): the core decodes the result in place right after, and peers that lost some of
 * it may still ask.  Regions shared by several peers are copied once.  What peers already
 * asked for is carried over.
 */
void or_rep_phase_closed(struct or_chan *ch, struct or_bounded_op *op, unsigned phase)
{
	struct or_phase *ph = &op->ph[phase];
	struct or_repair_chan *rc;
	struct or_kept *kp;
	uint32_t n = or_bd_slots(ph, op->c->size, 1);
	size_t at = 0;

	if (phase + 1 != op->nphases || !or_bd_repair_on(ch) || !(rc = or_rep_chan(ch)) ||
	    !or_rep_of(op))
		return;
	kp = &rc->kept[rc->next_kept];
	rc->next_kept = (rc->next_kept + 1) % OR_REPAIR_KEPT;
	kp->valid = 0;
	if (!kept_room(kp, ph, n))
		return;
	for (uint32_t i = 0; i < n; i++) {
		struct or_rep_out *live_ro = &op->rep->out[phase * op->rep->cap + i];
		uint32_t j = 0;
		kp->out[i] = ph->out[i];
		while (j < i && ph->out[j].buf != ph->out[i].buf)
			j++;
		if (j < i && ph->out[j].bytes >= ph->out[i].bytes) {
			kp->out[i].buf = kp->out[j].buf;
		} else if (ph->out[i].bytes) {
			memcpy(kp->data + at, ph->out[i].buf, ph->out[i].bytes);
			kp->out[i].buf = kp->data + at;
			at += ph->out[i].bytes;
		}
		kp->rout[i] = *live_ro; /* the asked-for packets go with it */
		memset(live_ro, 0, sizeof(*live_ro));
	}
	kp->seq = op->c->seq;
	kp->step = (uint16_t)phase;
	kp->valid = 1;
}
