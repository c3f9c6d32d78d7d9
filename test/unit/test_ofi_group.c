/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi/group.c on this host alone: a datagram endpoint joins a multicast group (a second
 * endpoint bound to group:port), a datagram sent to the group comes back to it with its
 * sender resolved through the address vector (docs/design.md, "Multicast"), looped back
 * as for ranks that share a host, and leaving stops receives.  Skipped (77) without
 * libfabric's udp, or when this host cannot join (no route for the group).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "optireduce.h"
#include "ofi/ofi.h"

#define GROUP 0xEFC0F00Du /* 239.192.240.13 */
#define PORT  50999

static int wait_done(struct or_ofi *o, struct or_xport_xfer *x, int ms)
{
	for (int i = 0; i < ms * 10 && !x->done; i++) {
		struct timespec ts = {0, 100 * 1000};
		if (or_ofi_poll(o, 16) < 0)
			return -1;
		if (!x->done)
			nanosleep(&ts, NULL);
	}
	return x->done;
}

int main(void)
{
	struct or_ofi_want want = {"udp", NULL, 0, 0, 0, 1};
	struct or_ofi *o = NULL;
	struct or_xport_xfer rx = {0}, tx = {0};
	char name[128], why[200] = "", sbuf[64] = "multicast probe", rbuf[1500];
	size_t len = sizeof(name);
	int ret;

	if (or_ofi_open(OR_OFI_DGRAM, &want, &o)) {
		printf("no udp datagram endpoint: skip\n");
		return 77;
	}
	CHECK(or_ofi_getname(o, name, &len) == 0, "getname");
	CHECK(or_ofi_av_insert(o, name, sizeof(name), 1) == 0, "address vector of one rank");
	/* Looped back: the test has no second host. */
	ret = or_ofi_group_join(o, GROUP, PORT, 1, why, sizeof(why));
	if (ret) {
		printf("cannot join 239.192.240.13:%d here (%s): skip\n", PORT, why);
		or_ofi_close(o);
		return 77;
	}
	CHECK(or_ofi_group_joined(o), "joined");
	CHECK(or_ofi_group_rx_depth(o) > 0, "the group's endpoint takes receives: %zu",
	      or_ofi_group_rx_depth(o));
	CHECK(or_ofi_group_join(o, GROUP, PORT, 1, why, sizeof(why)) == 0,
	      "joining again is a no-op");
	CHECK(or_ofi_group_recv(o, rbuf, sizeof(rbuf), &rx) == 0, "receive posted on the group");
	CHECK(or_ofi_group_send(o, sbuf, sizeof(sbuf), &tx) == 0, "sent to the group: %s",
	      or_ofi_send_error(o));
	CHECK(wait_done(o, &tx, 1000) == 1 && !tx.error, "send completed");
	CHECK(wait_done(o, &rx, 1000) == 1 && !rx.error, "the group's datagram arrived");
	CHECK(rx.len == sizeof(sbuf) && !memcmp(rbuf, sbuf, sizeof(sbuf)), "its bytes (%zu)",
	      rx.len);
	CHECK(rx.src == 0, "its sender is rank 0 of the address vector: %u", rx.src);
	or_ofi_group_leave(o);
	CHECK(!or_ofi_group_joined(o), "left");
	CHECK(or_ofi_group_recv(o, rbuf, sizeof(rbuf), &rx) == -OPTIREDUCE_EPEER,
	      "no receive after leaving");
	CHECK(or_ofi_group_send(o, sbuf, sizeof(sbuf), &tx) == -OPTIREDUCE_EPEER,
	      "no send after leaving");
	or_ofi_group_leave(o); /* idempotent */
	or_ofi_close(o);
	return check_failures ? 1 : 0;
}
