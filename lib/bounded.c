/*
 * The bounded channel (DESIGN.md sections 5, 7 and 8): datagrams with a
 * validated header, a pre-posted receive ring, parking of packets that
 * arrive before their operation, paced sends, and phases that close when
 * everything arrived, when the network went quiet after every sender's last
 * packet, or at the deadline.  The estimator (rescaling what arrived) and the
 * Hadamard codec wrap every algorithm here, so no algorithm re-implements them.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bounded.h"
#include "hadamard.h"
#include "internal.h"
#include "pacing.h"
#include "reduce.h"
#include "timeout.h"
#include "../ofi/wire.h"

#define OR_RX_RING    2048  /* most pre-posted receive buffers (udp takes 1024: 1.5 MB) */
#define OR_TX_POOL    256   /* send buffers in flight */
#define OR_PARK_MAX   16384 /* packets kept for operations not started yet */
#define OR_SEQ_WINDOW 64    /* how far ahead of the current operation packets are parked */
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
/* An application that polled this recently is progressing its operation itself. */
#define OR_APP_ACTIVE_US 2000
/* The line rate the progress thread's longest sleep is sized for (see progress_thread). */
#define OR_IDLE_LINE_MBPS 10000
/* Longest the idle progress thread sleeps in poll(): bounds a missed wake-up, nothing else. */
#define OR_IDLE_POLL_MS 100

struct or_rxbuf {
	or_xfer_t x; /* first: the completion context */
	struct or_bounded *b;
	uint8_t *buf;
};

struct or_txbuf {
	or_xfer_t x;
	struct or_bounded *b;
	uint8_t *buf;
	struct or_txbuf *next;
};

struct or_parked {
	uint16_t len;
	uint8_t *data;
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
	uint64_t deadline_us;
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
};

/* Phases of an algorithm that declares none (Transpose). */
#define OR_DEFAULT_PHASES 2

struct or_bounded_op {
	struct or_coll *c;
	void *user_rbuf;
	enum optireduce_dtype user_dtype;
	size_t user_count;
	size_t block_elems;
	unsigned log2_block;
	size_t nblocks;
	void *work; /* the encoded contribution, whole blocks */
	size_t work_bytes;
	size_t max_received_loss_ppm;
	uint64_t peers_heard;
	/* Declared by the algorithm (or_bop_set_phases), allocated on first use. */
	struct or_phase *ph;
	unsigned nphases;
	unsigned status_split; /* phases [0, split) report in status slot 0, the rest in 1 */
	/* What the network took: pacing follows it instead of probing past it. */
	uint64_t sent_bytes;
	double send_us;   /* summed over phases, from begin until the last packet left */
	uint64_t blocked; /* sends the endpoint refused (its socket buffer was full) */
	uint64_t sent_pkts;
	double start_us; /* entry, before the encoding: the trace's timeline starts here */
	double encoded_us;
};

struct or_bounded {
	struct optireduce_comm *comm;
	struct or_ofi *ep;
	size_t max_msg;
	size_t payload;
	struct or_rxbuf rx[OR_RX_RING];
	size_t nrx; /* receive buffers in use: OR_RX_RING or what the endpoint accepts */
	uint8_t *rx_mem;
	struct or_txbuf tx[OR_TX_POOL];
	uint8_t *tx_mem;
	struct or_txbuf *tx_free;
	struct or_parked *park;
	size_t nparked;
	struct or_bounded_op *op; /* the running operation, if any */
	uint64_t seq_lo;          /* oldest operation not finished on this rank */
	/* pacing */
	struct or_pacer pace;
	double tokens;
	double last_refill_us;
	double peer_loss;        /* worst loss peers reported in this operation, fraction */
	double own_loss;         /* loss this rank saw in its last operation, reported in headers */
	int blocked;             /* the last send found the endpoint full */
	double blocked_until_us; /* no send is tried before this after a refusal */
	double share; /* of pace.rate_mbps the current incast group may use, see pump() */
	uint64_t inject_state;
	struct or_tmo tmo;
	uint32_t *tmo_store;
	struct optireduce_status stats; /* packet counters between operations */
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
	/* While an operation runs and the application keeps calling in, the progress thread
	 * waits on op_done (with lock) instead of polling: see progress_thread(). */
	pthread_cond_t op_done;
	volatile int in_op;
	/* The application's waits for lock while the progress thread held it, since the last
	 * operation finished: the price of a thread that wakes for every early datagram. */
	unsigned lock_waits;
	double lock_wait_us;
	double app_us; /* the application's last poll or wait */
	/* The last operation's encoded buffer, kept: fresh pages cost a fault each. */
	void *work_cache;
	size_t work_cap;
	void *scratch[OR_BOP_SCRATCH_SLOTS]; /* algorithms' buffers, kept across operations */
	size_t scratch_cap[OR_BOP_SCRATCH_SLOTS];
};

static double param_d(struct or_bounded *b, enum or_param_id id)
{
	return or_param_double(&b->comm->params, id);
}

static int64_t param_i(struct or_bounded *b, enum or_param_id id)
{
	return or_param_int(&b->comm->params, id);
}

/* splitmix64: cheap, seedable, good enough to choose which packets to drop. */
static uint64_t mix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* With ofi_lock held. */
static int post_rx(struct or_bounded *b, struct or_rxbuf *r)
{
	return or_ofi_recv(b->ep, r->buf, b->max_msg, &r->x);
}

/* Reaps completions into the ready queue and the free send list; returns how many. */
static int reap(struct or_bounded *b)
{
	int n;

	pthread_mutex_lock(&b->ofi_lock);
	n = or_ofi_poll(b->ep, 256);
	pthread_mutex_unlock(&b->ofi_lock);
	return n;
}

static void handle_packet(struct or_bounded *b, const uint8_t *pkt, size_t len);

/* With lock held: handles the packets reaped so far and gives their buffers back. */
static int drain_ready(struct or_bounded *b)
{
	int total = 0;

	for (;;) {
		struct or_rxbuf *batch[64];
		size_t n = 0;

		pthread_mutex_lock(&b->ofi_lock);
		while (n < 64 && b->ready_count) {
			batch[n++] = b->ready[b->ready_head];
			b->ready_head = (b->ready_head + 1) % b->nrx;
			b->ready_count--;
		}
		pthread_mutex_unlock(&b->ofi_lock);
		if (!n)
			return total;
		for (size_t i = 0; i < n; i++) {
			struct or_rxbuf *r = batch[i];
			if (!r->x.error)
				handle_packet(b, r->buf, r->x.len);
			else if (r->x.error != -OPTIREDUCE_ECANCELED)
				b->stats.packets_invalid++;
		}
		pthread_mutex_lock(&b->ofi_lock);
		for (size_t i = 0; i < n; i++)
			post_rx(b, batch[i]); /* a failure here only shrinks the ring */
		pthread_mutex_unlock(&b->ofi_lock);
		total += (int)n;
	}
}

static void on_rx(or_xfer_t *x, void *arg);
static void on_tx(or_xfer_t *x, void *arg);

int or_bounded_create(struct optireduce_comm *comm, int same_host, struct or_bounded **out)
{
	struct or_bounded *b = calloc(1, sizeof(*b));
	struct or_tmo_config cfg;
	int ret;
	size_t want;

	if (!b)
		return -OPTIREDUCE_ENOMEM;
	{
		/* recursive: the core's error path re-enters while it holds the lock */
		pthread_mutexattr_t a;
		pthread_mutexattr_init(&a);
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
		pthread_mutex_init(&b->lock, &a);
		pthread_mutexattr_destroy(&a);
		pthread_mutex_init(&b->ofi_lock, NULL);
		pthread_cond_init(&b->op_done, NULL);
	}
	b->comm = comm;
	b->wait_fd = b->wake[0] = b->wake[1] = -1;
	ret = or_ofi_open(OR_OFI_DGRAM, or_param_str(&comm->params, OR_P_BOUNDED_PROVIDER),
	                  same_host, &b->ep);
	if (ret) {
		pthread_mutex_destroy(&b->lock);
		pthread_mutex_destroy(&b->ofi_lock);
		pthread_cond_destroy(&b->op_done);
		free(b);
		return ret;
	}
	b->max_msg = or_ofi_max_msg(b->ep);
	if (b->max_msg > 65535 + OR_WIRE_HDR_SIZE)
		b->max_msg = 65535 + OR_WIRE_HDR_SIZE;
	want = (size_t)param_i(b, OR_P_PACKET_PAYLOAD);
	b->payload = b->max_msg - OR_WIRE_HDR_SIZE;
	if (want && want < b->payload)
		b->payload = want;
	b->payload -= b->payload % 8; /* whole elements of every floating type */
	if (b->payload < 64) {
		or_bounded_destroy(b);
		return -OPTIREDUCE_EMSGSIZE;
	}
	b->nrx = or_ofi_rx_depth(b->ep);
	if (b->nrx == 0 || b->nrx > OR_RX_RING)
		b->nrx = OR_RX_RING;
	b->rx_mem = malloc(b->nrx * b->max_msg);
	b->tx_mem = malloc(OR_TX_POOL * b->max_msg);
	b->park = calloc(OR_PARK_MAX, sizeof(*b->park));
	if (!b->rx_mem || !b->tx_mem || !b->park) {
		or_bounded_destroy(b);
		return -OPTIREDUCE_ENOMEM;
	}
	for (size_t i = 0; i < OR_TX_POOL; i++) {
		b->tx[i].b = b;
		b->tx[i].buf = b->tx_mem + i * b->max_msg;
		b->tx[i].x.cb = on_tx;
		b->tx[i].x.cb_arg = &b->tx[i];
		b->tx[i].next = b->tx_free;
		b->tx_free = &b->tx[i];
	}
	or_pacer_init(&b->pace, param_d(b, OR_P_PACING_RATE) > 0 ? param_d(b, OR_P_PACING_RATE)
	                                                         : OR_INITIAL_RATE_MBPS);
	b->share = 1.0;
	b->inject_state = (uint64_t)param_i(b, OR_P_INJECT_SEED) * 0x100000001b3ull + comm->rank;

	or_tmo_config_default(&cfg);
	cfg.nranks = comm->size;
	cfg.rank = comm->rank;
	cfg.min_us = (uint64_t)param_i(b, OR_P_TIMEOUT_MIN_US);
	cfg.max_us = (uint64_t)param_i(b, OR_P_TIMEOUT_MAX_US);
	if (cfg.max_us < cfg.min_us)
		cfg.max_us = cfg.min_us;
	cfg.initial_us = cfg.max_us;
	cfg.user_timeout_us = (uint64_t)param_i(b, OR_P_TIMEOUT_US);
	cfg.calib_ops = (uint32_t)param_i(b, OR_P_CALIB_OPS);
	cfg.calib_percentile = param_d(b, OR_P_CALIB_PERCENTILE);
	cfg.calib_margin = param_d(b, OR_P_CALIB_MARGIN);
	cfg.backoff_after_us = (uint64_t)param_i(b, OR_P_BACKOFF_AFTER_US);
	cfg.early_fraction = param_d(b, OR_P_EARLY_FRACTION);
	cfg.absent_factor = param_d(b, OR_P_ABSENT_FACTOR);
	/* Sooner than t_C would cut senders that are merely slower than the others. */
	if (cfg.absent_factor > 0.0 && cfg.absent_factor < 1.0)
		cfg.absent_factor = 1.0;
	cfg.early_timeout = param_i(b, OR_P_EARLY_TIMEOUT) != 0;
	cfg.user_incast = (uint32_t)param_i(b, OR_P_INCAST);
	cfg.incast_initial = 0; /* every peer interleaved: see pump() */
	if (comm->size > 1 && cfg.user_incast > comm->size - 1)
		cfg.user_incast = comm->size - 1;
	if (comm->size > OR_TMO_INLINE_RANKS) {
		b->tmo_store = calloc(OR_TMO_PEER_STORE_LEN(comm->size), sizeof(uint32_t));
		if (!b->tmo_store) {
			or_bounded_destroy(b);
			return -OPTIREDUCE_ENOMEM;
		}
		ret = or_tmo_init_store(&b->tmo, &cfg, b->tmo_store,
		                        OR_TMO_PEER_STORE_LEN(comm->size));
	} else {
		ret = or_tmo_init(&b->tmo, &cfg);
	}
	if (ret) {
		or_bounded_destroy(b);
		return -OPTIREDUCE_EINVAL;
	}
	*out = b;
	return 0;
}

void or_bounded_destroy(struct or_bounded *b)
{
	if (!b)
		return;
	if (b->thread_running) {
		pthread_mutex_lock(&b->lock);
		b->thread_stop = 1;
		pthread_cond_broadcast(&b->op_done);
		pthread_mutex_unlock(&b->lock);
		if (b->wake[1] >= 0 && write(b->wake[1], "", 1) < 0)
			or_log(OR_LOG_DEBUG,
			       "progress thread: wake-up not written, it wakes "
			       "within %d ms",
			       OR_IDLE_POLL_MS);
		pthread_join(b->thread, NULL);
	}
	for (int i = 0; i < 2; i++)
		if (b->wake[i] >= 0)
			close(b->wake[i]);
	or_ofi_close(b->ep);
	for (size_t i = 0; i < b->nparked; i++)
		free(b->park[i].data);
	free(b->park);
	free(b->rx_mem);
	free(b->tx_mem);
	free(b->tmo_store);
	free(b->work_cache);
	for (unsigned i = 0; i < OR_BOP_SCRATCH_SLOTS; i++)
		free(b->scratch[i]);
	pthread_mutex_destroy(&b->lock);
	pthread_mutex_destroy(&b->ofi_lock);
	pthread_cond_destroy(&b->op_done);
	free(b);
}

const char *or_bounded_provider(const struct or_bounded *b)
{
	return or_ofi_provider_name(b->ep);
}

int or_bounded_getname(struct or_bounded *b, void *buf, size_t *len)
{
	return or_ofi_getname(b->ep, buf, len);
}

void or_bounded_lock(struct or_bounded *b)
{
	double t0;

	if (pthread_mutex_trylock(&b->lock) == 0)
		return;
	t0 = or_now_us();
	pthread_mutex_lock(&b->lock);
	b->lock_waits++;
	b->lock_wait_us += or_now_us() - t0;
}

void or_bounded_unlock(struct or_bounded *b)
{
	pthread_mutex_unlock(&b->lock);
}

static void sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * An idle communicator must cost the application's other work nothing: a thread that
 * polled every 200 us slowed MPI_Allreduce in the same processes by 12 % at the median
 * and 60 % at the 99th percentile (bench/RESULTS.md, session 9).  fi_trywait first, under
 * the endpoint's lock: it fails while completions are already waiting, which the
 * descriptor might not signal.  The poll itself holds no lock, so the application is
 * never kept from its endpoint.
 */
static int wait_for_traffic(struct or_bounded *b)
{
	struct pollfd fds[2] = {{.fd = b->wait_fd, .events = POLLIN},
	                        {.fd = b->wake[0], .events = POLLIN}};
	int ret;

	pthread_mutex_lock(&b->ofi_lock);
	ret = or_ofi_trywait(b->ep);
	pthread_mutex_unlock(&b->ofi_lock);
	if (ret != 0 || b->thread_stop)
		return 0;
	poll(fds, 2, OR_IDLE_POLL_MS);
	return 1;
}

/* What one pass of the progress thread did, and so what it does next. */
enum pass_outcome {
	PASS_DONE,          /* reaped what there was (maybe nothing): back off if nothing */
	PASS_WAITED_FOR_OP, /* waited for the application's operation to end: go again */
	PASS_APP_IN_OP,     /* the application held the lock in an operation: go again */
};

/*
 * With lock held.  While an operation runs and the application keeps calling in, the
 * thread waits for op_done instead of polling between the application's polls.
 */
static int wait_while_app_active(struct or_bounded *b)
{
	struct timespec ts;

	if (!b->op || or_now_us() - b->app_us >= OR_APP_ACTIVE_US || b->thread_stop)
		return 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)OR_APP_ACTIVE_US * 1000;
	ts.tv_sec += ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	pthread_cond_timedwait(&b->op_done, &b->lock, &ts);
	return 1;
}

/*
 * Only while the application is outside the library: inside, it reaps for itself, and
 * two threads taking turns at the endpoint cost more than they gain (the enlarged socket
 * buffer covers a descheduled application).  Nor does it wake every few hundred us while
 * the application works on an operation: with ranks sharing cores those wake-ups, and the
 * turns it took at the endpoint between the application's polls, doubled the 99th
 * percentile (bench/RESULTS.md).  Adds the completions it reaped to *n.
 */
static enum pass_outcome progress_pass(struct or_bounded *b, int *n)
{
	int park = 1;

	if (b->wait_fd >= 0 && !b->in_op) {
		/*
		 * Woken by a datagram of an operation this rank has not entered, it only reaps:
		 * parking needs lock, and the application entering the operation waited for it,
		 * up to 8.4 ms at 64 KiB (bench/RESULTS.md, session 10).  Receive buffers are
		 * what parking frees, so it parks once half of them wait; until then the
		 * application handles them when it enters.
		 */
		*n = reap(b);
		pthread_mutex_lock(&b->ofi_lock);
		park = b->ready_count >= b->nrx / 2;
		pthread_mutex_unlock(&b->ofi_lock);
	}
	if (!park)
		return PASS_DONE;
	if (pthread_mutex_trylock(&b->lock) != 0) {
		if (!b->in_op)
			return PASS_DONE;
		sleep_us(OR_APP_ACTIVE_US);
		return PASS_APP_IN_OP;
	}
	if (wait_while_app_active(b)) {
		pthread_mutex_unlock(&b->lock);
		return PASS_WAITED_FOR_OP;
	}
	*n += reap(b);
	drain_ready(b);
	pthread_mutex_unlock(&b->lock);
	return PASS_DONE;
}

/*
 * A socket buffer holds well under a millisecond of datagrams at the rates peers send,
 * and a rank that computes between two allreduces, enters one late, or is descheduled
 * does not read it: without this thread those datagrams are lost in the kernel.  While
 * the application is outside the library it reaps the endpoint and parks what arrives
 * early.  When quiet it sleeps in the kernel until a datagram arrives (wait_for_traffic);
 * on a provider without a wait descriptor it polls, backing off to progress_idle_us.
 */
static void *progress_thread(void *arg)
{
	struct or_bounded *b = arg;
	long idle_max = (long)param_i(b, OR_P_PROGRESS_IDLE_US), idle = 10;
	/*
	 * Without a wait descriptor the thread polls, and every wake-up costs the application
	 * (see wait_for_traffic), so it sleeps as long as the socket allows: never longer than
	 * half the time its receive buffer takes to fill at 10 Gbit/s (8 MiB: 3.4 ms), or
	 * 200 us if its size is unknown.
	 */
	long fill_us = b->rcvbuf ? (long)(b->rcvbuf * 8 / OR_IDLE_LINE_MBPS / 2) : 200;
	if (fill_us < 10)
		fill_us = 10;
	if (idle_max > fill_us)
		idle_max = fill_us;
	unsigned long long reaped = 0, wakeups = 0;

	while (!b->thread_stop) {
		int n = 0;
		wakeups++;
		enum pass_outcome pass = progress_pass(b, &n);
		if (pass == PASS_WAITED_FOR_OP) {
			idle = 10; /* the next operation's first packets may come at once */
			continue;
		}
		if (pass == PASS_APP_IN_OP)
			continue;
		reaped += n > 0 ? (unsigned long long)n : 0;
		if (n > 0) {
			idle = 10;
			continue;
		}
		/*
		 * Completions this thread could not reap (the application held the lock, in an
		 * operation's encoding or decoding) make fi_trywait refuse: back off as a polling
		 * thread would.  Retrying at once spun: 272,453 wake-ups in a 150 s run.
		 */
		if (b->wait_fd >= 0 && wait_for_traffic(b)) {
			idle = 10;
			continue;
		}
		sleep_us(idle);
		if (idle < idle_max)
			idle = idle * 2 < idle_max ? idle * 2 : idle_max;
	}
	or_log(OR_LOG_DEBUG, "progress thread: %llu completions reaped in %llu wakeups", reaped,
	       wakeups);
	return NULL;
}

int or_bounded_connect(struct or_bounded *b, const void *names, size_t stride)
{
	int ret = or_ofi_av_insert(b->ep, names, stride, b->comm->size);

	for (size_t i = 0; i < b->nrx && !ret; i++) {
		b->rx[i].b = b;
		b->rx[i].buf = b->rx_mem + i * b->max_msg;
		b->rx[i].x.cb = on_rx;
		b->rx[i].x.cb_arg = &b->rx[i];
		ret = post_rx(b, &b->rx[i]);
	}
	if (!ret && param_i(b, OR_P_SOCKET_RCVBUF)) {
		size_t got = or_ofi_set_rcvbuf(b->ep, (size_t)param_i(b, OR_P_SOCKET_RCVBUF));
		b->rcvbuf = got;
		or_log(OR_LOG_INFO, "datagram socket receive buffer: %zu bytes%s", got,
		       got ? "" : " (no socket found: left as the provider made it)");
	}
	if (!ret && param_i(b, OR_P_PROGRESS_THREAD) && b->comm->size > 1) {
		b->wait_fd = param_i(b, OR_P_PROGRESS_WAIT) ? or_ofi_wait_fd(b->ep) : -1;
		if (b->wait_fd >= 0 && pipe(b->wake) != 0) {
			b->wake[0] = b->wake[1] = -1;
			b->wait_fd = -1; /* without a way to wake it, the thread polls */
		}
		for (int i = 0; i < 2; i++) /* not inherited by what the application executes */
			if (b->wake[i] >= 0)
				fcntl(b->wake[i], F_SETFD, FD_CLOEXEC);
		or_log(OR_LOG_DEBUG, "progress thread: %s when idle",
		       b->wait_fd >= 0 ? "sleeps until a datagram arrives"
		                       : "polls (progress_wait=0, or the provider has no wait "
		                         "descriptor)");
		if (pthread_create(&b->thread, NULL, progress_thread, b) == 0)
			b->thread_running = 1;
		else
			or_log(OR_LOG_WARN, "no progress thread: datagrams that arrive while the "
			                    "application computes may be lost");
	}
	return ret;
}

/* ---- receive side ---- */

static uint32_t step_bytes(void *arg, uint64_t seq, uint16_t step)
{
	struct or_bounded *b = arg;
	(void)step;
	/* A future operation's regions are unknown yet: only the window is checked for it. */
	if (!b->op || seq != b->op->c->seq)
		return UINT32_MAX;
	return UINT32_MAX; /* per-sender bounds are checked against the inbound region */
}

static void park(struct or_bounded *b, const uint8_t *pkt, size_t len)
{
	uint8_t *copy;

	if (b->nparked >= OR_PARK_MAX) {
		b->stats.packets_invalid++; /* dropped for lack of room: counted, never kept */
		return;
	}
	copy = malloc(len);
	if (!copy)
		return;
	memcpy(copy, pkt, len);
	b->park[b->nparked].data = copy;
	b->park[b->nparked].len = (uint16_t)len;
	b->nparked++;
	b->stats.packets_parked++;
}

/* The inbound slot of sender in ph, or NULL if the phase expects nothing from it. */
static struct or_inbound *inbound_of(struct or_phase *ph, uint32_t size, uint32_t sender)
{
	if (!ph->in)
		return NULL;
	if (ph->cap >= size)
		return sender < size ? &ph->in[sender] : NULL;
	for (uint32_t i = 0; i < ph->nin; i++)
		if (ph->in[i].peer == sender)
			return &ph->in[i];
	return NULL;
}

static struct or_outbound *outbound_of(struct or_phase *ph, uint32_t size, uint32_t peer)
{
	if (ph->cap >= size)
		return peer < size ? &ph->out[peer] : NULL;
	for (uint32_t i = 0; i < ph->nout; i++)
		if (ph->out[i].peer == peer)
			return &ph->out[i];
	return NULL;
}

/* Inbound slots of ph in use: every rank's (by rank) or the nin declared, in order. */
static uint32_t inbound_slots(const struct or_phase *ph, uint32_t size)
{
	return !ph->in ? 0 : ph->cap >= size ? ph->cap : ph->nin;
}

/*
 * Most steps any operation on a communicator of n ranks may declare: the ring's 2(n-1), at
 * least the default 2, at most what the 16-bit step field holds.  Packets of operations not
 * started yet are parked when their step is below it.
 */
static uint16_t max_steps(uint32_t n)
{
	uint64_t m = n > 1 ? 2 * (uint64_t)(n - 1) : 0;
	if (m < OR_DEFAULT_PHASES)
		m = OR_DEFAULT_PHASES;
	return m > UINT16_MAX ? UINT16_MAX : (uint16_t)m;
}

static void deliver(struct or_bounded *b, const struct or_wire_hdr *h, const uint8_t *payload)
{
	struct or_bounded_op *op = b->op;
	struct or_phase *ph;
	struct or_inbound *in;
	size_t idx;

	if (h->step >= op->nphases || !op->ph) {
		b->stats.packets_invalid++;
		return;
	}
	ph = &op->ph[h->step];
	in = inbound_of(ph, op->c->size, h->sender);
	/* Validity first, so that a malformed packet is counted invalid even if late. */
	if (!in || !in->region || h->sender == op->c->rank ||
	    (size_t)h->offset + h->length > in->bytes || h->offset % b->payload ||
	    (h->length != b->payload && (size_t)h->offset + h->length != in->bytes)) {
		b->stats.packets_invalid++;
		return;
	}
	/*
	 * A sender sends its phases in order (pump() finishes one before it starts the next,
	 * and a phase closes only once its sends are out), so a packet of a later step says
	 * every earlier phase of it is complete, as a LAST would: both copies of a LAST can be
	 * lost together when a receiver's socket overflows.  Marks are made newest first and
	 * always cover every earlier phase, so the first phase found marked ends the walk: a
	 * packet costs O(1) here, not O(steps).
	 */
	for (unsigned p = h->step; p-- > 0;) {
		struct or_inbound *before = inbound_of(&op->ph[p], op->c->size, h->sender);
		if (!before || !before->npkts)
			continue;
		if (before->last_seen)
			break;
		before->last_seen = 1;
		op->ph[p].senders_last++;
	}
	if (ph->closed) {
		b->stats.packets_stale++;
		return;
	}
	/* LAST before the duplicate check: the flagged copy may come after a plain one. */
	if ((h->flags & OR_WIRE_FLAG_LAST) && !in->last_seen) {
		in->last_seen = 1;
		ph->senders_last++;
		ph->last_flag_us = or_now_us();
	}
	idx = h->offset / b->payload;
	if (in->seen[idx]) {
		b->stats.packets_duplicate++;
		return;
	}
	in->seen[idx] = 1;
	in->got_pkts++;
	memcpy(in->region + h->offset, payload, h->length);
	ph->bytes_received += h->length;
	ph->last_arrival_us = or_now_us();
	op->peers_heard |= 1ull << (h->sender & 63);
	if ((double)h->loss / 65535.0 > b->peer_loss)
		b->peer_loss = (double)h->loss / 65535.0;
	if (h->timeout_est_us)
		or_tmo_peer_estimate(&b->tmo, h->sender, op->c->count * op->c->esize,
		                     h->timeout_est_us);
	b->stats.packets_received++;
}

/* Returns 1 if the packet was consumed (delivered or dropped), 0 if parked. */
static void handle_packet(struct or_bounded *b, const uint8_t *pkt, size_t len)
{
	struct or_wire_hdr h;
	struct or_wire_expect e = {
	    .comm_id = b->comm->id,
	    .nranks = b->comm->size,
	    .seq_lo = b->seq_lo,
	    .seq_hi = b->seq_lo + OR_SEQ_WINDOW,
	    .nsteps = max_steps(b->comm->size),
	    .step_bytes = step_bytes,
	    .arg = b,
	    .max_contrib = (uint16_t)(b->comm->size > 65535 ? 65535 : b->comm->size),
	};
	int ret = or_wire_decode(pkt, len, &h);

	/* The running operation accepts only the steps its algorithm declared. */
	if (!ret && b->op && h.seq == b->op->c->seq && b->op->ph)
		e.nsteps = (uint16_t)b->op->nphases;
	if (!ret)
		ret = or_wire_validate(&h, &e);
	if (ret == OR_WIRE_EWINDOW_OLD) {
		b->stats.packets_stale++;
		return;
	}
	if (ret) {
		b->stats.packets_invalid++;
		or_log(OR_LOG_PACKET, "dropped packet: %s", or_wire_reject_name(ret));
		return;
	}
	/* Kept until the operation's algorithm has declared its phases and regions. */
	if (!b->op || h.seq != b->op->c->seq || !b->op->ph) {
		park(b, pkt, len);
		return;
	}
	deliver(b, &h, pkt + OR_WIRE_HDR_SIZE);
}

/* Under ofi_lock, from whichever thread reaped it: handled later, under lock. */
static void on_rx(or_xfer_t *x, void *arg)
{
	struct or_rxbuf *r = arg;
	struct or_bounded *b = r->b;

	(void)x;
	b->ready[(b->ready_head + b->ready_count) % b->nrx] = r;
	b->ready_count++; /* cannot overflow: one slot per receive buffer */
}

static void on_tx(or_xfer_t *x, void *arg)
{
	struct or_txbuf *t = arg;
	(void)x;
	t->next = t->b->tx_free;
	t->b->tx_free = t;
}

/* Packets parked for the operation that just started are delivered now. */
static void replay_parked(struct or_bounded *b)
{
	size_t keep = 0;

	for (size_t i = 0; i < b->nparked; i++) {
		struct or_parked p = b->park[i];
		struct or_wire_hdr h;
		if (or_wire_decode(p.data, p.len, &h) == 0 && h.seq == b->op->c->seq) {
			deliver(b, &h, p.data + OR_WIRE_HDR_SIZE);
			free(p.data);
		} else if (or_wire_decode(p.data, p.len, &h) == 0 && h.seq < b->seq_lo) {
			b->stats.packets_stale++;
			free(p.data);
		} else {
			b->park[keep++] = p;
		}
	}
	b->nparked = keep;
}

/* ---- send side ---- */

static void refill(struct or_bounded *b)
{
	double now = or_now_us();
	double bytes_per_us = b->pace.rate_mbps * b->share / 8.0; /* Mbit/s = bytes/us * 8 */
	double cap = OR_BURST_US * bytes_per_us;

	if (cap < OR_BURST_BYTES)
		cap = OR_BURST_BYTES;
	b->tokens += (now - b->last_refill_us) * bytes_per_us;
	if (b->tokens > cap)
		b->tokens = cap;
	b->last_refill_us = now;
}

/* Peers of ph whose packets have not all been handed to the endpoint (extra LAST copies
 * aside); the groups before ph->group are done. */
static uint32_t unsent_peers(const struct or_phase *ph)
{
	uint32_t unsent = 0;

	for (uint32_t i = ph->group; i < ph->norder; i++)
		unsent += ph->out[ph->order[i]].next < ph->out[ph->order[i]].npkts;
	return unsent;
}

/*
 * Pacing's "took" is bytes over the time until the phase's last packet left.  Noted when
 * each peer's last packet goes, not only when pump() finds the phase done: the phase may
 * close (all its data in) before the extra copies of the LASTs are out, and then pump()
 * never looks at it again.
 */
static void note_sent_all(struct or_bounded *b, struct or_phase *ph, unsigned step)
{
	double took_us;

	if (ph->sent_all || unsent_peers(ph))
		return;
	took_us = or_now_us() - ph->start_us;
	ph->sent_all = 1;
	b->op->send_us += took_us;
	or_log(OR_LOG_TRACE, "op %llu phase %u: last packet sent after %.0f us",
	       (unsigned long long)b->op->c->seq, step, took_us);
}

/* A full socket drains at the link's rate: a few packets' time there. */
static double blocked_wait_us(const struct or_bounded *b)
{
	double mbps = b->pace.took_mbps > 0 ? b->pace.took_mbps : b->pace.rate_mbps * b->share;
	return OR_BLOCKED_SLEEP_PKTS * (double)b->max_msg * 8.0 / mbps;
}

/* Sends the next packet of o; returns 1 if sent, 0 if it must wait, < 0 on error. */
static int send_one(struct or_bounded *b, struct or_phase *ph, unsigned step, uint32_t peer,
                    struct or_outbound *o)
{
	struct or_bounded_op *op = b->op;
	struct or_wire_hdr h = {0};
	struct or_txbuf *t;
	/* One extra copy of the last packet: early timeout waits for LAST from every sender. */
	size_t nth = o->next < o->npkts ? o->next : o->npkts - 1;
	size_t idx = (nth * o->stride) % o->npkts;
	size_t off = idx * b->payload;
	size_t len = o->bytes - off < b->payload ? o->bytes - off : b->payload;
	int ret;

	if (b->tokens < (double)(len + OR_WIRE_HDR_SIZE))
		return 0;
	h.magic = OR_WIRE_MAGIC;
	h.version = OR_WIRE_VERSION;
	h.flags = nth + 1 == o->npkts ? OR_WIRE_FLAG_LAST : 0;
	h.step = (uint16_t)step;
	h.comm_id = b->comm->id;
	h.sender = b->comm->rank;
	h.seq = op->c->seq;
	h.offset = (uint32_t)off;
	h.length = (uint16_t)len;
	h.contrib = o->contrib;
	h.timeout_est_us = or_tmo_local_estimate(&b->tmo, op->c->count * op->c->esize);
	h.loss = (uint16_t)lrint(b->own_loss * 65535.0);
	/* The last packets are sent whatever the injected loss: early timeout needs LAST, and a
	 * LAST that never comes only costs time, which the deadline bounds anyway. */
	if (param_d(b, OR_P_INJECT_LOSS) > 0 && !(h.flags & OR_WIRE_FLAG_LAST) &&
	    (double)(mix64(&b->inject_state) >> 11) * 0x1p-53 < param_d(b, OR_P_INJECT_LOSS)) {
		o->next++;
		b->tokens -= (double)(len + OR_WIRE_HDR_SIZE);
		b->stats.packets_sent++;
		return 1;
	}
	pthread_mutex_lock(&b->ofi_lock);
	t = b->tx_free;
	if (!t) {
		pthread_mutex_unlock(&b->ofi_lock);
		return 0;
	}
	b->tx_free = t->next;
	or_wire_encode(&h, t->buf, b->max_msg);
	memcpy(t->buf + OR_WIRE_HDR_SIZE, o->buf + off, len);
	ret = or_ofi_send(b->ep, peer, t->buf, len + OR_WIRE_HDR_SIZE, &t->x);
	if (ret) {
		t->next = b->tx_free;
		b->tx_free = t;
	}
	pthread_mutex_unlock(&b->ofi_lock);
	if (ret == -OPTIREDUCE_EAGAIN) {
		op->blocked++;
		b->blocked = 1;
		b->blocked_until_us = or_now_us() + blocked_wait_us(b);
	}
	if (ret)
		return ret == -OPTIREDUCE_EAGAIN ? 0 : ret;
	b->blocked = 0;
	o->next++;
	b->tokens -= (double)(len + OR_WIRE_HDR_SIZE);
	op->sent_bytes += len + OR_WIRE_HDR_SIZE;
	op->sent_pkts++;
	b->stats.packets_sent++;
	if (o->next == o->npkts)
		note_sent_all(b, ph, step);
	return 1;
}

/*
 * Sends of a phase go to peers in incast groups: the current group's peers
 * get packets round-robin; the next group starts when the current one is done.
 * Returns the packets sent (0: tokens or the endpoint hold us back), or < 0 on error.
 */
static int pump(struct or_bounded *b, unsigned step)
{
	struct or_phase *ph = &b->op->ph[step];
	int budget = 64; /* then return, so receives are reaped between bursts */

	/*
	 * A group smaller than the phase's peers is a sequence that senders go through at
	 * different speeds, so several can be on one receiver at once.  Each peer therefore
	 * gets the share it would get in a full round (rate / peers), whatever the group: a
	 * smaller incast is gentler and slower, never a larger burst on one receiver.
	 */
	b->share = ph->norder > ph->incast ? (double)ph->incast / (double)ph->norder : 1.0;
	if (b->blocked && or_now_us() < b->blocked_until_us)
		return 0;
	refill(b);
	while (ph->group < ph->norder && budget > 0) {
		uint32_t end = ph->group + ph->incast, width;
		int progressed = 0, pending = 0;

		if (end > ph->norder)
			end = ph->norder;
		width = end - ph->group;
		/*
		 * Start where the last call stopped: with tokens for one packet per call,
		 * restarting at the group's first peer would send it everything first and turn
		 * the group into a sequence, so receivers would see senders drift into incast.
		 */
		for (uint32_t k = 0; k < width && budget > 0; k++) {
			uint32_t i = ph->group + (ph->turn + k) % width;
			struct or_outbound *o = &ph->out[ph->order[i]];
			int ret;
			if (o->next >= o->npkts + (o->npkts > 0))
				continue;
			pending = 1;
			ret = send_one(b, ph, step, o->peer, o);
			if (ret < 0)
				return ret;
			if (ret == 0) {
				ph->turn = (ph->turn + k) % width;
				break;
			}
			progressed = 1;
			budget--;
			if (k + 1 == width || budget == 0)
				ph->turn = (ph->turn + k + 1) % width;
		}
		if (!pending) {
			ph->group = end;
			ph->turn = 0;
			continue;
		}
		if (!progressed)
			break;
	}
	if (ph->group >= ph->norder)
		note_sent_all(b, ph, step);
	return 64 - budget;
}

/* ---- phases, for algorithms ---- */

static size_t npkts_of(struct or_bounded *b, size_t bytes)
{
	return (bytes + b->payload - 1) / b->payload;
}

/* A stride coprime with n that jumps about a Hadamard block between consecutive packets. */
static size_t stripe_stride(size_t n, size_t pkts_per_block)
{
	size_t s = pkts_per_block ? pkts_per_block : 1;
	if (n <= 1)
		return 1;
	s %= n;
	if (s == 0)
		s = 1;
	for (;; s++) {
		size_t a = n, c = s;
		while (c) {
			size_t t = a % c;
			a = c;
			c = t;
		}
		if (a == 1)
			return s;
	}
}

static void free_phases(struct or_bounded_op *op)
{
	for (unsigned p = 0; op->ph && p < op->nphases; p++) {
		struct or_phase *ph = &op->ph[p];
		for (uint32_t i = 0; ph->in && i < ph->cap; i++)
			free(ph->in[i].seen);
		free(ph->in);
		free(ph->out);
		free(ph->order);
	}
	free(op->ph);
	op->ph = NULL;
	op->nphases = 0;
}

int or_bop_set_phases(struct or_coll *c, unsigned nphases, uint32_t peers, unsigned split)
{
	struct or_bounded_op *op = c->bop;
	uint32_t cap = peers && peers < c->size ? peers : c->size;

	if (!op || op->ph || nphases == 0 || nphases > max_steps(c->size) || split > nphases)
		return -OPTIREDUCE_EINVAL;
	op->ph = calloc(nphases, sizeof(*op->ph));
	if (!op->ph)
		return -OPTIREDUCE_ENOMEM;
	op->nphases = nphases;
	op->status_split = split;
	for (unsigned p = 0; p < nphases; p++) {
		struct or_phase *ph = &op->ph[p];
		ph->cap = cap;
		ph->in = calloc(cap, sizeof(*ph->in));
		ph->out = calloc(cap, sizeof(*ph->out));
		ph->order = calloc(cap, sizeof(*ph->order));
		if (!ph->in || !ph->out || !ph->order) {
			free_phases(op);
			return -OPTIREDUCE_ENOMEM;
		}
		for (uint32_t i = 0; cap == c->size && i < cap; i++)
			ph->in[i].peer = ph->out[i].peer = i;
	}
	return 0;
}

/* The phase, allocating the default two (every peer) for an algorithm that declared none. */
static struct or_phase *phase_of(struct or_coll *c, unsigned phase)
{
	if (!c->bop->ph && or_bop_set_phases(c, OR_DEFAULT_PHASES, 0, 1))
		return NULL;
	return phase < c->bop->nphases ? &c->bop->ph[phase] : NULL;
}

int or_bop_recv_region(struct or_coll *c, unsigned phase, uint32_t sender, void *region,
                       size_t bytes)
{
	struct or_bounded *b = c->comm->bounded;
	struct or_phase *ph = phase_of(c, phase);
	struct or_inbound *in;

	if (!ph || sender >= c->size || sender == c->rank || bytes > UINT32_MAX)
		return -OPTIREDUCE_EINVAL;
	in = inbound_of(ph, c->size, sender);
	if (!in) {
		if (ph->nin >= ph->cap)
			return -OPTIREDUCE_EINVAL; /* more peers than declared */
		in = &ph->in[ph->nin++];
		in->peer = sender;
	} else if (in->region && in->bytes) {
		ph->senders_expected--; /* declared again: the new region replaces it */
		ph->bytes_expected -= in->bytes;
	}
	in->region = region;
	in->bytes = bytes;
	in->npkts = npkts_of(b, bytes);
	free(in->seen);
	in->seen = calloc(in->npkts ? in->npkts : 1, 1);
	if (!in->seen)
		return -OPTIREDUCE_ENOMEM;
	/* Zeroed where nothing arrived when the phase closes (zero_unseen), not here:
	 * zeroing every region up front cost 24 MiB of memset per 16 MiB operation. */
	if (bytes) {
		ph->senders_expected++;
		ph->bytes_expected += bytes;
	}
	return 0;
}

int or_bop_send_region(struct or_coll *c, unsigned phase, uint32_t peer, const void *buf,
                       size_t bytes, uint16_t contrib)
{
	struct or_bounded *b = c->comm->bounded;
	struct or_phase *ph = phase_of(c, phase);
	struct or_outbound *o;

	if (!ph || peer >= c->size || peer == c->rank || bytes > UINT32_MAX)
		return -OPTIREDUCE_EINVAL;
	o = outbound_of(ph, c->size, peer);
	if (!o) {
		if (ph->nout >= ph->cap)
			return -OPTIREDUCE_EINVAL;
		o = &ph->out[ph->nout++];
		o->peer = peer;
	}
	o->buf = buf;
	o->bytes = bytes;
	o->npkts = npkts_of(b, bytes);
	o->next = 0;
	o->contrib = contrib;
	o->stride = stripe_stride(o->npkts, npkts_of(b, c->bop->block_elems * c->esize));
	return 0;
}

int or_bop_phase_begin(struct or_coll *c, unsigned phase)
{
	struct or_bounded *b = c->comm->bounded;
	struct or_phase *ph = phase_of(c, phase);
	uint64_t deadline;
	unsigned slot;

	if (!ph || ph->begun)
		return -OPTIREDUCE_EINVAL;
	slot = phase < c->bop->status_split ? 0 : 1;
	ph->begun = 1;
	ph->start_us = or_now_us();
	/* Always asked: it also refreshes the quiet time of early timeout.  A fixed timeout set
	 * after creation (optireduce_comm_set_param) then wins over its deadline. */
	deadline = or_tmo_deadline(&b->tmo, c->count * c->esize);
	if (param_i(b, OR_P_TIMEOUT_US) > 0)
		deadline = (uint64_t)param_i(b, OR_P_TIMEOUT_US);
	/*
	 * Phase p > 0 ends by the first phase's start + (p+1) * deadline rather than deadline
	 * after it begins: a sender whose previous phase ran into the hard bound sends this
	 * one late by up to one deadline, and a receiver that began it early would cut it off
	 * just as it comes (and so on around the ring's steps).  The operation is still bounded
	 * by nphases deadlines; a phase that ended early leaves its slack to the next, and
	 * time lost between phases (a rank descheduled while it reduced, seen at 40-85 ms
	 * under cross traffic on 2 CPUs) comes out of the budget instead of adding to it.
	 */
	if (phase > 0) {
		double end = c->bop->ph[0].start_us + (double)(phase + 1) * (double)deadline;
		ph->deadline_us = end > ph->start_us + 1 ? (uint64_t)(end - ph->start_us) : 1;
	} else {
		ph->deadline_us = deadline;
	}
	if (deadline > c->status->deadline_us[slot])
		c->status->deadline_us[slot] = deadline;
	ph->incast = c->incast ? c->incast : 1;
	ph->norder = 0;
	if (ph->cap >= c->size) {
		/* Rotation: peer r+k in round k, so in a round every receiver has one sender. */
		for (uint32_t k = 1; k < c->size; k++)
			ph->order[ph->norder++] = (c->rank + k) % c->size;
	} else {
		for (uint32_t i = 0; i < ph->nout; i++)
			ph->order[ph->norder++] = i;
	}
	ph->group = 0;
	ph->turn = 0;
	b->last_refill_us = or_now_us();
	{
		int ret = pump(b, phase);
		return ret < 0 ? ret : 0;
	}
}

static const char *phase_end_name(enum optireduce_phase_end e);

/* What did not arrive reads as zero, as the estimator assumes; a closed phase takes no
 * more packets (deliver), so this is final. */
static void zero_unseen(const struct or_bounded *b, struct or_inbound *in)
{
	if (!in->region || in->got_pkts == in->npkts)
		return;
	for (size_t p = 0; p < in->npkts; p++) {
		size_t off = p * b->payload;
		if (!in->seen[p])
			memset(in->region + off, 0,
			       in->bytes - off < b->payload ? in->bytes - off : b->payload);
	}
}

/*
 * Status has two phase slots.  Each phase adds its elements to its slot, and a slot's end
 * is the worst of its phases' (hard bound over early timeout over all data), so a ring's
 * 2(N-1) steps report as reduce-scatter in slot 0 and allgather in slot 1.
 */
static void close_phase(struct or_bounded_op *op, unsigned phase, enum optireduce_phase_end why)
{
	struct or_phase *ph = &op->ph[phase];
	unsigned slot = phase < op->status_split ? 0 : 1;
	struct optireduce_status *st = op->c->status;

	for (uint32_t i = 0, n = inbound_slots(ph, op->c->size); i < n; i++)
		zero_unseen(op->c->comm->bounded, &ph->in[i]);
	ph->closed = 1;
	ph->end = why;
	ph->end_us = or_now_us();
	or_log(OR_LOG_TRACE,
	       "op %llu phase %u closed %s after %.0f us: %llu/%llu bytes, last %u/%u "
	       "(newest LAST at %.0f us, newest packet at %.0f us)",
	       (unsigned long long)op->c->seq, phase, phase_end_name(why),
	       or_now_us() - ph->start_us, (unsigned long long)ph->bytes_received,
	       (unsigned long long)ph->bytes_expected, ph->senders_last, ph->senders_expected,
	       ph->last_flag_us > 0 ? ph->last_flag_us - ph->start_us : -1.0,
	       ph->last_arrival_us > 0 ? ph->last_arrival_us - ph->start_us : -1.0);
	if ((int)why > st->phase_end[slot])
		st->phase_end[slot] = why;
	st->elements_expected[slot] += ph->bytes_expected / op->c->esize;
	st->elements_received[slot] += ph->bytes_received / op->c->esize;
	if (why == OPTIREDUCE_PHASE_HARD_BOUND)
		op->c->status->flags |= OPTIREDUCE_STATUS_DEADLINE_FIRED;
}

/*
 * Senders of this phase that nothing has come from yet (the controller decides when one of
 * them counts as absent); *absent gets those of them that also sent nothing in the phase
 * before, which closed without them (hard bound, or early timeout that judged them absent):
 * a straggler that has not entered the operation.  Early timeout does not wait for their
 * LAST, or every straggler would cost a second deadline.  If the straggler comes in time,
 * its packets are taken like any others.
 */
static uint32_t silent_senders(struct or_coll *c, unsigned phase, uint32_t *absent)
{
	struct or_phase *ph = &c->bop->ph[phase];
	struct or_phase *prev = phase > 0 && c->bop->ph[phase - 1].closed ? ph - 1 : NULL;
	uint32_t n = inbound_slots(ph, c->size), silent = 0;

	*absent = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct or_inbound *in = &ph->in[i], *before;
		if (!in->npkts || in->got_pkts || in->last_seen)
			continue;
		silent++;
		before = prev ? inbound_of(prev, c->size, in->peer) : NULL;
		if (before && before->npkts && !before->got_pkts)
			(*absent)++;
	}
	return silent;
}

/* 1 when the phase is closed (its data is final), 0 while open. */
int or_bop_phase_done(struct or_coll *c, unsigned phase)
{
	struct or_bounded *b = c->comm->bounded;
	struct or_phase *ph = phase < c->bop->nphases ? &c->bop->ph[phase] : NULL;
	struct or_tmo_phase tp;
	enum or_tmo_reason why;
	uint32_t unsent, absent, silent;

	if (!ph)
		return -OPTIREDUCE_EINVAL;
	if (ph->closed)
		return 1;
	if (!ph->begun)
		return 0;
	unsent = unsent_peers(ph);
	tp.start_us = 0;
	tp.deadline_us = ph->deadline_us;
	silent = silent_senders(c, phase, &absent);
	tp.senders_expected = ph->senders_expected - absent;
	tp.senders_last = ph->senders_last;
	tp.senders_silent = silent - absent;
	tp.final_phase = phase + 1 == c->bop->nphases;
	tp.bytes_expected = ph->bytes_expected;
	tp.bytes_received = ph->bytes_received;
	/* Packets that came before the phase began (a sender ahead of us) count as arriving at
	 * its start: a negative time would read as far in the future and block early timeout. */
	tp.last_arrival_us = !ph->bytes_received ? 0
	                     : ph->last_arrival_us <= ph->start_us
	                         ? 1
	                         : (uint64_t)(ph->last_arrival_us - ph->start_us) + 1;
	why = or_tmo_phase_check(&b->tmo, c->count * c->esize, &tp,
	                         (uint64_t)(or_now_us() - ph->start_us) + 1);
	/* Every byte is in: that is all the data, whether or not a LAST flag made it. */
	if (ph->bytes_expected && ph->bytes_received >= ph->bytes_expected)
		why = OR_TMO_ALL_DATA;
	/*
	 * Our own sends must leave before a phase closes, or peers lose them for nothing;
	 * the deadline still wins, also once every byte is in: a rank whose own sends crawl
	 * (its rate cut by a burst of cross traffic) took 1.25 s over a 260 ms deadline
	 * while its peers had long cut it off.
	 */
	if (unsent) {
		if (or_now_us() - ph->start_us < (double)ph->deadline_us)
			return 0;
		why = OR_TMO_HARD_BOUND;
	}
	switch (why) {
	case OR_TMO_ALL_DATA:
		close_phase(c->bop, phase, OPTIREDUCE_PHASE_ALL_DATA);
		return 1;
	case OR_TMO_EARLY_TIMEOUT:
		close_phase(c->bop, phase, OPTIREDUCE_PHASE_EARLY_TIMEOUT);
		return 1;
	case OR_TMO_HARD_BOUND:
		close_phase(c->bop, phase, OPTIREDUCE_PHASE_HARD_BOUND);
		return 1;
	default:
		return 0;
	}
}

/* Elements of [off, off + len) (bytes of the sender's region) that arrived. */
static size_t arrived_elems(struct or_bounded *b, const struct or_inbound *in, size_t off,
                            size_t len, size_t esize)
{
	size_t got = 0;

	if (in->got_pkts == in->npkts)
		return len / esize;
	for (size_t p = off / b->payload; p * b->payload < off + len && p < in->npkts; p++) {
		size_t lo = p * b->payload, hi = lo + b->payload;
		if (!in->seen[p])
			continue;
		if (lo < off)
			lo = off;
		if (hi > off + len)
			hi = off + len;
		if (hi > in->bytes)
			hi = in->bytes;
		got += (hi - lo) / esize;
	}
	return got;
}

/*
 * dst (whole blocks) += what sender's packets of phase brought, block by block.  A block
 * with k of n elements is scaled by n/k: with random rotation signs every element of a
 * block is equally likely to be any coordinate, so this is unbiased for any drop pattern.
 * Returns the number of blocks that brought nothing.
 */
int or_bop_accumulate(struct or_coll *c, unsigned phase, uint32_t sender, void *dst, size_t elems,
                      uint32_t *present)
{
	struct or_bounded *b = c->comm->bounded;
	struct or_inbound *in =
	    phase < c->bop->nphases ? inbound_of(&c->bop->ph[phase], c->size, sender) : NULL;
	size_t be = c->bop->block_elems, es = c->esize;
	int rescale = (int)param_i(b, OR_P_RESCALE), missing = 0;

	if (!in || !in->region || elems * es > in->bytes)
		return -OPTIREDUCE_EINVAL;

	for (size_t lo = 0; lo < elems; lo += be) {
		size_t n = elems - lo < be ? elems - lo : be;
		size_t k = arrived_elems(b, in, lo * es, n * es, es);
		char *d = (char *)dst + lo * es;
		const char *s = (const char *)in->region + lo * es;
		if (k == 0) {
			missing++;
			continue;
		}
		if (present)
			present[lo / be]++;
		if (k < n && rescale) {
			or_reduce_scale((void *)s, n, c->dtype, (double)n / (double)k);
			c->status->flags |= OPTIREDUCE_STATUS_INCOMPLETE;
		} else if (k < n) {
			c->status->flags |= OPTIREDUCE_STATUS_INCOMPLETE;
		}
		or_reduce(d, s, n, c->dtype, OPTIREDUCE_SUM);
	}
	return missing;
}

/*
 * The final phase placed sender's reduced shard at its region; blocks that lost packets are
 * rescaled, and blocks that lost everything fall back to own, an unbiased estimate of the
 * sum of own_contrib contributions, times N / own_contrib.  Returns the number of fallback
 * blocks.
 */
int or_bop_finalize_region_from(struct or_coll *c, unsigned phase, uint32_t sender, const void *own,
                                uint32_t own_contrib, size_t elems)
{
	struct or_bounded *b = c->comm->bounded;
	struct or_inbound *in =
	    phase < c->bop->nphases ? inbound_of(&c->bop->ph[phase], c->size, sender) : NULL;
	size_t be = c->bop->block_elems, es = c->esize;
	int rescale = (int)param_i(b, OR_P_RESCALE), fallback = 0;

	if (!in || !in->region || elems * es > in->bytes || own_contrib == 0)
		return -OPTIREDUCE_EINVAL;
	if (in->got_pkts == in->npkts)
		return 0;
	for (size_t lo = 0; lo < elems; lo += be) {
		size_t n = elems - lo < be ? elems - lo : be;
		size_t k = arrived_elems(b, in, lo * es, n * es, es);
		char *d = (char *)in->region + lo * es;
		if (k == n)
			continue;
		c->status->flags |= OPTIREDUCE_STATUS_INCOMPLETE;
		if (k == 0) {
			if (rescale) {
				memcpy(d, (const char *)own + lo * es, n * es);
				or_reduce_scale(d, n, c->dtype,
				                (double)c->size / (double)own_contrib);
			}
			fallback++;
		} else if (rescale) {
			or_reduce_scale(d, n, c->dtype, (double)n / (double)k);
		}
	}
	return fallback;
}

int or_bop_finalize_region(struct or_coll *c, unsigned phase, uint32_t sender, const void *own,
                           size_t elems)
{
	return or_bop_finalize_region_from(c, phase, sender, own, 1, elems);
}

/* ---- the operation ---- */

static void free_op(struct or_bounded *b, struct or_bounded_op *op)
{
	if (!op)
		return;
	free_phases(op);
	if (op->work && op->work_bytes > b->work_cap) {
		free(b->work_cache);
		b->work_cache = op->work;
		b->work_cap = op->work_bytes;
	} else {
		free(op->work);
	}
	free(op);
}

void *or_bop_scratch(struct or_coll *c, unsigned slot, size_t bytes)
{
	struct or_bounded *b = c->comm->bounded;

	if (slot >= OR_BOP_SCRATCH_SLOTS)
		return NULL;
	if (b->scratch_cap[slot] < bytes) {
		free(b->scratch[slot]);
		b->scratch[slot] = malloc(bytes ? bytes : 1);
		b->scratch_cap[slot] = b->scratch[slot] ? bytes : 0;
	}
	return b->scratch[slot];
}

/* A zeroed-at-the-tail buffer of bytes for the encoded contribution, reusing the cache. */
static void *take_work(struct or_bounded *b, size_t bytes)
{
	void *w;

	if (b->work_cache && b->work_cap >= bytes) {
		w = b->work_cache;
		b->work_cache = NULL;
		b->work_cap = 0;
		return w;
	}
	return malloc(bytes);
}

static unsigned log2_of(size_t x)
{
	unsigned l = 0;
	while (((size_t)1 << (l + 1)) <= x)
		l++;
	return l;
}

int or_bounded_op_start(struct or_bounded *b, struct or_coll *c)
{
	struct or_bounded_op *op = calloc(1, sizeof(*op));
	optireduce_req_t *r = (optireduce_req_t *)((char *)c - offsetof(optireduce_req_t, coll));
	enum optireduce_dtype wdt =
	    c->dtype == OPTIREDUCE_FLOAT64 ? OPTIREDUCE_FLOAT64 : OPTIREDUCE_FLOAT32;
	size_t wes = optireduce_dtype_size(wdt), want_block, per_rank;
	int hadamard = (int)param_i(b, OR_P_HADAMARD), ret = 0;

	if (!op)
		return -OPTIREDUCE_ENOMEM;
	op->c = c;
	op->start_us = or_now_us();
	op->user_rbuf = c->rbuf;
	op->user_dtype = c->dtype;
	op->user_count = c->count;
	/* Blocks no larger than a rank's share, so every rank owns some; at least 2^8. */
	want_block = (size_t)param_i(b, OR_P_HADAMARD_BLOCK);
	per_rank = (c->count + c->size - 1) / c->size;
	while (want_block > 256 && want_block / 2 >= per_rank)
		want_block /= 2;
	op->log2_block = log2_of(want_block);
	op->block_elems = (size_t)1 << op->log2_block;
	op->nblocks = c->count ? (c->count + op->block_elems - 1) / op->block_elems : 0;
	op->work_bytes = (op->nblocks * op->block_elems + 1) * wes;
	op->work = take_work(b, op->work_bytes);
	if (op->work) /* the padding of the last block must be zero for the transform */
		memset((char *)op->work + c->count * wes, 0, op->work_bytes - c->count * wes);
	/* Phases are allocated when the algorithm declares them (or_bop_set_phases). */
	if (!op->work) {
		free_op(b, op);
		return -OPTIREDUCE_ENOMEM;
	}
	/* The algorithm works on whole blocks of float32 (float64 for float64) in the rotated
	 * domain. */
	{
		const void *src = r->sbuf == OPTIREDUCE_IN_PLACE ? c->rbuf : r->sbuf;
		if (wdt == OPTIREDUCE_FLOAT64)
			memcpy(op->work, src, c->count * wes);
		else if (c->count)
			ret = or_to_float(op->work, src, c->count, c->dtype);
	}
	if (!ret && hadamard && op->nblocks) {
		uint64_t seed = b->comm->id;
		ret =
		    wdt == OPTIREDUCE_FLOAT64
		        ? or_had_encode_f64(op->work, op->nblocks, op->log2_block, seed, c->seq, 0)
		        : or_had_encode(op->work, op->nblocks, op->log2_block, seed, c->seq, 0);
		if (ret)
			ret = -OPTIREDUCE_EINVAL;
	}
	if (ret) {
		free_op(b, op);
		return ret;
	}
	op->encoded_us = or_now_us();
	c->rbuf = op->work;
	c->dtype = wdt;
	c->esize = wes;
	c->count = op->nblocks * op->block_elems;
	c->bop = op;
	c->incast = or_tmo_incast(&b->tmo);
	if (param_i(b, OR_P_INCAST))
		c->incast = (uint32_t)param_i(b, OR_P_INCAST);
	if (c->size > 1 && c->incast > c->size - 1)
		c->incast = c->size - 1;
	b->op = op;
	b->in_op = 1;
	b->seq_lo = c->seq;
	b->peer_loss = 0;
	return 0;
}

/* Blocks of the rotated buffer owned by each rank: contiguous, balanced. */
size_t or_bop_block_elems(const struct or_coll *c)
{
	return c->bop->block_elems;
}

static const char *phase_end_name(enum optireduce_phase_end e)
{
	static const char *names[] = {"none", "all-data", "early-timeout", "hard-bound"};
	return (unsigned)e < 4 ? names[e] : "?";
}

static void finish_stats(struct or_bounded *b, struct or_coll *c)
{
	struct optireduce_status *st = c->status;
	uint64_t exp = 0, got = 0;

	st->packets_sent = b->stats.packets_sent;
	st->packets_received = b->stats.packets_received;
	st->packets_invalid = b->stats.packets_invalid;
	st->packets_stale = b->stats.packets_stale;
	st->packets_duplicate = b->stats.packets_duplicate;
	st->packets_parked = b->stats.packets_parked;
	for (unsigned p = 0; p < c->bop->nphases; p++) {
		exp += c->bop->ph[p].bytes_expected;
		got += c->bop->ph[p].bytes_received;
	}
	b->own_loss = exp ? 1.0 - (double)got / (double)exp : 0;
}

/* Give the algorithm's view back the user's buffer and retire the operation. */
static void end_op(struct or_bounded *b, struct or_coll *c)
{
	struct or_bounded_op *op = c->bop;

	c->rbuf = op->user_rbuf;
	c->dtype = op->user_dtype;
	c->count = op->user_count;
	c->esize = optireduce_dtype_size(op->user_dtype);
	c->bop = NULL;
	b->op = NULL;
	b->in_op = 0;
	pthread_cond_broadcast(&b->op_done);
	b->seq_lo = c->seq + 1;
	/* What arrives from now on (parked, stale, invalid) is reported by the next operation. */
	memset(&b->stats, 0, sizeof(b->stats));
	free_op(b, op);
}

/*
 * 1 when what a phase missed is explained by senders that sent nothing at all, while every
 * other sender's LAST came: a straggler that had not entered the operation, not a slow or
 * lossy network.
 */
static int only_absent_senders(const struct or_phase *ph, uint32_t size)
{
	uint32_t n = inbound_slots(ph, size);
	int absent = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct or_inbound *in = &ph->in[i];
		if (!in->npkts || in->last_seen)
			continue;
		if (in->got_pkts)
			return 0;
		absent = 1;
	}
	return absent;
}

int or_bounded_op_finish(struct or_bounded *b, struct or_coll *c)
{
	struct or_bounded_op *op = c->bop;
	int ret = 0, hit = 0, skip_sample = 0;
	enum or_pace_decision pace = OR_PACE_DECISION_COUNT; /* fixed pacing_rate: none */
	double longest = 0; /* the controller's sample: the longest phase */
	/* The algorithm may leave its result in a buffer of its own (see coll.h). */
	void *res = c->rbuf;
	double finish_us = or_now_us(), decoded_us;
	double finish_cpu_us = OR_LOG_DEBUG <= or_log_level ? or_thread_cpu_us() : 0;

	if (op->nblocks && param_i(b, OR_P_HADAMARD)) {
		ret = c->dtype == OPTIREDUCE_FLOAT64
		          ? or_had_decode_f64(res, op->nblocks, op->log2_block, b->comm->id, c->seq,
		                              0)
		          : or_had_decode(res, op->nblocks, op->log2_block, b->comm->id, c->seq, 0);
		if (ret)
			ret = -OPTIREDUCE_EINVAL;
	}
	if (!ret && op->user_count) {
		if (op->user_dtype == OPTIREDUCE_FLOAT64)
			memcpy(op->user_rbuf, res, op->user_count * 8);
		else
			ret = or_from_float(op->user_rbuf, res, op->user_count, op->user_dtype);
	}
	if (!ret && c->op == OPTIREDUCE_AVG && op->user_count)
		ret = or_reduce_divide(op->user_rbuf, op->user_count, op->user_dtype, c->size);
	decoded_us = or_now_us();
	finish_stats(b, c);
	if (OR_LOG_DEBUG <= or_log_level && op->nphases >= 2 && op->ph[1].begun) {
		/* Where an operation's time goes besides the phases themselves. */
		or_log(OR_LOG_DEBUG,
		       "op %llu timeline: encoded %.0f us, phase 0 %.0f-%.0f us, phase 1 %.0f-%.0f "
		       "us, decode %.0f-%.0f us (on CPU %.0f us), done %.0f us; waited %u times "
		       "for the progress thread's lock, %.0f us",
		       (unsigned long long)c->seq, op->encoded_us - op->start_us,
		       op->ph[0].start_us - op->start_us, op->ph[0].end_us - op->start_us,
		       op->ph[1].start_us - op->start_us, op->ph[1].end_us - op->start_us,
		       finish_us - op->start_us, decoded_us - op->start_us,
		       or_thread_cpu_us() - finish_cpu_us, or_now_us() - op->start_us,
		       b->lock_waits, b->lock_wait_us);
	}
	b->lock_waits = 0;
	b->lock_wait_us = 0;
	{
		/*
		 * The controller learns per phase: deadlines bound phases, so its sample is the
		 * longest phase.  A phase that hit the bound after every sender's LAST arrived
		 * lost packets, it was not slow: it counts its transfer time, as a completion.
		 * A phase cut short only by senders that never started had a compute straggler:
		 * that says nothing about the network, and learning from it (a longer deadline,
		 * a backoff, a smaller incast) would make everybody wait for it next time.
		 */
		int absent = 0, other_cut = 0;
		for (unsigned p = 0; p < op->nphases; p++) {
			struct or_phase *ph = &op->ph[p];
			double d = ph->end_us - ph->start_us;
			int only_absent;
			if (!ph->begun || !ph->closed)
				continue;
			/* Closed early or at the bound, the straggler judged absent or not. */
			only_absent = ph->end != OPTIREDUCE_PHASE_ALL_DATA &&
			              only_absent_senders(ph, c->size);
			absent |= only_absent;
			if (ph->end == OPTIREDUCE_PHASE_HARD_BOUND) {
				if (ph->senders_expected &&
				    ph->senders_last >= ph->senders_expected) {
					d = ph->last_arrival_us - ph->start_us;
				} else {
					hit = 1;
					other_cut |= !only_absent;
				}
			}
			if (d > longest)
				longest = d;
		}
		if (absent && !other_cut)
			skip_sample = 1;
	}
	/* An operation that moved nothing (one rank, no elements) teaches the controller nothing.
	 */
	if (op->nphases && op->ph[0].begun && !skip_sample) {
		/* The controller's loss signal (incast, backoff) is loss above the usual level,
		 * for the same reason as pacing's (pacing.h): a lossy link's random loss is not
		 * congestion. */
		double excess = b->own_loss - b->pace.loss_avg;
		/* Until pacing has learnt the usual level, a lossy link's loss reads as excess.
		 * And in a small operation one packet is a percent: noise, not congestion. */
		if (b->pace.loss_ops < OR_PACE_WARMUP ||
		    op->work_bytes < OR_LOSS_MIN_PKTS * b->payload)
			excess = 0;
		size_t bytes = op->user_count * optireduce_dtype_size(op->user_dtype);
		if (or_tmo_complete(&b->tmo, bytes, (uint64_t)longest, hit,
		                    excess > 0 ? excess : 0) == OR_TMO_CALIBRATED) {
			const struct or_tmo_decision *d;
			or_tmo_deadline(&b->tmo, bytes);
			d = or_tmo_last(&b->tmo);
			or_log(OR_LOG_DEBUG,
			       "size class %u calibrated: t_B %llu us over t_C0 %u us, deadline "
			       "%llu us",
			       d->size_class, (unsigned long long)d->t_b_us, d->t_c0_us,
			       (unsigned long long)d->deadline_us);
		}
	}
	/* Pacing judges the worse of the loss this rank saw and the loss its peers reported
	 * (what our sends cost them); the rules are in pacing.c. */
	if (param_d(b, OR_P_PACING_RATE) <= 0 && !skip_sample) {
		struct or_pace_sample ps = {
		    .loss = b->peer_loss > b->own_loss ? b->peer_loss : b->own_loss,
		    /* Bits per microsecond = Mbit/s. */
		    .took_mbps = op->send_us > 0 ? (double)op->sent_bytes * 8.0 / op->send_us : 0,
		    .link_bound = op->blocked * 100 > op->sent_pkts + 100,
		    .hit = hit,
		};
		pace = or_pacer_update(&b->pace, &ps);
	}
	or_log(OR_LOG_DEBUG,
	       "op %llu: phases %s/%s, deadline %llu us, loss %.4f, rate %.0f Mbit/s (%s), "
	       "incast %u, refused %llu",
	       (unsigned long long)c->seq, phase_end_name(c->status->phase_end[0]),
	       phase_end_name(c->status->phase_end[1]),
	       (unsigned long long)c->status->deadline_us[0], b->own_loss, b->pace.rate_mbps,
	       pace == OR_PACE_DECISION_COUNT ? "fixed" : or_pace_decision_name(pace), c->incast,
	       (unsigned long long)c->bop->blocked);
	/*
	 * Peers pace by the loss this rank reports in its next headers.  What a deadline cut
	 * or an absent straggler cost is not the network's: report the usual level, or one
	 * slow rank would make every sender back off after each of its operations.
	 */
	if (hit || skip_sample)
		b->own_loss = b->pace.loss_avg;
	end_op(b, c);
	return ret;
}

void or_bounded_op_abort(struct or_bounded *b, struct or_coll *c)
{
	if (c->bop)
		end_op(b, c);
}

/* Called by the algorithm once its regions are declared: parked packets now have a home. */
void or_bop_regions_ready(struct or_coll *c)
{
	replay_parked(c->comm->bounded);
}

int or_bounded_poll(struct or_bounded *b)
{
	int ret, r2;

	b->app_us = or_now_us();
	ret = reap(b);

	if (ret < 0)
		return ret;
	ret += drain_ready(b);
	if (b->op) {
		for (unsigned p = 0; p < b->op->nphases; p++)
			if (b->op->ph[p].begun && !b->op->ph[p].closed &&
			    b->op->ph[p].group < b->op->ph[p].norder) {
				/*
				 * Only packets sent are activity: a pass that sent nothing must let
				 * the caller sleep until tokens or the socket allow.  Counting the
				 * attempt kept the wait loop spinning through whole phases: 150,000
				 * empty polls, each a failed recvmsg, per 4 MiB operation.
				 */
				r2 = pump(b, p);
				if (r2 < 0)
					return r2;
				ret += r2;
				break;
			}
	}
	return ret;
}

int or_bounded_wait(struct or_bounded *b, struct or_ofi *rdm, int timeout_ms)
{
	struct or_bounded_op *op = b->op;

	b->app_us = or_now_us();
	if (!op)
		return or_ofi_wait(rdm, timeout_ms);
	/* Sends waiting for tokens sleep until the bucket holds a packet, not spin: ranks that
	 * share a core need it to drain their sockets instead of dropping datagrams.  The
	 * progress thread keeps reaping meanwhile. */
	for (unsigned p = 0; p < op->nphases; p++)
		if (op->ph[p].begun && !op->ph[p].closed && op->ph[p].group < op->ph[p].norder) {
			double need, us;
			refill(b);
			need = (double)(b->max_msg) - b->tokens;
			us = need > 0 ? need * 8.0 / (b->pace.rate_mbps * b->share) : 0;
			/* A full socket: until the next try, not a spin. */
			if (b->blocked) {
				double left = b->blocked_until_us - or_now_us();
				if (left > us)
					us = left;
			}
			if (us >= 5)
				sleep_us(us < 1000 ? (long)us : 1000);
			else
				sched_yield();
			return reap(b);
		}
	{
		int ret;
		pthread_mutex_lock(&b->ofi_lock);
		ret = b->ready_count ? 1 : or_ofi_wait(b->ep, 1);
		pthread_mutex_unlock(&b->ofi_lock);
		return ret;
	}
}
