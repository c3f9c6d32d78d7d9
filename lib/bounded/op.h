/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One bounded operation as the channel and its features see it: its phases, each with a
 * receive region per sender and a send region per peer, and what arrived, went out and
 * was lost.  Algorithms declare it through coll.h; features read and annotate it.
 */
#ifndef OR_BOUNDED_OP_H
#define OR_BOUNDED_OP_H

#include <stddef.h>
#include <stdint.h>

#include "lib/op/coll.h"

/* Phases of an algorithm that declares none (Transpose). */
#define OR_DEFAULT_PHASES 2

/* What this rank expects from one sender in one phase, and what arrived. */
struct or_inbound {
	uint32_t peer;
	uint8_t *region;
	size_t bytes;
	size_t npkts;
	size_t got_pkts;
	uint8_t *seen; /* one byte per packet: simpler than bits, and small next to the data */
	int last_seen;
	double first_us; /* when its first packet came, parked or not: the sender had begun */
	double began_us; /* when the sender began the phase, as its packets say; 0 unknown */
	uint8_t waited;  /* catch_up: this first phase waits for the sender (features/catchup.c) */
};

/* What this rank sends to one peer in one phase. */
struct or_outbound {
	uint32_t peer;
	const uint8_t *buf;
	size_t bytes;
	size_t npkts;
	size_t next; /* packets sent so far */
	size_t stride;
	uint16_t contrib;
};

struct or_phase {
	int begun;
	int closed;
	enum optireduce_phase_end end;
	double start_us;
	double end_us;
	uint64_t deadline_us; /* from start_us; phase 0's includes skew_us */
	/* deadline_anchor: how much later than this rank the last sender began (phase 0). */
	double skew_us;
	double last_arrival_us;
	double last_flag_us; /* when the newest sender's LAST came (trace) */
	uint32_t senders_expected;
	uint32_t senders_last;
	uint64_t bytes_expected;
	uint64_t bytes_received;
	/*
	 * Peers of the phase.  With cap == comm size, in[] and out[] are indexed by rank;
	 * with a smaller cap (an algorithm that declared few peers per phase, like the ring's
	 * one neighbour each way) they are lists of nin / nout entries searched by peer.
	 */
	uint32_t cap;
	uint32_t nin, nout;
	struct or_inbound *in;   /* [cap] */
	struct or_outbound *out; /* [cap] */
	uint32_t *order;         /* indices into out[] in send order (incast rotation) */
	uint32_t norder;
	uint32_t group; /* first index in order of the current incast group */
	uint32_t incast;
	uint32_t turn; /* next peer of the group to send to: round-robin survives token waits */
	int sent_all;
	double sent_all_us; /* when this rank's last packet of the phase left */
	/* Every peer gets the same region (Transpose's second phase): 1, -1 not, 0 unknown yet;
	 * with multicast on, it goes once to the group (mcast_group.c). */
	int bcast;
	/* Of pace.rate_mbps, what this phase sends at to the group; -1: it goes to each peer;
	 * 0 until its first send decides (or_bd_mcast_phase). */
	double mc_share;
	/* Newest packet that was not a resend, when the phase asked for repair; else 0. */
	double first_pass_us;
};

/* Where phase deadlines count from: the phase's start, later by the anchor's skew. */
static inline double or_bd_phase_anchor_us(const struct or_phase *ph)
{
	return ph->start_us + ph->skew_us;
}

/* The deadline the controller decided for the phase, without the anchor's skew. */
static inline double or_bd_phase_base_deadline_us(const struct or_phase *ph)
{
	return (double)ph->deadline_us - ph->skew_us;
}

struct or_bounded_op {
	struct or_coll *c;
	size_t block_elems;
	size_t user_bytes;    /* the operation's size as the application gave it */
	unsigned scratch_set; /* its row of or_bounded.scratch */
	/* Declared by the algorithm (or_bop_set_phases), allocated on first use. */
	struct or_phase *ph;
	unsigned nphases;
	unsigned status_split; /* phases [0, split) report in status slot 0, the rest in 1 */
	/*
	 * What the network took: pacing follows it instead of probing past it.  sent_bytes
	 * counts every packet the channel sent while a phase of this operation was sending,
	 * its own and those of operations beside it, so the rate it took (over send_us) is the
	 * channel's, not the share this operation had of it.  A multicast phase, paced at a
	 * share of the link on purpose, counts in neither.
	 */
	uint64_t sent_bytes;
	double send_us;   /* summed over phases, from begin until the last packet left */
	uint64_t blocked; /* sends the endpoint refused (its socket buffer was full) */
	uint64_t sent_pkts;
	double start_us; /* the core's entry, before encoding: the timeline starts here */
	double encoded_us;
	double peer_loss; /* worst loss peers reported in this operation's packets, fraction */
	/* Its own packets: sent (or dropped by injection), received, duplicates, and those the
	 * host refused or could not send (lost, ctl/sendfail.h). */
	uint64_t packets_sent, packets_received, packets_duplicate, packets_send_failed;
	/* Datagrams of phases that send one region to every peer: once to the group, or to
	 * each peer (optireduce_status.bcast_multicast, bcast_unicast). */
	uint64_t bcast_multicast, bcast_unicast;
	struct or_repair *rep; /* features/repair.c: asked for and resent; NULL: nothing */
	/* The algorithm leaves every phase's send regions as they were sent until its last
	 * phase closes (or_bop_keep_sends): earlier phases can be resent from them. */
	int sends_kept;
	/* The peers it expects data from, each once (features/peerfail.c): their silence counts while it
	 * runs. */
	uint32_t *senders;
	uint32_t nsenders;
	struct or_cons *cons; /* features/consistent.c: the agreement after the final phase; NULL: none */
	uint64_t recovered_bytes; /* what repair brought back: lost all the same, for pacing */
	/* A feature's own try (a multicast phase at the whole rate): pacing and the deadline
	 * learn nothing from this operation. */
	int controllers_skip;
};


/* What the network took of op's sends so far, in Mbit/s (bits per us); 0 before any
 * phase's last packet left. */
static inline double or_bd_op_took_mbps(const struct or_bounded_op *op)
{
	return op->send_us > 0 ? (double)op->sent_bytes * 8.0 / op->send_us : 0;
}

/* The endpoint refused op's sends often enough that the local link paced them. */
static inline int or_bd_op_link_bound(const struct or_bounded_op *op)
{
	return op->blocked * 100 > op->sent_pkts + 100;
}

/* The inbound slot of sender in ph, or NULL if the phase expects nothing from it. */
struct or_inbound *or_bd_inbound_of(struct or_phase *ph, uint32_t size, uint32_t sender);
/* The outbound slot to peer in ph, or NULL if the phase declared none. */
struct or_outbound *or_bd_outbound_of(struct or_phase *ph, uint32_t size, uint32_t peer);
/* Inbound slots of ph in use: every rank's (by rank) or the nin declared, in order. */
uint32_t or_bd_inbound_slots(const struct or_phase *ph, uint32_t size);
/* Slots of ph's in[] (out = 0) or out[] in use: by rank, or the first nin / nout. */
uint32_t or_bd_slots(const struct or_phase *ph, uint32_t size, int out);
/* The send order of a region of n packets: packet k goes k-th * stride mod n. */
size_t or_bd_stripe_stride(size_t n, size_t pkts_per_block);
/* The first phase of op still sending, or NULL. */
struct or_phase *or_bd_sending_phase(struct or_bounded_op *op, unsigned *step);
/* Most steps an operation on n ranks may declare (the 16-bit step field holds). */
uint16_t or_bd_max_steps(uint32_t n);

#endif /* OR_BOUNDED_OP_H */
