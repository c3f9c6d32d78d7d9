/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to udp/: the endpoint as set up (ep.c), sending (tx.c), receiving (rx.c) and
 * multicast (group.c) share it.
 */
#ifndef OR_UDP_INT_H
#define OR_UDP_INT_H

#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

#include "dgram/dgram.h"
#include "seg.h"

#define OR_UDP_MAX_FLOWS 16
#define OR_UDP_MTU_MAX   9216 /* the largest jumbo frame networks carry */
#define OR_UDP_TXQ       256 /* queued sends: the channel's send pool holds as many */
#define OR_UDP_MMSG      32  /* messages per sendmmsg and recvmmsg */
#define OR_UDP_RX_SLOT       65536 /* one coalesced receive */
#define OR_UDP_SEGS_PER_SLOT 64 /* the most datagrams the kernel coalesces */
/*
 * Completed receives borrow their datagram's slot until posted again.  At most half the
 * slots lend at once; the datagrams of the others are copied into the posted receives, so
 * a receiver whose completions wait undrained (a progress thread reaping while the
 * application computes) always has 16 slots to receive into.  2 MiB per endpoint.
 */
#define OR_UDP_RX_SLOTS 32

/* The published name: the first flow's socket address, as tools read a datagram
 * endpoint's name, then every flow's port (network byte order). */
struct or_udp_name {
	struct sockaddr_in sin;
	uint16_t port[OR_UDP_MAX_FLOWS];
	uint8_t nflows;
	uint8_t pad[3];
};

struct or_udp_peer {
	struct sockaddr_in to[OR_UDP_MAX_FLOWS];
	unsigned nflows;
	unsigned next_flow; /* the flow of this peer's next run */
};

/* A send the channel queued: handed to the kernel by the next flush.  A send in parts
 * (or_dg_send_parts) has its header at buf and borrows its payload until the flush, which
 * copies it to buf + hlen if the datagram still waits (or_udp_keep_payloads). */
struct or_udp_txe {
	uint32_t peer; /* OR_UDP_GROUP: to the multicast group */
	const void *buf;
	size_t len;          /* of the whole datagram */
	const void *payload; /* NULL: buf holds the whole datagram */
	size_t hlen;         /* of the header at buf, when payload is set */
	struct or_xport_xfer *x;
};
#define OR_UDP_GROUP OR_DG_GROUP

/*
 * Posted receives, oldest first.  A receive's prov[]: 0 its buffer, 1 that buffer's length,
 * 2 the next posted receive, 3 the slot its completion borrows (struct or_udp_slot *, NULL
 * none), kept after completion until the transfer is posted again.
 */
struct or_udp_rxq {
	struct or_xport_xfer *head, *tail;
	size_t n;
};
#define OR_UDP_PROV_BORROW 3

/* One recvmmsg buffer: reused only when none of its datagrams is staged or lent. */
struct or_udp_slot {
	uint8_t *base;
	unsigned lent; /* its datagrams that completed receives hold (xfer.h, data) */
	int staged;    /* some of its datagrams wait for a posted receive */
	int lends;     /* its datagrams are lent, not copied (one of u->lending) */
};

/* Datagrams received and not yet delivered to a posted receive. */
struct or_udp_staged {
	struct or_udp_slot *slot;
	struct or_udp_span span[OR_UDP_SEGS_PER_SLOT];
	size_t nspan, next;
	uint32_t src;
};

struct or_udp {
	struct or_dgram base;
	int fd[OR_UDP_MAX_FLOWS];
	unsigned nflows;
	int gfd; /* the multicast group's socket, -1 */
	int epfd;
	struct or_udp_name self;
	char ifname[IF_NAMESIZE];
	unsigned mtu;
	size_t max_msg; /* UDP payload of one datagram: the MTU less IPv4 and UDP headers */
	int gso;        /* segmented sends work (found at run time) */
	int gro;        /* the sockets coalesce receives */
	int gso_refused; /* errno of the send that turned segmentation off, 0 */
	struct or_udp_peer *peers;
	uint32_t npeers;
	/* (address, port) -> rank, open addressing (src.c, or_udp_source) */
	uint64_t *src_key;
	uint32_t *src_rank;
	uint32_t src_mask;
	/* Sending (tx.c) */
	struct or_udp_txe txq[OR_UDP_TXQ];
	unsigned ntx;
	int send_err;
	int tx_blocked;    /* the last flush met a full socket: entries wait for room */
	unsigned blocked_flow; /* the flow whose socket was full */
	uint32_t out_armed; /* flows whose room wakes the waits (EPOLLOUT), a bit each */
	struct sockaddr_in group_to; /* the multicast group's address and port */
	/* Receiving (rx.c) */
	struct or_udp_rxq rxq, grxq;
	uint8_t *rx_mem;
	struct or_udp_slot slot[OR_UDP_RX_SLOTS];
	unsigned lending; /* slots that lend their datagrams */
	struct or_udp_staged staged[OR_UDP_RX_SLOTS];
	unsigned nstaged, next_staged;
	int staged_group; /* the staged datagrams came to the group's socket */
	unsigned next_fd; /* the socket the next receive starts with */
	/* Counters, for the log at close and describe */
	uint64_t tx_completed;
	uint64_t gso_sends, plain_sends, syscalls_tx, syscalls_rx, datagrams_rx, truncated;
	uint64_t payloads_kept; /* borrowed payloads copied because their datagram waited */
	uint64_t datagrams_lent; /* received without a copy (the rest copied) */
	uint64_t kernel_drops; /* SO_RXQ_OVFL: datagrams the kernel dropped, all sockets */
	uint32_t drops_seen[OR_UDP_MAX_FLOWS + 1];
};

/* tx.c */
int or_udp_send(struct or_dgram *d, uint32_t peer, const void *buf, size_t len,
                struct or_xport_xfer *x);
int or_udp_group_send(struct or_dgram *d, const void *buf, size_t len, struct or_xport_xfer *x);
int or_udp_send_parts(struct or_dgram *d, uint32_t peer, void *buf, size_t hlen,
                      const void *payload, size_t plen, struct or_xport_xfer *x);
/* Hands every queued send to the kernel: 0, or -OPTIREDUCE_EAGAIN when some stay queued. */
int or_udp_flush(struct or_udp *u);
/* The same, unless the queue waits for room that has not come: then -OPTIREDUCE_EAGAIN at
 * the cost of one poll(), not of a send of the whole queue that the kernel refuses. */
int or_udp_flush_due(struct or_udp *u);
int or_udp_flush_ep(struct or_dgram *d);
const char *or_udp_send_error(const struct or_dgram *d);

/* rx.c */
int or_udp_recv(struct or_dgram *d, void *buf, size_t len, struct or_xport_xfer *x);
int or_udp_group_recv(struct or_dgram *d, void *buf, size_t len, struct or_xport_xfer *x);
int or_udp_poll(struct or_dgram *d, int max);
int or_udp_wait(struct or_dgram *d, int timeout_ms);
int or_udp_wait_fd(struct or_dgram *d);
int or_udp_trywait(struct or_dgram *d);
/* Slot s received len bytes, datagrams of gso bytes (0: one datagram), from src: staged for
 * delivery; nothing past len is ever read. */
void or_udp_stage(struct or_udp *u, struct or_udp_slot *s, size_t len, size_t gso, uint32_t src);
/* Staged datagrams into posted receives, oldest first, as many as both allow and at most
 * max: how many completed, each lending its datagram's place in the slot, or with it copied
 * into its buffer where the slot does not lend (one larger than its receive completes it
 * with EMSGSIZE and lends nothing). */
int or_udp_deliver(struct or_udp *u, int max);
/* Drops what is staged (the group's socket closed): its slots are free unless lent. */
void or_udp_unstage(struct or_udp *u);
/* Asks a socket for what rx.c reads: the kernel's drops, and coalescing if gro. */
int or_udp_rx_options(int fd, int gro);

/* ep.c */
uint32_t or_udp_source(const struct or_udp *u, const struct sockaddr_in *from);
/* Records that rank sends from (addr, port), both in network order (src.c). */
void or_udp_src_add(struct or_udp *u, uint32_t addr, uint16_t port, uint32_t rank);

/* group.c */
int or_udp_group_join(struct or_dgram *d, uint32_t group, uint16_t port, int loop, char *why,
                      size_t len);
void or_udp_group_leave(struct or_dgram *d);

#endif /* OR_UDP_INT_H */
