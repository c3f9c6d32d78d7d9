/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The only door to libfabric.  Nothing here exposes a libfabric type, so the
 * core and the algorithms never include a libfabric header.
 *
 * One struct or_ofi is one endpoint with its own fabric, domain, address
 * vector (FI_AV_TABLE, so fi_addr == rank) and completion queue.
 */
#ifndef OR_OFI_H
#define OR_OFI_H

#include <stddef.h>
#include <stdint.h>

#include "dgram/xfer.h"

enum or_ofi_kind {
	OR_OFI_RDM,   /* reliable: exact mode */
	OR_OFI_DGRAM, /* unreliable datagrams: bounded mode */
};

struct or_ofi;

/*
 * provider: NULL or "" for automatic choice, else a libfabric provider name
 * such as "tcp;ofi_rxm".  same_host: every rank of the communicator runs in
 * this host and network namespace, so shared memory may be used.
 *
 * DGRAM endpoints accept providers that need a message prefix (FI_MSG_PREFIX) and local
 * memory registration (FI_MR_LOCAL), as EFA's and verbs' datagram endpoints do: then
 * every buffer given to or_ofi_send and or_ofi_recv has or_ofi_prefix() bytes of room
 * before it, which belong to the provider, and lies in memory given to or_ofi_register.
 * emulate_modes: use a prefix of OR_OFI_EMULATED_PREFIX bytes and registration even when
 * the provider needs neither, so that those paths run on udp (the prefix then travels in
 * every datagram).  RDM endpoints need neither: exact mode sends from the application's
 * buffers, which it does not register.
 */
/* The prefix put before every datagram when emulating FI_MSG_PREFIX: an InfiniBand GRH. */
#define OR_OFI_EMULATED_PREFIX 40
/*
 * domains: NULL or "" for any, else libfabric domain names, comma-separated, best first:
 * network interfaces for socket providers (eth1), devices for RDMA ones (mlx5_0; a
 * domain "mlx5_0-dgram" or "rdmap0s31-rdm" counts as its device's).  A domain is
 * matched by fi_info's domain name or its NIC's device name.  With domains_only, no other
 * domain is opened (the user named them); without, they only decide between otherwise
 * equal candidates: the provider ranking (choose.c) comes first (docs/design.md, "Placement").
 */
struct or_ofi_want {
	const char *provider;
	const char *domains;
	int domains_only;
	int same_host;
	int emulate_modes;
	int multicast; /* DGRAM: ask for FI_MULTICAST first (or_ofi_group_join) */
};
int or_ofi_open(enum or_ofi_kind kind, const struct or_ofi_want *want, struct or_ofi **out);
/*
 * After or_ofi_open failed with -OPTIREDUCE_ENOPROVIDER for a named provider: whether that
 * provider exists but needs what the channel does not do (e.g. "needs memory
 * registration (FI_MR_LOCAL)"), into buf.  0 with a reason, -OPTIREDUCE_ENOPROVIDER when
 * libfabric has no such provider for the endpoint type at all.
 */
int or_ofi_explain(enum or_ofi_kind kind, const char *provider, char *buf, size_t len);
/* Bytes of room every send and receive buffer needs before it (0 without FI_MSG_PREFIX). */
size_t or_ofi_prefix(const struct or_ofi *o);
/* Whether buffers are registered (FI_MR_LOCAL, or emulated). */
int or_ofi_registers(const struct or_ofi *o);
/*
 * Registers [base, base + len) for sends and receives when the endpoint needs it (a no-op
 * otherwise); buffers inside it get its descriptor.  Up to OR_OFI_MR_MAX regions, released
 * when the endpoint is closed.  0 or a negative code.
 */
int or_ofi_register(struct or_ofi *o, void *base, size_t len);
void or_ofi_close(struct or_ofi *o);
const char *or_ofi_provider_name(const struct or_ofi *o);
/* The libfabric domain the endpoint opened (e.g. "eth0"), "none" for NULL. */
const char *or_ofi_domain_name(const struct or_ofi *o);
size_t or_ofi_max_msg(const struct or_ofi *o);
/*
 * Best effort: resize the kernel receive buffer of a socket-backed endpoint to bytes.
 * Returns the size the kernel reports afterwards, 0 when there is no socket to resize.
 */
size_t or_ofi_set_rcvbuf(struct or_ofi *o, size_t bytes);
/* The same for the kernel send buffer (and the group's socket, when joined). */
size_t or_ofi_set_sndbuf(struct or_ofi *o, size_t bytes);
/* The endpoint socket's send buffer as the kernel reports it; 0 without a socket. */
size_t or_ofi_sndbuf(struct or_ofi *o);
/*
 * Bytes the endpoint's socket has handed to the host and the host has not sent yet
 * (SIOCOUTQ: in the qdisc or the device, counted as the send buffer counts them), or -1
 * without a socket.  One system call; the socket is looked up once.
 */
long or_ofi_send_queued(struct or_ofi *o);
/* How many receives the endpoint accepts posted at once (0: the provider does not say). */
size_t or_ofi_rx_depth(const struct or_ofi *o);

/* *len in: capacity, out: name length. */
int or_ofi_getname(struct or_ofi *o, void *buf, size_t *len);
/* names: n entries of stride bytes, entry i is rank i. */
int or_ofi_av_insert(struct or_ofi *o, const void *names, size_t stride, uint32_t n);

/* Tagged, on RDM endpoints.  -OPTIREDUCE_EAGAIN means: poll, then retry. */
int or_ofi_tsend(struct or_ofi *o, uint32_t peer, uint64_t tag, const void *buf, size_t len,
                 struct or_xport_xfer *x);
int or_ofi_trecv(struct or_ofi *o, uint32_t peer, uint64_t tag, void *buf, size_t len,
                 struct or_xport_xfer *x);

/* Untagged, on DGRAM endpoints.  len and a receive's completed len exclude the prefix. */
int or_ofi_send(struct or_ofi *o, uint32_t peer, const void *buf, size_t len,
                struct or_xport_xfer *x);
int or_ofi_recv(struct or_ofi *o, void *buf, size_t len, struct or_xport_xfer *x);
/* The system's words for why the last or_ofi_send failed (e.g. "Operation not permitted"). */
const char *or_ofi_send_error(const struct or_ofi *o);

/*
 * Multicast on a DGRAM endpoint opened with want.multicast (docs/design.md, "Multicast").
 * or_ofi_group_join opens a second endpoint of the same domain bound to the IPv4 group
 * address and port (host byte order), on the same address vector and completion queue, and
 * joins the group (fi_join); its receives complete like the endpoint's, their sources told
 * by the same address vector.  Datagrams to the group leave from the endpoint itself
 * (fi_sendmsg with FI_MULTICAST), so receivers see its address, with TTL 1, looped back to
 * this host only with loop (other ranks of this host are in the group: several endpoints of
 * one host may join one group).  0, or a negative code with the reason in why (e.g. "the
 * provider offers no multicast", "join: No such device").
 */
int or_ofi_group_join(struct or_ofi *o, uint32_t group, uint16_t port, int loop, char *why,
                      size_t len);
/* Leaves the group and closes its endpoint: its posted receives are dropped.  Idempotent. */
void or_ofi_group_leave(struct or_ofi *o);
int or_ofi_group_joined(const struct or_ofi *o);
/* Receives the group endpoint accepts posted at once. */
size_t or_ofi_group_rx_depth(const struct or_ofi *o);
/* Like or_ofi_recv, on the group's endpoint; -OPTIREDUCE_EPEER when not joined. */
int or_ofi_group_recv(struct or_ofi *o, void *buf, size_t len, struct or_xport_xfer *x);
/* Like or_ofi_send, once to the whole group. */
int or_ofi_group_send(struct or_ofi *o, const void *buf, size_t len, struct or_xport_xfer *x);
/* The group socket's buffer to bytes with resize (sock.h's), as or_ofi_set_rcvbuf and
 * or_ofi_set_sndbuf do for the endpoint. */
void or_ofi_group_resize(struct or_ofi *o, size_t bytes, size_t (*resize)(int, size_t));

/*
 * After a failure, before the memory of posted transfers is freed: cancels every transfer
 * posted on an RDM endpoint and not completed (fi_cancel), then reaps completions until
 * each has come back or timeout_ms passed.  A transfer still out then (a send that waits
 * for a peer that will never take it) cannot be cancelled: the endpoint is closed, so that
 * libfabric can never write to its context or buffer afterwards, and every such transfer
 * is marked done with -OPTIREDUCE_ECANCELED.  Returns how many had to be abandoned so.
 * A closed endpoint takes no transfer (-OPTIREDUCE_EPEER) and polls empty.
 */
int or_ofi_quiesce(struct or_ofi *o, int timeout_ms);

/* Reap up to max completions; returns how many, or a negative code. */
int or_ofi_poll(struct or_ofi *o, int max);
/* Sleep in the kernel until the endpoint has activity or timeout_ms passes. */
int or_ofi_wait(struct or_ofi *o, int timeout_ms);

/*
 * A file descriptor that polls readable when the endpoint has completions, so that a
 * thread can sleep in poll() without holding the endpoint; -1 when the provider has none.
 * Before each poll(), or_ofi_trywait (with the endpoint's lock) must return 0: otherwise
 * completions are already waiting and the descriptor may not signal them.
 */
int or_ofi_wait_fd(struct or_ofi *o);
int or_ofi_trywait(struct or_ofi *o);

/* For optireduce_info: every provider libfabric offers for kind. */
typedef void (*or_ofi_list_cb)(const char *prov, const char *fabric, const char *domain,
                               size_t max_msg, void *arg);
int or_ofi_list(enum or_ofi_kind kind, or_ofi_list_cb cb, void *arg);
const char *or_ofi_libfabric_version(void);

/* A DGRAM endpoint as a datagram transport of the bounded channel (dgram.c). */
struct or_dgram;
int or_ofi_dgram_open(const struct or_ofi_want *want, struct or_dgram **out);
/*
 * Whether libfabric offers a datagram provider of a device's own (not one over the
 * kernel's sockets, such as udp) for domains (NULL: any): 1 with its name in buf, else 0.
 */
int or_ofi_device_dgram(const char *domains, char *buf, size_t len);

#endif /* OR_OFI_H */
