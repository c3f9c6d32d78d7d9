/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kernel transport's receive path after the socket (udp/rx.c): buffers as recvmmsg
 * fills them, each with the segment size UDP_GRO reports, staged and delivered into posted
 * receives of one size, through or_udp_stage and or_udp_deliver themselves.
 *
 * Input: byte 0, the receives posted (1..64); bytes 1-2, their size (little-endian, 1..
 * 9216); then slots, each 2 bytes of segment size, 2 bytes of length, and that many bytes
 * (cut at the input's end).  Every slot's bytes sit in a buffer of exactly their length,
 * so AddressSanitizer sees a read past a datagram.  Asserted: a completed receive holds at
 * most its size; its bytes lie inside its slot's received length, where the next datagram
 * of the slots in order lies (or, where its slot does not lend, in its own buffer), and
 * equal it; a datagram larger than the receive completes it with EMSGSIZE, no bytes and no
 * borrow; at most half the slots lend, each exactly the completions that point into it, and
 * none once they are posted again.
 */
#include <stdlib.h>
#include <string.h>

#include "udp/udp_int.h"
#include "fuzz_input.h"
#include "optireduce.h"

#define POSTED_MAX 64
#define POSTED_LEN 9216

static uint8_t posted[POSTED_MAX][POSTED_LEN];

/* The next datagram the slots hold, in order: where it starts and how long it is. */
struct cursor {
	uint8_t *slot[OR_UDP_RX_SLOTS];
	struct or_udp_span span[OR_UDP_RX_SLOTS][OR_UDP_SEGS_PER_SLOT];
	size_t len[OR_UDP_RX_SLOTS], nspan[OR_UDP_RX_SLOTS], nslot, s, k;
};

static const struct or_udp_span *next_datagram(struct cursor *c, uint8_t **base)
{
	while (c->s < c->nslot && c->k == c->nspan[c->s]) {
		c->s++;
		c->k = 0;
	}
	if (c->s == c->nslot)
		return NULL;
	*base = c->slot[c->s];
	return &c->span[c->s][c->k++];
}

/* Each slot lends as many datagrams as completed receives, not posted again, point into it. */
static int lent_right(const struct or_udp *u, const struct or_xport_xfer *x, size_t n,
                      const struct cursor *c)
{
	for (size_t s = 0; s < c->nslot; s++) {
		unsigned held = 0;
		for (size_t i = 0; i < n; i++) {
			const uint8_t *p = x[i].data;
			/* An empty slot's one datagram is empty and begins at the slot. */
			held += x[i].done && !x[i].error && p >= c->slot[s] &&
			        (p < c->slot[s] + c->len[s] || (p == c->slot[s] && !c->len[s]));
		}
		if (u->slot[s].lent != held)
			return 0;
	}
	return 1;
}

/* A completion against the datagram it should hold: sp of slot base, len bytes long, lent
 * where it lies or copied into the receive's own buffer. */
static int wrong(const struct or_xport_xfer *x, const struct or_udp_span *sp, const uint8_t *base,
                 size_t slot_len, size_t len, const uint8_t *own)
{
	int lent = x->data == base + sp->off && x->prov[OR_UDP_PROV_BORROW];
	int copied = x->data == own && !x->prov[OR_UDP_PROV_BORROW];

	if (x->src != 7)
		return 1;
	if (sp->len > len)
		return x->error != -OPTIREDUCE_EMSGSIZE || x->len || x->prov[OR_UDP_PROV_BORROW];
	return x->error || x->len != sp->len || !(lent || copied) || sp->off + sp->len > slot_len ||
	       memcmp(x->data, base + sp->off, sp->len);
}

/* At most half the slots lend, and u->lending counts them. */
static int lending_right(const struct or_udp *u)
{
	unsigned n = 0;

	for (unsigned i = 0; i < OR_UDP_RX_SLOTS; i++)
		n += u->slot[i].lends != 0;
	return n == u->lending && n <= OR_UDP_RX_SLOTS / 2;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct or_udp *u = calloc(1, sizeof(*u));
	static struct or_xport_xfer x[POSTED_MAX];
	struct cursor c = {0};
	size_t nposted, len, at = 3;

	if (!u || size < 3)
		return free(u), 0;
	memset(x, 0, sizeof(x)); /* zeroed before first posted (xfer.h) */
	nposted = 1 + data[0] % POSTED_MAX;
	len = 1 + (size_t)(data[1] | data[2] << 8) % POSTED_LEN;
	while (at + 4 <= size && c.nslot < OR_UDP_RX_SLOTS) {
		size_t gso = data[at] | data[at + 1] << 8, n = data[at + 2] | data[at + 3] << 8;
		at += 4;
		if (n > size - at)
			n = size - at;
		c.slot[c.nslot] = fuzz_copy(data + at, n);
		c.len[c.nslot] = n;
		u->slot[c.nslot].base = c.slot[c.nslot];
		or_udp_stage(u, &u->slot[c.nslot], n, gso, 7);
		c.nspan[c.nslot] = or_udp_split(n, gso, c.span[c.nslot], OR_UDP_SEGS_PER_SLOT);
		c.nslot++;
		at += n;
	}
	for (;;) {
		int done;
		/* Posting again gives back what the last round's completions borrowed. */
		for (size_t i = 0; i < nposted; i++)
			or_udp_recv(&u->base, posted[i], len, &x[i]);
		if (!lent_right(u, x, nposted, &c))
			abort();
		done = or_udp_deliver(u, (int)nposted);
		for (int i = 0; i < done; i++) {
			uint8_t *base;
			const struct or_udp_span *sp = next_datagram(&c, &base);
			if (!sp || wrong(&x[i], sp, base, c.len[c.s], len, posted[i]))
				abort();
		}
		if (!lent_right(u, x, nposted, &c) || !lending_right(u))
			abort();
		/* Receives left posted stay queued: give them back before posting again. */
		memset(&u->rxq, 0, sizeof(u->rxq));
		if (!done)
			break;
	}
	{
		uint8_t *base;
		if (next_datagram(&c, &base)) /* everything staged was delivered */
			abort();
	}
	for (size_t i = 0; i < c.nslot; i++)
		if (u->slot[i].lent || u->slot[i].staged) /* the last round's posts gave all back */
			abort();
	if (u->lending)
		abort();
	for (size_t i = 0; i < c.nslot; i++)
		free(c.slot[i]);
	free(u);
	return 0;
}
