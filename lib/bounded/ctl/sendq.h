/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The host's send queue kept short (docs/design.md, "Pacing").
 *
 * A datagram counts against its socket's send buffer until the host has sent it, so the
 * buffer bounds how much of a phase waits in the host's queue, behind which a resend
 * would wait too.  The default buffer (~200 KB) holds 17 ms at 100 Mbit/s: a 64 KiB
 * phase sits there whole.  This module learns the rate the queue drains at from readings
 * of the bytes still queued, taken while the sender handed it nothing, and answers with a
 * buffer that holds limit_us of it, so the rest of a phase waits in the library, where
 * resends go first.  A queue that drains within a reading's span, as on a fast link,
 * gives no reading and the buffer stays as the system made it.
 *
 * The same rate also holds first-pass data in the library without touching the buffer
 * (hold_us): while the queue holds more than hold_us of the drain, first-pass sends wait
 * until it has drained to half that, and resends, which do not wait, overtake them.  A
 * drain well under the fastest one seen is the link shared with other traffic in the same
 * FIFO: holding back there would cede the link to it, so the hold is off.
 *
 * Pure, like pacing.h: the caller reads the socket and sets the buffer.
 */
#ifndef OR_SENDQ_H
#define OR_SENDQ_H

#include <stddef.h>
#include <stdint.h>

/* Shortest span between two readings that measure a rate. */
#define OR_SENDQ_SPAN_US 100.0
/* Fewer bytes queued at a span's start say little about the rate (a tbf's burst). */
#define OR_SENDQ_MIN_QUEUED 8192
/* Spans the rate is the median of: a span that caught a tbf's burst or a descheduled
 * reader is an outlier, not a change of the link. */
#define OR_SENDQ_WINDOW 15
/* Spans measured before the first answer. */
#define OR_SENDQ_FIRST 5
/* Smallest buffer it asks for, as the kernel counts it: about 7 full datagrams. */
#define OR_SENDQ_FLOOR 16384
/* The least the hold keeps queued, as the kernel counts it: 3-4 full datagrams. */
#define OR_SENDQ_HOLD_MIN 8192
/* A drain under this share of the fastest seen is shared with other senders: no hold. */
#define OR_SENDQ_SHARED 0.7

struct or_sendq {
	double limit_us; /* the longest the queue may hold; 0: the buffer is never changed */
	double hold_us;  /* first-pass data waits above this long of the drain; 0: never */
	size_t ceiling;  /* the buffer as the system made it: never more */
	size_t buf;      /* the buffer now; 0: no socket, nothing to do */
	double t_us;     /* the last reading; < 0: none yet */
	size_t queued;   /* bytes queued then */
	uint64_t handed; /* datagrams handed to the socket by then */
	double rate;     /* bytes per us the queue drains at: the window's median; 0: none yet */
	unsigned spans;  /* readings that measured the rate */
	double window[OR_SENDQ_WINDOW]; /* the last spans' rates, window[spans % WINDOW] next */
	double span_rate;               /* what the last reading measured; 0: nothing */
	double peak;                    /* the fastest median so far: the link alone */
};

/* buf: the socket's send buffer now (0: none); limit_us sizes it, hold_us holds data. */
void or_sendq_init(struct or_sendq *q, size_t buf, double limit_us, double hold_us);

/* Whether a reading at now_us can tell anything: sizing or the hold on, a socket, the span
 * passed. */
static inline int or_sendq_due(const struct or_sendq *q, double now_us)
{
	return (q->limit_us > 0 || q->hold_us > 0) && q->buf &&
	       (q->t_us < 0 || now_us - q->t_us >= OR_SENDQ_SPAN_US);
}

/* Whether the hold applies: on, the drain measured, and the link not shared. */
int or_sendq_holding(const struct or_sendq *q);

/*
 * With `queued` bytes in the socket now: 0 to send first-pass data, or else how many us to
 * wait until the queue has drained to half of hold_us.
 */
double or_sendq_hold_wait_us(const struct or_sendq *q, size_t queued);

/*
 * One reading at now_us: bytes still queued in the socket, datagrams handed to it so far.
 * Returns the buffer to set (bytes as the kernel counts them), or 0 to leave it; the
 * caller reports what the socket took with or_sendq_set.
 */
size_t or_sendq_reading(struct or_sendq *q, double now_us, size_t queued, uint64_t handed);

/* The buffer the socket reports after a resize. */
void or_sendq_set(struct or_sendq *q, size_t got);

#endif /* OR_SENDQ_H */
