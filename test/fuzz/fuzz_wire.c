/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the bounded channel's datagram header (lib/bounded/wire.c).  Whatever
 * bytes arrive, decode reads only the datagram, and a datagram that passes decode and
 * validate re-encodes to the same header and fits its step's region, and a FAILED notice
 * that passes its own validation names members only, and so does an agreement datagram
 * of parameter consistent (docs/design.md, "Wire format").
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/bounded/wire.h"
#include "fuzz_input.h"

/* The receiver: 5 ranks, operations [100, 164), three steps; step 1 expects nothing. */
static const uint32_t step_region[3] = {4096, 0, 1500};

static uint32_t step_bytes(void *arg, uint64_t seq, uint16_t step)
{
	(void)arg;
	if (seq < 100 || seq >= 164 || step >= 3)
		abort(); /* validate asks only about the window and declared steps */
	return step_region[step];
}

static const struct or_wire_expect expect = {
    .comm_id = 0x1234abcdu,
    .nranks = 5,
    .seq_lo = 100,
    .seq_hi = 164,
    .nsteps = 3,
    .step_bytes = step_bytes,
    .max_contrib = 5,
};

static void check_accepted(const uint8_t *pkt, size_t len, const struct or_wire_hdr *h)
{
	uint8_t again[OR_WIRE_HDR_SIZE];
	struct or_wire_hdr h2;

	if (len != OR_WIRE_HDR_SIZE + (size_t)h->length)
		abort();
	/* The header round-trips: nothing in it is ignored or reinterpreted. */
	if (or_wire_encode(h, again, sizeof(again)) != OR_WIRE_HDR_SIZE ||
	    memcmp(again, pkt, OR_WIRE_HDR_SIZE) != 0)
		abort();
	memset(&h2, 0, sizeof(h2)); /* the padding too: both are compared whole */
	if (or_wire_decode(again, len, &h2) != OR_WIRE_OK || memcmp(&h2, h, sizeof(h2)) != 0)
		abort();
	/* A FAILED notice names members only, and carries nothing. */
	if (or_wire_validate_failed(h, &expect) == OR_WIRE_OK &&
	    (h->sender >= expect.nranks || h->length || h->contrib || h->step ||
	     (h->offset >= expect.nranks && h->offset != OR_WIRE_NO_RANK)))
		abort();
	/* A multicast probe names a member and carries nothing. */
	if (or_wire_validate_probe(h, &expect) == OR_WIRE_OK &&
	    (h->sender >= expect.nranks || h->length || h->contrib || h->step ||
	     h->offset > OR_WIRE_PROBE_UNICAST || h->seq ||
	     or_wire_validate(h, &expect) == OR_WIRE_OK))
		abort();
	/* An agreement datagram (CONSIST) names a member, carries no step or contributions,
	 * and is never taken as data. */
	if (or_wire_validate_consist(h, &expect) == OR_WIRE_OK &&
	    (h->sender >= expect.nranks || h->step || h->contrib ||
	     !(h->flags & OR_WIRE_FLAG_CONSIST) || or_wire_validate(h, &expect) == OR_WIRE_OK))
		abort();
	if (or_wire_validate(h, &expect) == OR_WIRE_OK &&
	    ((uint64_t)h->offset + h->length > step_region[h->step] || h->sender >= expect.nranks ||
	     h->seq < expect.seq_lo || h->seq >= expect.seq_hi))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly size bytes, so that any read past the datagram is caught. */
	uint8_t *pkt = fuzz_copy(data, size);
	struct or_wire_hdr h;
	int ret;

	memset(&h, 0, sizeof(h));
	ret = or_wire_decode(pkt, size, &h);
	if (ret == OR_WIRE_OK)
		check_accepted(pkt, size, &h);
	else if (ret < OR_WIRE_ECONTRIB || ret > OR_WIRE_ETRUNC)
		abort(); /* an unknown reason would not be counted by name */
	if (!strcmp(or_wire_reject_name(ret), "?"))
		abort();
	free(pkt);
	return 0;
}
