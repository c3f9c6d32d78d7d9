/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The datagram transport of the bounded channel (docs/design.md, "Datagram transports"):
 * one interface, two implementations beside each other, chosen when a communicator is
 * made (choose.c):
 *  - the kernel's UDP sockets with segmentation offload and batched calls (udp/), for
 *    plain IP interfaces;
 *  - libfabric's datagram endpoints (ofi/dgram.c), for devices with a datagram provider
 *    of their own (EFA, verbs UD) or a provider the user names.
 * An endpoint is a struct or_dgram whose ops say how it does each thing; the inline
 * functions below are what the channel calls.  Transfers complete through struct or_xport_xfer
 * (xfer.h) as libfabric's do: posted, then reaped by or_dg_poll; a completed receive says
 * where its bytes are (data), the posted buffer or the transport's own memory.
 */
#ifndef OR_DGRAM_H
#define OR_DGRAM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "xfer.h"

enum or_dgram_kind { OR_DGRAM_AUTO, OR_DGRAM_KERNEL, OR_DGRAM_LIBFABRIC };

/*
 * What the channel asks of its endpoint.  provider: a libfabric provider name or NULL/""
 * (libfabric only).  domains: interface or device names, comma-separated, best first;
 * domains_only: no others.  same_host: every rank is on this host.  emulate_modes: the
 * libfabric path runs with an emulated message prefix and registration (ofi.h).
 * multicast: the endpoint may join a group.  The kernel path's own knobs: flows (sockets,
 * so source ports, per rank), gso (0: never hand the kernel a segmented send), gro, mtu
 * (0: the interface's; else at most this).
 */
struct or_dgram_want {
	enum or_dgram_kind kind;
	const char *provider;
	const char *domains;
	int domains_only;
	int same_host;
	int emulate_modes;
	int multicast;
	unsigned flows;
	int gso;
	int gro;
	unsigned mtu;
};

struct or_dgram;

struct or_dgram_ops {
	void (*close)(struct or_dgram *d);
	const char *(*name)(const struct or_dgram *d);
	const char *(*domain)(const struct or_dgram *d);
	size_t (*max_msg)(const struct or_dgram *d);
	size_t (*prefix)(const struct or_dgram *d);
	int (*registers)(const struct or_dgram *d);
	int (*reg)(struct or_dgram *d, void *base, size_t len);
	size_t (*rx_depth)(const struct or_dgram *d);
	int (*getname)(struct or_dgram *d, void *buf, size_t *len);
	int (*av_insert)(struct or_dgram *d, const void *names, size_t stride, uint32_t n);
	int (*send)(struct or_dgram *d, uint32_t peer, const void *buf, size_t len,
	            struct or_xport_xfer *x);
	int (*recv)(struct or_dgram *d, void *buf, size_t len, struct or_xport_xfer *x);
	const char *(*send_error)(const struct or_dgram *d);
	int (*flush)(struct or_dgram *d);
	int (*poll)(struct or_dgram *d, int max);
	int (*wait)(struct or_dgram *d, int timeout_ms);
	int (*wait_fd)(struct or_dgram *d);
	int (*trywait)(struct or_dgram *d);
	size_t (*set_rcvbuf)(struct or_dgram *d, size_t bytes);
	size_t (*set_sndbuf)(struct or_dgram *d, size_t bytes);
	size_t (*sndbuf)(struct or_dgram *d);
	long (*send_queued)(struct or_dgram *d);
	int (*group_join)(struct or_dgram *d, uint32_t group, uint16_t port, int loop, char *why,
	                  size_t len);
	void (*group_leave)(struct or_dgram *d);
	size_t (*group_rx_depth)(const struct or_dgram *d);
	int (*group_recv)(struct or_dgram *d, void *buf, size_t len, struct or_xport_xfer *x);
	int (*group_send)(struct or_dgram *d, const void *buf, size_t len, struct or_xport_xfer *x);
	/* NULL: or_dg_send_parts copies the payload after the header and sends the whole. */
	int (*send_parts)(struct or_dgram *d, uint32_t peer, void *buf, size_t hlen,
	                  const void *payload, size_t plen, struct or_xport_xfer *x);
	uint64_t (*kernel_drops)(const struct or_dgram *d);
	/* What the endpoint does with its datagrams, for the log and optireduce_info. */
	void (*describe)(const struct or_dgram *d, char *buf, size_t len);
};

/* The peer of or_dg_send_parts that is the multicast group. */
#define OR_DG_GROUP UINT32_MAX

/* Every implementation's endpoint begins with this. */
struct or_dgram {
	const struct or_dgram_ops *ops;
	enum or_dgram_kind kind;
};

/*
 * Opens the endpoint want asks for (choose.c): 0 with why it is this transport in why, or a
 * negative code with why it failed.  For kind auto, the kernel path unless a provider is
 * named, dgram modes are emulated, or libfabric offers a device's own datagram provider
 * for the domains.
 */
int or_dgram_open(const struct or_dgram_want *want, struct or_dgram **out, char *why,
                  size_t len);
/* "kernel" or "libfabric". */
const char *or_dgram_kind_name(enum or_dgram_kind kind);

static inline void or_dg_close(struct or_dgram *d)
{
	if (d)
		d->ops->close(d);
}
static inline const char *or_dg_name(const struct or_dgram *d)
{
	return d ? d->ops->name(d) : "none";
}
static inline const char *or_dg_domain(const struct or_dgram *d)
{
	return d ? d->ops->domain(d) : "none";
}
static inline size_t or_dg_max_msg(const struct or_dgram *d)
{
	return d->ops->max_msg(d);
}
/* Bytes of room every send and receive buffer needs before it (libfabric's FI_MSG_PREFIX). */
static inline size_t or_dg_prefix(const struct or_dgram *d)
{
	return d->ops->prefix(d);
}
static inline int or_dg_registers(const struct or_dgram *d)
{
	return d->ops->registers(d);
}
static inline int or_dg_register(struct or_dgram *d, void *base, size_t len)
{
	return d->ops->reg(d, base, len);
}
/* Receives the endpoint accepts posted at once (0: no limit of its own). */
static inline size_t or_dg_rx_depth(const struct or_dgram *d)
{
	return d->ops->rx_depth(d);
}
static inline int or_dg_getname(struct or_dgram *d, void *buf, size_t *len)
{
	return d->ops->getname(d, buf, len);
}
static inline int or_dg_av_insert(struct or_dgram *d, const void *names, size_t stride,
                                  uint32_t n)
{
	return d->ops->av_insert(d, names, stride, n);
}
/* -OPTIREDUCE_EAGAIN: full for now; the buffer is the transport's until x completes. */
static inline int or_dg_send(struct or_dgram *d, uint32_t peer, const void *buf, size_t len,
                             struct or_xport_xfer *x)
{
	return d->ops->send(d, peer, buf, len, x);
}
/* The completion's data says where its bytes are: buf, or the endpoint's memory lent until x
 * is posted again (xfer.h).  buf is the transport's until x completes either way. */
static inline int or_dg_recv(struct or_dgram *d, void *buf, size_t len, struct or_xport_xfer *x)
{
	return d->ops->recv(d, buf, len, x);
}
/* The system's words for why the last send failed. */
static inline const char *or_dg_send_error(const struct or_dgram *d)
{
	return d->ops->send_error(d);
}
/* Hands sends queued since the last call to the network: 0, or -OPTIREDUCE_EAGAIN when
 * some wait for room (they go with the next flush, poll or wait). */
static inline int or_dg_flush(struct or_dgram *d)
{
	return d->ops->flush(d);
}
/* Flushes, then reaps up to max completions: how many, or < 0. */
static inline int or_dg_poll(struct or_dgram *d, int max)
{
	return d->ops->poll(d, max);
}
/* Sleeps in the kernel until the endpoint has activity or timeout_ms passes. */
static inline int or_dg_wait(struct or_dgram *d, int timeout_ms)
{
	return d->ops->wait(d, timeout_ms);
}
/* A descriptor that polls readable on activity, -1 none; or_dg_trywait must return 0 first. */
static inline int or_dg_wait_fd(struct or_dgram *d)
{
	return d->ops->wait_fd(d);
}
static inline int or_dg_trywait(struct or_dgram *d)
{
	return d->ops->trywait(d);
}
static inline size_t or_dg_set_rcvbuf(struct or_dgram *d, size_t bytes)
{
	return d->ops->set_rcvbuf(d, bytes);
}
static inline size_t or_dg_set_sndbuf(struct or_dgram *d, size_t bytes)
{
	return d->ops->set_sndbuf(d, bytes);
}
static inline size_t or_dg_sndbuf(struct or_dgram *d)
{
	return d->ops->sndbuf(d);
}
/* Bytes handed to the host and not sent yet (SIOCOUTQ), -1 without a socket. */
static inline long or_dg_send_queued(struct or_dgram *d)
{
	return d->ops->send_queued(d);
}
static inline int or_dg_group_join(struct or_dgram *d, uint32_t group, uint16_t port, int loop,
                                   char *why, size_t len)
{
	return d->ops->group_join(d, group, port, loop, why, len);
}
static inline void or_dg_group_leave(struct or_dgram *d)
{
	d->ops->group_leave(d);
}
static inline size_t or_dg_group_rx_depth(const struct or_dgram *d)
{
	return d->ops->group_rx_depth(d);
}
static inline int or_dg_group_recv(struct or_dgram *d, void *buf, size_t len, struct or_xport_xfer *x)
{
	return d->ops->group_recv(d, buf, len, x);
}
static inline int or_dg_group_send(struct or_dgram *d, const void *buf, size_t len,
                                   struct or_xport_xfer *x)
{
	return d->ops->group_send(d, buf, len, x);
}
/* A whole datagram to peer, a rank or OR_DG_GROUP: or_dg_send or or_dg_group_send. */
static inline int or_dg_send_to(struct or_dgram *d, uint32_t peer, const void *buf, size_t len,
                                struct or_xport_xfer *x)
{
	return peer == OR_DG_GROUP ? d->ops->group_send(d, buf, len, x)
	                           : d->ops->send(d, peer, buf, len, x);
}
/*
 * One datagram of a header, the hlen bytes at buf, and a payload that stays where it is: the
 * transport reads it there, at the latest during the next or_dg_flush, and never after that
 * flush returns, so the caller may change or free it then.  buf has room for the payload
 * after the header (max_msg bytes in all), where the transport copies a datagram that still
 * waits for room in the socket.  peer: a rank, or OR_DG_GROUP.  As or_dg_send otherwise.
 */
static inline int or_dg_send_parts(struct or_dgram *d, uint32_t peer, void *buf, size_t hlen,
                                   const void *payload, size_t plen, struct or_xport_xfer *x)
{
	if (d->ops->send_parts)
		return d->ops->send_parts(d, peer, buf, hlen, payload, plen, x);
	memcpy((char *)buf + hlen, payload, plen);
	return or_dg_send_to(d, peer, buf, hlen + plen, x);
}
/* Datagrams the kernel dropped for a full receive socket; 0 where unknown. */
static inline uint64_t or_dg_kernel_drops(const struct or_dgram *d)
{
	return d->ops->kernel_drops ? d->ops->kernel_drops(d) : 0;
}
static inline void or_dg_describe(const struct or_dgram *d, char *buf, size_t len)
{
	d->ops->describe(d, buf, len);
}

#endif /* OR_DGRAM_H */
