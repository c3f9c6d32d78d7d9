/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The endpoint's multicast group (docs/design.md, "Multicast"): a socket of its own bound to
 * group:port (SO_REUSEADDR, so that the ranks of one host can each bind it) and joined on
 * the endpoint's interface.  Datagrams to the group leave from the first flow's socket, so
 * receivers see the sender's own address and know its rank; TTL 1 keeps them on the hosts'
 * segment, and they loop back to this host only when loop asks (ranks of this host are in
 * the group).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "optireduce.h"
#include "udp_int.h"

static int fail(struct or_udp *u, const char *what, char *why, size_t len)
{
	snprintf(why, len, "%s: %s", what, strerror(errno));
	or_udp_group_leave(&u->base);
	return -OPTIREDUCE_EIO;
}

int or_udp_group_join(struct or_dgram *d, uint32_t group, uint16_t port, int loop, char *why,
                      size_t len)
{
	struct or_udp *u = (struct or_udp *)d;
	struct sockaddr_in sin = {.sin_family = AF_INET,
	                          .sin_addr.s_addr = htonl(group),
	                          .sin_port = htons(port)};
	struct ip_mreq mreq = {.imr_multiaddr.s_addr = htonl(group),
	                       .imr_interface.s_addr = u->self.sin.sin_addr.s_addr};
	struct in_addr ifaddr = {.s_addr = u->self.sin.sin_addr.s_addr};
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = OR_UDP_MAX_FLOWS};
	unsigned char ttl = 1, looped = loop != 0;
	int one = 1;

	if (!why || !len)
		return -OPTIREDUCE_EINVAL;
	if (u->gfd >= 0)
		return 0;
	u->gfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (u->gfd < 0)
		return fail(u, "the group's socket", why, len);
	if (setsockopt(u->gfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(u->gfd, (struct sockaddr *)&sin, sizeof(sin)))
		return fail(u, "binding the group's socket", why, len);
	if (setsockopt(u->gfd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof(mreq)))
		return fail(u, "join", why, len);
	or_udp_rx_options(u->gfd, u->gro);
	if (setsockopt(u->fd[0], IPPROTO_IP, IP_MULTICAST_IF, &ifaddr, sizeof(ifaddr)) ||
	    setsockopt(u->fd[0], IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl)) ||
	    setsockopt(u->fd[0], IPPROTO_IP, IP_MULTICAST_LOOP, &looped, sizeof(looped)))
		return fail(u, "the sender's multicast options", why, len);
	if (epoll_ctl(u->epfd, EPOLL_CTL_ADD, u->gfd, &ev))
		return fail(u, "epoll", why, len);
	u->group_to = sin;
	return 0;
}

/* Its posted receives are dropped with it, as libfabric's are: the channel reposts none.  A
 * completed one lends its datagram until posted again, which gives it back (rx.c). */
void or_udp_group_leave(struct or_dgram *d)
{
	struct or_udp *u = (struct or_udp *)d;

	if (u->gfd < 0)
		return;
	close(u->gfd); /* leaves the group, and epoll forgets it */
	u->gfd = -1;
	u->grxq.head = u->grxq.tail = NULL;
	u->grxq.n = 0;
	if (u->staged_group)
		or_udp_unstage(u);
}
