/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to lib/bounded/: the channel's state, shared by the files that each hold one
 * concern of it (channel set-up, progress thread, receive, send, phases, the estimate,
 * the operation).  The core sees only bounded.h.
 */
#ifndef OR_BOUNDED_INT_H
#define OR_BOUNDED_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "bounded.h"
#include "lib/core/internal.h"
#include "liveness.h"
#include "lib/bounded/ctl/pacing.h"
#include "sendfail.h"
#include "lib/bounded/ctl/sendq.h"
#include "lib/bounded/ctl/timeout.h"
#include "dgram/dgram.h"
#include "ofi/ofi.h"

struct or_wire_hdr;

#define OR_RX_RING    2048  /* most pre-posted receive buffers (udp takes 1024: 1.5 MB) */
#define OR_TX_POOL    256   /* send buffers in flight */
#define OR_PARK_MAX   16384 /* packets kept for operations not started yet */
#define OR_SEQ_WINDOW 64    /* how far ahead of the newest operation packets are parked */
#define OR_BURST_BYTES                                                                             \
	(16 * 1024) /* a receiver socket holds ~75 datagrams: bursts stay well below */
/*
 * Tokens also keep up to this long at the current rate: a sender that wakes late (two ranks
 * per core wait milliseconds for a CPU) catches up instead of losing the time.  16 KiB alone
 * is 0.6 ms at 200 Mbit/s, and 1 ms late wake-ups held senders to 120 Mbit/s.
 */
#define OR_BURST_US          3000.0
#define OR_INITIAL_RATE_MBPS 400.0
/* Operations smaller than this many packets tell the incast nothing by their loss. */
#define OR_LOSS_MIN_PKTS 1024
/*
 * A sender the endpoint refused does not try again for this many packets' time: the
 * socket holds ~90.  Retrying at once cost a failed system call per packet received
 * (receives keep the progress loop busy): eight refusals per packet sent, and the CPU
 * two ranks per core need (4 MiB at 200 Mbit/s: 36,000 refusals, 200 ms of CPU per rank
 * per 300 ms operation).
 */
#define OR_BLOCKED_SLEEP_PKTS 16.0
/* A datagram the endpoint keeps refusing (EAGAIN) this long is counted as lost (sendfail.h). */
#define OR_SEND_RETRY_US 50000.0
/* An application that polled this recently is progressing its operation itself. */
#define OR_APP_ACTIVE_US 2000
/* The line rate the progress thread's longest sleep is sized for (see progress.c). */
#define OR_IDLE_LINE_MBPS 10000
/* Longest the idle progress thread sleeps in poll(): bounds a missed wake-up, nothing else. */
#define OR_IDLE_POLL_MS 100
/* Phases of an algorithm that declares none (Transpose). */
#define OR_DEFAULT_PHASES 2

struct or_rxbuf {
	struct or_xport_xfer x; /* first: the completion context */
	struct or_bounded *b;
	uint8_t *buf;
	int group; /* posted on the multicast group's endpoint (mcast.c) */
};

struct or_txbuf {
	struct or_xport_xfer x;
	struct or_bounded *b;
	uint8_t *buf;
	struct or_txbuf *next;
};

struct or_parked {
	uint16_t len;
	uint8_t *data;
	double arrived_us; /* when it came (or_inbound.first_us) */
};

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
	uint8_t waited;  /* catch_up: this first phase waits for the sender (catchup.c) */
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
	 * with multicast on, it goes once to the group (mcast.c). */
	int bcast;
	/* Of pace.rate_mbps, what this phase sends at to the group; -1: it goes to each peer;
	 * 0 until its first send decides (or_bd_mcast_phase). */
	double mc_share;
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
	 * host refused or could not send (lost, lib/bounded/sendfail.h). */
	uint64_t packets_sent, packets_received, packets_duplicate, packets_send_failed;
	/* Datagrams of phases that send one region to every peer: once to the group, or to
	 * each peer (optireduce_status.bcast_multicast, bcast_unicast). */
	uint64_t bcast_multicast, bcast_unicast;
	struct or_repair *rep; /* repair.c: what was asked for and resent; NULL: nothing */
	/* The algorithm leaves every phase's send regions as they were sent until its last
	 * phase closes (or_bop_keep_sends): earlier phases can be resent from them. */
	int sends_kept;
	/* The peers it expects data from, each once (peerfail.c): their silence counts while it
	 * runs. */
	uint32_t *senders;
	uint32_t nsenders;
	struct or_cons *cons; /* consistent.c: the agreement after the final phase; NULL: none */
};

/* Multicast (mcast.c, docs/design.md "Multicast"). */
struct or_bd_mcast {
	int want;       /* parameter multicast: OR_MCAST_AUTO, _ON or _OFF */
	int joined;     /* this rank's endpoint joined the group */
	int on;         /* every rank heard every other: phases with bcast go to the group */
	uint32_t group; /* IPv4 address, host byte order */
	uint16_t port;
	uint8_t *heard; /* [size]: bit 0, that rank's probe came over the group; bit 1, its
	                 * unicast copy came (it had begun probing) */
	uint32_t nheard, nbegun;
	double begun_us; /* when the last rank's unicast copy came */
	/* Of the pacer's rate, what a multicast phase sends at: 1/(N-1) (each receiver gets
	 * what unicast gives it), or 1 once clean_ops operations in a row lost no more in it
	 * than in their other phases, until it does (mcast.c, or_bd_mcast_op_end). */
	double share;
	unsigned clean, clean_ops;
	char why[200]; /* why multicast is off, or where it goes */
};

struct or_bounded {
	struct optireduce_comm *comm;
	struct or_dgram *ep;
	struct or_bd_mcast mc;
	size_t nrx_main; /* rx[0, nrx_main) are posted on ep, the rest on the group's endpoint */
	size_t max_msg;
	size_t payload;
	size_t stride; /* bytes from one pool buffer to the next: the prefix, then max_msg */
	struct or_rxbuf rx[OR_RX_RING];
	size_t nrx; /* receive buffers in use: OR_RX_RING or what the endpoint accepts */
	uint8_t *rx_mem;
	struct or_txbuf tx[OR_TX_POOL];
	uint8_t *tx_mem;
	struct or_txbuf *tx_free;
	struct or_parked *park;
	size_t nparked;
	double rx_clock_us; /* when the batch of datagrams being handled was drained (rx.c) */
	/* The running operations, oldest first (docs/design.md, "Operations in flight"). */
	struct or_bounded_op *ops[OR_INFLIGHT_MAX];
	unsigned nops;
	/* Packets of [seq_lo, seq_hi) are taken: from the oldest operation not finished on this
	 * rank to OR_SEQ_WINDOW past the newest started (op.c, update_window). */
	uint64_t seq_lo;
	uint64_t seq_hi;
	uint64_t seq_next; /* one past the newest operation started on this rank */
	/* pacing */
	struct or_pacer pace;
	double tokens;
	double last_refill_us;
	double own_loss;         /* loss this rank saw in its last operation, reported in headers */
	int blocked;             /* the last send found the endpoint full */
	double blocked_until_us; /* no send is tried before this after a refusal */
	double refused_since_us; /* the endpoint has refused the current datagram since */
	struct or_sendfail sendfail;
	uint64_t tx_failed; /* send completions with an error status (under ofi_lock) */
	uint64_t tx_handed; /* datagrams the endpoint took (under ofi_lock) */
	struct or_sendq sendq; /* the socket's queue: its drain rate, the buffer and the hold */
	double queue_hold_until_us; /* first-pass data waits in the library until then */
	int queue_holding;          /* the hold applies (logged when it changes) */
	int queue_held_once;        /* the hold began at least once */
	double share; /* of pace.rate_mbps the current incast group may use, see or_bd_pump() */
	uint64_t inject_state;
	struct or_tmo tmo;
	uint32_t *tmo_store;
	/* Packets no running operation owns (invalid, stale, parked), reported by the next
	 * operation that finishes; each operation counts its own in or_bounded_op. */
	struct optireduce_status stats;
	/*
	 * Two locks.  lock (recursive) guards the operation state above and is held by the
	 * core while it works on the communicator.  ofi_lock guards the endpoint (libfabric
	 * calls, FI_THREAD_DOMAIN), the free send buffers and the ready queue: receive
	 * buffers whose packet was reaped but not handled yet (handling needs lock).
	 */
	pthread_mutex_t lock;
	pthread_mutex_t ofi_lock;
	struct or_rxbuf *ready[OR_RX_RING];
	size_t ready_head, ready_count;
	pthread_t thread;
	int thread_running;
	volatile int thread_stop;
	size_t rcvbuf; /* the datagram socket's receive buffer, bytes; 0 if unknown */
	int wait_fd;   /* readable when the endpoint has completions; -1: sleep and poll instead */
	int wake[2];   /* a pipe: destroy wakes the progress thread out of poll() */
	int app_wake_fd; /* the communicator's wake-up: the application's waits end on it */
	/* While operations run and the application keeps calling in, the progress thread
	 * waits on op_done (with lock) instead of polling: see progress.c. */
	pthread_cond_t op_done;
	volatile int in_op; /* nops > 0, read without lock */
	/* The application's waits for lock while the progress thread held it, since the last
	 * operation finished: the price of a thread that wakes for every early datagram. */
	unsigned lock_waits;
	double lock_wait_us;
	double app_us; /* the application's last poll or wait */
	/* Algorithms' buffers, kept across operations: one row per operation in flight. */
	void *scratch[OR_INFLIGHT_MAX][OR_BOP_SCRATCH_SLOTS];
	size_t scratch_cap[OR_INFLIGHT_MAX][OR_BOP_SCRATCH_SLOTS];
	uint64_t scratch_busy;         /* rows held by running operations, a bit each */
	struct or_repair_chan *repair; /* repair.c: round trip, final phases kept; may be NULL */
	uint8_t *catch_up; /* [size], catchup.c: wait for the sender in the next first phase */
	struct or_cons_chan *consist; /* consistent.c: own bitmaps kept for requests; may be NULL */
	/* Peers that die (peerfail.c): their silence inside operations, the next check, and
	 * once the communicator failed here, why (a negative code), the rank judged dead (or
	 * -1) and whether the other ranks were told (or this rank was told by one). */
	struct or_liveness live;
	double live_next_us;
	int failed;
	int dead_rank;
	int notified;
};

_Static_assert(OR_INFLIGHT_MAX <= 64, "scratch_busy has a bit per operation in flight");

static inline double or_bd_param_d(const struct or_bounded *b, enum or_param_id id)
{
	return or_param_double(&b->comm->params, id);
}

static inline int64_t or_bd_param_i(const struct or_bounded *b, enum or_param_id id)
{
	return or_param_int(&b->comm->params, id);
}

static inline const char *or_bd_param_s(const struct or_bounded *b, enum or_param_id id)
{
	return or_param_str(&b->comm->params, id);
}

/* endpoint.c: the datagram endpoint, opened on the transport the parameters choose. */
int or_bd_open_endpoint(struct or_bounded *b, int same_host);
void or_bd_close_endpoint(struct or_bounded *b);

/* progress.c */
void or_bd_sleep_us(long us);
void or_bd_progress_start(struct or_bounded *b);
/* sndbuf.c: the send buffer at connect, then sized by readings of its queue, which also
 * hold first-pass data back (queue_hold_us). */
void or_bd_sndbuf_init(struct or_bounded *b);
void or_bd_sndbuf_reading(struct or_bounded *b);
/* Whether first-pass data waits now: the host's queue holds more than queue_hold_us. */
int or_bd_queue_held(struct or_bounded *b);
void or_bd_progress_stop(struct or_bounded *b);

/* channel.c */
struct or_phase *or_bd_sending_phase(struct or_bounded_op *op, unsigned *step);

/* rx.c */
int or_bd_rx_post_all(struct or_bounded *b);
int or_bd_reap(struct or_bounded *b);
int or_bd_drain_ready(struct or_bounded *b);
void or_bd_replay_parked(struct or_bounded *b, struct or_bounded_op *op);
/* The running operation seq, or NULL. */
struct or_bounded_op *or_bd_running_op(const struct or_bounded *b, uint64_t seq);
uint16_t or_bd_max_steps(uint32_t n);

/* tx.c */
void or_bd_tx_init(struct or_bounded *b);
void or_bd_refill(struct or_bounded *b);
int or_bd_pump(struct or_bounded *b, struct or_bounded_op *op, unsigned step);
/* Hands what is queued on the endpoint to the network (the pump does at its end). */
void or_bd_flush(struct or_bounded *b);
uint32_t or_bd_unsent_peers(const struct or_phase *ph);

/* catchup.c (catch_up): first phases record whom they cut whole, the next first phase
 * waits for those, once (or_inbound.waited; phase.c's silent_senders() leaves them out). */
void or_bd_catchup_begin(struct or_bounded *b, struct or_phase *ph, uint32_t size);
void or_bd_catchup_closed(struct or_bounded *b, const struct or_phase *ph, uint32_t size);
void or_bd_catchup_free(struct or_bounded *b);

/* repair.c (docs/design.md, "Repair inside the deadline") */
int or_bd_repair_on(const struct or_bounded *b);
int or_bd_repair_rx(struct or_bounded *b, const struct or_wire_hdr *h, const uint8_t *payload);
void or_bd_repair_arrived(struct or_bounded *b, struct or_bounded_op *op,
                          const struct or_wire_hdr *h, const struct or_inbound *in);
int or_bd_repair_progress(struct or_bounded *b);
int or_bd_repair_hold(struct or_bounded *b, struct or_bounded_op *op, unsigned phase);
void or_bd_repair_phase_closed(struct or_bounded *b, struct or_bounded_op *op, unsigned phase);
double or_bd_repair_first_pass_us(const struct or_bounded_op *op, unsigned phase);
uint64_t or_bd_repair_recovered_bytes(const struct or_bounded_op *op);
void or_bd_repair_status(struct or_bounded *b, struct or_bounded_op *op);
void or_bd_repair_free_op(struct or_bounded_op *op);
void or_bd_repair_free(struct or_bounded *b);

/* tx.c, for repair.c: one datagram to peer; 0, 1 (no send buffer free) or < 0. */
int or_bd_send_datagram(struct or_bounded *b, struct or_bounded_op *op, uint32_t peer,
                        const struct or_wire_hdr *h, const uint8_t *payload);

/* consistent.c (docs/design.md, "Replica-consistent results") */
int or_bd_consist_on(const struct or_bounded *b);
/* A datagram flagged CONSIST: always taken (0), counted when dropped. */
int or_bd_consist_rx(struct or_bounded *b, const struct or_wire_hdr *h, const uint8_t *payload);
void or_bd_consist_free_op(struct or_bounded_op *op);
void or_bd_consist_free(struct or_bounded *b);

/* peerfail.c (docs/design.md, "Peers that die") */
void or_bd_peers_op_start(struct or_bounded *b, struct or_bounded_op *op);
void or_bd_peers_op_end(struct or_bounded *b, struct or_bounded_op *op);
void or_bd_peers_heard(struct or_bounded *b, uint32_t peer);
/* 0, or the communicator's failure: a peer judged dead now, or before, or reported. */
int or_bd_peers_check(struct or_bounded *b);
/* A validated FAILED notice from a member. */
void or_bd_peers_failed_rx(struct or_bounded *b, const struct or_wire_hdr *h);

/* mcast.c (docs/design.md, "Multicast") */
#define OR_BD_GROUP          UINT32_MAX /* the peer of a datagram sent once to the group */
#define OR_MCAST_FIRST_TRY   4          /* clean operations before the whole rate is tried */
#define OR_MCAST_LAST_TRY    256        /* the longest wait between tries */
#define OR_MCAST_EXCESS_LOSS 0.01       /* more lost in the multicast phase than in the others */
int or_bd_mcast_open(struct or_bounded *b, int same_host);
void or_bd_mcast_free(struct or_bounded *b);
/* A probe, or this rank's own datagram looped back by the group: handled, 1; else 0. */
int or_bd_mcast_rx(struct or_bounded *b, const struct or_wire_hdr *h, uint32_t src,
                   int check_source);
/* After op: the multicast phase's rate for the next operations (struct or_bd_mcast); 1
 * when op tried the whole rate and lost more for it, which other controllers ignore. */
int or_bd_mcast_op_end(struct or_bounded *b, const struct or_bounded_op *op);
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

/* The share of pace.rate_mbps a multicast phase of op sends at: mc.share of what the
 * link carries. */
double or_bd_mcast_share(const struct or_bounded *b, const struct or_bounded_op *op);
/* Whether ph, a phase with bcast and multicast on, goes to the group (decided once). */
int or_bd_mcast_phase(const struct or_bounded *b, const struct or_bounded_op *op,
                      struct or_phase *ph);
/* The group refused a datagram (code): later phases go to each peer. */
void or_bd_mcast_failed(struct or_bounded *b, int code);
/* Whether ph sends one region to every peer (decided once per phase). */
int or_bd_phase_bcast(const struct or_bounded *b, struct or_phase *ph);

/* inject.c */
int or_bd_inject_drop(struct or_bounded *b);

/* phase.c */
struct or_inbound *or_bd_inbound_of(struct or_phase *ph, uint32_t size, uint32_t sender);
struct or_outbound *or_bd_outbound_of(struct or_phase *ph, uint32_t size, uint32_t peer);
uint32_t or_bd_inbound_slots(const struct or_phase *ph, uint32_t size);
void or_bd_free_phases(struct or_bounded_op *op);
/* The send order of a region of n packets: packet k goes k-th * stride mod n. */
size_t or_bd_stripe_stride(size_t n, size_t pkts_per_block);
const char *or_bd_phase_end_name(enum optireduce_phase_end e);

#endif /* OR_BOUNDED_INT_H */
