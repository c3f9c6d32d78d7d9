/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The narrow channel interface: what a feature of the bounded channel (features/) sees of
 * it.  A feature reads the communicator, the packet size and the counters of packets no
 * operation owns, keeps its own state behind its pointer here, and reaches the centre only
 * through the functions below: send a datagram, find an operation, find an inbound region
 * (op.h).  The centre reaches a feature only through its hooks and packet kinds
 * (feature.h), so no file of lib/bounded/ calls back into one that calls it.
 */
#ifndef OR_BOUNDED_CHAN_H
#define OR_BOUNDED_CHAN_H

#include <stddef.h>
#include <stdint.h>

#include "lib/core/internal.h"
#include "lib/bounded/op.h"
#include "lib/bounded/wire.h"

#define OR_BD_GROUP   UINT32_MAX /* the peer of a datagram sent once to the group */
#define OR_SEQ_WINDOW 64 /* how far ahead of the newest operation packets are parked */
/* Operations smaller than this many packets tell the incast nothing by their loss. */
#define OR_LOSS_MIN_PKTS 1024

struct or_tmo;
struct or_pacer;
struct or_bd_mcast;

/* The first member of the channel (struct or_bounded): the part features share. */
struct or_chan {
	struct optireduce_comm *comm;
	size_t payload;     /* bytes of a full packet's payload */
	double rx_clock_us; /* when the batch of datagrams being handled was drained */
	double own_loss;    /* loss this rank saw in its last operation, reported in headers */
	/* Packets no running operation owns (invalid, stale, parked, strangers), reported by
	 * the next operation that finishes; each operation counts its own (op.h). */
	struct optireduce_status stats;
	/* Each feature's state, behind its own pointer: NULL until the feature needs it. */
	struct or_repair_chan *repair;  /* features/repair.c */
	struct or_cons_chan *consist;   /* features/consistent.c */
	struct or_peers *peers;         /* features/peerfail.c */
	uint8_t *catch_up;              /* features/catchup.c: [size] */
	struct or_bd_mcast *mc;         /* features/mcast.c, the group's endpoint's state */
};

/* The channel's part that features see: its first member. */
static inline struct or_chan *or_chan_of(struct or_bounded *b)
{
	return (struct or_chan *)(void *)b;
}

static inline int64_t or_chan_param_i(const struct or_chan *ch, enum or_param_id id)
{
	return or_param_int(&ch->comm->params, id);
}

/* chan.c: the centre's services. */
/* The running operation seq, or NULL. */
struct or_bounded_op *or_chan_find_op(const struct or_chan *ch, uint64_t seq);
/* The i-th running operation, oldest first; NULL past the newest. */
struct or_bounded_op *or_chan_op(const struct or_chan *ch, unsigned i);
/* Operations [*lo, *next) are taken or were started: the oldest not finished here and one
 * past the newest started. */
void or_chan_window(const struct or_chan *ch, uint64_t *lo, uint64_t *next);
/* A header of this rank for operation seq's step: flags, offset and length are the caller's. */
void or_chan_header(const struct or_chan *ch, uint64_t seq, uint16_t step,
                    struct or_wire_hdr *h);
/*
 * One datagram to peer (or OR_BD_GROUP): 0, 1 when no send buffer is free, or < 0.  A
 * refusal counts against op (when not NULL) like a refused packet of its own data.
 */
int or_chan_send(struct or_chan *ch, struct or_bounded_op *op, uint32_t peer,
                 const struct or_wire_hdr *h, const uint8_t *payload);
/* The same, lost like data to injected loss: 1 if it left or was dropped that way. */
int or_chan_send_lossy(struct or_chan *ch, struct or_bounded_op *op, uint32_t peer,
                       const struct or_wire_hdr *h, const uint8_t *payload);
/*
 * Whether a control datagram that its kind validated (ret: 0 or an OR_WIRE_E* reason) may
 * act: one of another communicator is counted a stranger's, an invalid one or one a member
 * sent in another's name is counted invalid and logged as a dropped `what`.  Returns 1 to
 * act on it, 0 when it was dropped.
 */
int or_chan_admit(struct or_chan *ch, int ret, const struct or_wire_hdr *h, uint32_t src,
                  int check_source, const char *what);
/* Refills the token bucket; whether bytes may go now (tokens, and the endpoint's room). */
void or_chan_refill(struct or_chan *ch);
int or_chan_may_send(const struct or_chan *ch, size_t bytes);
/* Takes bytes from the bucket for a datagram that went (or was lost on purpose). */
void or_chan_spend(struct or_chan *ch, size_t bytes);
/* Reaps the endpoint's completions: send buffers come back. */
void or_chan_reap(struct or_chan *ch);
/* The timeout controller and the pacer, read by features that judge by them. */
struct or_tmo *or_chan_tmo(struct or_chan *ch);
const struct or_pacer *or_chan_pacer(const struct or_chan *ch);

#endif /* OR_BOUNDED_CHAN_H */
