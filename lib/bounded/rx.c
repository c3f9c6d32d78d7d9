/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive side of the bounded channel: a pre-posted ring of receive buffers, drained
 * into a ready queue by whichever thread reaps the endpoint; each packet, read where its
 * completion says (dgram/xfer.h, data) until its buffer is reposted, is decoded and
 * validated (docs/design.md, "Wire format"), parked if its operation has not declared
 * its regions yet, and placed into its sender's region of its operation otherwise: several
 * operations may be running (docs/design.md, "Operations in flight").
 */
#include <stdlib.h>
#include <string.h>

#include "lib/bounded/bounded_int.h"
#include "lib/bounded/wire.h"

/* With ofi_lock held. */
static int post_rx(struct or_bounded *b, struct or_rxbuf *r)
{
	return r->group ? or_dg_group_recv(b->ep, r->buf, b->max_msg, &r->x)
	                : or_dg_recv(b->ep, r->buf, b->max_msg, &r->x);
}

/* Under ofi_lock, from whichever thread reaped it: handled later, under lock. */
static void on_rx(void *arg)
{
	struct or_rxbuf *r = arg;
	struct or_bounded *b = r->b;

	b->ready[(b->ready_head + b->ready_count) % b->nrx] = r;
	b->ready_count++; /* cannot overflow: one slot per receive buffer */
}

int or_bd_rx_post_all(struct or_bounded *b)
{
	int ret = 0;

	for (size_t i = 0; i < b->nrx && !ret; i++) {
		b->rx[i].b = b;
		b->rx[i].buf = b->rx_mem + i * b->stride + or_dg_prefix(b->ep);
		b->rx[i].x.cb = on_rx;
		b->rx[i].x.cb_arg = &b->rx[i];
		b->rx[i].group = i >= b->nrx_main;
		ret = post_rx(b, &b->rx[i]);
	}
	return ret;
}

static void park(struct or_bounded *b, const uint8_t *pkt, size_t len, double now_us)
{
	uint8_t *copy;

	if (b->nparked >= OR_PARK_MAX) {
		b->ch.stats.packets_invalid++; /* dropped for lack of room: counted, never kept */
		return;
	}
	copy = malloc(len);
	if (!copy)
		return;
	memcpy(copy, pkt, len);
	b->park[b->nparked].data = copy;
	b->park[b->nparked].len = (uint16_t)len;
	b->park[b->nparked].arrived_us = now_us;
	b->nparked++;
	b->ch.stats.packets_parked++;
}

/*
 * The packet fits its sender's region of this phase: whole packets, the short one last.
 * A packet without payload (CONTROL) has no place: at offset == bytes it would mark
 * seen[npkts], one past the end, and in an empty region count as data that never was.
 */
static int fits_region(const struct or_bounded *b, const struct or_bounded_op *op,
                       const struct or_inbound *in, const struct or_wire_hdr *h)
{
	return in && in->region && h->length > 0 && h->sender != op->c->rank &&
	       (size_t)h->offset + h->length <= in->bytes && h->offset % b->ch.payload == 0 &&
	       (h->length == b->ch.payload || (size_t)h->offset + h->length == in->bytes);
}

/*
 * A sender sends its phases in order (or_bd_pump() finishes one before it starts the
 * next, and a phase closes only once its sends are out), so a packet of a later step says
 * every earlier phase of it is complete, as a LAST would: both copies of a LAST can be
 * lost together when a receiver's socket overflows.  Marks are made newest first and
 * always cover every earlier phase, so the first phase found marked ends the walk: a
 * packet costs O(1) here, not O(steps).  Phases close in order, so a closed one ends it
 * too.
 */
static void mark_earlier_phases_sent(struct or_bounded_op *op, const struct or_wire_hdr *h)
{
	for (unsigned p = h->step; p-- > 0;) {
		struct or_inbound *before = or_bd_inbound_of(&op->ph[p], op->c->size, h->sender);
		if (!before || !before->npkts)
			continue;
		/* A closed phase keeps what it knew when it closed: marked now, a phase the
		 * deadline cut would read as one whose senders had all finished (op.c). */
		if (before->last_seen || op->ph[p].closed)
			break;
		before->last_seen = 1;
		op->ph[p].senders_last++;
	}
}

/* The packet's payload into its place; what it tells of the sender's loss and deadline. */
static void place(struct or_bounded *b, struct or_bounded_op *op, struct or_phase *ph,
                  struct or_inbound *in, const struct or_wire_hdr *h, const uint8_t *payload)
{
	struct or_coll *c = op->c;

	memcpy(in->region + h->offset, payload, h->length);
	ph->bytes_received += h->length;
	ph->last_arrival_us = b->ch.rx_clock_us;
	if ((double)h->loss / 65535.0 > op->peer_loss)
		op->peer_loss = (double)h->loss / 65535.0;
	if (h->timeout_est_us)
		or_tmo_peer_estimate(&b->tmo, h->sender, c->count * c->esize, h->timeout_est_us);
	op->packets_received++;
}

/* arrived_us: when the datagram came (a parked one earlier than now). */
static void deliver(struct or_bounded *b, struct or_bounded_op *op, const struct or_wire_hdr *h,
                    const uint8_t *payload, double arrived_us)
{
	struct or_phase *ph;
	struct or_inbound *in;
	size_t idx;

	if (h->step >= op->nphases || !op->ph) {
		b->ch.stats.packets_invalid++;
		return;
	}
	ph = &op->ph[h->step];
	in = or_bd_inbound_of(ph, op->c->size, h->sender);
	/* Validity first, so that a malformed packet is counted invalid even if late. */
	if (!fits_region(b, op, in, h)) {
		b->ch.stats.packets_invalid++;
		return;
	}
	mark_earlier_phases_sent(op, h);
	/* The sender had begun this phase by then (features/repair.c, repair_end_us). */
	if (!in->first_us || arrived_us < in->first_us)
		in->first_us = arrived_us;
	/* When it began, as it says: the earliest reading, the one least delayed in queues. */
	if (h->phase_us && !(h->flags & OR_WIRE_FLAG_RESENT)) {
		double began = arrived_us - (double)h->phase_us;
		if (!in->began_us || began < in->began_us)
			in->began_us = began;
	}
	if (ph->closed) {
		b->ch.stats.packets_stale++;
		return;
	}
	/* LAST before the duplicate check: the flagged copy may come after a plain one. */
	if ((h->flags & OR_WIRE_FLAG_LAST) && !in->last_seen) {
		in->last_seen = 1;
		ph->senders_last++;
		ph->last_flag_us = b->ch.rx_clock_us;
	}
	idx = h->offset / b->ch.payload;
	if (in->seen[idx]) {
		op->packets_duplicate++;
		return;
	}
	in->seen[idx] = 1;
	in->got_pkts++;
	place(b, op, ph, in, h, payload);
	OR_BD_HOOK(b, arrived, op, h, in);
}

/* Operations start in order on every rank: one started here and no longer running is over. */
static int finished(const struct or_bounded *b, uint64_t seq)
{
	return seq < b->seq_lo || (seq < b->seq_next && !or_chan_find_op(&b->ch, seq));
}

/*
 * A datagram that decoded whole and names a member of this communicator, other than this
 * rank, as its sender, from that member's address when the endpoint says where datagrams
 * come from: its sender lives (features/peerfail.c), whatever else is wrong with it.
 */
static int from_member(const struct or_bounded *b, const struct or_wire_hdr *h, uint32_t src,
                       int check_source)
{
	return h->comm_id == b->ch.comm->id && h->sender < b->ch.comm->size &&
	       h->sender != b->ch.comm->rank &&
	       (!check_source || src >= b->ch.comm->size || src == h->sender);
}

/*
 * Delivers, parks or drops (counting why) one datagram.  src: its sender's rank as the
 * endpoint saw it, or OR_SRC_* (ofi.h).
 */
static void handle_packet(struct or_bounded *b, const uint8_t *pkt, size_t len, uint32_t src)
{
	struct or_wire_hdr h;
	/* Each sender's region is checked on delivery: validation has no step_bytes. */
	struct or_wire_expect e = {
	    .comm_id = b->ch.comm->id,
	    .nranks = b->ch.comm->size,
	    .seq_lo = b->seq_lo,
	    .seq_hi = b->seq_hi,
	    .nsteps = or_bd_max_steps(b->ch.comm->size),
	    .max_contrib = (uint16_t)(b->ch.comm->size > 65535 ? 65535 : b->ch.comm->size),
	};
	int check_source = or_bd_param_i(b, OR_P_CHECK_SOURCE) != 0, ret;
	const struct or_bd_kind *kind;
	struct or_bounded_op *op;

	/* From outside the communicator: whatever its header says, never ours. */
	if (src == OR_SRC_STRANGER && check_source) {
		b->ch.stats.packets_stranger++;
		or_log(OR_LOG_PACKET, "dropped packet from an address outside the communicator");
		return;
	}
	ret = or_wire_decode(pkt, len, &h);
	if (!ret && from_member(b, &h, src, check_source))
		OR_BD_HOOK(b, heard, h.sender);
	/* Our own datagram, looped back where IP_MULTICAST_LOOP could not be cleared. */
	if (!ret && b->mc.joined && h.sender == b->ch.comm->rank && src == b->ch.comm->rank)
		return;
	/* Each kind but an operation's data goes to its feature (kinds.c), which validates
	 * it itself; a handler may leave it to be judged as data. */
	kind = ret ? NULL : &b->kinds[or_wire_kind(h.flags)];
	if (kind && kind->rx &&
	    kind->rx(&b->ch, &h, pkt + OR_WIRE_HDR_SIZE, src, check_source) == 0)
		return;
	op = ret ? NULL : or_chan_find_op(&b->ch, h.seq);
	/* A running operation accepts only the steps its algorithm declared. */
	if (op && op->ph)
		e.nsteps = (uint16_t)op->nphases;
	if (!ret)
		ret = or_wire_validate(&h, &e);
	/* A member must not speak for another one. */
	if (!ret && check_source && src < b->ch.comm->size && src != h.sender)
		ret = OR_WIRE_ERANK;
	/* For another communicator (one destroyed, whose port this endpoint now has). */
	if (ret == OR_WIRE_ECOMM) {
		b->ch.stats.packets_stranger++;
		or_log(OR_LOG_PACKET, "dropped packet of communicator %08x", h.comm_id);
		return;
	}
	/* Older than the window, or finished here while an older one still runs. */
	if (ret == OR_WIRE_EWINDOW_OLD || (!ret && !op && finished(b, h.seq))) {
		b->ch.stats.packets_stale++;
		return;
	}
	if (ret) {
		b->ch.stats.packets_invalid++;
		or_log(OR_LOG_PACKET, "dropped packet: %s", or_wire_reject_name(ret));
		return;
	}
	/* Kept until the operation's algorithm has declared its phases and regions. */
	if (!op || !op->ph) {
		park(b, pkt, len, b->ch.rx_clock_us);
		return;
	}
	deliver(b, op, &h, pkt + OR_WIRE_HDR_SIZE, b->ch.rx_clock_us);
}

/* A datagram larger than any of ours: a stranger's where the endpoint says so. */
static void oversized(struct or_bounded *b, uint32_t src)
{
	if (src == OR_SRC_STRANGER && or_bd_param_i(b, OR_P_CHECK_SOURCE))
		b->ch.stats.packets_stranger++;
	else
		b->ch.stats.packets_invalid++;
}

/*
 * With lock held: handles the packets reaped so far and gives their buffers back.  A
 * packet's bytes are where its completion says (the endpoint's own memory on the kernel
 * path), valid until its receive is posted again: nothing keeps a pointer into them past
 * handle_packet (park() and the regions copy).
 */
int or_bd_drain_ready(struct or_bounded *b)
{
	int total = 0;

	for (;;) {
		struct or_rxbuf *batch[64];
		size_t n = 0;

		pthread_mutex_lock(&b->ofi_lock);
		while (n < 64 && b->ready_count) {
			batch[n++] = b->ready[b->ready_head];
			b->ready_head = (b->ready_head + 1) % b->nrx;
			b->ready_count--;
		}
		pthread_mutex_unlock(&b->ofi_lock);
		if (!n)
			return total;
		/* One reading for the batch: it arrived before it was drained, and a clock read per
		 * packet and use cost a tenth of the receive path. */
		b->ch.rx_clock_us = or_now_us();
		for (size_t i = 0; i < n; i++) {
			struct or_rxbuf *r = batch[i];
			if (!r->x.error)
				handle_packet(b, r->x.data, r->x.len, r->x.src);
			else if (r->x.error == -OPTIREDUCE_EMSGSIZE) /* larger than any of ours */
				oversized(b, r->x.src);
			else if (r->x.error != -OPTIREDUCE_ECANCELED)
				b->ch.stats.packets_recv_failed++;
		}
		pthread_mutex_lock(&b->ofi_lock);
		for (size_t i = 0; i < n; i++)
			post_rx(b, batch[i]); /* a failure here only shrinks the ring */
		pthread_mutex_unlock(&b->ofi_lock);
		total += (int)n;
	}
}

/* Packets parked for op, which just declared its regions, are delivered now; those of
 * operations already over are dropped. */
void or_bd_replay_parked(struct or_bounded *b, struct or_bounded_op *op)
{
	size_t keep = 0;

	b->ch.rx_clock_us = or_now_us();
	for (size_t i = 0; i < b->nparked; i++) {
		struct or_parked p = b->park[i];
		struct or_wire_hdr h;
		if (or_wire_decode(p.data, p.len, &h) == 0 && h.seq == op->c->seq) {
			deliver(b, op, &h, p.data + OR_WIRE_HDR_SIZE, p.arrived_us);
			free(p.data);
		} else if (or_wire_decode(p.data, p.len, &h) == 0 && finished(b, h.seq)) {
			b->ch.stats.packets_stale++;
			free(p.data);
		} else {
			b->park[keep++] = p;
		}
	}
	b->nparked = keep;
}
