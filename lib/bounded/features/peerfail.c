/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Peers that die, the bounded channel's side (docs/design.md, "Peers that die"): which
 * peers each running operation expects data from (liveness.h keeps their silence), the
 * check that judges one dead, and the FAILED notice that tells every other member at once.
 * Without the notice a rank that expects nothing from the dead one (the ring's other ranks)
 * would learn of the failure only from the silence of the rank that failed before it,
 * peer_timeout_ms per hop around the ring.
 */
#include <stdlib.h>

#include "../bounded_int.h"
#include "../wire.h"

/* How often a progress pass looks for a silent peer: the check walks every peer. */
#define OR_LIVENESS_CHECK_US 1000.0
/* Copies of each FAILED notice: one lost datagram must not cost a peer peer_timeout_ms. */
#define OR_FAILED_COPIES 3

void or_bd_peers_op_start(struct or_bounded *b, struct or_bounded_op *op)
{
	uint32_t size = op->c->size, slots = 0;
	double now = or_now_us();

	if (op->senders || !op->ph || !b->live.npeers)
		return;
	for (unsigned p = 0; p < op->nphases && slots < size; p++)
		slots += or_bd_inbound_slots(&op->ph[p], size);
	if (slots > size)
		slots = size;
	op->senders = calloc(slots ? slots : 1, sizeof(*op->senders));
	if (!op->senders)
		return; /* this operation only goes uncounted */
	for (unsigned p = 0; p < op->nphases; p++) {
		struct or_phase *ph = &op->ph[p];
		for (uint32_t i = 0, n = or_bd_inbound_slots(ph, size); i < n; i++) {
			uint32_t peer = ph->in[i].peer;
			if (!ph->in[i].npkts || op->nsenders >= slots ||
			    !or_liveness_mark(&b->live, peer, op->c->seq))
				continue;
			op->senders[op->nsenders++] = peer;
			or_liveness_expect(&b->live, peer, now);
		}
	}
}

void or_bd_peers_op_end(struct or_bounded *b, struct or_bounded_op *op)
{
	double now = or_now_us();

	for (uint32_t i = 0; i < op->nsenders; i++)
		or_liveness_release(&b->live, op->senders[i], now);
	free(op->senders);
	op->senders = NULL;
	op->nsenders = 0;
}

void or_bd_peers_heard(struct or_bounded *b, uint32_t peer)
{
	or_liveness_heard(&b->live, peer, b->rx_clock_us);
}

int or_bd_peers_check(struct or_bounded *b)
{
	double now, timeout_us;
	int dead;

	if (b->failed || !b->nops)
		return b->failed;
	now = or_now_us();
	if (now < b->live_next_us)
		return 0;
	b->live_next_us = now + OR_LIVENESS_CHECK_US;
	timeout_us = 1e3 * (double)or_bd_param_i(b, OR_P_PEER_TIMEOUT_MS);
	dead = or_liveness_dead(&b->live, now, timeout_us);
	if (dead < 0)
		return 0;
	or_log(OR_LOG_WARN,
	       "rank %d sent nothing for %.0f ms of operations that expect data from it: "
	       "judged dead",
	       dead, or_liveness_silence(&b->live, (uint32_t)dead, now) / 1e3);
	b->dead_rank = dead;
	b->failed = -OPTIREDUCE_EPEER;
	return b->failed;
}

void or_bd_peers_failed_rx(struct or_bounded *b, const struct or_wire_hdr *h)
{
	if (b->failed)
		return;
	b->failed = -OPTIREDUCE_EPEER;
	b->notified = 1; /* told by a peer, which told everybody: not passed on */
	if (h->offset != OR_WIRE_NO_RANK)
		or_log(OR_LOG_WARN, "rank %u reports that rank %u died: the communicator fails",
		       h->sender, h->offset);
	else
		or_log(OR_LOG_WARN, "rank %u reports that its communicator failed: this one fails",
		       h->sender);
}

static void send_notice(struct or_bounded *b, uint32_t peer, const struct or_wire_hdr *h)
{
	static const uint8_t none[1];

	/* 1: no send buffer free; reaping gives back those whose sends completed. */
	for (int tries = 0; tries < 3; tries++) {
		if (or_bd_send_datagram(b, NULL, peer, h, none) != 1)
			return;
		or_bd_reap(b);
	}
}

void or_bounded_fail(struct or_bounded *b, int err)
{
	struct or_wire_hdr h = {0};
	uint32_t size;

	if (!b || b->notified)
		return;
	b->notified = 1;
	if (!b->failed)
		b->failed = err < 0 ? err : -OPTIREDUCE_EPEER;
	size = b->comm->size;
	h.magic = OR_WIRE_MAGIC;
	h.version = OR_WIRE_VERSION;
	h.flags = OR_WIRE_FLAG_CONTROL | OR_WIRE_FLAG_FAILED;
	h.comm_id = b->comm->id;
	h.sender = b->comm->rank;
	h.seq = b->seq_lo;
	h.offset = b->dead_rank >= 0 ? (uint32_t)b->dead_rank : OR_WIRE_NO_RANK;
	/* The rank judged dead too: one that was only stopped (SIGSTOP, a debugger) learns on
	 * waking that it was left behind, instead of waiting peer_timeout_ms for the others. */
	for (int copy = 0; copy < OR_FAILED_COPIES; copy++)
		for (uint32_t p = 0; p < size; p++)
			if (p != b->comm->rank)
				send_notice(b, p, &h);
	or_log(OR_LOG_DEBUG, "communicator failed (%s): told the other %u ranks",
	       optireduce_strerror(err), size - 1);
}
