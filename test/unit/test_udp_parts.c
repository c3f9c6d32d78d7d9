/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sends in parts on the kernel datagram transport (or_dg_send_parts, udp/tx.c): a header in
 * the sender's buffer and a payload read where it lies.  Two loopback endpoints check that
 * each datagram arrives whole and as sent; that a payload changed after the flush no longer
 * matters, both for datagrams the flush sent and for those it left waiting for room (their
 * payloads copied, and counted); and that the bounds are checked.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "dgram/dgram.h"
#include "optireduce.h"
#include "udp/udp.h"
#include "udp/udp_int.h"

enum { N = 40, HDR = 24 };

struct rx_slot {
	struct or_xport_xfer x;
	uint8_t buf[1472];
};

static struct or_dgram *a, *b;
static uint8_t head[N][1472];          /* each send's buffer: header, then room */
static uint8_t payload[N][1472 - HDR]; /* lent */
static uint8_t expect[N][1472];
static size_t sizes[N];
static struct or_xport_xfer tx[N];
static struct rx_slot rx[N];

/* Where the transport says the bytes are: on this path, lent from its receive buffer. */
static const uint8_t *received(const struct rx_slot *r)
{
	return r->x.data;
}

static int open_pair(void)
{
	struct or_dgram_want w = {
	    .kind = OR_DGRAM_KERNEL, .same_host = 1, .flows = 1, .gso = 1, .gro = 1, .mtu = 1500};
	uint8_t names[2][256];
	size_t len = sizeof(names[0]);
	char why[200];

	if (or_udp_open(&w, &a, why, sizeof(why)) || or_udp_open(&w, &b, why, sizeof(why))) {
		CHECK(0, "endpoints (%s)", why);
		return -1;
	}
	or_dg_getname(a, names[0], &len);
	len = sizeof(names[1]);
	or_dg_getname(b, names[1], &len);
	or_dg_av_insert(a, names, sizeof(names[0]), 2);
	or_dg_av_insert(b, names, sizeof(names[0]), 2);
	or_dg_set_rcvbuf(b, 4 << 20);
	return 0;
}

/* N datagrams in parts, full-size runs with an odd tail; queued, not flushed. */
static void queue_parts(unsigned round)
{
	int queued = 0;

	for (int i = 0; i < N; i++) {
		sizes[i] = i == N - 1 ? 333 : or_dg_max_msg(a);
		for (size_t k = 0; k < sizes[i]; k++)
			expect[i][k] = (uint8_t)(round * 37 + (unsigned)i * 131 + k * 7);
		memcpy(head[i], expect[i], HDR);
		memcpy(payload[i], expect[i] + HDR, sizes[i] - HDR);
		or_dg_recv(b, rx[i].buf, sizeof(rx[i].buf), &rx[i].x);
		queued +=
		    or_dg_send_parts(a, 1, head[i], HDR, payload[i], sizes[i] - HDR, &tx[i]) == 0;
	}
	CHECK(queued == N, "round %u: %d of %d sends queued", round, queued, N);
}

/* Every datagram received, whole and equal to what was lent before the flush. */
static void check_received(const char *what)
{
	int got = 0, bad = 0;

	for (int tries = 0; got < N && tries < 2000; tries++) {
		if (or_dg_poll(b, 256) <= 0)
			or_dg_wait(b, 1);
		got = 0;
		for (int i = 0; i < N; i++)
			got += rx[i].x.done;
	}
	for (int i = 0; i < N && got == N; i++)
		bad += rx[i].x.error || rx[i].x.len != sizes[i] ||
		       memcmp(received(&rx[i]), expect[i], sizes[i]);
	CHECK(got == N, "%s: %d of %d datagrams received", what, got, N);
	CHECK(bad == 0, "%s: every datagram as lent before the flush (%d not)", what, bad);
}

static unsigned long long kept(void)
{
	char desc[512], *p;

	or_dg_describe(a, desc, sizeof(desc));
	p = strstr(desc, "truncated, ");
	return p ? strtoull(p + strlen("truncated, "), NULL, 10) : ~0ULL;
}

/* The flush sends them: nothing copied, and the payloads are free again at once. */
static void test_sent_at_flush(void)
{
	queue_parts(1);
	CHECK(or_dg_flush(a) == 0, "sent: the flush took every datagram");
	memset(payload, 0xee, sizeof(payload));
	check_received("sent");
	CHECK(kept() == 0, "sent: no payload copied (%llu)", kept());
}

/*
 * The socket has no room at the flush (its descriptor swapped for a full pipe's, which
 * polls unwritable as a full socket does): every datagram waits, its payload copied before
 * the flush returns, and goes once room comes.
 */
static void test_waiting_at_flush(void)
{
	struct or_udp *u = (struct or_udp *)a;
	int p[2], sock = u->fd[0];
	char junk[4096] = {0};

	if (pipe2(p, O_NONBLOCK)) {
		CHECK(0, "waiting: pipe (%s)", strerror(errno));
		return;
	}
	while (write(p[1], junk, sizeof(junk)) > 0)
		;
	queue_parts(2);
	u->fd[0] = p[1];
	u->tx_blocked = 1;
	u->blocked_flow = 0;
	CHECK(or_dg_flush(a) == -OPTIREDUCE_EAGAIN, "waiting: the flush found no room");
	memset(payload, 0xdd, sizeof(payload));
	CHECK(kept() == N, "waiting: %d payloads copied (%llu)", N, kept());
	u->fd[0] = sock;
	close(p[0]);
	close(p[1]);
	CHECK(or_dg_flush(a) == 0, "waiting: the next flush sent them");
	check_received("waiting");
}

static void test_bounds(void)
{
	static struct or_xport_xfer x;
	size_t max = or_dg_max_msg(a);

	CHECK(or_dg_send_parts(a, 2, head[0], HDR, payload[0], 10, &x) == -OPTIREDUCE_EINVAL,
	      "bounds: a peer outside the address vector");
	CHECK(or_dg_send_parts(a, 1, head[0], HDR, payload[0], max - HDR + 1, &x) ==
	          -OPTIREDUCE_EMSGSIZE,
	      "bounds: a datagram over max_msg");
	CHECK(or_dg_send_parts(a, OR_DG_GROUP, head[0], HDR, payload[0], 10, &x) ==
	          -OPTIREDUCE_EPEER,
	      "bounds: the group before joining one");
}

int main(void)
{
	if (open_pair())
		return 1;
	test_sent_at_flush();
	test_waiting_at_flush();
	test_bounds();
	or_dg_close(a);
	or_dg_close(b);
	printf("%s: %d failures\n", check_failures ? "FAIL" : "PASS", check_failures);
	return check_failures ? 1 : 0;
}
