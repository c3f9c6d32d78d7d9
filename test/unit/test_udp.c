/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kernel datagram transport (udp/): segmentation and its reverse on every segment size
 * class and odd tail (seg.c), then two endpoints on loopback exchanging datagrams of mixed
 * sizes through the transport's own path, with segmentation and coalescing on and with the
 * fallback forced (one datagram per message), checking every byte, every sender, and that
 * a datagram larger than the posted buffers or from a stranger is dropped or flagged.  A
 * completed receive borrows its datagram where it lies in the transport (xfer.h, data):
 * the bytes stay as sent while other datagrams arrive; with half the slots lent the rest
 * are copied into their buffers, none lost, until the lent ones are posted again; an
 * oversized datagram lends nothing.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dgram/dgram.h"
#include "udp/seg.h"
#include "udp/udp.h"
#include "udp/udp_int.h"
#include "check.h"
#include "optireduce.h"

static void test_split(void)
{
	struct or_udp_span sp[OR_UDP_GSO_SEGS + 2];
	int bad = 0;

	/* Every segment size class, with tails of 0, 1 and gso - 1 bytes. */
	for (size_t gso = 1; gso <= 9000; gso = gso < 64 ? gso + 1 : gso * 3 / 2) {
		for (size_t k = 1; k <= 64 && k * gso <= 65535; k = k < 4 ? k + 1 : k * 2) {
			size_t tails[3] = {0, 1, gso - 1};
			for (int t = 0; t < 3; t++) {
				size_t len = k * gso + (tails[t] < gso ? tails[t] : 0), n, off = 0;
				if (len > 65535)
					continue;
				n = or_udp_split(len, gso, sp, OR_UDP_GSO_SEGS + 2);
				for (size_t i = 0; i < n; i++) {
					bad += sp[i].off != off || !sp[i].len || sp[i].len > gso;
					bad += i + 1 < n && sp[i].len != gso; /* only the last is short */
					off += sp[i].len;
				}
				bad += off != len && n < OR_UDP_GSO_SEGS + 2;
			}
		}
	}
	CHECK(bad == 0, "split: every span where it belongs, short only last (%d wrong)", bad);
	CHECK(or_udp_split(1000, 0, sp, 8) == 1 && sp[0].len == 1000, "split: gso 0 is one datagram");
	CHECK(or_udp_split(100, 1472, sp, 8) == 1 && sp[0].len == 100,
	      "split: shorter than the segment is one datagram");
	CHECK(or_udp_split(0, 100, sp, 8) == 1 && sp[0].len == 0, "split: an empty datagram is one");
	CHECK(or_udp_split(1000, 10, sp, 8) == 8 && sp[7].off + sp[7].len == 80,
	      "split: at most max spans, never past them");
}

static void test_run(void)
{
	size_t lens[80];

	for (int i = 0; i < 80; i++)
		lens[i] = 1000;
	CHECK(or_udp_run(lens, 80) == 64, "run: at most %d segments", OR_UDP_GSO_SEGS);
	lens[10] = 999;
	CHECK(or_udp_run(lens, 80) == 11, "run: a shorter datagram ends it, included");
	lens[10] = 1001;
	CHECK(or_udp_run(lens, 80) == 10, "run: a longer one ends it, left out");
	lens[10] = 1000;
	lens[3] = 0;
	CHECK(or_udp_run(lens, 80) == 3, "run: an empty datagram ends it, left out");
	for (int i = 0; i < 80; i++)
		lens[i] = 8972;
	CHECK(or_udp_run(lens, 80) == 7, "run: at most %d bytes (7 of 8972)", OR_UDP_GSO_BYTES);
	CHECK(or_udp_run(lens, 1) == 1 && or_udp_run(lens, 0) == 0, "run: one, and none");
}

struct rx_slot {
	struct or_xport_xfer x;
	uint8_t buf[9000];
};

/* Completed receives in the order they completed, as the channel's ready queue holds them. */
static struct {
	struct rx_slot *r[1024];
	size_t n;
} ready;

static void on_ready(void *arg)
{
	ready.r[ready.n++] = arg;
}

/* Posted as the channel posts (its transfers are zeroed first: xfer.h). */
static void post(struct or_dgram *d, struct rx_slot *r, size_t len)
{
	r->x.cb = on_ready;
	r->x.cb_arg = r;
	or_dg_recv(d, r->buf, len, &r->x);
}

static void fill(uint8_t *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7);
}

/* Two endpoints on loopback that know each other: 0, or -1 (reported). */
static int pair(const char *what, const struct or_dgram_want *w, struct or_dgram **a,
                struct or_dgram **b)
{
	uint8_t names[2][256];
	size_t len = sizeof(names[0]);
	char why[200];

	*a = *b = NULL;
	if (or_udp_open(w, a, why, sizeof(why)) || or_udp_open(w, b, why, sizeof(why))) {
		CHECK(0, "%s: endpoints (%s)", what, why);
		or_dg_close(*a);
		return -1;
	}
	or_dg_getname(*a, names[0], &len);
	len = sizeof(names[1]);
	or_dg_getname(*b, names[1], &len);
	CHECK(or_dg_av_insert(*a, names, sizeof(names[0]), 2) == 0 &&
	          or_dg_av_insert(*b, names, sizeof(names[0]), 2) == 0,
	      "%s: names exchanged", what);
	return 0;
}

/* n datagrams from a to b, sizes cycling through full segments and odd tails; b reposts
 * each receive once its bytes are taken, as the channel's drain does. */
static void exchange(const char *what, int gso, int gro)
{
	struct or_dgram_want w = {.kind = OR_DGRAM_KERNEL, .same_host = 1, .flows = 2,
	                          .gso = gso, .gro = gro, .mtu = 1500};
	struct or_dgram *a, *b;
	size_t seg;
	enum { N = 300, POSTED = 64 };
	static uint8_t out[N][1472], in[N][1472];
	static struct or_xport_xfer tx[N];
	static struct rx_slot rx[POSTED];
	size_t sizes[N], in_len[N];
	int got = 0, bad = 0, srcbad = 0, sent = 0;
	char desc[400];

	if (pair(what, &w, &a, &b))
		return;
	seg = or_dg_max_msg(a);
	CHECK(seg == 1472, "%s: udp_mtu 1500 gives 1472-byte datagrams (%zu)", what, seg);
	/* What the channel asks for (socket_rcvbuf): N datagrams at once overflow the default. */
	or_dg_set_rcvbuf(b, 4 << 20);
	memset(rx, 0, sizeof(rx));
	ready.n = 0;
	for (int i = 0; i < POSTED; i++)
		post(b, &rx[i], seg);
	for (int i = 0; i < N; i++) {
		/* Runs of full datagrams broken by odd tails, the way phases end. */
		sizes[i] = i % 37 == 36 ? (size_t)(1 + i % 1471) : seg;
		fill(out[i], sizes[i], (unsigned)i);
		while (or_dg_send(a, 1, out[i], sizes[i], &tx[i]) == -OPTIREDUCE_EAGAIN)
			or_dg_poll(a, 64);
	}
	or_dg_flush(a);
	for (int tries = 0; got < N && tries < 2000; tries++) {
		if (or_dg_poll(b, 256) <= 0)
			or_dg_wait(b, 1);
		for (size_t k = 0; k < ready.n && got < N; k++, got++) {
			struct rx_slot *r = ready.r[k];
			in_len[got] = r->x.error ? 0 : r->x.len;
			memcpy(in[got], r->x.data, in_len[got]);
			srcbad += r->x.src != 0;
			post(b, r, seg);
		}
		ready.n = 0;
	}
	for (int i = 0; i < N; i++)
		sent += tx[i].done && !tx[i].error;
	/* Loopback keeps order within a flow; datagrams of two flows may interleave, so match
	 * each by its first bytes' seed. */
	for (int i = 0; i < N && got == N; i++) {
		int match = -1;
		for (int j = 0; j < N && match < 0; j++) {
			if (in_len[i] == sizes[j] && !memcmp(in[i], out[j], sizes[j]))
				match = j;
		}
		bad += match < 0;
	}
	CHECK(sent == N, "%s: %d of %d sends completed without error", what, sent, N);
	CHECK(got == N, "%s: %d of %d datagrams received", what, got, N);
	CHECK(bad == 0, "%s: every datagram whole and as sent (%d not)", what, bad);
	CHECK(srcbad == 0, "%s: every datagram from rank 0 (%d not)", what, srcbad);
	or_dg_describe(b, desc, sizeof(desc));
	printf("      receiver: %s\n", desc);
	or_dg_describe(a, desc, sizeof(desc));
	printf("      sender: %s\n", desc);
	if (gso)
		CHECK(strstr(desc, "segmentation offload on") && !strstr(desc, " 0 segmented sends"),
		      "%s: runs went as segmented sends", what);
	else
		CHECK(strstr(desc, " 0 segmented sends") != NULL,
		      "%s: the fallback sends one datagram per message", what);
	or_dg_close(a);
	or_dg_close(b);
}

/* A stranger's datagram is flagged, one larger than the posted buffer dropped. */
static void test_hostile(void)
{
	struct or_dgram_want w = {.kind = OR_DGRAM_KERNEL, .same_host = 1, .flows = 1,
	                          .gso = 1, .gro = 1, .mtu = 1500};
	struct or_dgram *b = NULL;
	uint8_t name[256], big[1400] = {0}, small[10] = {1};
	size_t len = sizeof(name);
	static struct rx_slot rx[2];
	struct sockaddr_in to = {.sin_family = AF_INET};
	char why[200], desc[400];
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (or_udp_open(&w, &b, why, sizeof(why))) {
		CHECK(0, "hostile: endpoint (%s)", why);
		return;
	}
	or_dg_getname(b, name, &len);
	or_dg_av_insert(b, name, sizeof(name), 1);
	memcpy(&to, name, sizeof(to)); /* a name begins with the first flow's address */
	or_dg_recv(b, rx[0].buf, 100, &rx[0].x);
	or_dg_recv(b, rx[1].buf, 100, &rx[1].x);
	sendto(fd, big, sizeof(big), 0, (struct sockaddr *)&to, sizeof(to));
	sendto(fd, small, sizeof(small), 0, (struct sockaddr *)&to, sizeof(to));
	for (int i = 0; i < 200 && !rx[1].x.done; i++)
		if (or_dg_poll(b, 16) <= 0)
			or_dg_wait(b, 1);
	CHECK(rx[0].x.done && rx[0].x.error == -OPTIREDUCE_EMSGSIZE && rx[0].x.len == 0,
	      "hostile: a datagram larger than the posted buffer completes it with EMSGSIZE");
	CHECK(rx[1].x.done && !rx[1].x.error && rx[1].x.len == sizeof(small) &&
	          ((const uint8_t *)rx[1].x.data)[0] == 1,
	      "hostile: the next one is delivered whole");
	CHECK(rx[1].x.src == OR_SRC_STRANGER, "hostile: a stranger's datagram says so");
	or_dg_describe(b, desc, sizeof(desc));
	CHECK(strstr(desc, " 1 truncated") != NULL, "hostile: the drop is counted (%s)", desc);
	close(fd);
	or_dg_close(b);
}

/* Datagrams the kernel drops for a full socket are counted (SO_RXQ_OVFL). */
static void test_kernel_drops(void)
{
	struct or_dgram_want w = {.kind = OR_DGRAM_KERNEL, .same_host = 1, .flows = 1,
	                          .gso = 1, .gro = 0, .mtu = 1500};
	struct or_dgram *a = NULL, *b = NULL;
	uint8_t names[2][256], out[1472] = {0};
	size_t len = sizeof(names[0]);
	enum { N = 64 };
	static struct rx_slot rx[N + 1];
	static struct or_xport_xfer tx[N + 1];
	char why[200], desc[400], want[64];
	int got = 0;

	if (or_udp_open(&w, &a, why, sizeof(why)) || or_udp_open(&w, &b, why, sizeof(why))) {
		CHECK(0, "drops: endpoints (%s)", why);
		return;
	}
	or_dg_getname(a, names[0], &len);
	len = sizeof(names[1]);
	or_dg_getname(b, names[1], &len);
	or_dg_av_insert(a, names, sizeof(names[0]), 2);
	or_dg_av_insert(b, names, sizeof(names[0]), 2);
	or_dg_set_rcvbuf(b, 4096); /* the kernel's floor: a few datagrams */
	for (int i = 0; i < N; i++)
		or_dg_send(a, 1, out, sizeof(out), &tx[i]);
	or_dg_flush(a);
	for (int i = 0; i <= N; i++)
		or_dg_recv(b, rx[i].buf, sizeof(rx[i].buf), &rx[i].x);
	for (int i = 0; i < 50; i++)
		if (or_dg_poll(b, 256) <= 0)
			or_dg_wait(b, 1);
	/* One more after the drain: its receive carries the socket's count of drops. */
	or_dg_send(a, 1, out, sizeof(out), &tx[N]);
	or_dg_flush(a);
	for (int i = 0; i < 50; i++)
		if (or_dg_poll(b, 256) <= 0)
			or_dg_wait(b, 1);
	for (int i = 0; i <= N; i++)
		got += rx[i].x.done;
	or_dg_describe(b, desc, sizeof(desc));
	snprintf(want, sizeof(want), " %d dropped by the kernel", N + 1 - got);
	CHECK(got < N && strstr(desc, want), "drops: %d of %d received, the rest counted (%s)", got,
	      N + 1, desc);
	or_dg_close(a);
	or_dg_close(b);
}

/*
 * A segmented send the kernel refuses for another reason than a full socket (here EACCES:
 * a broadcast address without SO_BROADCAST, as a firewall's EPERM) is judged again datagram
 * by datagram: every entry completes, each with its own error, and none stays queued.
 */
static void test_refused(void)
{
	struct or_dgram_want w = {.kind = OR_DGRAM_KERNEL, .same_host = 1, .flows = 1,
	                          .gso = 1, .gro = 0, .mtu = 1500};
	struct or_dgram *a = NULL;
	uint8_t names[2][256], out[1472] = {0};
	size_t len = sizeof(names[0]);
	struct sockaddr_in bcast;
	enum { N = 10 };
	static struct or_xport_xfer tx[N];
	char why[200];
	int failed = 0;

	if (or_udp_open(&w, &a, why, sizeof(why))) {
		CHECK(0, "refused: endpoint (%s)", why);
		return;
	}
	or_dg_getname(a, names[0], &len);
	memcpy(names[1], names[0], sizeof(names[0]));
	memcpy(&bcast, names[1], sizeof(bcast));
	bcast.sin_addr.s_addr = htonl(INADDR_BROADCAST);
	memcpy(names[1], &bcast, sizeof(bcast));
	or_dg_av_insert(a, names, sizeof(names[0]), 2);
	for (int i = 0; i < N; i++)
		or_dg_send(a, 1, out, sizeof(out), &tx[i]);
	or_dg_flush(a);
	for (int i = 0; i < N; i++)
		failed += tx[i].done && tx[i].error < 0;
	CHECK(failed == N && or_dg_trywait(a) == 0,
	      "refused: all %d datagrams of the refused run completed with an error (%d), none "
	      "queued", N, failed);
	or_dg_close(a);
}

/* The datagram a completion borrows lies in one of the endpoint's slots, whole. */
static int in_slot(const struct or_dgram *d, const struct or_xport_xfer *x)
{
	const struct or_udp *u = (const struct or_udp *)d;
	const uint8_t *p = x->data;

	return p >= u->rx_mem && p + x->len <= u->rx_mem + (size_t)OR_UDP_RX_SLOTS * OR_UDP_RX_SLOT;
}

/* Datagram i of a numbered stream: its number first, then bytes that depend on it. */
static void send_numbered(struct or_dgram *a, int from, int to, size_t len)
{
	static uint8_t out[4 * OR_UDP_RX_SLOTS][1472];
	static struct or_xport_xfer tx[4 * OR_UDP_RX_SLOTS];

	for (int i = from; i < to; i++) {
		fill(out[i], len, (unsigned)i);
		memcpy(out[i], &i, sizeof(i));
		while (or_dg_send(a, 1, out[i], len, &tx[i]) == -OPTIREDUCE_EAGAIN)
			or_dg_poll(a, 64);
	}
	or_dg_flush(a);
}

/* Whether completion r holds numbered datagram i, byte for byte. */
static int holds(const struct rx_slot *r, int i, size_t len)
{
	uint8_t want[1472];

	fill(want, len, (unsigned)i);
	memcpy(want, &i, sizeof(i));
	return r->x.done && !r->x.error && r->x.len == len && !memcmp(r->x.data, want, len);
}

/* Polls b until ready holds n completions or a second passes: how many it holds. */
static size_t reap_until(struct or_dgram *b, size_t n)
{
	for (int tries = 0; ready.n < n && tries < 1000; tries++)
		if (or_dg_poll(b, 256) <= 0)
			or_dg_wait(b, 1);
	return ready.n;
}

/* Whether completion r's bytes lie in its own posted buffer (copied, not lent). */
static int in_buffer(const struct rx_slot *r)
{
	const uint8_t *p = r->x.data;

	return p >= r->buf && p < r->buf + sizeof(r->buf);
}

/*
 * Without coalescing each datagram has a slot of its own.  The first OR_UDP_RX_SLOTS / 2
 * completions lend theirs: the bytes lie in the transport and stay as sent while more
 * arrive.  With half the slots lending, the next datagrams are copied into their posted
 * buffers, none lost, so a receiver whose completions wait undrained never stops
 * receiving.  Posted again, the lent ones free their slots and lending resumes.
 */
static void test_borrow(void)
{
	struct or_dgram_want w = {
	    .kind = OR_DGRAM_KERNEL, .same_host = 1, .flows = 1, .gso = 0, .gro = 0, .mtu = 1500};
	enum { H = OR_UDP_RX_SLOTS / 2, LEN = 256 };
	static struct rx_slot rx[4 * H];
	struct or_dgram *a, *b;
	int lent = 0, copied = 0, whole = 0, kept = 0, again = 0;

	if (pair("borrow", &w, &a, &b))
		return;
	or_dg_set_rcvbuf(b, 4 << 20);
	memset(rx, 0, sizeof(rx));
	ready.n = 0;
	for (int i = 0; i < 3 * H; i++)
		post(b, &rx[i], LEN);
	send_numbered(a, 0, 1, LEN);
	reap_until(b, 1);
	send_numbered(a, 1, 2 * H, LEN); /* H - 1 more lend, then H are copied */
	CHECK(reap_until(b, 2 * H) == 2 * H, "borrow: %zu of %d datagrams received", ready.n, 2 * H);
	for (size_t k = 0; k < ready.n; k++) {
		const struct rx_slot *r = ready.r[k];
		lent += (int)k < H && in_slot(b, &r->x) && !in_buffer(r);
		copied += (int)k >= H && in_buffer(r);
		whole += r == &rx[k] && holds(r, (int)k, LEN);
	}
	CHECK(lent == H && copied == H,
	      "borrow: the first %d lie in the transport's slots (%d), the %d after them in their "
	      "posted buffers (%d)",
	      H, lent, H, copied);
	CHECK(whole == 2 * H, "borrow: each holds its datagram as sent, in order (%d of %d)", whole,
	      2 * H);
	ready.n = 0;
	for (int k = 0; k < H; k++)
		post(b, &rx[k], LEN); /* the lent ones given back: behind the H still posted */
	send_numbered(a, 2 * H, 3 * H, LEN);
	reap_until(b, H);
	for (int k = H; k < 2 * H; k++)
		kept += holds(&rx[k], k, LEN);
	for (size_t k = 0; k < ready.n; k++)
		again += ready.r[k] == &rx[2 * H + k] && in_slot(b, &ready.r[k]->x) &&
		         holds(ready.r[k], 2 * H + (int)k, LEN);
	CHECK(ready.n == H && again == H && kept == H,
	      "borrow: given back, the next %d are lent again, whole (%d of %zu); the copies "
	      "held are unchanged (%d of %d)",
	      H, again, ready.n, kept, H);
	or_dg_close(a);
	or_dg_close(b);
}

/* Datagrams larger than their receives complete them with EMSGSIZE and lend nothing: more
 * of them than there are slots all complete, and afterwards every slot is free. */
static void test_oversized_lends_nothing(void)
{
	struct or_dgram_want w = {
	    .kind = OR_DGRAM_KERNEL, .same_host = 1, .flows = 1, .gso = 0, .gro = 0, .mtu = 1500};
	enum { N = OR_UDP_RX_SLOTS + 8 };
	static struct rx_slot rx[N + 1];
	struct or_dgram *a, *b;
	const struct or_udp *u;
	unsigned lent = 0;
	int emsgsize = 0;

	if (pair("oversized", &w, &a, &b))
		return;
	u = (const struct or_udp *)b;
	or_dg_set_rcvbuf(b, 4 << 20);
	memset(rx, 0, sizeof(rx));
	ready.n = 0;
	for (int i = 0; i < N; i++)
		post(b, &rx[i], 100);
	send_numbered(a, 0, N, 1000);
	reap_until(b, N);
	for (size_t k = 0; k < ready.n; k++)
		emsgsize += ready.r[k]->x.error == -OPTIREDUCE_EMSGSIZE && !ready.r[k]->x.len;
	for (unsigned i = 0; i < OR_UDP_RX_SLOTS; i++)
		lent += u->slot[i].lent + (unsigned)u->slot[i].staged;
	CHECK(ready.n == N && emsgsize == N && lent == 0 && u->lending == 0,
	      "oversized: %d for %d slots, %d of %zu completed with EMSGSIZE, %u slots held", N,
	      OR_UDP_RX_SLOTS, emsgsize, ready.n, lent);
	ready.n = 0;
	post(b, &rx[N], 1000);
	send_numbered(a, 0, 1, 1000);
	reap_until(b, 1);
	CHECK(ready.n == 1 && holds(ready.r[0], 0, 1000) && in_slot(b, &ready.r[0]->x),
	      "oversized: a datagram that fits is lent from a slot after them");
	or_dg_close(a);
	or_dg_close(b);
}

int main(void)
{
	test_split();
	test_run();
	exchange("segmented", 1, 1);
	exchange("fallback", 0, 1);
	exchange("no coalescing", 1, 0);
	test_hostile();
	test_kernel_drops();
	test_refused();
	test_borrow();
	test_oversized_lends_nothing();
	printf("%s: %d failures\n", check_failures ? "FAIL" : "PASS", check_failures);
	return check_failures ? 1 : 0;
}
