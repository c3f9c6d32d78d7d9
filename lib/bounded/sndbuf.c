/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The endpoint socket's send buffer (docs/design.md, "Pacing"): the size socket_sndbuf
 * gives, or else one that holds send_queue_us of the rate the host's queue drains at
 * (lib/sendq.h), learnt from the bytes still queued while the channel hands it nothing.
 */
#include "bounded_int.h"

void or_bd_sndbuf_init(struct or_bounded *b)
{
	size_t fixed = (size_t)or_bd_param_i(b, OR_P_SOCKET_SNDBUF), got;

	if (fixed) {
		got = or_ofi_set_sndbuf(b->ep, fixed);
		or_log(OR_LOG_INFO, "datagram socket send buffer: %zu bytes%s", got,
		       got ? "" : " (no socket found: left as the provider made it)");
		or_sendq_init(&b->sendq, 0, 0);
		return;
	}
	got = or_ofi_sndbuf(b->ep);
	or_sendq_init(&b->sendq, got, (double)or_bd_param_i(b, OR_P_SEND_QUEUE_US));
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
	queued = or_ofi_send_queued(b->ep);
	handed = b->tx_handed;
	want = queued >= 0 ? or_sendq_reading(q, now, (size_t)queued, handed) : 0;
	got = want ? or_ofi_set_sndbuf(b->ep, want / 2) : 0; /* the kernel doubles it */
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
