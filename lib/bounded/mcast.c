/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multicast on the bounded channel (docs/design.md, "Multicast"), on the data path: which
 * phases go to the group, its probes and looped-back datagrams on receipt, a group that
 * refuses sends.  The group itself (join, probe, decision) is mcast_group.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounded_int.h"
#include "wire.h"

unsigned or_bounded_mcast_state(const struct or_bounded *b)
{
	if (!b)
		return 0;
	return OR_MCAST_PRESENT | ((unsigned)b->mc.want & OR_MCAST_WANT) |
	       (b->mc.joined ? OR_MCAST_JOINED : 0);
}

int or_bd_mcast_rx(struct or_bounded *b, const struct or_wire_hdr *h, uint32_t src,
                   int check_source)
{
	struct or_wire_expect e = {.comm_id = b->comm->id, .nranks = b->comm->size};
	int ret;

	/* Our own datagram, looped back where IP_MULTICAST_LOOP could not be cleared. */
	if (b->mc.joined && h->sender == b->comm->rank && src == b->comm->rank)
		return 1;
	if (!(h->flags & OR_WIRE_FLAG_PROBE))
		return 0;
	ret = or_wire_validate_probe(h, &e);
	if (ret == OR_WIRE_ECOMM) {
		b->stats.packets_stranger++;
		return 1;
	}
	if (ret || h->sender == b->comm->rank ||
	    (check_source && src < b->comm->size && src != h->sender)) {
		b->stats.packets_invalid++;
		or_log(OR_LOG_PACKET, "dropped multicast probe: %s",
		       ret ? or_wire_reject_name(ret) : "not from its sender");
		return 1;
	}
	if (b->mc.heard && !b->mc.heard[h->sender]) {
		b->mc.heard[h->sender] = 1;
		b->mc.nheard++;
	}
	return 1;
}

int or_bounded_mcast_describe(const struct or_bounded *b, char *buf, size_t len)
{
	snprintf(buf, len, "%s", b->mc.why[0] ? b->mc.why : "not decided");
	return b->mc.on;
}

void or_bd_mcast_failed(struct or_bounded *b, int code)
{
	if (!b->mc.on)
		return;
	b->mc.on = 0;
	snprintf(b->mc.why, sizeof(b->mc.why), "the group refused a datagram (%s): unicast since",
	         or_ofi_send_error(b->ep));
	or_log(OR_LOG_WARN, "multicast off: %s (%s)", b->mc.why, optireduce_strerror(code));
}

/*
 * Every peer of ph gets one region: the same bytes from the same buffer, with the same
 * contributions.  Decided at the phase's first send, when its regions are all declared.
 */
int or_bd_phase_bcast(const struct or_bounded *b, struct or_phase *ph)
{
	const struct or_outbound *o0;

	if (ph->bcast)
		return ph->bcast > 0;
	ph->bcast = -1;
	if (b->comm->size < 3 || ph->norder != b->comm->size - 1)
		return 0;
	o0 = &ph->out[ph->order[0]];
	if (!o0->buf)
		return 0;
	for (uint32_t i = 1; i < ph->norder; i++) {
		const struct or_outbound *o = &ph->out[ph->order[i]];
		if (o->buf != o0->buf || o->bytes != o0->bytes || o->contrib != o0->contrib ||
		    o->stride != o0->stride || o->npkts != o0->npkts)
			return 0;
	}
	ph->bcast = o0->npkts > 0 ? 1 : -1;
	return ph->bcast > 0;
}
