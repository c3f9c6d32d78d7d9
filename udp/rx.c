/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receiving (docs/design.md, "Datagram transports"): one recvmmsg fills the free ones of
 * OR_UDP_RX_SLOTS buffers of 64 KiB, each with one datagram or, with UDP_GRO, a train of
 * datagrams of one sender that the kernel coalesced; the segment size it reports splits
 * them again (seg.c), and each datagram completes the oldest posted receive where it lies,
 * uncopied: the completion says its sender and lends its place in the slot (xfer.h, data)
 * until the transfer is posted again.  A slot is received into again only when none of its
 * datagrams waits for a receive or is lent.  Half the slots lend at most; the datagrams of
 * the others are copied into their receives as they complete, so there are always slots to
 * receive into.  One larger than its receive completes it with -OPTIREDUCE_EMSGSIZE and
 * lends nothing.  A slot the kernel marks truncated is dropped and counted; SO_RXQ_OVFL
 * says how many datagrams the kernel itself dropped for a full socket.
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

/* A lending slot with nothing staged or lent is free again, and no longer lends. */
static void settle(struct or_udp *u, struct or_udp_slot *s)
{
	if (s->lends && !s->lent && !s->staged) {
		s->lends = 0;
		u->lending--;
	}
}

/* What x's last completion borrowed goes back to its slot.  Only a slot of this endpoint
 * that lends something counts: an abandoned transfer's leftovers change nothing. */
static void give_back(struct or_udp *u, struct or_xport_xfer *x)
{
	struct or_udp_slot *s = x->prov[OR_UDP_PROV_BORROW];

	x->prov[OR_UDP_PROV_BORROW] = NULL;
	if (s >= u->slot && s < u->slot + OR_UDP_RX_SLOTS && s->lent) {
		s->lent--;
		settle(u, s);
	}
}

static void rxq_push(struct or_udp_rxq *q, struct or_xport_xfer *x, void *buf, size_t len)
{
	x->done = 0;
	x->error = 0;
	x->data = buf;
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
	struct or_udp *u = (struct or_udp *)d;

	give_back(u, x);
	rxq_push(&u->rxq, x, buf, len);
	return 0;
}

/* Refused once the group is left, as libfabric's is; the borrow goes back all the same. */
int or_udp_group_recv(struct or_dgram *d, void *buf, size_t len, struct or_xport_xfer *x)
{
	struct or_udp *u = (struct or_udp *)d;

	give_back(u, x);
	if (u->gfd < 0)
		return -OPTIREDUCE_EPEER;
	rxq_push(&u->grxq, x, buf, len);
	return 0;
}

static struct or_udp_rxq *staged_queue(struct or_udp *u)
{
	return u->staged_group ? &u->grxq : &u->rxq;
}

/* Staged entries from next_staged on whose datagrams all went: their slots are no longer
 * staged (free unless lent). */
static void unstage_delivered(struct or_udp *u)
{
	while (u->next_staged < u->nstaged &&
	       u->staged[u->next_staged].next == u->staged[u->next_staged].nspan) {
		struct or_udp_slot *slot = u->staged[u->next_staged++].slot;
		slot->staged = 0;
		settle(u, slot);
	}
	if (u->next_staged == u->nstaged)
		u->nstaged = u->next_staged = 0;
}

int or_udp_deliver(struct or_udp *u, int max)
{
	struct or_udp_rxq *q = staged_queue(u);
	int n = 0;

	unstage_delivered(u);
	while (u->nstaged && q->head && n < max) {
		struct or_udp_staged *s = &u->staged[u->next_staged];
		const struct or_udp_span *sp = &s->span[s->next++];
		struct or_xport_xfer *x = rxq_pop(q);
		x->src = s->src;
		/* Larger than the buffer, so than any datagram of ours: an error completion, as
		 * a truncated receive is on libfabric, which the channel counts invalid. */
		if (sp->len > (size_t)x->prov[1]) {
			u->truncated++;
			or_xport_done(x, -OPTIREDUCE_EMSGSIZE, 0);
		} else if (s->slot->lends) {
			/* Lent before the callback, which may post x again at once. */
			s->slot->lent++;
			x->prov[OR_UDP_PROV_BORROW] = s->slot;
			x->data = s->slot->base + sp->off;
			u->datagrams_lent++;
			or_xport_done(x, 0, sp->len);
		} else {
			memcpy(x->prov[0], s->slot->base + sp->off, sp->len);
			or_xport_done(x, 0, sp->len);
		}
		n++;
		unstage_delivered(u);
	}
	return n;
}

void or_udp_unstage(struct or_udp *u)
{
	for (unsigned i = u->next_staged; i < u->nstaged; i++) {
		u->staged[i].slot->staged = 0;
		settle(u, u->staged[i].slot);
	}
	u->nstaged = u->next_staged = 0;
}

void or_udp_stage(struct or_udp *u, struct or_udp_slot *slot, size_t len, size_t gso, uint32_t src)
{
	struct or_udp_staged *s = &u->staged[u->nstaged];

	if (u->nstaged == OR_UDP_RX_SLOTS)
		return;
	s->slot = slot;
	s->nspan = or_udp_split(len, gso, s->span, OR_UDP_SEGS_PER_SLOT);
	s->next = 0;
	s->src = src;
	slot->staged = 1;
	/* Half the slots at most: the rest stay free to receive into whatever is drained. */
	slot->lends = u->lending < OR_UDP_RX_SLOTS / 2;
	u->lending += (unsigned)slot->lends;
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

/* One recvmmsg on socket fd (index sock: flows, then the group's) into the nfree slots of
 * avail[]: what came staged. */
static int receive_on(struct or_udp *u, int fd, unsigned sock, int group,
                      struct or_udp_slot **avail, unsigned nfree)
{
	struct mmsghdr mh[OR_UDP_RX_SLOTS];
	struct iovec iov[OR_UDP_RX_SLOTS];
	struct sockaddr_in from[OR_UDP_RX_SLOTS];
	char ctl[OR_UDP_RX_SLOTS][RX_CTL_SPACE];
	int n;

	memset(mh, 0, sizeof(mh[0]) * nfree);
	for (unsigned i = 0; i < nfree; i++) {
		iov[i].iov_base = avail[i]->base;
		iov[i].iov_len = OR_UDP_RX_SLOT;
		mh[i].msg_hdr.msg_iov = &iov[i];
		mh[i].msg_hdr.msg_iovlen = 1;
		mh[i].msg_hdr.msg_name = &from[i];
		mh[i].msg_hdr.msg_namelen = sizeof(from[i]);
		mh[i].msg_hdr.msg_control = ctl[i];
		mh[i].msg_hdr.msg_controllen = sizeof(ctl[i]);
	}
	do
		n = recvmmsg(fd, mh, nfree, MSG_DONTWAIT, NULL);
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
		or_udp_stage(u, avail[i], mh[i].msg_len, gso,
		             mh[i].msg_hdr.msg_namelen >= sizeof(from[i]) &&
		                     from[i].sin_family == AF_INET
		                 ? or_udp_source(u, &from[i])
		                 : OR_SRC_STRANGER);
	}
	return u->nstaged;
}

/* The slots neither staged nor lent, into avail[]: how many. */
static unsigned free_slots(struct or_udp *u, struct or_udp_slot **avail)
{
	unsigned n = 0;

	for (unsigned i = 0; i < OR_UDP_RX_SLOTS; i++)
		if (!u->slot[i].staged && !u->slot[i].lent)
			avail[n++] = &u->slot[i];
	return n;
}

/* Receives from the next socket, in turn, that has a posted receive and datagrams waiting,
 * into the free slots: half of them at least, as only half lend (or_udp_stage). */
static int receive(struct or_udp *u)
{
	unsigned nsock = u->nflows + (u->gfd >= 0), nfree = 0;
	struct or_udp_slot *avail[OR_UDP_RX_SLOTS];

	for (unsigned k = 0; k < nsock; k++) {
		unsigned i = (u->next_fd + k) % nsock;
		int group = i == u->nflows;
		if (!(group ? u->grxq.n : u->rxq.n))
			continue;
		if (!nfree && !(nfree = free_slots(u, avail)))
			return 0;
		if (receive_on(u, group ? u->gfd : u->fd[i], i, group, avail, nfree)) {
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
