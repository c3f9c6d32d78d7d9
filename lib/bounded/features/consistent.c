/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replica-consistent results (parameter consistent; docs/design.md, "Replica-consistent
 * results").  When the final phase closes, each rank sends every peer its loss bitmap: one
 * bit per packet of every owner's final-phase region, set for the packets it did not get.
 * Once it holds every peer's bitmap it knows the union U of what any rank lost, which is
 * the same set on every rank, and every rank (the owners included) zeroes the packets in U
 * and rescales each block by what is left outside U: the same bytes through the same
 * arithmetic, so the same output.  A bitmap that does not come is asked for again, with
 * backoff, for as long as the peer lives (peer_timeout_ms, docs/design.md, "Peers that
 * die"): agreement over datagrams that may all be lost cannot be reached in bounded time
 * (the coordinated attack problem), so the wait is what buys identity, and the loss of a
 * bitmap costs a round trip, not a divergent result.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/bounded/chan.h"
#include "lib/bounded/feature.h"
#include "lib/bounded/features/consistent.h"
#include "lib/kernels/reduce.h"
#include "lib/bounded/wire.h"

static int consist_on(const struct or_chan *ch)
{
	return ch->comm->size > 1 && or_chan_param_i(ch, OR_P_CONSISTENT) != 0;
}

int or_bop_consistent(const struct or_coll *c)
{
	return c->bounded && c->comm->bounded && consist_on(or_chan_of(c->comm->bounded));
}

size_t or_cons_owner_pkts(struct or_bounded_op *op, unsigned phase, uint32_t r)
{
	struct or_phase *ph = &op->ph[phase];
	uint32_t n = op->c->size, me = op->c->rank;

	if (r != me) {
		struct or_inbound *in = or_bd_inbound_of(ph, n, r);
		return in ? in->npkts : 0;
	}
	for (uint32_t p = 0; p < n; p++) {
		struct or_outbound *o = p == me ? NULL : or_bd_outbound_of(ph, n, p);
		if (o)
			return o->npkts;
	}
	return 0;
}

static void op_end(struct or_chan *ch, struct or_bounded_op *op)
{
	(void)ch;
	struct or_cons *s = op->cons;

	if (!s)
		return;
	free(s->first);
	free(s->uni);
	free(s->frag);
	free(s->got);
	free(s->need);
	free(s);
	op->cons = NULL;
}

struct or_cons *or_cons_of(struct or_chan *ch, struct or_bounded_op *op)
{
	uint32_t n = op->c->size;
	struct or_cons *s;

	if (op->cons || !op->ph || !op->nphases || !op->senders)
		return op->cons;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->phase = op->nphases - 1;
	s->first = calloc(n + 1, sizeof(*s->first));
	s->got = calloc(n, sizeof(*s->got));
	if (s->first && s->got)
		for (uint32_t r = 0; r < n; r++)
			s->first[r + 1] = s->first[r] + or_cons_owner_pkts(op, s->phase, r);
	s->nbits = s->first ? s->first[n] : 0;
	s->nbytes = (s->nbits + 7) / 8;
	s->nfrag = (s->nbytes + ch->payload - 1) / ch->payload;
	s->uni = calloc(s->nbytes + 1, 1);
	s->frag = calloc((size_t)n * s->nfrag + 1, 1);
	if (!s->first || !s->got || !s->uni || !s->frag) {
		op->cons = s;
		op_end(ch, op);
		return NULL;
	}
	op->cons = s;
	return s;
}


static void close_chan(struct or_chan *ch)
{
	if (!ch->consist)
		return;
	for (unsigned k = 0; k < OR_CONS_KEPT; k++) {
		free(ch->consist->kept[k].bits);
		or_cons_fkept_free(&ch->consist->fk[k]);
	}
	free(ch->consist);
	ch->consist = NULL;
}

/* Sends bitmap bits (nbytes) of seq to peer, every fragment; returns bytes sent. */
static uint64_t send_bitmap(struct or_chan *ch, struct or_bounded_op *op, uint32_t peer,
                            uint64_t seq, const uint8_t *bits, size_t nbytes)
{
	uint64_t sent = 0;

	for (size_t off = 0; off < nbytes; off += ch->payload) {
		struct or_wire_hdr h;
		or_chan_header(ch, seq, 0, &h);
		h.flags = OR_WIRE_FLAG_CONSIST;
		h.offset = (uint32_t)off;
		h.length = (uint16_t)(nbytes - off < ch->payload ? nbytes - off : ch->payload);
		if (or_chan_send_lossy(ch, op, peer, &h, bits + off))
			sent += OR_WIRE_HDR_SIZE + h.length;
	}
	return sent;
}

/* Keeps own bitmap of seq to answer requests after the operation is gone here. */
static void keep(struct or_chan *ch, uint64_t seq, const uint8_t *bits, size_t nbytes)
{
	struct or_cons_kept *k;

	if (!ch->consist && !(ch->consist = calloc(1, sizeof(*ch->consist))))
		return;
	k = &ch->consist->kept[seq % OR_CONS_KEPT];
	if (k->nbytes < nbytes || !k->bits) {
		uint8_t *m = realloc(k->bits, nbytes + 1);
		if (!m) {
			k->valid = 0;
			return;
		}
		k->bits = m;
	}
	memcpy(k->bits, bits, nbytes);
	k->nbytes = nbytes;
	k->seq = seq;
	k->valid = 1;
}

int or_bop_consist_close(struct or_coll *c, unsigned phase)
{
	struct or_chan *ch = or_chan_of(c->comm->bounded);
	struct or_bounded_op *op = c->bop;
	struct or_cons *s = or_cons_of(ch, op);
	uint8_t *own;

	if (!s)
		return -OPTIREDUCE_ENOMEM;
	if (s->closed)
		return 0;
	if (phase != s->phase)
		return -OPTIREDUCE_EINVAL;
	own = calloc(s->nbytes + 1, 1);
	if (!own)
		return -OPTIREDUCE_ENOMEM;
	for (uint32_t r = 0; r < c->size; r++) {
		struct or_inbound *in =
		    r == c->rank ? NULL : or_bd_inbound_of(&op->ph[phase], c->size, r);
		for (size_t p = 0; in && in->seen && p < in->npkts; p++)
			if (!in->seen[p])
				own[(s->first[r] + p) / 8] |=
				    (uint8_t)(1u << (s->first[r] + p) % 8);
	}
	for (size_t i = 0; i < s->nbytes; i++)
		s->uni[i] |= own[i];
	keep(ch, c->seq, own, s->nbytes);
	for (int copy = 0; copy < OR_CONS_COPIES && s->nbytes; copy++)
		for (uint32_t p = 0; p < c->size; p++)
			if (p != c->rank)
				s->bytes += send_bitmap(ch, op, p, c->seq, own, s->nbytes);
	free(own);
	s->closed = 1;
	s->close_us = s->ask_us = or_now_us();
	s->ask_gap_us = OR_CONS_ASK_US;
	return 0;
}

/* Asks the peers whose bitmap is not complete here to send it (again). */
static void ask(struct or_chan *ch, struct or_bounded_op *op, struct or_cons *s)
{
	for (uint32_t p = 0; p < op->c->size; p++) {
		struct or_wire_hdr h;
		if (p == op->c->rank || s->got[p] == s->nfrag)
			continue;
		or_chan_header(ch, op->c->seq, 0, &h);
		h.flags = OR_WIRE_FLAG_CONSIST | OR_WIRE_FLAG_CONTROL;
		if (or_chan_send_lossy(ch, op, p, &h, (const uint8_t *)""))
			s->bytes += OR_WIRE_HDR_SIZE;
		s->asks++;
	}
}

int or_bop_consist_ready(struct or_coll *c)
{
	struct or_chan *ch = or_chan_of(c->comm->bounded);
	struct or_cons *s = c->bop->cons;
	double now = or_now_us();

	if (!s || !s->closed)
		return -OPTIREDUCE_EINVAL;
	/* Peers that keep sending other operations' datagrams but never this bitmap (ranks
	 * that disagree on the parameter) are not judged dead: the wait has the same bound. */
	if (((s->nfrag && s->done < c->size - 1) || s->nneed) &&
	    now - s->close_us > 1e3 * (double)or_chan_param_i(ch, OR_P_PEER_TIMEOUT_MS))
		return -OPTIREDUCE_ETIMEDOUT;
	if (s->nfrag && s->done < c->size - 1) {
		if (now - s->ask_us >= s->ask_gap_us) {
			ask(ch, c->bop, s);
			s->ask_us = now;
			s->ask_gap_us *= 1.25;
			if (s->ask_gap_us > OR_CONS_ASK_MAXUS)
				s->ask_gap_us = OR_CONS_ASK_MAXUS;
		}
		return 0;
	}
	if (!s->planned) {
		int ret = or_cons_fetch_plan(ch, c->bop, s);
		if (ret < 0)
			return ret;
	}
	if (!or_cons_fetch_done(ch, c->bop, s))
		return 0;
	c->status->flags |= OPTIREDUCE_STATUS_CONSISTENT;
	c->status->consistent_packets_fetched = s->fetched;
	c->status->consistent_us = now - s->close_us;
	c->status->consistent_bytes = s->bytes;
	c->status->consistent_asks = s->asks;
	return 1;
}

int or_bop_consist_apply(struct or_coll *c, uint32_t owner, void *shard, size_t elems)
{
	struct or_chan *ch = or_chan_of(c->comm->bounded);
	struct or_bounded_op *op = c->bop;
	struct or_cons *s = op->cons;
	struct or_inbound *in;
	size_t es = c->esize, be = op->block_elems, bytes = elems * es, first, npkts, lost = 0;
	int rescale = (int)or_chan_param_i(ch, OR_P_RESCALE), zeroed = 0;
	char *d = shard;

	if (!s || !s->closed || owner >= c->size)
		return -OPTIREDUCE_EINVAL;
	first = s->first[owner];
	npkts = s->first[owner + 1] - first;
	if (bytes > npkts * ch->payload)
		return -OPTIREDUCE_EINVAL;
	in = owner == c->rank ? NULL : or_bd_inbound_of(&op->ph[s->phase], c->size, owner);
	for (size_t p = 0; p < npkts; p++) {
		size_t a = p * ch->payload, z = a + ch->payload < bytes ? a + ch->payload : bytes;
		if (!or_cons_bit(s->uni, first + p) || a >= bytes)
			continue;
		memset(d + a, 0, z - a);
		lost++;
		if (owner == c->rank || (in && in->seen && in->seen[p]))
			c->status->consistent_packets_discarded++;
	}
	c->status->consistent_packets_replaced += lost;
	if (!lost)
		return 0;
	c->status->flags |= OPTIREDUCE_STATUS_INCOMPLETE;
	for (size_t lo = 0; lo < elems; lo += be) {
		size_t n = elems - lo < be ? elems - lo : be;
		size_t k = or_cons_agreed_elems(ch, s, first, npkts, lo * es, (lo + n) * es, es);
		if (k == 0)
			zeroed++; /* nothing every rank holds: zero, on every rank */
		else if (k < n && rescale)
			or_reduce_scale(d + lo * es, n, c->dtype, (double)n / (double)k);
	}
	c->status->consistent_blocks_zeroed += (uint64_t)zeroed;
	return zeroed;
}

/* A bitmap fragment from a peer, for a running operation. */
static void fragment(struct or_chan *ch, const struct or_wire_hdr *h, const uint8_t *payload)
{
	struct or_bounded_op *op = or_chan_find_op(ch, h->seq);
	struct or_cons *s;
	size_t f;

	if (!op || !(s = or_cons_of(ch, op))) {
		ch->stats.packets_stale++; /* over here, or not begun: asked for when needed */
		return;
	}
	if (h->offset % ch->payload || h->offset >= s->nbytes ||
	    h->length !=
	        (s->nbytes - h->offset < ch->payload ? s->nbytes - h->offset : ch->payload)) {
		ch->stats.packets_invalid++;
		return;
	}
	f = (size_t)h->sender * s->nfrag + h->offset / ch->payload;
	if (s->frag[f]) {
		op->packets_duplicate++;
		return;
	}
	s->frag[f] = 1;
	/* Bits past nbits would name no packet: a peer counting otherwise is ignored there. */
	for (size_t i = 0; i < h->length; i++)
		s->uni[h->offset + i] |= payload[i];
	if (s->nbits % 8)
		s->uni[s->nbytes - 1] &= (uint8_t)((1u << s->nbits % 8) - 1);
	if (++s->got[h->sender] == s->nfrag)
		s->done++;
}

/* A datagram of the agreement (OR_WIRE_KIND_CONSIST): always taken, counted when dropped. */
int or_consist_rx(struct or_chan *ch, const struct or_wire_hdr *h, const uint8_t *payload,
                  uint32_t src, int check_source)
{
	struct or_wire_expect e = {.comm_id = ch->comm->id, .nranks = ch->comm->size};
	int ret = or_wire_validate_consist(h, &e);
	struct or_cons_kept *k;

	if (!or_chan_admit(ch, ret, h, src, check_source, "agreement datagram"))
		return 0;
	/* Without the parameter here, nothing of the agreement is kept or answered. */
	if (!consist_on(ch)) {
		ch->stats.packets_invalid++;
		return 0;
	}
	if (h->flags & (OR_WIRE_FLAG_REQUEST | OR_WIRE_FLAG_RESENT)) {
		or_cons_fetch_rx(ch, h, payload);
		return 0;
	}
	if (!(h->flags & OR_WIRE_FLAG_CONTROL)) {
		fragment(ch, h, payload);
		return 0;
	}
	/* A request: answered once this rank's final phase of seq closed, else at that close. */
	k = ch->consist ? &ch->consist->kept[h->seq % OR_CONS_KEPT] : NULL;
	if (k && k->valid && k->seq == h->seq)
		send_bitmap(ch, NULL, h->sender, h->seq, k->bits, k->nbytes);
	return 0;
}

const struct or_bd_feature or_consist_feature = {
    .name = "consistent",
    .close = close_chan,
    .op_end = op_end,
};
