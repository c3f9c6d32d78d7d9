/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kernel datagram transport (udp/): segmentation and its reverse on every segment size
 * class and odd tail (seg.c), then two endpoints on loopback exchanging datagrams of mixed
 * sizes through the transport's own path, with segmentation and coalescing on and with the
 * fallback forced (one datagram per message), checking every byte, every sender, and that
 * a datagram larger than the posted buffers or from a stranger is dropped or flagged.
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

static void fill(uint8_t *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7);
}

/* n datagrams from a to b, sizes cycling through full segments and odd tails. */
static void exchange(const char *what, int gso, int gro)
{
	struct or_dgram_want w = {.kind = OR_DGRAM_KERNEL, .same_host = 1, .flows = 2,
	                          .gso = gso, .gro = gro, .mtu = 1500};
	struct or_dgram *a = NULL, *b = NULL;
	uint8_t names[2][256];
	size_t len = sizeof(names[0]), seg;
	enum { N = 300 };
	static uint8_t out[N][1472];
	static struct or_xport_xfer tx[N];
	static struct rx_slot rx[N];
	size_t sizes[N];
	int got = 0, bad = 0, srcbad = 0, sent = 0;
	char why[200], desc[400];

	CHECK(or_udp_open(&w, &a, why, sizeof(why)) == 0, "%s: endpoint a", what);
	CHECK(or_udp_open(&w, &b, why, sizeof(why)) == 0, "%s: endpoint b", what);
	if (!a || !b)
		return;
	seg = or_dg_max_msg(a);
	CHECK(seg == 1472, "%s: udp_mtu 1500 gives 1472-byte datagrams (%zu)", what, seg);
	or_dg_getname(a, names[0], &len);
	len = sizeof(names[1]);
	or_dg_getname(b, names[1], &len);
	CHECK(or_dg_av_insert(a, names, sizeof(names[0]), 2) == 0 &&
	          or_dg_av_insert(b, names, sizeof(names[0]), 2) == 0,
	      "%s: names exchanged", what);
	/* What the channel asks for (socket_rcvbuf): N datagrams at once overflow the default. */
	or_dg_set_rcvbuf(b, 4 << 20);
	for (int i = 0; i < N; i++)
		or_dg_recv(b, rx[i].buf, seg, &rx[i].x);
	for (int i = 0; i < N; i++) {
		/* Runs of full datagrams broken by odd tails, the way phases end. */
		sizes[i] = i % 37 == 36 ? (size_t)(1 + i % 1471) : seg;
		fill(out[i], sizes[i], (unsigned)i);
		while (or_dg_send(a, 1, out[i], sizes[i], &tx[i]) == -OPTIREDUCE_EAGAIN)
			or_dg_poll(a, 64);
	}
	or_dg_flush(a);
	for (int tries = 0; got < N && tries < 2000; tries++) {
		int n = or_dg_poll(b, 256);
		if (n <= 0)
			or_dg_wait(b, 1);
		got = 0;
		for (int i = 0; i < N; i++)
			got += rx[i].x.done;
	}
	for (int i = 0; i < N; i++)
		sent += tx[i].done && !tx[i].error;
	/* Loopback keeps order within a flow; datagrams of two flows may interleave, so match
	 * each by its first bytes' seed. */
	for (int i = 0; i < N && got == N; i++) {
		int match = -1;
		for (int j = 0; j < N && match < 0; j++) {
			if (rx[i].x.len == sizes[j] && !memcmp(rx[i].buf, out[j], sizes[j]))
				match = j;
		}
		bad += match < 0;
		srcbad += rx[i].x.src != 0;
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
	          rx[1].buf[0] == 1,
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
	printf("%s: %d failures\n", check_failures ? "FAIL" : "PASS", check_failures);
	return check_failures ? 1 : 0;
}
