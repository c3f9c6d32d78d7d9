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

#include "lib/bounded/feature.h"
#include "lib/bounded/ctl/liveness.h"
#include "lib/bounded/wire.h"

/* How often a progress pass looks for a silent peer: the check walks every peer. */
#define OR_LIVENESS_CHECK_US 1000.0
/* Copies of each FAILED notice: one lost datagram must not cost a peer peer_timeout_ms. */
#define OR_FAILED_COPIES 3

/* Their silence inside operations, the next check, and once the communicator failed here,
 * why (a negative code), the rank judged dead (or -1) and whether the other ranks were
 * told (or this rank was told by one). */
struct or_peers {
	struct or_liveness live;
	double next_us;
	int failed;
	int dead_rank;
	int notified;
};

static int open_chan(struct or_chan *ch)
{
	ch->peers = calloc(1, sizeof(*ch->peers));
	if (!ch->peers || or_liveness_init(&ch->peers->live, ch->comm->size))
		return -OPTIREDUCE_ENOMEM;
	ch->peers->dead_rank = -1;
	return 0;
}

static void close_chan(struct or_chan *ch)
{
	if (!ch->peers)
		return;
	or_liveness_fini(&ch->peers->live);
	free(ch->peers);
	ch->peers = NULL;
}

static void op_start(struct or_chan *ch, struct or_bounded_op *op)
{
	uint32_t size = op->c->size, slots = 0;
	double now = or_now_us();

	if (op->senders || !op->ph || !ch->peers->live.npeers)
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
			    !or_liveness_mark(&ch->peers->live, peer, op->c->seq))
				continue;
			op->senders[op->nsenders++] = peer;
			or_liveness_expect(&ch->peers->live, peer, now);
		}
	}
}

static void op_end(struct or_chan *ch, struct or_bounded_op *op)
{
	double now = or_now_us();

	for (uint32_t i = 0; i < op->nsenders; i++)
		or_liveness_release(&ch->peers->live, op->senders[i], now);
	free(op->senders);
	op->senders = NULL;
	op->nsenders = 0;
}

static void heard(struct or_chan *ch, uint32_t peer)
{
	or_liveness_heard(&ch->peers->live, peer, ch->rx_clock_us);
}

static int check(struct or_chan *ch)
{
	double now, timeout_us;
	int dead;

	if (ch->peers->failed || !or_chan_op(ch, 0))
		return ch->peers->failed;
	now = or_now_us();
	if (now < ch->peers->next_us)
		return 0;
	ch->peers->next_us = now + OR_LIVENESS_CHECK_US;
	timeout_us = 1e3 * (double)or_chan_param_i(ch, OR_P_PEER_TIMEOUT_MS);
	dead = or_liveness_dead(&ch->peers->live, now, timeout_us);
	if (dead < 0)
		return 0;
	or_log(OR_LOG_WARN,
	       "rank %d sent nothing for %.0f ms of operations that expect data from it: "
	       "judged dead",
	       dead, or_liveness_silence(&ch->peers->live, (uint32_t)dead, now) / 1e3);
	ch->peers->dead_rank = dead;
	ch->peers->failed = -OPTIREDUCE_EPEER;
	return ch->peers->failed;
}

/* A FAILED notice (OR_WIRE_KIND_FAILED, wire.h): from a member, in its own name, the
 * communicator fails here too; anything else is counted and dropped. */
int or_peers_failed_rx(struct or_chan *ch, const struct or_wire_hdr *h, const uint8_t *payload,
                       uint32_t src, int check_source)
{
	struct or_wire_expect e = {.comm_id = ch->comm->id, .nranks = ch->comm->size};
	int ret = or_wire_validate_failed(h, &e);

	(void)payload;
	if (!or_chan_admit(ch, ret, h, src, check_source, "FAILED notice"))
		return 0;
	if (ch->peers->failed)
		return 0;
	ch->peers->failed = -OPTIREDUCE_EPEER;
	ch->peers->notified = 1; /* told by a peer, which told everybody: not passed on */
	if (h->offset != OR_WIRE_NO_RANK)
		or_log(OR_LOG_WARN, "rank %u reports that rank %u died: the communicator fails",
		       h->sender, h->offset);
	else
		or_log(OR_LOG_WARN, "rank %u reports that its communicator failed: this one fails",
		       h->sender);
	return 0;
}

static void send_notice(struct or_chan *ch, uint32_t peer, const struct or_wire_hdr *h)
{
	static const uint8_t none[1];

	/* 1: no send buffer free; reaping gives back those whose sends completed. */
	for (int tries = 0; tries < 3; tries++) {
		if (or_chan_send(ch, NULL, peer, h, none) != 1)
			return;
		or_chan_reap(ch);
	}
}

static void fail(struct or_chan *ch, int err)
{
	struct or_wire_hdr h = {0};
	uint64_t next;
	uint32_t size;

	if (!ch->peers || ch->peers->notified)
		return;
	ch->peers->notified = 1;
	if (!ch->peers->failed)
		ch->peers->failed = err < 0 ? err : -OPTIREDUCE_EPEER;
	size = ch->comm->size;
	h.magic = OR_WIRE_MAGIC;
	h.version = OR_WIRE_VERSION;
	h.flags = OR_WIRE_FLAG_CONTROL | OR_WIRE_FLAG_FAILED;
	h.comm_id = ch->comm->id;
	h.sender = ch->comm->rank;
	or_chan_window(ch, &h.seq, &next);
	h.offset = ch->peers->dead_rank >= 0 ? (uint32_t)ch->peers->dead_rank : OR_WIRE_NO_RANK;
	/* The rank judged dead too: one that was only stopped (SIGSTOP, a debugger) learns on
	 * waking that it was left behind, instead of waiting peer_timeout_ms for the others. */
	for (int copy = 0; copy < OR_FAILED_COPIES; copy++)
		for (uint32_t p = 0; p < size; p++)
			if (p != ch->comm->rank)
				send_notice(ch, p, &h);
	or_log(OR_LOG_DEBUG, "communicator failed (%s): told the other %u ranks",
	       optireduce_strerror(err), size - 1);
}

const struct or_bd_feature or_peers_feature = {
    .name = "peer failure",
    .open = open_chan,
    .close = close_chan,
    .heard = heard,
    .op_start = op_start,
    .op_end = op_end,
    .progress = check,
    .fail = fail,
};
