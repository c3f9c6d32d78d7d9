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

#include "lib/bounded/bounded.h"
#include "lib/bounded/chan.h"
#include "lib/bounded/feature.h"
#include "lib/core/internal.h"
#include "lib/bounded/mcast.h"
#include "lib/bounded/ctl/pacing.h"
#include "lib/bounded/ctl/sendfail.h"
#include "lib/bounded/ctl/sendq.h"
#include "lib/bounded/ctl/timeout.h"
#include "dgram/dgram.h"
#include "ofi/ofi.h"

#define OR_RX_RING    2048  /* most pre-posted receive buffers (udp takes 1024: 1.5 MB) */
#define OR_TX_POOL    256   /* send buffers in flight */
#define OR_PARK_MAX   16384 /* packets kept for operations not started yet */
#define OR_BURST_BYTES                                                                             \
	(16 * 1024) /* a receiver socket holds ~75 datagrams: bursts stay well below */
/*
 * Tokens also keep up to this long at the current rate: a sender that wakes late (two ranks
 * per core wait milliseconds for a CPU) catches up instead of losing the time.  16 KiB alone
 * is 0.6 ms at 200 Mbit/s, and 1 ms late wake-ups held senders to 120 Mbit/s.
 */
#define OR_BURST_US          3000.0
#define OR_INITIAL_RATE_MBPS 400.0
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
/* Completions one reap of the endpoint takes at most. */
#define OR_REAP_MAX 256

struct or_rxbuf {
	struct or_xport_xfer x; /* first: the completion context */
	struct or_bounded *b;
	uint8_t *buf;
	int group; /* posted on the multicast group's endpoint (mcast_group.c) */
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

struct or_bounded {
	struct or_chan ch; /* first: what features see (chan.h) */
	struct or_dgram *ep;
	struct or_bd_mcast mc;
	size_t nrx_main; /* rx[0, nrx_main) are posted on ep, the rest on the group's endpoint */
	size_t max_msg;
	size_t stride; /* bytes from one pool buffer to the next: the prefix, then max_msg */
	struct or_rxbuf rx[OR_RX_RING];
	size_t nrx; /* receive buffers in use: OR_RX_RING or what the endpoint accepts */
	uint8_t *rx_mem;
	struct or_txbuf tx[OR_TX_POOL];
	uint8_t *tx_mem;
	struct or_txbuf *tx_free;
	struct or_parked *park;
	size_t nparked;
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
	/* The kinds table and the features' hooks (kinds.c): the centre reaches them so. */
	const struct or_bd_kind *kinds;
	const struct or_bd_feature *const *features;
};

_Static_assert(OR_INFLIGHT_MAX <= 64, "scratch_busy has a bit per operation in flight");

static inline double or_bd_param_d(const struct or_bounded *b, enum or_param_id id)
{
	return or_param_double(&b->ch.comm->params, id);
}

static inline int64_t or_bd_param_i(const struct or_bounded *b, enum or_param_id id)
{
	return or_param_int(&b->ch.comm->params, id);
}

static inline const char *or_bd_param_s(const struct or_bounded *b, enum or_param_id id)
{
	return or_param_str(&b->ch.comm->params, id);
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

/* chan.c: reaps completions into the ready queue and the free send list; returns how many. */
int or_bd_reap(struct or_bounded *b);

/* rx.c */
int or_bd_rx_post_all(struct or_bounded *b);
int or_bd_drain_ready(struct or_bounded *b);
void or_bd_replay_parked(struct or_bounded *b, struct or_bounded_op *op);

/* tx.c */
void or_bd_tx_init(struct or_bounded *b);
void or_bd_refill(struct or_bounded *b);
int or_bd_pump(struct or_bounded *b, struct or_bounded_op *op, unsigned step);
/* Hands what is queued on the endpoint to the network (the pump does at its end). */
void or_bd_flush(struct or_bounded *b);
uint32_t or_bd_unsent_peers(const struct or_phase *ph);

/* tx.c: one datagram to peer; 0, 1 (no send buffer free) or < 0 (chan.h, or_chan_send). */
int or_bd_send_datagram(struct or_bounded *b, struct or_bounded_op *op, uint32_t peer,
                        const struct or_wire_hdr *h, const uint8_t *payload);

/* mcast_group.c (docs/design.md, "Multicast"): the group's endpoint. */
int or_bd_mcast_open(struct or_bounded *b, int same_host);
void or_bd_mcast_free(struct or_bounded *b);

/* mcast_route.c: which phases go to the group. */
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

/* Calls hook of every feature that has one, in the table's order (kinds.c). */
#define OR_BD_HOOK(b, hook, ...)                                                                   \
	for (const struct or_bd_feature *const *f_ = (b)->features; *f_; f_++)                     \
		if ((*f_)->hook)                                                                   \
			(*f_)->hook(&(b)->ch, __VA_ARGS__)

/* inject.c */
int or_bd_inject_drop(struct or_bounded *b);

/* phase.c */
void or_bd_free_phases(struct or_bounded_op *op);
const char *or_bd_phase_end_name(enum optireduce_phase_end e);

#endif /* OR_BOUNDED_INT_H */
