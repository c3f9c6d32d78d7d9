/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to consistent.c and consistent_fetch.c: the agreement of parameter consistent
 * (docs/design.md, "Replica-consistent results").
 */
#ifndef OR_CONSISTENT_H
#define OR_CONSISTENT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/bounded/chan.h"

/* Own bitmaps kept to answer requests: while a peer waits for this rank's bitmap of
 * operation s, this rank starts nothing past s + 2 OR_INFLIGHT_MAX - 1 (docs/design.md,
 * "Replica-consistent results"). */
#define OR_CONS_KEPT        (2 * OR_INFLIGHT_MAX)
#define OR_CONS_COPIES      2     /* each fragment is sent twice when the phase closes */
#define OR_CONS_ASK_US      1000  /* first request for bitmaps this long after the close */
#define OR_CONS_ASK_MAXUS   5000  /* requests for bitmaps back off up to this gap */
#define OR_CONS_FETCH_US    2000  /* a fetch not answered is asked again after this, */
#define OR_CONS_FETCH_MAXUS 20000 /* backing off up to this gap */
#define OR_CONS_FETCH_PKTS  128   /* packets asked of one owner at a time */
#define OR_CONS_RANGES      64    /* ranges per request, 384 bytes: as repair's */
#define OR_CONS_SERVE_MAX   256   /* packets answered per request: the channel's send pool */

struct or_cons_kept {
	uint64_t seq;
	int valid;
	size_t nbytes;
	uint8_t *bits;
};

/* This rank's packets of its own shard that peers fetch (consistent_fetch.c), kept like
 * the bitmaps: idx[i] is the packet, data + i * payload its bytes, len[i] their count. */
struct or_cons_fkept {
	uint64_t seq;
	int valid;
	size_t n;
	uint32_t *idx;
	uint16_t *len;
	uint8_t *data;
};

struct or_cons_chan {
	struct or_cons_kept kept[OR_CONS_KEPT];
	struct or_cons_fkept fk[OR_CONS_KEPT];
};

struct or_cons {
	unsigned phase; /* the final phase */
	size_t nbits, nbytes, nfrag;
	size_t *first; /* [size + 1]: owner r's packets are bits first[r] .. first[r + 1] - 1 */
	uint8_t *uni;  /* union of the bitmaps heard, own included once closed */
	uint8_t *frag; /* [size * nfrag]: fragments heard from each peer */
	uint32_t *got; /* [size]: fragments heard from each peer */
	uint32_t done; /* peers whose whole bitmap was heard */
	int closed;
	double close_us, ask_us, ask_gap_us;
	uint64_t bytes, asks;
	/* Fetching blocks that lost everything from their owners (consistent_fetch.c). */
	int planned;
	uint8_t *need; /* bits as uni: packets this rank still fetches */
	size_t nneed;
	size_t inflight; /* packets asked for in the last round and not come yet */
	double fetch_us, fetch_gap_us;
	uint64_t fetched;
};

static inline int or_cons_bit(const uint8_t *m, size_t i)
{
	return m[i / 8] >> (i % 8) & 1;
}

/* consistent.c */
/* Packets of owner r's region of the final phase, as every rank counts them. */
size_t or_cons_owner_pkts(struct or_bounded_op *op, unsigned phase, uint32_t r);
/* The operation's agreement state, made on first use once its phases are declared. */
struct or_cons *or_cons_of(struct or_chan *ch, struct or_bounded_op *op);
/* consistent_fetch.c */
/* Elements of [lo, hi) (bytes of owner's region, packets from bit first) outside the union. */
size_t or_cons_agreed_elems(const struct or_chan *ch, const struct or_cons *s, size_t first,
                            size_t npkts, size_t lo, size_t hi, size_t es);
/* Once every bitmap is here: what to fetch, removed from the union, asked for. */
int or_cons_fetch_plan(struct or_chan *ch, struct or_bounded_op *op, struct or_cons *s);
/* 1 once every packet to fetch is here, else 0 (asking again when due). */
int or_cons_fetch_done(struct or_chan *ch, struct or_bounded_op *op, struct or_cons *s);
void or_cons_fetch_rx(struct or_chan *ch, const struct or_wire_hdr *h, const uint8_t *payload);
void or_cons_fkept_free(struct or_cons_fkept *k);

#endif /* OR_CONSISTENT_H */
