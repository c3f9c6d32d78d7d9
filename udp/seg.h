/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Segmentation and its reverse, without sockets (seg.c): which queued datagrams go to the
 * kernel together as one segmented send, and where the datagrams of a coalesced receive
 * begin.  Pure, so that the unit tests cover every size class and odd tail.
 */
#ifndef OR_UDP_SEG_H
#define OR_UDP_SEG_H

#include <stddef.h>
#include <stdint.h>

/* The kernel's limits on one segmented send: segments, and bytes of UDP payload. */
#define OR_UDP_GSO_SEGS  64
#define OR_UDP_GSO_BYTES 65507

/* One datagram of a coalesced receive: [off, off + len) of the buffer. */
struct or_udp_span {
	size_t off;
	size_t len;
};

/*
 * The datagrams in a buffer of len bytes that the kernel filled with datagrams of gso bytes
 * each, the last one possibly shorter (gso 0: one datagram of len).  At most max spans;
 * returns how many, never reading past len.
 */
size_t or_udp_split(size_t len, size_t gso, struct or_udp_span *out, size_t max);

/*
 * How many of the n datagrams of lens[] (in order, to one destination) go in one
 * segmented send that starts with the first: all of the first's size but the last, which
 * may be shorter, at most OR_UDP_GSO_SEGS of them and OR_UDP_GSO_BYTES in all.  1 when
 * only the first can go.
 */
size_t or_udp_run(const size_t *lens, size_t n);

#endif /* OR_UDP_SEG_H */
