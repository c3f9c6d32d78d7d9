/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parameter consistent: blocks that lost everything are fetched from their owners
 * (docs/design.md, "Replica-consistent results").  Once every rank's bitmap is here, every
 * rank computes the same set F: the packets of the union U that touch a block with nothing
 * outside U.  F leaves U, every rank that lacks a packet of F asks its owner for it (ranges
 * of packets, flags CONSIST | REQUEST) until it has it, and the owner sends it (CONSIST |
 * RESENT) from its shard, or from a copy once the operation is over here.  So no block is
 * left empty, and every rank still holds the same bytes outside the smaller union.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/bounded/features/consistent.h"
#include "lib/bounded/wire.h"

static void set_bit(uint8_t *m, size_t i)
{
	m[i / 8] |= (uint8_t)(1u << i % 8);
}

static void clear_bit(uint8_t *m, size_t i)
{
	m[i / 8] &= (uint8_t) ~(1u << i % 8);
}

size_t or_cons_agreed_elems(const struct or_chan *ch, const struct or_cons *s, size_t first,
                            size_t npkts, size_t lo, size_t hi, size_t es)
{
	size_t got = 0;

	for (size_t p = lo / ch->payload; p < npkts && p * ch->payload < hi; p++) {
		size_t a = p * ch->payload, z = a + ch->payload;
		if (or_cons_bit(s->uni, first + p))
			continue;
		got += ((z < hi ? z : hi) - (a > lo ? a : lo)) / es;
	}
	return got;
}

/* Bytes of owner r's final-phase shard, and this rank's own shard's send buffer. */
static size_t owner_bytes(struct or_bounded_op *op, unsigned phase, uint32_t r, const uint8_t **own)
{
	struct or_phase *ph = &op->ph[phase];
	uint32_t n = op->c->size;

	if (r != op->c->rank) {
		struct or_inbound *in = or_bd_inbound_of(ph, n, r);
		return in && in->region ? in->bytes : 0;
	}
	for (uint32_t p = 0; p < n; p++) {
		struct or_outbound *o = p == r ? NULL : or_bd_outbound_of(ph, n, p);
		if (o) {
			if (own)
				*own = o->buf;
			return o->bytes;
		}
	}
	return 0;
}

/* F of owner r into f: the packets of U touching a block of r's shard with nothing left. */
static void plan_owner(struct or_chan *ch, struct or_bounded_op *op, struct or_cons *s,
                       uint32_t r, uint8_t *f)
{
	size_t es = op->c->esize, be = op->block_elems * es, first = s->first[r];
	size_t npkts = s->first[r + 1] - first, bytes = owner_bytes(op, s->phase, r, NULL);

	for (size_t lo = 0; lo < bytes && be; lo += be) {
		size_t hi = lo + be < bytes ? lo + be : bytes;
		if (or_cons_agreed_elems(ch, s, first, npkts, lo, hi, es))
			continue;
		for (size_t p = lo / ch->payload; p < npkts && p * ch->payload < hi; p++)
			set_bit(f, first + p);
	}
}

/* Keeps this rank's packets of F for requests that come after the operation ends here. */
static void keep_own(struct or_chan *ch, struct or_bounded_op *op, struct or_cons *s,
                     const uint8_t *f)
{
	uint32_t me = op->c->rank;
	size_t first = s->first[me], npkts = s->first[me + 1] - first, n = 0, bytes;
	const uint8_t *buf = NULL;
	struct or_cons_fkept *k;

	bytes = owner_bytes(op, s->phase, me, &buf);
	for (size_t p = 0; p < npkts; p++)
		n += (size_t)or_cons_bit(f, first + p);
	if (!n || !buf || !ch->consist)
		return;
	k = &ch->consist->fk[op->c->seq % OR_CONS_KEPT];
	or_cons_fkept_free(k);
	k->idx = malloc(n * sizeof(*k->idx));
	k->len = malloc(n * sizeof(*k->len));
	k->data = malloc(n * ch->payload);
	if (!k->idx || !k->len || !k->data) {
		or_cons_fkept_free(k);
		return;
	}
	for (size_t p = 0; p < npkts && k->n < n; p++) {
		size_t off = p * ch->payload, len;
		if (!or_cons_bit(f, first + p) || off >= bytes)
			continue;
		len = bytes - off < ch->payload ? bytes - off : ch->payload;
		k->idx[k->n] = (uint32_t)p;
		k->len[k->n] = (uint16_t)len;
		memcpy(k->data + k->n * ch->payload, buf + off, len);
		k->n++;
	}
	k->seq = op->c->seq;
	k->valid = 1;
}

void or_cons_fkept_free(struct or_cons_fkept *k)
{
	free(k->idx);
	free(k->len);
	free(k->data);
	memset(k, 0, sizeof(*k));
}

int or_cons_fetch_plan(struct or_chan *ch, struct or_bounded_op *op, struct or_cons *s)
{
	uint8_t *f = calloc(s->nbytes + 1, 1);
	uint32_t me = op->c->rank;

	s->need = calloc(s->nbytes + 1, 1);
	if (!f || !s->need) {
		free(f);
		return -OPTIREDUCE_ENOMEM;
	}
	for (uint32_t r = 0; r < op->c->size; r++)
		plan_owner(ch, op, s, r, f);
	keep_own(ch, op, s, f);
	for (uint32_t r = 0; r < op->c->size; r++) {
		struct or_inbound *in =
		    r == me ? NULL : or_bd_inbound_of(&op->ph[s->phase], op->c->size, r);
		for (size_t p = 0; in && in->seen && p < in->npkts; p++)
			if (or_cons_bit(f, s->first[r] + p) && !in->seen[p]) {
				set_bit(s->need, s->first[r] + p);
				s->nneed++;
			}
	}
	/* F leaves the union: every rank holds the owner's bytes of it once fetched. */
	for (size_t i = 0; i < s->nbytes; i++)
		s->uni[i] &= (uint8_t)~f[i];
	free(f);
	s->planned = 1;
	s->fetch_us = 0;
	s->fetch_gap_us = OR_CONS_FETCH_US;
	return 0;
}

/* One request to owner r for up to OR_CONS_FETCH_PKTS packets this rank needs. */
static void ask_owner(struct or_chan *ch, struct or_bounded_op *op, struct or_cons *s, uint32_t r)
{
	struct or_wire_range rg[OR_CONS_RANGES];
	uint8_t payload[OR_CONS_RANGES * OR_WIRE_RANGE_SIZE];
	size_t first = s->first[r], npkts = s->first[r + 1] - first, n = 0, pkts = 0;
	struct or_wire_hdr h;

	/* A few at a time, the next as they come: a whole shard asked at once would come back
	 * as a burst the receiver's socket drops, and again with every request. */
	for (size_t p = 0; p < npkts && pkts < OR_CONS_FETCH_PKTS; p++) {
		if (!or_cons_bit(s->need, first + p))
			continue;
		if (n && rg[n - 1].first + rg[n - 1].count == p)
			rg[n - 1].count++;
		else if (n < OR_CONS_RANGES)
			rg[n++] = (struct or_wire_range){(uint32_t)p, 1};
		else
			break;
		pkts++;
	}
	if (!n)
		return;
	or_chan_header(ch, op->c->seq, 0, &h);
	h.flags = OR_WIRE_FLAG_CONSIST | OR_WIRE_FLAG_REQUEST;
	h.length = (uint16_t)or_wire_ranges_encode(rg, n, payload);
	if (or_chan_send_lossy(ch, op, r, &h, payload))
		s->bytes += OR_WIRE_HDR_SIZE + h.length;
	s->asks++;
	s->inflight += pkts;
}

int or_cons_fetch_done(struct or_chan *ch, struct or_bounded_op *op, struct or_cons *s)
{
	double now = or_now_us();

	if (!s->nneed)
		return 1;
	/* Again once the last round came whole, or when it is overdue. */
	if (s->fetch_us && s->inflight && now - s->fetch_us < s->fetch_gap_us)
		return 0;
	if (s->inflight) { /* overdue: back off */
		s->fetch_gap_us *= 1.5;
		if (s->fetch_gap_us > OR_CONS_FETCH_MAXUS)
			s->fetch_gap_us = OR_CONS_FETCH_MAXUS;
	}
	s->inflight = 0;
	for (uint32_t r = 0; r < op->c->size; r++)
		if (r != op->c->rank)
			ask_owner(ch, op, s, r);
	s->fetch_us = now;
	return 0;
}

/* Sends packet p of this rank's own shard to peer, from the running operation or the copy. */
static int serve_one(struct or_chan *ch, const struct or_wire_hdr *req, size_t p)
{
	struct or_bounded_op *op = or_chan_find_op(ch, req->seq);
	struct or_cons_fkept *k = ch->consist ? &ch->consist->fk[req->seq % OR_CONS_KEPT] : NULL;
	const uint8_t *data = NULL;
	struct or_wire_hdr h;
	size_t len = 0;

	if (op && op->cons && op->cons->closed) {
		const uint8_t *buf = NULL;
		size_t bytes = owner_bytes(op, op->cons->phase, op->c->rank, &buf);
		if (buf && p * ch->payload < bytes) {
			data = buf + p * ch->payload;
			len = bytes - p * ch->payload < ch->payload ? bytes - p * ch->payload
			                                          : ch->payload;
		}
	} else if (k && k->valid && k->seq == req->seq) {
		size_t lo = 0, hi = k->n; /* idx ascends */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (k->idx[mid] < p)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < k->n && k->idx[lo] == p) {
			data = k->data + lo * ch->payload;
			len = k->len[lo];
		}
	}
	if (!data)
		return 0; /* not this rank's to give (yet): the asker asks again */
	or_chan_header(ch, req->seq, 0, &h);
	h.flags = OR_WIRE_FLAG_CONSIST | OR_WIRE_FLAG_RESENT;
	h.offset = (uint32_t)(p * ch->payload);
	h.length = (uint16_t)len;
	return or_chan_send_lossy(ch, op, req->sender, &h, data) ? 0 : -1;
}

static void serve(struct or_chan *ch, const struct or_wire_hdr *h, const uint8_t *payload)
{
	struct or_wire_range rg[OR_CONS_RANGES];
	int n = or_wire_ranges_decode(payload, h->length, UINT32_MAX, rg, OR_CONS_RANGES);

	if (n < 0) {
		ch->stats.packets_invalid++;
		return;
	}
	/* At most OR_CONS_SERVE_MAX per request: the rest is asked for again, and a forged
	 * request of 64 x 65535 packets costs no more. */
	for (int i = 0, sent = 0; i < n && sent < OR_CONS_SERVE_MAX; i++)
		for (uint32_t c = 0; c < rg[i].count && sent < OR_CONS_SERVE_MAX; c++, sent++)
			if (serve_one(ch, h, (size_t)rg[i].first + c) < 0)
				return; /* no send buffer: the rest is asked for again */
}

/* A fetched packet of owner h->sender's shard. */
static void arrived(struct or_chan *ch, const struct or_wire_hdr *h, const uint8_t *payload)
{
	struct or_bounded_op *op = or_chan_find_op(ch, h->seq);
	struct or_cons *s = op ? op->cons : NULL;
	struct or_inbound *in;
	size_t p, bytes, want;

	if (!s || !s->planned || !s->nneed) {
		ch->stats.packets_stale++;
		return;
	}
	in = or_bd_inbound_of(&op->ph[s->phase], op->c->size, h->sender);
	p = h->offset / ch->payload;
	bytes = in && in->region ? in->bytes : 0;
	want = h->offset < bytes ? bytes - h->offset : 0;
	if (want > ch->payload)
		want = ch->payload;
	if (!bytes || h->offset % ch->payload ||
	    p >= s->first[h->sender + 1] - s->first[h->sender] || h->length != want) {
		ch->stats.packets_invalid++;
		return;
	}
	if (!or_cons_bit(s->need, s->first[h->sender] + p)) {
		op->packets_duplicate++;
		return;
	}
	memcpy(in->region + h->offset, payload, h->length);
	clear_bit(s->need, s->first[h->sender] + p);
	s->nneed--;
	s->fetched++;
	if (s->inflight)
		s->inflight--;
}

void or_cons_fetch_rx(struct or_chan *ch, const struct or_wire_hdr *h, const uint8_t *payload)
{
	if (h->flags & OR_WIRE_FLAG_REQUEST)
		serve(ch, h, payload);
	else
		arrived(ch, h, payload);
}
