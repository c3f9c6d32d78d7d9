/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The narrow channel interface (chan.h): the centre's services that features use.  Each
 * is a thin door onto the centre's own code (send and pacing in tx.c), so that a feature
 * never needs struct or_bounded.  Reaping the endpoint is here, below rx.c and tx.c.
 */
#include <string.h>

#include "lib/bounded/bounded_int.h"

static struct or_bounded *bounded_of(struct or_chan *ch)
{
	return (struct or_bounded *)(void *)ch;
}

static const struct or_bounded *const_bounded_of(const struct or_chan *ch)
{
	return (const struct or_bounded *)(const void *)ch;
}

struct or_bounded_op *or_chan_find_op(const struct or_chan *ch, uint64_t seq)
{
	const struct or_bounded *b = const_bounded_of(ch);

	for (unsigned i = 0; i < b->nops; i++)
		if (b->ops[i]->c->seq == seq)
			return b->ops[i];
	return NULL;
}

struct or_bounded_op *or_chan_op(const struct or_chan *ch, unsigned i)
{
	const struct or_bounded *b = const_bounded_of(ch);

	return i < b->nops ? b->ops[i] : NULL;
}

int or_chan_admit(struct or_chan *ch, int ret, const struct or_wire_hdr *h, uint32_t src,
                  int check_source, const char *what)
{
	if (ret == OR_WIRE_ECOMM) {
		ch->stats.packets_stranger++;
		return 0;
	}
	if (ret || h->sender == ch->comm->rank ||
	    (check_source && src < ch->comm->size && src != h->sender)) {
		ch->stats.packets_invalid++;
		or_log(OR_LOG_PACKET, "dropped %s: %s", what,
		       ret ? or_wire_reject_name(ret) : "not from its sender");
		return 0;
	}
	return 1;
}

void or_chan_window(const struct or_chan *ch, uint64_t *lo, uint64_t *next)
{
	*lo = const_bounded_of(ch)->seq_lo;
	*next = const_bounded_of(ch)->seq_next;
}

void or_chan_header(const struct or_chan *ch, uint64_t seq, uint16_t step, struct or_wire_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->magic = OR_WIRE_MAGIC;
	h->version = OR_WIRE_VERSION;
	h->step = step;
	h->comm_id = ch->comm->id;
	h->sender = ch->comm->rank;
	h->seq = seq;
	h->loss = (uint16_t)(ch->own_loss * 65535.0);
}

int or_chan_send(struct or_chan *ch, struct or_bounded_op *op, uint32_t peer,
                 const struct or_wire_hdr *h, const uint8_t *payload)
{
	return or_bd_send_datagram(bounded_of(ch), op, peer, h, payload);
}

int or_chan_send_lossy(struct or_chan *ch, struct or_bounded_op *op, uint32_t peer,
                       const struct or_wire_hdr *h, const uint8_t *payload)
{
	if (or_bd_inject_drop(bounded_of(ch)))
		return 1;
	return or_bd_send_datagram(bounded_of(ch), op, peer, h, payload) == 0;
}

void or_chan_refill(struct or_chan *ch)
{
	or_bd_refill(bounded_of(ch));
}

int or_chan_may_send(const struct or_chan *ch, size_t bytes)
{
	const struct or_bounded *b = const_bounded_of(ch);

	return b->tokens >= (double)bytes && !(b->blocked && or_now_us() < b->blocked_until_us);
}

void or_chan_spend(struct or_chan *ch, size_t bytes)
{
	bounded_of(ch)->tokens -= (double)bytes;
}

/* Reaps completions into the ready queue and the free send list; returns how many. */
int or_bd_reap(struct or_bounded *b)
{
	int n;

	pthread_mutex_lock(&b->ofi_lock);
	n = or_dg_poll(b->ep, OR_REAP_MAX);
	pthread_mutex_unlock(&b->ofi_lock);
	return n;
}

void or_chan_reap(struct or_chan *ch)
{
	or_bd_reap(bounded_of(ch));
}

struct or_tmo *or_chan_tmo(struct or_chan *ch)
{
	return &bounded_of(ch)->tmo;
}

const struct or_pacer *or_chan_pacer(const struct or_chan *ch)
{
	return &const_bounded_of(ch)->pace;
}
