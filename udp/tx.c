/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sending (docs/design.md, "Datagram transports"): the channel's sends wait in a queue
 * until the next flush, which gives each destination's run of equal-size datagrams to the
 * kernel as one segmented send (UDP_SEGMENT: one call, one pass through the stack, cut
 * into wire datagrams below it) and the runs of every destination in one sendmmsg.  A
 * kernel or device that refuses segmentation turns it off for the endpoint, and the same
 * datagrams go again one per message, still batched.
 */
#define _GNU_SOURCE /* sendmmsg, recvmmsg */
#include <errno.h>
#include <netinet/udp.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>

#include "optireduce.h"
#include "udp_int.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

/* One message of a flush: a run of queued datagrams to one destination. */
struct tx_msg {
	unsigned first; /* index of its first entry in the batch's order */
	unsigned count; /* entries */
	unsigned flow;
	uint16_t segment; /* UDP_SEGMENT, 0 for a single datagram */
};

struct tx_batch {
	unsigned order[OR_UDP_TXQ]; /* queue indices, grouped by destination */
	unsigned norder;
	struct tx_msg msg[OR_UDP_TXQ];
	unsigned nmsg;
};

static int errno_code(int e)
{
	switch (e) {
	case EAGAIN:
	case ENOBUFS:
		return -OPTIREDUCE_EAGAIN;
	case EMSGSIZE:
		return -OPTIREDUCE_EMSGSIZE;
	case ECONNREFUSED:
	case EHOSTUNREACH:
	case ENETUNREACH:
	case EHOSTDOWN:
		return -OPTIREDUCE_EPEER;
	default:
		return -OPTIREDUCE_EIO;
	}
}

/*
 * A full socket refuses new sends, as libfabric's provider does, so that the channel backs
 * off (ctl/sendfail.c) instead of queueing behind it and polling a socket with no room.
 */
static int queue(struct or_udp *u, const struct or_udp_txe *e)
{
	if (e->len > u->max_msg)
		return -OPTIREDUCE_EMSGSIZE;
	if (u->tx_blocked && or_udp_flush_due(u) < 0)
		return -OPTIREDUCE_EAGAIN;
	if (u->ntx == OR_UDP_TXQ && or_udp_flush(u) && u->ntx == OR_UDP_TXQ)
		return -OPTIREDUCE_EAGAIN;
	e->x->done = 0;
	e->x->error = 0;
	u->txq[u->ntx++] = *e;
	return 0;
}

int or_udp_send(struct or_dgram *d, uint32_t peer, const void *buf, size_t len,
                struct or_xport_xfer *x)
{
	struct or_udp *u = (struct or_udp *)d;

	if (peer >= u->npeers)
		return -OPTIREDUCE_EINVAL;
	return queue(u, &(struct or_udp_txe){.peer = peer, .buf = buf, .len = len, .x = x});
}

int or_udp_group_send(struct or_dgram *d, const void *buf, size_t len, struct or_xport_xfer *x)
{
	struct or_udp *u = (struct or_udp *)d;

	if (u->gfd < 0)
		return -OPTIREDUCE_EPEER;
	return queue(u, &(struct or_udp_txe){.peer = OR_UDP_GROUP, .buf = buf, .len = len, .x = x});
}

int or_udp_send_parts(struct or_dgram *d, uint32_t peer, void *buf, size_t hlen,
                      const void *payload, size_t plen, struct or_xport_xfer *x)
{
	struct or_udp *u = (struct or_udp *)d;

	if (peer == OR_UDP_GROUP ? u->gfd < 0 : peer >= u->npeers)
		return peer == OR_UDP_GROUP ? -OPTIREDUCE_EPEER : -OPTIREDUCE_EINVAL;
	return queue(u, &(struct or_udp_txe){.peer = peer,
	                                     .buf = buf,
	                                     .len = hlen + plen,
	                                     .payload = plen ? payload : NULL,
	                                     .hlen = hlen,
	                                     .x = x});
}

const char *or_udp_send_error(const struct or_dgram *d)
{
	const struct or_udp *u = (const struct or_udp *)d;
	return u->send_err ? strerror(u->send_err) : "no error";
}

/* Queue indices in an order that puts each destination's entries together, oldest first. */
static void group_by_destination(const struct or_udp *u, struct tx_batch *bt)
{
	unsigned char taken[OR_UDP_TXQ] = {0};

	bt->norder = 0;
	for (unsigned i = 0; i < u->ntx; i++) {
		if (taken[i])
			continue;
		for (unsigned j = i; j < u->ntx; j++) {
			if (taken[j] || u->txq[j].peer != u->txq[i].peer)
				continue;
			taken[j] = 1;
			bt->order[bt->norder++] = j;
		}
	}
}

/* The flow a run to peer leaves on: the peer's flows in turn, one run each. */
static unsigned next_flow(struct or_udp *u, uint32_t peer)
{
	struct or_udp_peer *p;
	unsigned f;

	if (peer == OR_UDP_GROUP || u->nflows == 1)
		return 0;
	p = &u->peers[peer];
	f = p->next_flow++ % p->nflows;
	return f < u->nflows ? f : 0;
}

/* Cuts the ordered queue into messages: runs the kernel can segment, else one each. */
static void plan(struct or_udp *u, struct tx_batch *bt)
{
	size_t lens[OR_UDP_GSO_SEGS];
	unsigned i = 0;

	bt->nmsg = 0;
	while (i < bt->norder) {
		uint32_t peer = u->txq[bt->order[i]].peer;
		size_t n = 0, k = 1;
		while (u->gso && n < OR_UDP_GSO_SEGS && i + n < bt->norder &&
		       u->txq[bt->order[i + n]].peer == peer) {
			lens[n] = u->txq[bt->order[i + n]].len;
			n++;
		}
		if (n > 1)
			k = or_udp_run(lens, n);
		bt->msg[bt->nmsg] = (struct tx_msg){i, (unsigned)k, next_flow(u, peer),
		                                    k > 1 ? (uint16_t)lens[0] : 0};
		bt->nmsg++;
		i += (unsigned)k;
	}
}

static struct sockaddr_in *destination(struct or_udp *u, uint32_t peer, unsigned flow)
{
	return peer == OR_UDP_GROUP ? &u->group_to : &u->peers[peer].to[flow];
}

/* The iovecs of one queued datagram: itself, or its header and borrowed payload. */
static unsigned entry_iov(const struct or_udp_txe *e, struct iovec *iov)
{
	if (!e->payload) {
		iov[0] = (struct iovec){(void *)e->buf, e->len};
		return 1;
	}
	iov[0] = (struct iovec){(void *)e->buf, e->hlen};
	iov[1] = (struct iovec){(void *)e->payload, e->len - e->hlen};
	return 2;
}

/* The message's iovecs and control block; to its destination on its flow. */
static void build(struct or_udp *u, const struct tx_batch *bt, const struct tx_msg *m,
                  struct mmsghdr *mh, struct iovec *iov, char *ctl, size_t ctl_len)
{
	const struct or_udp_txe *first = &u->txq[bt->order[m->first]];
	size_t niov = 0;

	for (unsigned k = 0; k < m->count; k++)
		niov += entry_iov(&u->txq[bt->order[m->first + k]], iov + niov);
	memset(mh, 0, sizeof(*mh));
	mh->msg_hdr.msg_name = destination(u, first->peer, m->flow);
	mh->msg_hdr.msg_namelen = sizeof(struct sockaddr_in);
	mh->msg_hdr.msg_iov = iov;
	mh->msg_hdr.msg_iovlen = niov;
	if (m->segment) {
		struct cmsghdr *c;
		memset(ctl, 0, ctl_len);
		mh->msg_hdr.msg_control = ctl;
		mh->msg_hdr.msg_controllen = CMSG_SPACE(sizeof(uint16_t));
		c = CMSG_FIRSTHDR(&mh->msg_hdr);
		c->cmsg_level = SOL_UDP;
		c->cmsg_type = UDP_SEGMENT;
		c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
		memcpy(CMSG_DATA(c), &m->segment, sizeof(uint16_t));
	}
}

/* The entries of message m are the kernel's (error 0) or lost (error < 0). */
static void complete(struct or_udp *u, const struct tx_batch *bt, const struct tx_msg *m, int error,
                     unsigned char *sent)
{
	for (unsigned k = 0; k < m->count; k++) {
		unsigned q = bt->order[m->first + k];
		sent[q] = 1;
		or_xport_done(u->txq[q].x, error, error ? 0 : u->txq[q].len);
	}
	u->tx_completed += m->count;
	if (!error)
		*(m->segment ? &u->gso_sends : &u->plain_sends) += 1;
}

/* Whether a failed segmented send means the kernel or device does not segment. */
static int refuses_segmentation(int e)
{
	return e == EIO || e == EINVAL || e == ENOPROTOOPT || e == EOPNOTSUPP;
}

/*
 * A segmented send refused for another reason than a full socket (EPERM from a local
 * firewall rule, say) goes again one datagram at a time: the rule judges each packet, and
 * one refusal must not lose the run's other datagrams.  Returns 0, or -OPTIREDUCE_EAGAIN
 * when the socket is full (the rest stays queued).
 */
static int send_each(struct or_udp *u, const struct tx_batch *bt, const struct tx_msg *m,
                     unsigned char *sent)
{
	for (unsigned k = 0; k < m->count; k++) {
		unsigned q = bt->order[m->first + k];
		struct or_udp_txe *e = &u->txq[q];
		struct iovec iov[2];
		struct msghdr h = {.msg_name = destination(u, e->peer, m->flow),
		                   .msg_namelen = sizeof(struct sockaddr_in),
		                   .msg_iov = iov};
		ssize_t r;

		if (sent[q])
			continue;
		h.msg_iovlen = entry_iov(e, iov);
		do
			r = sendmsg(u->fd[m->flow], &h, MSG_DONTWAIT);
		while (r < 0 && errno == EINTR);
		u->syscalls_tx++;
		if (r < 0 && (errno == EAGAIN || errno == ENOBUFS))
			return -OPTIREDUCE_EAGAIN;
		if (r < 0)
			u->send_err = errno;
		else
			u->plain_sends++;
		sent[q] = 1;
		or_xport_done(e->x, r < 0 ? errno_code(errno) : 0, r < 0 ? 0 : e->len);
		u->tx_completed++;
	}
	return 0;
}

/*
 * Sends the messages of one flow in as few sendmmsg calls as the kernel takes.  Returns 0,
 * -OPTIREDUCE_EAGAIN when the socket is full (the rest stays queued), or 1 when
 * segmentation was refused (the caller plans again without it).
 */
static int send_flow(struct or_udp *u, const struct tx_batch *bt, unsigned flow,
                     unsigned char *sent)
{
	struct mmsghdr mh[OR_UDP_MMSG];
	struct iovec iov[OR_UDP_MMSG][2 * OR_UDP_GSO_SEGS]; /* a header and a payload each */
	char ctl[OR_UDP_MMSG][CMSG_SPACE(sizeof(uint16_t))];
	const struct tx_msg *which[OR_UDP_MMSG];
	unsigned m = 0;

	while (m < bt->nmsg) {
		unsigned n = 0, done = 0;
		for (; m < bt->nmsg && n < OR_UDP_MMSG; m++) {
			if (bt->msg[m].flow != flow || sent[bt->order[bt->msg[m].first]])
				continue;
			build(u, bt, &bt->msg[m], &mh[n], iov[n], ctl[n], sizeof(ctl[n]));
			which[n++] = &bt->msg[m];
		}
		while (done < n) {
			int r = sendmmsg(u->fd[flow], mh + done, n - done, MSG_DONTWAIT);
			u->syscalls_tx++;
			if (r > 0) {
				for (int k = 0; k < r; k++)
					complete(u, bt, which[done + (unsigned)k], 0, sent);
				done += (unsigned)r;
				continue;
			}
			if (errno == EINTR)
				continue;
			u->send_err = errno;
			if (errno == EAGAIN || errno == ENOBUFS)
				return -OPTIREDUCE_EAGAIN;
			if (which[done]->segment && refuses_segmentation(errno)) {
				u->gso = 0;
				u->gso_refused = errno;
				return 1;
			}
			if (which[done]->segment) {
				int ret = send_each(u, bt, which[done], sent);
				if (ret)
					return ret;
			} else {
				complete(u, bt, which[done], errno_code(errno), sent);
			}
			done++;
		}
	}
	return 0;
}

/* Keeps the entries not sent, in their order. */
static void compact(struct or_udp *u, const unsigned char *sent)
{
	unsigned k = 0;

	for (unsigned i = 0; i < u->ntx; i++)
		if (!sent[i])
			u->txq[k++] = u->txq[i];
	u->ntx = k;
}

/*
 * Whether room in flow's socket wakes the waits (or_udp_wait, the descriptor): only while
 * entries wait for it, since an idle datagram socket always has room.
 */
static void watch_room(struct or_udp *u, unsigned flow, int on)
{
	struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.u32 = flow};
	uint32_t bit = 1u << flow;

	if (!(u->out_armed & bit) == !on)
		return;
	if (epoll_ctl(u->epfd, EPOLL_CTL_MOD, u->fd[flow], &ev) == 0)
		u->out_armed ^= bit;
}

int or_udp_flush(struct or_udp *u)
{
	struct tx_batch bt;
	unsigned char sent[OR_UDP_TXQ];
	unsigned f = 0;
	int ret = 0;

	while (u->ntx) {
		memset(sent, 0, sizeof(sent));
		group_by_destination(u, &bt);
		plan(u, &bt);
		ret = 0;
		for (f = 0; f < u->nflows && !ret; f++)
			ret = send_flow(u, &bt, f, sent);
		compact(u, sent);
		if (ret <= 0)
			break;
		/* Refused segmentation: the rest again, one datagram per message. */
	}
	u->tx_blocked = ret < 0 && u->ntx;
	if (u->tx_blocked)
		u->blocked_flow = f - 1;
	for (unsigned i = 0; u->out_armed && i < u->nflows; i++)
		watch_room(u, i, u->tx_blocked && i == u->blocked_flow);
	if (u->tx_blocked)
		watch_room(u, u->blocked_flow, 1);
	return ret < 0 ? ret : 0;
}

/* Room in the full socket: writable once half its buffer is free (POLLOUT). */
static int has_room(const struct or_udp *u)
{
	struct pollfd p = {.fd = u->fd[u->blocked_flow], .events = POLLOUT};

	return poll(&p, 1, 0) > 0 && (p.revents & POLLOUT);
}

int or_udp_flush_due(struct or_udp *u)
{
	if (!u->ntx)
		return 0;
	if (u->tx_blocked && !has_room(u))
		return -OPTIREDUCE_EAGAIN;
	return or_udp_flush(u);
}

/* The datagrams that still wait hold their payloads themselves from here on. */
static void keep_payloads(struct or_udp *u)
{
	for (unsigned i = 0; i < u->ntx; i++) {
		struct or_udp_txe *e = &u->txq[i];
		if (!e->payload)
			continue;
		memcpy((char *)e->buf + e->hlen, e->payload, e->len - e->hlen);
		e->payload = NULL;
		u->payloads_kept++;
	}
}

/* The channel's flush: what it lent with or_udp_send_parts is not read after this. */
int or_udp_flush_ep(struct or_dgram *d)
{
	struct or_udp *u = (struct or_udp *)d;
	int ret = or_udp_flush_due(u);

	keep_payloads(u);
	return ret;
}
