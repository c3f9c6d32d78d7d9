/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wire header of the bounded channel: see wire.h for the layout.
 */
#include <errno.h>

#include "lib/bounded/wire.h"

#define CHECK_OFF 42

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return get16(p) | (uint32_t)get16(p + 2) << 16;
}

static uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

/*
 * Fletcher-16: any single bit flip changes the first sum (2^k is never a
 * multiple of 255), and the position-weighted second sum catches most swapped
 * or shifted bytes that a plain sum would miss.  It guards against corruption,
 * not forgery: validate() is what keeps memory safe.
 */
static uint16_t fletcher16(const uint8_t *p, size_t n)
{
	uint32_t a = 0, b = 0;

	/* Reduced once at the end, which gives the same sums: over the 42 header bytes they
	 * stay below 2^32, and two divisions per byte were 15 % of the receive path's CPU. */
	for (size_t i = 0; i < n; i++) {
		a += p[i];
		b += a;
	}
	return (uint16_t)((b % 255) << 8 | (a % 255));
}

int or_wire_encode(const struct or_wire_hdr *h, void *buf, size_t buflen)
{
	uint8_t *p = buf;

	if (buflen < OR_WIRE_HDR_SIZE)
		return -EMSGSIZE;
	put32(p + 0, h->magic);
	p[4] = h->version;
	p[5] = h->flags;
	put16(p + 6, h->step);
	put32(p + 8, h->comm_id);
	put32(p + 12, h->sender);
	put64(p + 16, h->seq);
	put32(p + 24, h->offset);
	put16(p + 28, h->length);
	put16(p + 30, h->contrib);
	put32(p + 32, h->timeout_est_us);
	put16(p + 36, h->loss);
	put32(p + 38, h->phase_us);
	put16(p + CHECK_OFF, fletcher16(p, CHECK_OFF));
	return OR_WIRE_HDR_SIZE;
}

int or_wire_decode(const void *pkt, size_t pktlen, struct or_wire_hdr *h)
{
	const uint8_t *p = pkt;

	if (pktlen < OR_WIRE_HDR_SIZE)
		return OR_WIRE_ETRUNC;
	h->magic = get32(p + 0);
	if (h->magic != OR_WIRE_MAGIC)
		return OR_WIRE_EMAGIC;
	h->version = p[4];
	if (h->version != OR_WIRE_VERSION)
		return OR_WIRE_EVERSION;
	/*
	 * The check comes before the fields it covers so that a damaged
	 * header is counted as corruption rather than as a protocol error.
	 */
	if (get16(p + CHECK_OFF) != fletcher16(p, CHECK_OFF))
		return OR_WIRE_ECHECK;
	h->flags = p[5];
	if (h->flags & ~OR_WIRE_FLAGS_KNOWN)
		return OR_WIRE_EFLAGS;
	h->step = get16(p + 6);
	h->comm_id = get32(p + 8);
	h->sender = get32(p + 12);
	h->seq = get64(p + 16);
	h->offset = get32(p + 24);
	h->length = get16(p + 28);
	h->contrib = get16(p + 30);
	h->timeout_est_us = get32(p + 32);
	h->loss = get16(p + 36);
	h->phase_us = get32(p + 38);
	if (pktlen - OR_WIRE_HDR_SIZE < h->length)
		return OR_WIRE_ETRUNC;
	if (pktlen - OR_WIRE_HDR_SIZE > h->length)
		return OR_WIRE_ELENGTH;
	return OR_WIRE_OK;
}

int or_wire_validate(const struct or_wire_hdr *h, const struct or_wire_expect *e)
{
	if (h->comm_id != e->comm_id)
		return OR_WIRE_ECOMM;
	if (h->sender >= e->nranks)
		return OR_WIRE_ERANK;
	if (h->flags & (OR_WIRE_FLAG_FAILED | OR_WIRE_FLAG_PROBE | OR_WIRE_FLAG_CONSIST))
		return OR_WIRE_EFLAGS; /* or_wire_validate_failed, _probe, _consist */
	if (h->seq < e->seq_lo)
		return OR_WIRE_EWINDOW_OLD;
	if (h->seq >= e->seq_hi)
		return OR_WIRE_EWINDOW_NEW;
	if (h->step >= e->nsteps)
		return OR_WIRE_ESTEP;
	if (h->flags & OR_WIRE_FLAG_REQUEST) {
		/* Ranges only: not a LAST, not data, nothing summed. */
		if (h->flags & ~OR_WIRE_FLAG_REQUEST)
			return OR_WIRE_EFLAGS;
		if (h->length == 0 || h->length % OR_WIRE_RANGE_SIZE || h->offset || h->contrib)
			return OR_WIRE_ELENGTH;
		/* Its ranges name the sender's region, which the sender checks them against
		 * (or_wire_ranges_decode): nothing of it is written to a receive region. */
		return OR_WIRE_OK;
	} else if (h->flags & OR_WIRE_FLAG_CONTROL) {
		if (h->length != 0)
			return OR_WIRE_ELENGTH;
	} else {
		/* An empty data packet carries nothing yet would count as received. */
		if (h->length == 0)
			return OR_WIRE_ELENGTH;
		if (h->contrib == 0 || h->contrib > e->max_contrib)
			return OR_WIRE_ECONTRIB;
	}
	/* Summed in 64 bits: offset + length may exceed UINT32_MAX. */
	if ((uint64_t)h->offset + h->length >
	    (e->step_bytes ? e->step_bytes(e->arg, h->seq, h->step) : UINT32_MAX))
		return OR_WIRE_EBOUNDS;
	return OR_WIRE_OK;
}

int or_wire_validate_failed(const struct or_wire_hdr *h, const struct or_wire_expect *e)
{
	if (h->comm_id != e->comm_id)
		return OR_WIRE_ECOMM;
	if (h->sender >= e->nranks)
		return OR_WIRE_ERANK;
	if (h->flags != (OR_WIRE_FLAG_CONTROL | OR_WIRE_FLAG_FAILED))
		return OR_WIRE_EFLAGS;
	if (h->step || h->length || h->contrib)
		return OR_WIRE_ELENGTH;
	if (h->offset >= e->nranks && h->offset != OR_WIRE_NO_RANK)
		return OR_WIRE_ERANK;
	return OR_WIRE_OK;
}

int or_wire_validate_probe(const struct or_wire_hdr *h, const struct or_wire_expect *e)
{
	if (h->comm_id != e->comm_id)
		return OR_WIRE_ECOMM;
	if (h->sender >= e->nranks)
		return OR_WIRE_ERANK;
	if (h->flags != (OR_WIRE_FLAG_CONTROL | OR_WIRE_FLAG_PROBE))
		return OR_WIRE_EFLAGS;
	if (h->seq || h->step || h->offset > OR_WIRE_PROBE_UNICAST || h->length || h->contrib)
		return OR_WIRE_ELENGTH;
	return OR_WIRE_OK;
}

int or_wire_validate_consist(const struct or_wire_hdr *h, const struct or_wire_expect *e)
{
	if (h->comm_id != e->comm_id)
		return OR_WIRE_ECOMM;
	if (h->sender >= e->nranks)
		return OR_WIRE_ERANK;
	if (h->flags == OR_WIRE_FLAG_CONSIST) {
		if (h->length == 0)
			return OR_WIRE_ELENGTH;
	} else if (h->flags == (OR_WIRE_FLAG_CONSIST | OR_WIRE_FLAG_CONTROL)) {
		if (h->length || h->offset)
			return OR_WIRE_ELENGTH;
	} else if (h->flags == (OR_WIRE_FLAG_CONSIST | OR_WIRE_FLAG_REQUEST)) {
		if (h->length == 0 || h->length % OR_WIRE_RANGE_SIZE || h->offset)
			return OR_WIRE_ELENGTH;
	} else if (h->flags == (OR_WIRE_FLAG_CONSIST | OR_WIRE_FLAG_RESENT)) {
		if (h->length == 0)
			return OR_WIRE_ELENGTH;
	} else {
		return OR_WIRE_EFLAGS;
	}
	if (h->step || h->contrib)
		return OR_WIRE_ELENGTH;
	return OR_WIRE_OK;
}

int or_wire_ranges_decode(const void *payload, size_t len, size_t npkts, struct or_wire_range *out,
                          size_t max)
{
	const uint8_t *p = payload;
	size_t n = 0;

	if (len == 0 || len % OR_WIRE_RANGE_SIZE || len / OR_WIRE_RANGE_SIZE > max)
		return OR_WIRE_ERANGE;
	for (size_t off = 0; off < len; off += OR_WIRE_RANGE_SIZE) {
		struct or_wire_range r = {get32(p + off), get16(p + off + 4)};
		/* Summed in 64 bits: first + count may exceed UINT32_MAX. */
		if (r.count == 0 || (uint64_t)r.first + r.count > npkts)
			return OR_WIRE_ERANGE;
		out[n++] = r;
	}
	return (int)n;
}

size_t or_wire_ranges_encode(const struct or_wire_range *r, size_t n, void *buf)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < n; i++) {
		put32(p + i * OR_WIRE_RANGE_SIZE, r[i].first);
		put16(p + i * OR_WIRE_RANGE_SIZE + 4, r[i].count);
	}
	return n * OR_WIRE_RANGE_SIZE;
}

const char *or_wire_reject_name(int reason)
{
	switch (reason) {
	case OR_WIRE_OK:
		return "OK";
	case OR_WIRE_ETRUNC:
		return "ETRUNC";
	case OR_WIRE_EMAGIC:
		return "EMAGIC";
	case OR_WIRE_EVERSION:
		return "EVERSION";
	case OR_WIRE_EFLAGS:
		return "EFLAGS";
	case OR_WIRE_ECHECK:
		return "ECHECK";
	case OR_WIRE_ELENGTH:
		return "ELENGTH";
	case OR_WIRE_ECOMM:
		return "ECOMM";
	case OR_WIRE_ERANK:
		return "ERANK";
	case OR_WIRE_EWINDOW_OLD:
		return "EWINDOW_OLD";
	case OR_WIRE_EWINDOW_NEW:
		return "EWINDOW_NEW";
	case OR_WIRE_ESTEP:
		return "ESTEP";
	case OR_WIRE_EBOUNDS:
		return "EBOUNDS";
	case OR_WIRE_ECONTRIB:
		return "ECONTRIB";
	case OR_WIRE_ERANGE:
		return "ERANGE";
	}
	return "?";
}
