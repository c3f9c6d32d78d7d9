/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ofi/sockbuf.c on this host alone: the kernel buffers of a udp endpoint's socket are set to
 * what was asked (the kernel reports the double it keeps), read back from the socket itself,
 * and 0 leaves them as they were; an idle socket's send queue reads 0.  Skipped (77) without libfabric's udp.
 */
#include <stdio.h>
#include <sys/socket.h>

#include "check.h"
#include "optireduce.h"
#include "ofi/ofi.h"
#include "ofi/sock.h"

static size_t sockopt(int fd, int opt)
{
	int v = 0;
	socklen_t l = sizeof(v);

	return getsockopt(fd, SOL_SOCKET, opt, &v, &l) == 0 && v > 0 ? (size_t)v : 0;
}

int main(void)
{
	struct or_ofi_want want = {"udp", NULL, 0, 0, 0, 1};
	struct or_ofi *o = NULL;
	char name[128];
	size_t len = sizeof(name), before, got;
	int fd;

	if (or_ofi_open(OR_OFI_DGRAM, &want, &o)) {
		printf("no udp datagram endpoint: skip\n");
		return 77;
	}
	CHECK(or_ofi_getname(o, name, &len) == 0, "getname");
	fd = or_ofi_find_socket(name, len);
	CHECK(fd >= 0, "the endpoint's socket is found by its address");
	if (fd < 0) {
		or_ofi_close(o);
		return 1;
	}
	before = sockopt(fd, SO_SNDBUF);
	CHECK(or_ofi_set_sndbuf(o, 0) == 0 && sockopt(fd, SO_SNDBUF) == before,
	      "0 leaves the send buffer: %zu", sockopt(fd, SO_SNDBUF));
	got = or_ofi_set_sndbuf(o, 16384);
	CHECK(got == 32768 && sockopt(fd, SO_SNDBUF) == got,
	      "send buffer of 16 KiB: the kernel keeps 32768, reported %zu, socket %zu", got,
	      sockopt(fd, SO_SNDBUF));
	got = or_ofi_set_sndbuf(o, 1);
	CHECK(got > 0 && got < 16384 && sockopt(fd, SO_SNDBUF) == got,
	      "below the kernel's floor the floor applies: %zu", got);
	CHECK(or_ofi_sndbuf(o) == got, "the send buffer read back: %zu", or_ofi_sndbuf(o));
	CHECK(or_ofi_send_queued(o) == 0, "an idle socket has nothing queued: %ld",
	      or_ofi_send_queued(o));
	before = sockopt(fd, SO_RCVBUF);
	CHECK(or_ofi_set_rcvbuf(o, 0) == 0 && sockopt(fd, SO_RCVBUF) == before,
	      "0 leaves the receive buffer: %zu", sockopt(fd, SO_RCVBUF));
	got = or_ofi_set_rcvbuf(o, 65536);
	CHECK(got == 131072 && sockopt(fd, SO_RCVBUF) == got,
	      "receive buffer of 64 KiB: reported %zu, socket %zu", got, sockopt(fd, SO_RCVBUF));
	or_ofi_close(o);
	return check_failures ? 1 : 0;
}
