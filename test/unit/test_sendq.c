/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the send buffer's sizing from its queue's drain (lib/bounded/ctl/sendq.c) on synthetic
 * readings: a slow link's queue, a fast link's that empties, readings across sends, the
 * floor, the ceiling and the hysteresis; and the hold of first-pass data on the same
 * readings.  Exit 0 when all pass, 1 otherwise.
 */
#include <stdio.h>

#include "lib/bounded/ctl/sendq.h"

#include "check.h"

#define SYSTEM_BUF 212992

/* A check inside a loop: says nothing unless it fails. */
#define CHECK_QUIET(cond)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL: %s at %s:%d\n", #cond, __FILE__, __LINE__);                  \
			check_failures++;                                                          \
		}                                                                                  \
	} while (0)

/*
 * A queue of `queued` bytes draining at rate bytes/us with nothing handed: readings every
 * span us until it empties or n readings.  Returns the last nonzero answer.
 */
static size_t drain(struct or_sendq *q, double *now, double queued, double rate, double span, int n,
                    uint64_t handed)
{
	size_t last = 0, want;

	for (int i = 0; i < n && queued >= 0; i++, *now += span, queued -= rate * span) {
		want = or_sendq_reading(q, *now, queued > 0 ? (size_t)queued : 0, handed);
		if (want) {
			last = want;
			or_sendq_set(q, want);
		}
	}
	return last;
}

/* 100 Mbit/s on the wire is about 19 bytes/us as the socket counts (2.3 KB a datagram). */
static void test_slow_link(void)
{
	struct or_sendq q;
	double now = 1000;
	size_t got;

	or_sendq_init(&q, SYSTEM_BUF, 2000, 0);
	got = drain(&q, &now, 120000, 19, 200, 20, 7);
	CHECK(q.spans >= 3, "a phase draining from the queue gives spans (%u)", q.spans);
	CHECK(q.rate > 18.9 && q.rate < 19.1, "drain rate measured: %.2f bytes/us", q.rate);
	CHECK(got >= 37000 && got <= 39000, "buffer cut to 2 ms of the drain: %zu", got);
	CHECK(q.buf == got, "the buffer taken is the one kept");
}

/* A 10 Gbit/s link empties the queue within a span: no reading, the buffer stays. */
static void test_fast_link(void)
{
	struct or_sendq q;
	double now = 0;

	or_sendq_init(&q, SYSTEM_BUF, 2000, 0);
	for (int op = 0; op < 50; op++) {
		CHECK_QUIET(or_sendq_reading(&q, now, 150000, op) == 0);
		now += 150;
		CHECK_QUIET(or_sendq_reading(&q, now, 0, op) == 0);
		now += 150;
	}
	CHECK(q.spans == 0 && q.buf == SYSTEM_BUF, "an emptied queue measures nothing (%u spans)",
	      q.spans);
}

/* Datagrams handed during a span hide the drain: such spans do not count. */
static void test_sends_between(void)
{
	struct or_sendq q;
	double now = 0;
	uint64_t handed = 0;

	or_sendq_init(&q, SYSTEM_BUF, 2000, 0);
	for (int i = 0; i < 30; i++, now += 200, handed += 5)
		CHECK_QUIET(or_sendq_reading(&q, now, 100000 - i * 100, handed) == 0);
	CHECK(q.spans == 0, "spans with sends in them give no rate");
	/* A queue that starts nearly empty says little either. */
	CHECK(or_sendq_reading(&q, now, 4000, handed) == 0 && q.spans == 0,
	      "a span from a queue under %d bytes gives no rate", OR_SENDQ_MIN_QUEUED);
	now += 200;
	CHECK(or_sendq_reading(&q, now, 3000, handed) == 0 && q.spans == 0, "still none");
}

static void test_bounds(void)
{
	struct or_sendq q;
	double now = 0;
	size_t got;

	/* 10 Mbit/s: 2 ms is 3.8 KB, under the floor. */
	or_sendq_init(&q, SYSTEM_BUF, 2000, 0);
	got = drain(&q, &now, 60000, 1.9, 500, 20, 0);
	CHECK(got == OR_SENDQ_FLOOR, "never under the floor: %zu", got);
	/* 1 Gbit/s with a 2 ms limit wants more than the system's buffer: it stays. */
	or_sendq_init(&q, SYSTEM_BUF, 2000, 0);
	now = 0;
	got = drain(&q, &now, 200000, 190, 150, 5, 0);
	CHECK(got == 0 && q.buf == SYSTEM_BUF && q.spans > 0, "never over the system's buffer");
	/* limit 0 and no socket: nothing, ever. */
	or_sendq_init(&q, SYSTEM_BUF, 0, 0);
	now = 0;
	CHECK(drain(&q, &now, 120000, 19, 200, 20, 0) == 0 && q.spans == 0, "limit 0: off");
	or_sendq_init(&q, 0, 2000, 0);
	now = 0;
	CHECK(drain(&q, &now, 120000, 19, 200, 20, 0) == 0, "no socket: nothing to size");
}

/* Small changes of the rate do not resize; a link that got faster grows it back. */
static void test_hysteresis(void)
{
	struct or_sendq q;
	double now = 0;
	size_t first, again, grown;

	or_sendq_init(&q, SYSTEM_BUF, 2000, 0);
	first = drain(&q, &now, 120000, 19, 200, 20, 1);
	again = drain(&q, &now, 120000, 24, 200, 20, 2);
	CHECK(first && again == 0 && q.buf == first, "a quarter faster: kept at %zu", q.buf);
	grown = 0;
	for (uint64_t h = 3; h < 20 && !grown; h++)
		grown = drain(&q, &now, 36000, 60, 120, 3, h);
	CHECK(grown > first * 3 / 2, "three times faster: grows to %zu (from %zu)", grown, first);
}

/* One span in four at three times the rate (a tbf's bucket, a late reader) moves nothing. */
static void test_outliers(void)
{
	struct or_sendq q;
	double now = 0, queued = 150000;
	size_t first = 0, want;

	or_sendq_init(&q, SYSTEM_BUF, 2000, 0);
	for (int i = 0; i < 200; i++, now += 200) {
		want = or_sendq_reading(&q, now, (size_t)queued, 9);
		if (want) {
			CHECK_QUIET(first == 0);
			first = want;
			or_sendq_set(&q, want);
		}
		queued -= (i % 4 == 3 ? 57 : 19) * 200.0;
		if (queued < 10000) /* refilled: that span measures nothing */
			queued = 150000;
	}
	CHECK(q.rate > 18.9 && q.rate < 19.1 && first >= 37000 && first <= 39000,
	      "outliers leave the median at %.1f bytes/us and the buffer at %zu", q.rate, first);
}

/* The hold alone: the buffer is never sized, first-pass data waits above hold_us. */
static void test_hold(void)
{
	struct or_sendq q;
	double now = 0, wait;

	or_sendq_init(&q, SYSTEM_BUF, 0, 1000);
	CHECK(!or_sendq_holding(&q) && or_sendq_hold_wait_us(&q, 100000) == 0,
	      "no hold before the drain is measured");
	CHECK(drain(&q, &now, 120000, 19, 200, 20, 1) == 0 && q.buf == SYSTEM_BUF,
	      "the hold alone never sizes the buffer");
	CHECK(or_sendq_holding(&q), "measured at %.1f bytes/us: the hold applies", q.rate);
	CHECK(or_sendq_hold_wait_us(&q, 19000) == 0, "1 ms of the drain queued: send");
	wait = or_sendq_hold_wait_us(&q, 38000);
	CHECK(wait > 1490 && wait < 1510, "2 ms queued: wait until half a ms is left (%.0f us)",
	      wait);
	/* 10 Mbit/s: 1 ms is 1.9 KB, less than the link needs to stay busy. */
	or_sendq_init(&q, SYSTEM_BUF, 0, 1000);
	now = 0;
	drain(&q, &now, 60000, 1.9, 500, 20, 0);
	CHECK(or_sendq_hold_wait_us(&q, OR_SENDQ_HOLD_MIN) == 0 &&
	          or_sendq_hold_wait_us(&q, OR_SENDQ_HOLD_MIN + 1900) > 0,
	      "never holds under %d bytes", OR_SENDQ_HOLD_MIN);
	/* Off, and no socket: never. */
	or_sendq_init(&q, SYSTEM_BUF, 0, 0);
	now = 0;
	drain(&q, &now, 120000, 19, 200, 20, 0);
	CHECK(!or_sendq_holding(&q) && q.spans == 0, "hold_us 0: off, nothing measured");
	or_sendq_init(&q, 0, 0, 1000);
	now = 0;
	drain(&q, &now, 120000, 19, 200, 20, 0);
	CHECK(!or_sendq_holding(&q), "no socket: no hold");
}

/* Other traffic in the same FIFO: our drain falls under 0.7 of the link's, the hold stops,
 * and comes back with the link. */
static void test_hold_shared(void)
{
	struct or_sendq q;
	double now = 0;
	uint64_t h = 0;

	or_sendq_init(&q, SYSTEM_BUF, 0, 1000);
	drain(&q, &now, 150000, 19, 200, 30, h++);
	CHECK(or_sendq_holding(&q) && q.peak > 18.9, "alone: holds (peak %.1f)", q.peak);
	for (int i = 0; i < 6; i++)
		drain(&q, &now, 60000, 6, 200, 30, h++);
	CHECK(!or_sendq_holding(&q) && q.rate < 7,
	      "a third of the link: no hold (drain %.1f, peak %.1f)", q.rate, q.peak);
	CHECK(or_sendq_hold_wait_us(&q, 150000) == 0, "and no wait, however full");
	for (int i = 0; i < 3; i++)
		drain(&q, &now, 150000, 19, 200, 30, h++);
	CHECK(or_sendq_holding(&q), "the link alone again: holds (drain %.1f)", q.rate);
}

int main(void)
{
	test_slow_link();
	test_fast_link();
	test_sends_between();
	test_bounds();
	test_hysteresis();
	test_outliers();
	test_hold();
	test_hold_shared();
	printf("%s\n", check_failures ? "FAILED" : "all passed");
	return check_failures ? 1 : 0;
}
