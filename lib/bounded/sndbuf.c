/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The endpoint socket's send queue (docs/design.md, "Pacing"): the buffer socket_sndbuf
 * gives, or else one that holds send_queue_us of the rate the host's queue drains at
 * (lib/bounded/ctl/sendq.h), learnt from the bytes still queued while the channel hands it nothing;
 * and the hold that keeps first-pass data in the library beyond queue_hold_us of it.
 */
#include "lib/bounded/bounded_int.h"

void or_bd_sndbuf_init(struct or_bounded *b)
{
	size_t fixed = (size_t)or_bd_param_i(b, OR_P_SOCKET_SNDBUF), got;
	double hold_us = (double)or_bd_param_i(b, OR_P_QUEUE_HOLD_US);

	if (fixed) {
		got = or_dg_set_sndbuf(b->ep, fixed);
		or_log(OR_LOG_INFO, "datagram socket send buffer: %zu bytes%s", got,
		       got ? "" : " (no socket found: left as the provider made it)");
		or_sendq_init(&b->sendq, got, 0, hold_us);
		return;
	}
	got = or_dg_sndbuf(b->ep);
	or_sendq_init(&b->sendq, got, (double)or_bd_param_i(b, OR_P_SEND_QUEUE_US), hold_us);
	if (got && b->sendq.limit_us > 0)
		or_log(OR_LOG_DEBUG,
		       "datagram socket send buffer: %zu bytes, cut to hold %.0f us "
		       "of its queue's drain once measured",
		       got, b->sendq.limit_us);
}

/* One reading of the socket's queue when one is due; resizes on its answer. */
void or_bd_sndbuf_reading(struct or_bounded *b)
{
	struct or_sendq *q = &b->sendq;
	double now = or_now_us();
	size_t want, got;
	long queued;
	uint64_t handed;

	if (!or_sendq_due(q, now))
		return; /* before the lock and the system call: this runs on every poll */
	pthread_mutex_lock(&b->ofi_lock);
	queued = or_dg_send_queued(b->ep);
	handed = b->tx_handed;
	want = queued >= 0 ? or_sendq_reading(q, now, (size_t)queued, handed) : 0;
	got = want ? or_dg_set_sndbuf(b->ep, want / 2) : 0; /* the kernel doubles it */
	pthread_mutex_unlock(&b->ofi_lock);
	if (q->span_rate > 0)
		or_log(OR_LOG_TRACE,
		       "send queue: %ld bytes, drained at %.1f kB/ms since the last "
		       "reading, median %.1f",
		       queued, q->span_rate, q->rate);
	if (queued < 0) {
		q->buf = 0; /* no socket to read: nothing to size */
		return;
	}
	if (!want)
		return;
	or_sendq_set(q, got);
	or_log(OR_LOG_INFO,
	       "datagram socket send buffer: %zu bytes, %.0f us of the %.1f kB/ms "
	       "its queue drains at (as the socket counts bytes)",
	       got, q->limit_us, q->rate);
}

/* The hold's state changed: say so once, not per datagram. */
static void note_holding(struct or_bounded *b, int holding)
{
	int level = holding && !b->queue_held_once ? OR_LOG_INFO : OR_LOG_DEBUG;

	if (holding == b->queue_holding)
		return;
	b->queue_holding = holding;
	b->queue_held_once |= holding;
	/* The first hold says what the channel measured; later turns are detail. */
	if (holding)
		or_log(level,
		       "send queue: first-pass data waits above %.0f us of the %.1f kB/ms it "
		       "drains at",
		       b->sendq.hold_us, b->sendq.rate);
	else
		or_log(level,
		       "send queue: no hold, it drains at %.1f kB/ms against %.1f alone "
		       "(shared with other traffic)",
		       b->sendq.rate, b->sendq.peak);
}

int or_bd_queue_held(struct or_bounded *b)
{
	double now, wait;
	long queued;

	if (!or_sendq_holding(&b->sendq)) {
		note_holding(b, 0);
		return 0;
	}
	note_holding(b, 1);
	now = or_now_us();
	if (now < b->queue_hold_until_us)
		return 1;
	pthread_mutex_lock(&b->ofi_lock);
	queued = or_dg_send_queued(b->ep);
	pthread_mutex_unlock(&b->ofi_lock);
	wait = queued > 0 ? or_sendq_hold_wait_us(&b->sendq, (size_t)queued) : 0;
	if (wait <= 0)
		return 0;
	b->queue_hold_until_us = now + wait;
	return 1;
}
