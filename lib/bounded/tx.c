/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Send side of the bounded channel (docs/design.md, "Pacing"): a token bucket at the
 * pacer's rate, a pool of send buffers, and the pump that feeds a phase's peers in
 * incast groups, round-robin within a group.  Operations in flight share the bucket.
 */
#include <math.h>
#include <string.h>

#include "lib/bounded/bounded_int.h"
#include "lib/bounded/ctl/sendfail.h"
#include "lib/bounded/wire.h"

_Static_assert(OR_BD_GROUP == OR_DG_GROUP, "the channel's group peer is the endpoint's");

static void on_tx(void *arg)
{
	struct or_txbuf *t = arg;

	if (t->x.error && t->x.error != -OPTIREDUCE_ECANCELED)
		t->b->tx_failed++; /* the datagram is lost, like one the host refused at once */
	t->next = t->b->tx_free;
	t->b->tx_free = t;
}

void or_bd_tx_init(struct or_bounded *b)
{
	for (size_t i = 0; i < OR_TX_POOL; i++) {
		b->tx[i].b = b;
		b->tx[i].buf = b->tx_mem + i * b->stride + or_dg_prefix(b->ep);
		b->tx[i].x.cb = on_tx;
		b->tx[i].x.cb_arg = &b->tx[i];
		b->tx[i].next = b->tx_free;
		b->tx_free = &b->tx[i];
	}
}

void or_bd_refill(struct or_bounded *b)
{
	double now = or_now_us();
	double bytes_per_us = b->pace.rate_mbps * b->share / 8.0; /* Mbit/s = bytes/us * 8 */
	double cap = OR_BURST_US * bytes_per_us;

	if (cap < OR_BURST_BYTES)
		cap = OR_BURST_BYTES;
	b->tokens += (now - b->last_refill_us) * bytes_per_us;
	if (b->tokens > cap)
		b->tokens = cap;
	b->last_refill_us = now;
}

/* Peers of ph whose packets have not all been handed to the endpoint (extra LAST copies
 * aside); the groups before ph->group are done. */
uint32_t or_bd_unsent_peers(const struct or_phase *ph)
{
	uint32_t unsent = 0;

	for (uint32_t i = ph->group; i < ph->norder; i++)
		unsent += ph->out[ph->order[i]].next < ph->out[ph->order[i]].npkts;
	return unsent;
}

/*
 * Pacing's "took" is bytes over the time until the phase's last packet left.  Noted when
 * each peer's last packet goes, not only when the pump finds the phase done: the phase may
 * close (all its data in) before the extra copies of the LASTs are out, and then the pump
 * never looks at it again.
 */
static void note_sent_all(struct or_bounded_op *op, struct or_phase *ph, unsigned step)
{
	double took_us;

	if (ph->sent_all || or_bd_unsent_peers(ph))
		return;
	ph->sent_all_us = or_now_us();
	took_us = ph->sent_all_us - ph->start_us;
	ph->sent_all = 1;
	/* A multicast phase runs at a share of the link on purpose: not what the link took. */
	if (ph->mc_share <= 0)
		op->send_us += took_us;
	or_log(OR_LOG_TRACE, "op %llu phase %u: last packet sent after %.0f us",
	       (unsigned long long)op->c->seq, step, took_us);
}

/*
 * What the pump queued goes to the network now, together (dgram.h): a phase begun outside
 * the progress loop (phase.c) must not wait for the next poll, which an operation that just
 * finished may not make.  After it the endpoint reads no payload the pump lent it.
 */
void or_bd_flush(struct or_bounded *b)
{
	pthread_mutex_lock(&b->ofi_lock);
	or_dg_flush(b->ep);
	pthread_mutex_unlock(&b->ofi_lock);
}

/* A packet of op left: it counts for op and every other operation sending meanwhile
 * (or_bounded_op.sent_bytes). */
static void count_sent(struct or_bounded *b, struct or_bounded_op *op, size_t bytes)
{
	unsigned step;

	op->sent_bytes += bytes;
	for (unsigned i = 0; i < b->nops; i++)
		if (b->ops[i] != op && or_bd_sending_phase(b->ops[i], &step))
			b->ops[i]->sent_bytes += bytes;
}

/* A full socket drains at the link's rate: a few packets' time there. */
static double blocked_wait_us(const struct or_bounded *b)
{
	double mbps = b->pace.took_mbps > 0 ? b->pace.took_mbps : b->pace.rate_mbps * b->share;
	return OR_BLOCKED_SLEEP_PKTS * (double)b->max_msg * 8.0 / mbps;
}

/* How long ago this rank began the phase, for the receivers' deadline_anchor; 0 unknown. */
static uint32_t phase_age_us(const struct or_phase *ph)
{
	double age = or_now_us() - ph->start_us;

	if (!ph->begun)
		return 0;
	return age >= (double)UINT32_MAX ? UINT32_MAX : age < 1.0 ? 1 : (uint32_t)age;
}

static void fill_header(const struct or_bounded *b, const struct or_bounded_op *op,
                        const struct or_outbound *o, unsigned step, size_t nth, size_t off,
                        size_t len, struct or_wire_hdr *h)
{
	const struct or_coll *c = op->c;

	h->magic = OR_WIRE_MAGIC;
	h->version = OR_WIRE_VERSION;
	h->flags = nth + 1 == o->npkts ? OR_WIRE_FLAG_LAST : 0;
	h->step = (uint16_t)step;
	h->comm_id = b->ch.comm->id;
	h->sender = b->ch.comm->rank;
	h->seq = c->seq;
	h->offset = (uint32_t)off;
	h->length = (uint16_t)len;
	h->contrib = o->contrib;
	h->timeout_est_us = or_tmo_local_estimate(&b->tmo, c->count * c->esize);
	h->loss = (uint16_t)lrint(b->ch.own_loss * 65535.0);
	h->phase_us = phase_age_us(&op->ph[step]);
}

/*
 * Header into a free send buffer, handed to the endpoint with the payload: 0, 1 when no send
 * buffer is free (not a refusal: the sender only waits for one), or a negative code.  lend:
 * the payload stays where it is until the caller's next or_bd_flush (dgram.h,
 * or_dg_send_parts), which the pump makes before it returns; else it is copied now.
 */
static int hand_to_endpoint(struct or_bounded *b, uint32_t peer, const struct or_wire_hdr *h,
                            const uint8_t *payload, int lend)
{
	struct or_txbuf *t;
	int ret;

	pthread_mutex_lock(&b->ofi_lock);
	t = b->tx_free;
	if (!t) {
		pthread_mutex_unlock(&b->ofi_lock);
		return 1;
	}
	b->tx_free = t->next;
	or_wire_encode(h, t->buf, b->max_msg);
	if (lend) {
		ret = or_dg_send_parts(b->ep, peer, t->buf, OR_WIRE_HDR_SIZE, payload, h->length,
		                       &t->x);
	} else {
		memcpy(t->buf + OR_WIRE_HDR_SIZE, payload, h->length);
		ret = or_dg_send_to(b->ep, peer, t->buf, h->length + OR_WIRE_HDR_SIZE, &t->x);
	}
	if (ret) {
		t->next = b->tx_free;
		b->tx_free = t;
	} else {
		b->tx_handed++;
	}
	pthread_mutex_unlock(&b->ofi_lock);
	return ret;
}

/*
 * A send the endpoint refused with code: 0 to try again later (a full socket, briefly), 1 when
 * the datagram is counted as lost, < 0 for an error that ends the operation (sendfail.h).
 */
static int send_failed(struct or_bounded *b, struct or_bounded_op *op, uint32_t peer, int code)
{
	double now = or_now_us();

	if (code == -OPTIREDUCE_EAGAIN) {
		if (!b->blocked)
			b->refused_since_us = now;
		if (now - b->refused_since_us < OR_SEND_RETRY_US) {
			op->blocked++;
			b->blocked = 1;
			b->blocked_until_us = now + blocked_wait_us(b);
			return 0;
		}
	}
	/*
	 * Lost.  A group that refuses for another reason than a full socket is broken: the
	 * phases after this one go to each peer.  A socket full past the retry window is a busy
	 * link, as for unicast: a 4 MiB operation on a loaded 100 Mbit/s host turned multicast
	 * off for good that way.
	 */
	if (peer == OR_BD_GROUP) {
		if (code != -OPTIREDUCE_EAGAIN)
			or_bd_mcast_failed(b, code);
		op->packets_send_failed++;
		return 1;
	}
	code = or_sendfail_note(&b->sendfail, peer, code, or_dg_send_error(b->ep), now,
	                        1e3 * (double)or_bd_param_i(b, OR_P_PEER_TIMEOUT_MS));
	if (code)
		return code;
	op->packets_send_failed++;
	return 1;
}

/*
 * Sends (or loses) the next packet of o to dest (o->peer, or OR_BD_GROUP); returns 1 if done,
 * 0 if it must wait, < 0 on error.
 */
static int send_one(struct or_bounded *b, struct or_bounded_op *op, struct or_phase *ph,
                    unsigned step, struct or_outbound *o, uint32_t dest)
{
	struct or_wire_hdr h = {0};
	/* One extra copy of the last packet: early timeout waits for LAST from every sender. */
	size_t nth = o->next < o->npkts ? o->next : o->npkts - 1;
	size_t idx = (nth * o->stride) % o->npkts;
	size_t off = idx * b->ch.payload;
	size_t len = o->bytes - off < b->ch.payload ? o->bytes - off : b->ch.payload;
	int ret;

	if (b->tokens < (double)(len + OR_WIRE_HDR_SIZE) || or_bd_queue_held(b))
		return 0;
	fill_header(b, op, o, step, nth, off, len, &h);
	/* The last packets are sent whatever the injected loss: early timeout needs LAST, and a
	 * LAST that never comes only costs time, which the deadline bounds anyway. */
	if (!(h.flags & OR_WIRE_FLAG_LAST) && or_bd_inject_drop(b)) {
		o->next++;
		b->tokens -= (double)(len + OR_WIRE_HDR_SIZE);
		op->packets_sent++;
		return 1;
	}
	ret = hand_to_endpoint(b, dest, &h, o->buf + off, 1);
	if (ret == 1)
		return 0;
	if (ret) {
		ret = send_failed(b, op, dest, ret);
		if (ret <= 0)
			return ret;
	} else {
		or_sendfail_ok(&b->sendfail, dest);
		if (dest != OR_BD_GROUP)
			count_sent(b, op, len + OR_WIRE_HDR_SIZE);
		op->sent_pkts++;
		op->packets_sent++;
		if (ph->bcast > 0)
			*(dest == OR_BD_GROUP ? &op->bcast_multicast : &op->bcast_unicast) += 1;
	}
	b->blocked = 0;
	o->next++;
	b->tokens -= (double)(len + OR_WIRE_HDR_SIZE);
	if (o->next == o->npkts)
		note_sent_all(op, ph, step);
	return 1;
}

/*
 * A phase whose peers all get one region goes once to the group (docs/design.md,
 * "Multicast"): the packets, headers and tokens of one peer's share, and every peer's
 * progress follows the first's, so that repair and a fall back to unicast mid-phase find
 * each where the group left it.
 */
static int pump_group(struct or_bounded *b, struct or_bounded_op *op, struct or_phase *ph,
                      unsigned step)
{
	struct or_outbound *lead = &ph->out[ph->order[0]];
	size_t end = lead->npkts + 1; /* and the extra copy of the last packet */
	int sent = 0, ret = 1;

	b->share = ph->mc_share;
	if (b->blocked && or_now_us() < b->blocked_until_us)
		return 0;
	or_bd_refill(b);
	while (sent < 64 && lead->next < end && b->mc.on) {
		ret = send_one(b, op, ph, step, lead, OR_BD_GROUP);
		for (uint32_t i = 1; i < ph->norder; i++)
			ph->out[ph->order[i]].next = lead->next;
		if (ret <= 0)
			break;
		sent++;
	}
	if (ret < 0) {
		or_bd_flush(b); /* what was lent goes, or is copied, before the caller goes on */
		return ret;
	}
	if (lead->next >= lead->npkts)
		note_sent_all(op, ph, step);
	if (lead->next >= end)
		ph->group = ph->norder;
	or_bd_flush(b);
	return sent;
}

/*
 * Sends of a phase go to peers in incast groups: the current group's peers
 * get packets round-robin; the next group starts when the current one is done.
 * Returns the packets sent (0: tokens or the endpoint hold us back), or < 0 on error.
 */
int or_bd_pump(struct or_bounded *b, struct or_bounded_op *op, unsigned step)
{
	struct or_phase *ph = &op->ph[step];
	int budget = 64; /* then return, so receives are reaped between bursts */

	if (or_bd_phase_bcast(b, ph) && b->mc.on && or_bd_mcast_phase(b, op, ph))
		return pump_group(b, op, ph, step);

	/*
	 * A group smaller than the phase's peers is a sequence that senders go through at
	 * different speeds, so several can be on one receiver at once.  Each peer therefore
	 * gets the share it would get in a full round (rate / peers), whatever the group: a
	 * smaller incast is gentler and slower, never a larger burst on one receiver.
	 */
	b->share = ph->norder > ph->incast ? (double)ph->incast / (double)ph->norder : 1.0;
	if (b->blocked && or_now_us() < b->blocked_until_us)
		return 0;
	or_bd_refill(b);
	while (ph->group < ph->norder && budget > 0) {
		uint32_t end = ph->group + ph->incast, width;
		int progressed = 0, pending = 0;

		if (end > ph->norder)
			end = ph->norder;
		width = end - ph->group;
		/*
		 * Start where the last call stopped: with tokens for one packet per call,
		 * restarting at the group's first peer would send it everything first and turn
		 * the group into a sequence, so receivers would see senders drift into incast.
		 */
		for (uint32_t k = 0; k < width && budget > 0; k++) {
			uint32_t i = ph->group + (ph->turn + k) % width;
			struct or_outbound *o = &ph->out[ph->order[i]];
			int ret;
			if (o->next >= o->npkts + (o->npkts > 0))
				continue;
			pending = 1;
			ret = send_one(b, op, ph, step, o, o->peer);
			if (ret < 0) {
				or_bd_flush(b); /* as below: nothing lent outlives the pump */
				return ret;
			}
			if (ret == 0) {
				ph->turn = (ph->turn + k) % width;
				break;
			}
			progressed = 1;
			budget--;
			if (k + 1 == width || budget == 0)
				ph->turn = (ph->turn + k + 1) % width;
		}
		if (!pending) {
			ph->group = end;
			ph->turn = 0;
			continue;
		}
		if (!progressed)
			break;
	}
	if (ph->group >= ph->norder)
		note_sent_all(op, ph, step);
	or_bd_flush(b);
	return 64 - budget;
}

/*
 * One datagram built by the caller (features, through chan.h: requests, resends, notices).
 * A refused send is a lost datagram like any other (send_failed); a peer unreachable for
 * peer_timeout_ms is reported by the next send of the operation's own data.
 */
int or_bd_send_datagram(struct or_bounded *b, struct or_bounded_op *op, uint32_t peer,
                        const struct or_wire_hdr *h, const uint8_t *payload)
{
	int ret = hand_to_endpoint(b, peer, h, payload, 0);

	if (ret < 0 && op) {
		send_failed(b, op, peer, ret);
	} else if (!ret) {
		or_sendfail_ok(&b->sendfail, peer);
		/* The socket took one: a later refusal starts its own retry window. */
		b->blocked = 0;
	}
	return ret;
}
