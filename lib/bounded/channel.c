/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bounded channel of a communicator (docs/design.md, "Two modes"): its datagram
 * endpoint, buffers, locks and timeout controller, set up and torn down here; the
 * core's poll and wait.  Receive, send, phases, the estimate and the operation each
 * live in a file of their own beside this one.
 */
#define _GNU_SOURCE /* ppoll */
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "lib/bounded/bounded_int.h"
#include "lib/bounded/wire.h"

static void init_locks(struct or_bounded *b)
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

static void destroy_locks(struct or_bounded *b)
{
	pthread_mutex_destroy(&b->lock);
	pthread_mutex_destroy(&b->ofi_lock);
	pthread_cond_destroy(&b->op_done);
}

/* Payload per datagram: what the endpoint carries, or less if asked, whole elements. */
static int size_payload(struct or_bounded *b)
{
	size_t want = (size_t)or_bd_param_i(b, OR_P_PACKET_PAYLOAD);

	b->max_msg = or_dg_max_msg(b->ep);
	if (b->max_msg > 65535 + OR_WIRE_HDR_SIZE)
		b->max_msg = 65535 + OR_WIRE_HDR_SIZE;
	b->ch.payload = b->max_msg - OR_WIRE_HDR_SIZE;
	if (want && want < b->ch.payload)
		b->ch.payload = want;
	b->ch.payload -= b->ch.payload % 8; /* whole elements of every floating type */
	return b->ch.payload < 64 ? -OPTIREDUCE_EMSGSIZE : 0;
}

/*
 * The receive ring and the send pool: each buffer has the provider's message prefix before
 * it (FI_MSG_PREFIX), and both pools are registered when the provider needs it (FI_MR_LOCAL)
 * (docs/design.md, "Datagram providers").  The send pool is zeroed: with an emulated prefix
 * its bytes go on the wire.
 */
static int alloc_buffers(struct or_bounded *b)
{
	size_t prefix = or_dg_prefix(b->ep);
	int ret;

	b->stride = (prefix + b->max_msg + 7) & ~(size_t)7;
	b->nrx = or_dg_rx_depth(b->ep);
	if (b->nrx == 0 || b->nrx > OR_RX_RING)
		b->nrx = OR_RX_RING;
	/* The multicast group's endpoint gets the rest of the ring (mcast_group.c). */
	b->nrx_main = b->nrx;
	b->nrx += or_dg_group_rx_depth(b->ep);
	if (b->nrx > OR_RX_RING)
		b->nrx = b->nrx_main < OR_RX_RING ? OR_RX_RING : b->nrx_main;
	b->rx_mem = malloc(b->nrx * b->stride);
	b->tx_mem = calloc(OR_TX_POOL, b->stride);
	b->park = calloc(OR_PARK_MAX, sizeof(*b->park));
	if (!b->rx_mem || !b->tx_mem || !b->park ||
	    or_sendfail_init(&b->sendfail, b->ch.comm->size))
		return -OPTIREDUCE_ENOMEM;
	ret = or_dg_register(b->ep, b->rx_mem, b->nrx * b->stride);
	if (!ret)
		ret = or_dg_register(b->ep, b->tx_mem, OR_TX_POOL * b->stride);
	if (ret)
		return ret;
	or_bd_tx_init(b);
	or_log(OR_LOG_DEBUG,
	       "datagram endpoint %s: %zu-byte messages, message prefix %zu bytes, buffers %s%s",
	       or_dg_name(b->ep), b->max_msg, prefix,
	       or_dg_registers(b->ep) ? "registered" : "not registered",
	       or_bd_param_i(b, OR_P_EMULATE_DGRAM_MODES) ? " (emulate_dgram_modes)" : "");
	return 0;
}

static void tmo_config(const struct or_bounded *b, struct or_tmo_config *cfg)
{
	uint32_t size = b->ch.comm->size;

	or_tmo_config_default(cfg);
	cfg->nranks = size;
	cfg->rank = b->ch.comm->rank;
	cfg->min_us = (uint64_t)or_bd_param_i(b, OR_P_TIMEOUT_MIN_US);
	cfg->max_us = (uint64_t)or_bd_param_i(b, OR_P_TIMEOUT_MAX_US);
	if (cfg->max_us < cfg->min_us)
		cfg->max_us = cfg->min_us;
	cfg->initial_us = cfg->max_us;
	cfg->user_timeout_us = (uint64_t)or_bd_param_i(b, OR_P_TIMEOUT_US);
	cfg->calib_ops = (uint32_t)or_bd_param_i(b, OR_P_CALIB_OPS);
	cfg->calib_percentile = or_bd_param_d(b, OR_P_CALIB_PERCENTILE);
	cfg->calib_margin = or_bd_param_d(b, OR_P_CALIB_MARGIN);
	cfg->calib_slack_us = (uint64_t)or_bd_param_i(b, OR_P_CALIB_SLACK_US);
	cfg->backoff_after_us = (uint64_t)or_bd_param_i(b, OR_P_BACKOFF_AFTER_US);
	cfg->loss_budget = or_bd_param_d(b, OR_P_LOSS_BUDGET);
	cfg->early_fraction = or_bd_param_d(b, OR_P_EARLY_FRACTION);
	cfg->absent_factor = or_bd_param_d(b, OR_P_ABSENT_FACTOR);
	/* Sooner than t_C would cut senders that are merely slower than the others. */
	if (cfg->absent_factor > 0.0 && cfg->absent_factor < 1.0)
		cfg->absent_factor = 1.0;
	cfg->early_timeout = or_bd_param_i(b, OR_P_EARLY_TIMEOUT) != 0;
	cfg->user_incast = (uint32_t)or_bd_param_i(b, OR_P_INCAST);
	cfg->incast_initial = 0; /* every peer interleaved: see or_bd_pump() */
	if (size > 1 && cfg->user_incast > size - 1)
		cfg->user_incast = size - 1;
}

/* The deadline and incast controller; beyond OR_TMO_INLINE_RANKS its peer store is ours. */
static int init_controller(struct or_bounded *b)
{
	struct or_tmo_config cfg;
	uint32_t size = b->ch.comm->size;

	tmo_config(b, &cfg);
	if (size <= OR_TMO_INLINE_RANKS)
		return or_tmo_init(&b->tmo, &cfg) ? -OPTIREDUCE_EINVAL : 0;
	b->tmo_store = calloc(OR_TMO_PEER_STORE_LEN(size), sizeof(uint32_t));
	if (!b->tmo_store)
		return -OPTIREDUCE_ENOMEM;
	return or_tmo_init_store(&b->tmo, &cfg, b->tmo_store, OR_TMO_PEER_STORE_LEN(size))
	           ? -OPTIREDUCE_EINVAL
	           : 0;
}

int or_bounded_create(struct optireduce_comm *comm, int same_host, struct or_bounded **out)
{
	struct or_bounded *b = calloc(1, sizeof(*b));
	double rate;
	int ret;

	if (!b)
		return -OPTIREDUCE_ENOMEM;
	init_locks(b);
	b->ch.comm = comm;
	b->seq_hi = OR_SEQ_WINDOW; /* operation 0 is next (op.c, update_window) */
	b->wait_fd = b->wake[0] = b->wake[1] = b->app_wake_fd = -1;
	b->ch.mc = &b->mc;
	b->kinds = or_bd_kinds;
	b->features = or_bd_features;
	ret = or_bd_open_endpoint(b, same_host);
	if (ret) {
		destroy_locks(b);
		free(b);
		return ret;
	}
	ret = or_bd_mcast_open(b, same_host);
	if (!ret)
		ret = size_payload(b);
	if (!ret)
		ret = alloc_buffers(b);
	for (const struct or_bd_feature *const *f = b->features; !ret && *f; f++)
		ret = (*f)->open ? (*f)->open(&b->ch) : 0;
	if (ret) {
		or_bounded_destroy(b);
		return ret;
	}
	rate = or_bd_param_d(b, OR_P_PACING_RATE);
	/* A fixed rate stays; the kernel transport can fill fast links: find them at once. */
	if (rate > 0)
		or_pacer_init(&b->pace, rate);
	else if (b->ep->kind == OR_DGRAM_KERNEL)
		or_pacer_init_slow_start(&b->pace, OR_INITIAL_RATE_MBPS);
	else
		or_pacer_init(&b->pace, OR_INITIAL_RATE_MBPS);
	b->share = 1.0;
	b->inject_state =
	    (uint64_t)or_bd_param_i(b, OR_P_INJECT_SEED) * 0x100000001b3ull + comm->rank;
	ret = init_controller(b);
	if (ret) {
		or_bounded_destroy(b);
		return ret;
	}
	*out = b;
	return 0;
}

void or_bounded_destroy(struct or_bounded *b)
{
	if (!b)
		return;
	or_bd_progress_stop(b);
	or_bd_close_endpoint(b);
	for (size_t i = 0; i < b->nparked; i++)
		free(b->park[i].data);
	free(b->park);
	free(b->rx_mem);
	free(b->tx_mem);
	free(b->tmo_store);
	or_bd_mcast_free(b);
	for (const struct or_bd_feature *const *f = b->features; f && *f; f++)
		if ((*f)->close)
			(*f)->close(&b->ch);
	or_sendfail_fini(&b->sendfail);
	for (unsigned r = 0; r < OR_INFLIGHT_MAX; r++)
		for (unsigned i = 0; i < OR_BOP_SCRATCH_SLOTS; i++)
			free(b->scratch[r][i]);
	destroy_locks(b);
	free(b);
}

const char *or_bounded_provider(const struct or_bounded *b)
{
	return or_dg_name(b->ep);
}

const char *or_bounded_domain(const struct or_bounded *b)
{
	return or_dg_domain(b->ep);
}

int or_bounded_getname(struct or_bounded *b, void *buf, size_t *len)
{
	return or_dg_getname(b->ep, buf, len);
}

int or_bounded_connect(struct or_bounded *b, const void *names, size_t stride)
{
	int ret = or_dg_av_insert(b->ep, names, stride, b->ch.comm->size);

	if (!ret)
		ret = or_bd_rx_post_all(b);
	if (!ret && or_bd_param_i(b, OR_P_SOCKET_RCVBUF)) {
		size_t got = or_dg_set_rcvbuf(b->ep, (size_t)or_bd_param_i(b, OR_P_SOCKET_RCVBUF));
		b->rcvbuf = got;
		or_log(OR_LOG_INFO, "datagram socket receive buffer: %zu bytes%s", got,
		       got ? "" : " (no socket found: left as the provider made it)");
	}
	if (!ret)
		or_bd_sndbuf_init(b);
	if (!ret && or_bd_param_i(b, OR_P_PROGRESS_THREAD) && b->ch.comm->size > 1)
		or_bd_progress_start(b);
	return ret;
}

/* Whether a phase of any running operation is sending. */
static int any_sending(struct or_bounded *b)
{
	unsigned step;

	for (unsigned i = 0; i < b->nops; i++)
		if (or_bd_sending_phase(b->ops[i], &step))
			return 1;
	return 0;
}

int or_bounded_poll(struct or_bounded *b)
{
	unsigned step;
	int ret, sent;

	b->app_us = or_now_us();
	ret = or_bd_reap(b);
	if (ret < 0)
		return ret;
	ret += or_bd_drain_ready(b);
	or_bd_sndbuf_reading(b);
	/*
	 * After the drain, each feature's pass: what just arrived says its sender lives (peer
	 * failure), and resends go before data, their phases being further along than the data
	 * waiting for tokens (repair).
	 */
	for (const struct or_bd_feature *const *f = b->features; *f; f++) {
		int n = (*f)->progress ? (*f)->progress(&b->ch) : 0;
		if (n < 0)
			return n;
		ret += n;
	}
	/*
	 * Only packets sent are activity: a pass that sent nothing must let the caller sleep
	 * until tokens or the socket allow.  Counting the attempt kept the wait loop spinning
	 * through whole phases: 150,000 empty polls, each a failed recvmsg, per 4 MiB
	 * operation.  The oldest operation takes the shared tokens first, so operations tend
	 * to finish in the order they started.
	 */
	for (unsigned i = 0; i < b->nops; i++) {
		if (!or_bd_sending_phase(b->ops[i], &step))
			continue;
		sent = or_bd_pump(b, b->ops[i], step);
		if (sent < 0)
			return sent;
		ret += sent;
	}
	/* Resends and answers queued while draining go too. */
	or_bd_flush(b);
	return ret;
}

void or_bounded_set_wake_fd(struct or_bounded *b, int fd)
{
	b->app_wake_fd = fd;
}

/* Sleeps in poll() on fd (-1: none) and the wake-up for up to us; EINTR ends it early. */
static void sleep_wakeable(const struct or_bounded *b, int fd, double us)
{
	struct pollfd fds[2] = {{.fd = b->app_wake_fd, .events = POLLIN},
	                        {.fd = fd, .events = POLLIN}};
	long whole = (long)us;
	struct timespec ts = {whole / 1000000, (whole % 1000000) * 1000};

	ppoll(fds, fd >= 0 ? 2 : 1, &ts, NULL);
}

/* No bounded operation: the exact endpoint, and the wake-up where it has a descriptor. */
static int wait_exact(struct or_bounded *b, struct or_ofi *rdm, int timeout_ms)
{
	int fd = b->app_wake_fd >= 0 ? or_ofi_wait_fd(rdm) : -1;

	if (fd < 0)
		return or_ofi_wait(rdm, timeout_ms);
	if (or_ofi_trywait(rdm) == 0)
		sleep_wakeable(b, fd, 1e3 * timeout_ms);
	return or_ofi_poll(rdm, 256);
}

/* Nothing sending: the datagram endpoint, as the progress thread sleeps on it, and the
 * wake-up; without a descriptor, the endpoint's own wait (at most 1 ms). */
static int wait_receiving(struct or_bounded *b)
{
	int fd, ret = 1;

	pthread_mutex_lock(&b->ofi_lock);
	fd = b->app_wake_fd >= 0 ? or_dg_wait_fd(b->ep) : -1;
	if (!b->ready_count && fd < 0)
		ret = or_dg_wait(b->ep, 1);
	else if (!b->ready_count && or_dg_trywait(b->ep) != 0)
		ret = or_dg_poll(b->ep, 256);
	pthread_mutex_unlock(&b->ofi_lock);
	if (b->ready_count || fd < 0 || ret != 0)
		return ret;
	sleep_wakeable(b, fd, 1000);
	return or_bd_reap(b);
}

int or_bounded_wait(struct or_bounded *b, struct or_ofi *rdm, int timeout_ms)
{
	double need, us;

	b->app_us = or_now_us();
	if (!b->nops)
		return wait_exact(b, rdm, timeout_ms);
	if (!any_sending(b))
		return wait_receiving(b);
	/* Sends waiting for tokens sleep until the bucket holds a packet, not spin: ranks that
	 * share a core need it to drain their sockets instead of dropping datagrams.  The
	 * progress thread keeps reaping meanwhile. */
	or_bd_refill(b);
	need = (double)(b->max_msg) - b->tokens;
	us = need > 0 ? need * 8.0 / (b->pace.rate_mbps * b->share) : 0;
	/* A full socket: until the next try, not a spin. */
	if (b->blocked) {
		double left = b->blocked_until_us - or_now_us();
		if (left > us)
			us = left;
	}
	/* The host's queue past queue_hold_us: until it has drained to half of that. */
	if (b->queue_holding) {
		double left = b->queue_hold_until_us - or_now_us();
		if (left > us)
			us = left;
	}
	if (us >= 5 && b->app_wake_fd >= 0)
		sleep_wakeable(b, -1, us < 1000 ? us : 1000);
	else if (us >= 5)
		or_bd_sleep_us(us < 1000 ? (long)us : 1000);
	else
		sched_yield();
	return or_bd_reap(b);
}

void or_bounded_fail(struct or_bounded *b, int err)
{
	if (b)
		OR_BD_HOOK(b, fail, err);
}
