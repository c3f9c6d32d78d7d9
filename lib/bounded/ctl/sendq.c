/* SPDX-License-Identifier: BSD-3-Clause */
#include "lib/bounded/ctl/sendq.h"

void or_sendq_init(struct or_sendq *q, size_t buf, double limit_us, double hold_us)
{
	*q = (struct or_sendq){.limit_us = limit_us > 0 ? limit_us : 0,
	                       .hold_us = hold_us > 0 ? hold_us : 0,
	                       .ceiling = buf,
	                       .buf = buf,
	                       .t_us = -1};
}

/*
 * A span measures the drain only when nothing was handed to the socket in it and the queue
 * neither started nearly empty nor emptied: an empty queue says only that the link is at
 * least that fast.
 */
static int span_measures(const struct or_sendq *q, size_t queued, uint64_t handed)
{
	return handed == q->handed && q->queued >= OR_SENDQ_MIN_QUEUED && queued > 0 &&
	       queued < q->queued;
}

/* The median of the window's filled part (insertion sort of at most OR_SENDQ_WINDOW). */
static double window_median(const struct or_sendq *q)
{
	unsigned n = q->spans < OR_SENDQ_WINDOW ? q->spans : OR_SENDQ_WINDOW;
	double v[OR_SENDQ_WINDOW];

	for (unsigned i = 0; i < n; i++) {
		unsigned j = i;
		for (; j > 0 && v[j - 1] > q->window[i]; j--)
			v[j] = v[j - 1];
		v[j] = q->window[i];
	}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* What limit_us of the rate is, within [OR_SENDQ_FLOOR, ceiling]. */
static size_t wanted(const struct or_sendq *q)
{
	double want = q->rate * q->limit_us;

	if (want >= (double)q->ceiling)
		return q->ceiling;
	return want < OR_SENDQ_FLOOR ? OR_SENDQ_FLOOR : (size_t)want;
}

size_t or_sendq_reading(struct or_sendq *q, double now_us, size_t queued, uint64_t handed)
{
	size_t want;

	if (!or_sendq_due(q, now_us))
		return 0;
	q->span_rate = 0;
	if (q->t_us >= 0 && span_measures(q, queued, handed)) {
		double r = (double)(q->queued - queued) / (now_us - q->t_us);
		q->window[q->spans % OR_SENDQ_WINDOW] = r;
		q->spans++;
		q->rate = window_median(q);
		q->span_rate = r;
		if (q->spans >= OR_SENDQ_FIRST && q->rate > q->peak)
			q->peak = q->rate;
	}
	q->t_us = now_us;
	q->queued = queued;
	q->handed = handed;
	if (q->spans < OR_SENDQ_FIRST || q->limit_us <= 0)
		return 0;
	want = wanted(q);
	/* Within a half of the buffer now, a change is not worth a system call. */
	if (want == q->buf || (want * 2 > q->buf && want < q->buf * 3 / 2 && want != q->ceiling))
		return 0;
	return want;
}

void or_sendq_set(struct or_sendq *q, size_t got)
{
	if (got)
		q->buf = got;
}

int or_sendq_holding(const struct or_sendq *q)
{
	return q->hold_us > 0 && q->buf && q->spans >= OR_SENDQ_FIRST &&
	       q->rate >= OR_SENDQ_SHARED * q->peak;
}

double or_sendq_hold_wait_us(const struct or_sendq *q, size_t queued)
{
	double high, low;

	if (!or_sendq_holding(q))
		return 0;
	high = q->rate * q->hold_us;
	/* A few datagrams at least: the link must not idle while a sender wakes. */
	if (high < OR_SENDQ_HOLD_MIN)
		high = OR_SENDQ_HOLD_MIN;
	low = high / 2;
	return (double)queued > high ? ((double)queued - low) / q->rate : 0;
}
