/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receiving (docs/design.md, "Datagram transports"): one recvmmsg fills up to
 * OR_UDP_RX_SLOTS buffers of 64 KiB, each with one datagram or, with UDP_GRO, a train of
 * datagrams of one sender that the kernel coalesced; the segment size it reports splits
 * them again (seg.c), and each datagram is copied into the oldest posted receive, whose
 * completion says its sender; one larger than that receive completes it with
 * -OPTIREDUCE_EMSGSIZE.  A slot the kernel marks truncated is dropped and counted;
 * SO_RXQ_OVFL says how many datagrams the kernel itself dropped for a full socket.
 */
#define _GNU_SOURCE /* sendmmsg, recvmmsg */
#include <errno.h>
#include <netinet/udp.h>
#include <string.h>
#include <sys/epoll.h>

#include "optireduce.h"
#include "udp_int.h"

#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef SO_RXQ_OVFL
#define SO_RXQ_OVFL 40
#endif

int or_udp_rx_options(int fd, int gro)
{
	int one = 1;

	setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	return gro && setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one)) == 0;
}

static void rxq_push(struct or_udp_rxq *q, struct or_xport_xfer *x, void *buf, size_t len)
{
	x->done = 0;
	x->error = 0;
	x->prov[0] = buf;
	x->prov[1] = (void *)len;
	x->prov[2] = NULL;
	if (q->tail)
		q->tail->prov[2] = x;
	else
		q->head = x;
	q->tail = x;
	q->n++;
}

static struct or_xport_xfer *rxq_pop(struct or_udp_rxq *q)
{
	struct or_xport_xfer *x = q->head;

	if (!x)
		return NULL;
	q->head = x->prov[2];
	if (!q->head)
		q->tail = NULL;
	q->n--;
	return x;
}

int or_udp_recv(struct or_dgram *d, void *buf, size_t len, struct or_xport_xfer *x)
{
	rxq_push(&((struct or_udp *)d)->rxq, x, buf, len);
	return 0;
}

int or_udp_group_recv(struct or_dgram *d, void *buf, size_t len, struct or_xport_xfer *x)
{
	struct or_udp *u = (struct or_udp *)d;

	if (u->gfd < 0)
		return -OPTIREDUCE_EPEER;
	rxq_push(&u->grxq, x, buf, len);
	return 0;
}

static struct or_udp_rxq *staged_queue(struct or_udp *u)
{
	return u->staged_group ? &u->grxq : &u->rxq;
}

int or_udp_deliver(struct or_udp *u, int max)
{
	struct or_udp_rxq *q = staged_queue(u);
	int n = 0;

	while (u->next_staged < u->nstaged && q->head && n < max) {
		struct or_udp_staged *s = &u->staged[u->next_staged];
		if (s->next == s->nspan) {
			u->next_staged++;
			continue;
		}
		const struct or_udp_span *sp = &s->span[s->next++];
		struct or_xport_xfer *x = rxq_pop(q);
		x->src = s->src;
		/* Larger than the buffer, so than any datagram of ours: an error completion, as
		 * a truncated receive is on libfabric, which the channel counts invalid. */
		if (sp->len > (size_t)x->prov[1]) {
			u->truncated++;
			or_xport_done(x, -OPTIREDUCE_EMSGSIZE, 0);
		} else {
			memcpy(x->prov[0], s->base + sp->off, sp->len);
			or_xport_done(x, 0, sp->len);
		}
		n++;
	}
	if (u->next_staged == u->nstaged)
		u->nstaged = u->next_staged = 0;
	return n;
}

void or_udp_stage(struct or_udp *u, uint8_t *base, size_t len, size_t gso, uint32_t src)
{
	struct or_udp_staged *s = &u->staged[u->nstaged];

	if (u->nstaged == OR_UDP_RX_SLOTS)
		return;
	s->base = base;
	s->nspan = or_udp_split(len, gso, s->span, OR_UDP_SEGS_PER_SLOT);
	s->next = 0;
	s->src = src;
	u->datagrams_rx += s->nspan;
	u->nstaged++;
}

/* The control messages of one received slot: segment size, and the kernel's drops. */
static size_t read_cmsgs(struct or_udp *u, struct msghdr *mh, unsigned sock)
{
	size_t gso = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO &&
		    c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			int v;
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			gso = v > 0 ? (size_t)v : 0;
		} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL &&
		           c->cmsg_len >= CMSG_LEN(sizeof(uint32_t))) {
			uint32_t v;
			memcpy(&v, CMSG_DATA(c), sizeof(v));
			u->kernel_drops += v - u->drops_seen[sock]; /* the socket's running count */
			u->drops_seen[sock] = v;
		}
	}
	return gso;
}

#define RX_CTL_SPACE (CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(uint32_t)))

/* One recvmmsg on socket fd (index sock: flows, then the group's): slots staged. */
static int receive_on(struct or_udp *u, int fd, unsigned sock, int group)
{
	struct mmsghdr mh[OR_UDP_RX_SLOTS];
	struct iovec iov[OR_UDP_RX_SLOTS];
	struct sockaddr_in from[OR_UDP_RX_SLOTS];
	char ctl[OR_UDP_RX_SLOTS][RX_CTL_SPACE];
	int n;

	memset(mh, 0, sizeof(mh));
	for (unsigned i = 0; i < OR_UDP_RX_SLOTS; i++) {
		iov[i].iov_base = u->rx_mem + (size_t)i * OR_UDP_RX_SLOT;
		iov[i].iov_len = OR_UDP_RX_SLOT;
		mh[i].msg_hdr.msg_iov = &iov[i];
		mh[i].msg_hdr.msg_iovlen = 1;
		mh[i].msg_hdr.msg_name = &from[i];
		mh[i].msg_hdr.msg_namelen = sizeof(from[i]);
		mh[i].msg_hdr.msg_control = ctl[i];
		mh[i].msg_hdr.msg_controllen = sizeof(ctl[i]);
	}
	do
		n = recvmmsg(fd, mh, OR_UDP_RX_SLOTS, MSG_DONTWAIT, NULL);
	while (n < 0 && errno == EINTR);
	u->syscalls_rx++;
	if (n <= 0)
		return 0;
	u->nstaged = u->next_staged = 0;
	u->staged_group = group;
	for (int i = 0; i < n; i++) {
		size_t gso = read_cmsgs(u, &mh[i].msg_hdr, sock);
		if (mh[i].msg_hdr.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
			u->truncated++;
			continue;
		}
		or_udp_stage(u, iov[i].iov_base, mh[i].msg_len, gso,
		             mh[i].msg_hdr.msg_namelen >= sizeof(from[i]) &&
		                     from[i].sin_family == AF_INET
		                 ? or_udp_source(u, &from[i])
		                 : OR_SRC_STRANGER);
	}
	return u->nstaged;
}

/* Receives from the next socket, in turn, that has a posted receive and datagrams waiting. */
static int receive(struct or_udp *u)
{
	unsigned nsock = u->nflows + (u->gfd >= 0);

	for (unsigned k = 0; k < nsock; k++) {
		unsigned i = (u->next_fd + k) % nsock;
		int group = i == u->nflows;
		if (!(group ? u->grxq.n : u->rxq.n))
			continue;
		if (receive_on(u, group ? u->gfd : u->fd[i], i, group)) {
			u->next_fd = i + 1;
			return 1;
		}
	}
	return 0;
}

int or_udp_poll(struct or_dgram *d, int max)
{
	struct or_udp *u = (struct or_udp *)d;
	uint64_t sent = u->tx_completed;
	int n;

	or_udp_flush_due(u);
	n = (int)(u->tx_completed - sent);
	n += or_udp_deliver(u, max - n);
	while (n < max && !u->nstaged && receive(u))
		n += or_udp_deliver(u, max - n);
	return n;
}

/* Staged datagrams wait for a posted receive that is there: no need to sleep. */
static int deliverable(const struct or_udp *u)
{
	return u->nstaged && (u->staged_group ? u->grxq.n : u->rxq.n);
}

int or_udp_wait(struct or_dgram *d, int timeout_ms)
{
	struct or_udp *u = (struct or_udp *)d;
	struct epoll_event ev[4];

	or_udp_flush_due(u);
	if (!deliverable(u) && epoll_wait(u->epfd, ev, 4, timeout_ms) < 0 && errno != EINTR)
		return -OPTIREDUCE_EIO;
	return or_udp_poll(d, 256);
}

int or_udp_wait_fd(struct or_dgram *d)
{
	return ((struct or_udp *)d)->epfd;
}

int or_udp_trywait(struct or_dgram *d)
{
	struct or_udp *u = (struct or_udp *)d;

	or_udp_flush_due(u);
	return deliverable(u) || (u->ntx && !u->tx_blocked) ? -OPTIREDUCE_EAGAIN : 0;
}
