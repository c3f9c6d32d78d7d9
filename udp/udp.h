/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kernel's UDP sockets as a datagram transport of the bounded channel
 * (dgram/dgram.h; docs/design.md, "Datagram transports"): sends queued by the channel go
 * to the kernel in batches, each peer's run of equal-size datagrams as one segmented send
 * (UDP_SEGMENT) and the runs of several peers in one sendmmsg; receives come in with
 * recvmmsg into 64 KiB buffers that the kernel fills with coalesced datagrams (UDP_GRO),
 * split here by the segment size it reports and lent, uncopied, to the receives they
 * complete.  Datagrams are as large as the interface's MTU allows.  Only this folder
 * touches sockets for the bounded channel.
 */
#ifndef OR_UDP_H
#define OR_UDP_H

#include <stddef.h>

struct or_dgram;
struct or_dgram_want;

/* 0, or a negative code with the reason in why. */
int or_udp_open(const struct or_dgram_want *want, struct or_dgram **out, char *why, size_t len);

#endif /* OR_UDP_H */
