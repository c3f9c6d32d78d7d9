/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kernel path's endpoint (udp.h): which interface and address, how large its datagrams
 * are (the interface's MTU), its sockets (one per flow) and their options, the peers'
 * names, and the socket buffers the channel sizes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/sockios.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "optireduce.h"
#include "udp.h"
#include "udp_int.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

#define IPV4_UDP_HDRS 28 /* IPv4 and UDP headers: a datagram's payload is the MTU less these */

/* Whether the comma-separated list names ifname (empty list: any). */
static int listed(const char *list, const char *ifname)
{
	size_t n = strlen(ifname);

	if (!list || !*list)
		return 1;
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && !strncmp(p, ifname, n))
			return 1;
		p += len + (p[len] == ',');
	}
	return 0;
}

/*
 * The interface and its IPv4 address: the first of want->domains that has one, else
 * (unless domains_only) loopback when every rank is on this host, else the first interface
 * that is up and not loopback.
 */
static int choose_interface(struct or_udp *u, const struct or_dgram_want *want, char *why,
                            size_t len)
{
	struct ifaddrs *all, *best = NULL;
	int rank = 1 << 30;

	if (getifaddrs(&all))
		return snprintf(why, len, "getifaddrs: %s", strerror(errno)), -OPTIREDUCE_ENODEV;
	for (struct ifaddrs *i = all; i; i = i->ifa_next) {
		int r, lo;
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
			continue;
		lo = (i->ifa_flags & IFF_LOOPBACK) != 0;
		if (want->domains && *want->domains && listed(want->domains, i->ifa_name))
			r = 0; /* named */
		else if (want->domains_only)
			continue;
		else
			r = lo == !want->same_host ? 2 : 1; /* loopback for one host, else not */
		if (r < rank) {
			rank = r;
			best = i;
		}
	}
	if (best) {
		snprintf(u->ifname, sizeof(u->ifname), "%s", best->ifa_name);
		u->self.sin.sin_addr.s_addr = ((struct sockaddr_in *)best->ifa_addr)->sin_addr.s_addr;
	}
	freeifaddrs(all);
	if (!best)
		return snprintf(why, len, "no IPv4 interface%s%s is up", want->domains_only ? " " : "",
		                want->domains_only ? want->domains : ""),
		       -OPTIREDUCE_ENODEV;
	return 0;
}

/* The interface's MTU, capped by want->mtu; datagrams carry it less the headers. */
static void size_datagrams(struct or_udp *u, int fd, const struct or_dgram_want *want)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", u->ifname);
	u->mtu = ioctl(fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0 ? (unsigned)ifr.ifr_mtu : 1500;
	/* Loopback's 64 KiB is no network's: the largest jumbo frame keeps the channel's
	 * 2,048 posted receives at 19 MB. */
	if (u->mtu > OR_UDP_MTU_MAX)
		u->mtu = OR_UDP_MTU_MAX;
	if (want->mtu && want->mtu < u->mtu)
		u->mtu = want->mtu;
	if (u->mtu < 576)
		u->mtu = 576; /* what every IPv4 host takes */
	u->max_msg = u->mtu - IPV4_UDP_HDRS;
	if (u->max_msg > OR_UDP_GSO_BYTES)
		u->max_msg = OR_UDP_GSO_BYTES;
}

static int open_socket(struct or_udp *u, const struct or_dgram_want *want, unsigned flow)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = u->self.sin.sin_addr.s_addr};
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), zero = 0;
	struct epoll_event ev = {.events = EPOLLIN};

	if (fd < 0)
		return -OPTIREDUCE_EIO;
	u->fd[flow] = fd;
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) || getsockname(fd, (void *)&sin, &sl))
		return -OPTIREDUCE_EIO;
	u->self.port[flow] = sin.sin_port;
	if (flow == 0)
		u->self.sin = sin;
	/* Segmentation: the socket option exists (0 leaves it off until a send asks). */
	if (flow == 0)
		u->gso = want->gso && setsockopt(fd, SOL_UDP, UDP_SEGMENT, &zero, sizeof(zero)) == 0;
	u->gro = or_udp_rx_options(fd, want->gro) && (flow == 0 || u->gro);
	ev.data.u32 = flow;
	return epoll_ctl(u->epfd, EPOLL_CTL_ADD, fd, &ev) ? -OPTIREDUCE_EIO : 0;
}

static void close_endpoint(struct or_dgram *d)
{
	struct or_udp *u = (struct or_udp *)d;

	or_udp_group_leave(d);
	for (unsigned f = 0; f < OR_UDP_MAX_FLOWS; f++)
		if (u->fd[f] >= 0)
			close(u->fd[f]);
	if (u->epfd >= 0)
		close(u->epfd);
	free(u->peers);
	free(u->src_key);
	free(u->src_rank);
	free(u->rx_mem);
	free(u);
}

static int getname(struct or_dgram *d, void *buf, size_t *len)
{
	struct or_udp *u = (struct or_udp *)d;

	if (*len < sizeof(u->self)) {
		*len = sizeof(u->self);
		return -OPTIREDUCE_EOVERFLOW;
	}
	memcpy(buf, &u->self, sizeof(u->self));
	*len = sizeof(u->self);
	return 0;
}

/* names: n entries of stride bytes, each a struct or_udp_name, entry i rank i. */
static int av_insert(struct or_dgram *d, const void *names, size_t stride, uint32_t n)
{
	struct or_udp *u = (struct or_udp *)d;
	uint32_t slots = 16;

	if (stride < sizeof(struct or_udp_name) || !n || u->peers)
		return -OPTIREDUCE_EINVAL;
	while (slots < 2u * n * OR_UDP_MAX_FLOWS)
		slots <<= 1;
	u->peers = calloc(n, sizeof(*u->peers));
	u->src_key = calloc(slots, sizeof(*u->src_key));
	u->src_rank = calloc(slots, sizeof(*u->src_rank));
	if (!u->peers || !u->src_key || !u->src_rank)
		return -OPTIREDUCE_ENOMEM;
	u->src_mask = slots - 1;
	for (uint32_t r = 0; r < n; r++) {
		struct or_udp_name nm;
		memcpy(&nm, (const char *)names + (size_t)r * stride, sizeof(nm));
		if (!nm.nflows || nm.nflows > OR_UDP_MAX_FLOWS)
			return -OPTIREDUCE_EINVAL;
		/* Both ends' flows: a pair of ranks uses as many as the one with fewer has. */
		u->peers[r].nflows = nm.nflows < u->nflows ? nm.nflows : u->nflows;
		for (unsigned f = 0; f < nm.nflows; f++) {
			struct sockaddr_in *to = &u->peers[r].to[f];
			to->sin_family = AF_INET;
			to->sin_addr.s_addr = nm.sin.sin_addr.s_addr;
			to->sin_port = nm.port[f];
			or_udp_src_add(u, nm.sin.sin_addr.s_addr, nm.port[f], r);
		}
	}
	u->npeers = n;
	return 0;
}

/* Best effort, as the channel asks: SO_*BUF, else SO_*BUFFORCE (CAP_NET_ADMIN), every
 * flow's socket; what the kernel reports for the first. */
static size_t resize(struct or_udp *u, int opt, int force, size_t bytes)
{
	int v = bytes > (size_t)(1 << 30) ? 1 << 30 : (int)bytes, got = 0;
	socklen_t l = sizeof(got);

	for (unsigned f = 0; f < u->nflows; f++)
		if (setsockopt(u->fd[f], SOL_SOCKET, force, &v, sizeof(v)))
			setsockopt(u->fd[f], SOL_SOCKET, opt, &v, sizeof(v));
	if (u->gfd >= 0 && setsockopt(u->gfd, SOL_SOCKET, force, &v, sizeof(v)))
		setsockopt(u->gfd, SOL_SOCKET, opt, &v, sizeof(v));
	return getsockopt(u->fd[0], SOL_SOCKET, opt, &got, &l) == 0 && got > 0 ? (size_t)got : 0;
}

static size_t set_rcvbuf(struct or_dgram *d, size_t bytes)
{
	return resize((struct or_udp *)d, SO_RCVBUF, SO_RCVBUFFORCE, bytes);
}

static size_t set_sndbuf(struct or_dgram *d, size_t bytes)
{
	return resize((struct or_udp *)d, SO_SNDBUF, SO_SNDBUFFORCE, bytes);
}

static size_t sndbuf(struct or_dgram *d)
{
	int got = 0;
	socklen_t l = sizeof(got);

	return getsockopt(((struct or_udp *)d)->fd[0], SOL_SOCKET, SO_SNDBUF, &got, &l) == 0 &&
	               got > 0
	           ? (size_t)got
	           : 0;
}

/* Bytes every flow's socket handed to the host and the host has not sent yet. */
static long send_queued(struct or_dgram *d)
{
	struct or_udp *u = (struct or_udp *)d;
	long total = 0;

	for (unsigned f = 0; f < u->nflows; f++) {
		int q = 0;
		if (ioctl(u->fd[f], SIOCOUTQ, &q))
			return -1;
		total += q;
	}
	return total;
}

static const char *name(const struct or_dgram *d)
{
	(void)d;
	return "kernel-udp";
}

static const char *domain(const struct or_dgram *d)
{
	return ((const struct or_udp *)d)->ifname;
}

static size_t max_msg(const struct or_dgram *d)
{
	return ((const struct or_udp *)d)->max_msg;
}

static size_t no_prefix(const struct or_dgram *d)
{
	(void)d;
	return 0;
}

static int no_registration(const struct or_dgram *d)
{
	(void)d;
	return 0;
}

static int reg(struct or_dgram *d, void *base, size_t len)
{
	(void)d, (void)base, (void)len;
	return 0;
}

/* The channel's ring: 2048 receives, a quarter of them the group's once joined. */
static size_t rx_depth(const struct or_dgram *d)
{
	return ((const struct or_udp *)d)->gfd >= 0 ? 1536 : 2048;
}

static size_t group_rx_depth(const struct or_dgram *d)
{
	return ((const struct or_udp *)d)->gfd >= 0 ? 512 : 0;
}

static uint64_t kernel_drops(const struct or_dgram *d)
{
	return ((const struct or_udp *)d)->kernel_drops;
}

static void describe(const struct or_dgram *d, char *buf, size_t len)
{
	const struct or_udp *u = (const struct or_udp *)d;
	char addr[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &u->self.sin.sin_addr.s_addr, addr, sizeof(addr));
	snprintf(buf, len,
	         "kernel UDP on %s (%s), MTU %u: %zu-byte datagrams, segmentation offload %s%s%s, "
	         "receive coalescing %s, %u flow%s; %llu segmented sends, %llu plain, %llu "
	         "receive calls for %llu datagrams (%llu lent uncopied), %llu dropped by "
	         "the kernel, %llu truncated, %llu payloads copied to wait for room",
	         u->ifname, addr, u->mtu, u->max_msg, u->gso ? "on" : "off",
	         u->gso_refused ? ", refused: " : "",
	         u->gso_refused ? strerror(u->gso_refused) : "", u->gro ? "on" : "off", u->nflows,
	         u->nflows == 1 ? "" : "s", (unsigned long long)u->gso_sends,
	         (unsigned long long)u->plain_sends, (unsigned long long)u->syscalls_rx,
	         (unsigned long long)u->datagrams_rx, (unsigned long long)u->datagrams_lent,
	         (unsigned long long)u->kernel_drops, (unsigned long long)u->truncated,
	         (unsigned long long)u->payloads_kept);
}

static const struct or_dgram_ops udp_ops = {
    .close = close_endpoint,
    .name = name,
    .domain = domain,
    .max_msg = max_msg,
    .prefix = no_prefix,
    .registers = no_registration,
    .reg = reg,
    .rx_depth = rx_depth,
    .getname = getname,
    .av_insert = av_insert,
    .send = or_udp_send,
    .recv = or_udp_recv,
    .send_error = or_udp_send_error,
    .flush = or_udp_flush_ep,
    .poll = or_udp_poll,
    .wait = or_udp_wait,
    .wait_fd = or_udp_wait_fd,
    .trywait = or_udp_trywait,
    .set_rcvbuf = set_rcvbuf,
    .set_sndbuf = set_sndbuf,
    .sndbuf = sndbuf,
    .send_queued = send_queued,
    .group_join = or_udp_group_join,
    .group_leave = or_udp_group_leave,
    .group_rx_depth = group_rx_depth,
    .group_recv = or_udp_group_recv,
    .group_send = or_udp_group_send,
    .send_parts = or_udp_send_parts,
    .kernel_drops = kernel_drops,
    .describe = describe,
};

int or_udp_open(const struct or_dgram_want *want, struct or_dgram **out, char *why, size_t len)
{
	struct or_udp *u = calloc(1, sizeof(*u));
	int ret;

	if (!u)
		return -OPTIREDUCE_ENOMEM;
	u->base.ops = &udp_ops;
	u->base.kind = OR_DGRAM_KERNEL;
	u->gfd = -1;
	for (unsigned f = 0; f < OR_UDP_MAX_FLOWS; f++)
		u->fd[f] = -1;
	u->nflows = want->flows ? want->flows : 1;
	if (u->nflows > OR_UDP_MAX_FLOWS)
		u->nflows = OR_UDP_MAX_FLOWS;
	u->self.nflows = (uint8_t)u->nflows;
	u->epfd = epoll_create1(EPOLL_CLOEXEC);
	u->rx_mem = malloc((size_t)OR_UDP_RX_SLOTS * OR_UDP_RX_SLOT);
	for (unsigned i = 0; u->rx_mem && i < OR_UDP_RX_SLOTS; i++)
		u->slot[i].base = u->rx_mem + (size_t)i * OR_UDP_RX_SLOT;
	ret = u->epfd < 0 || !u->rx_mem ? -OPTIREDUCE_ENOMEM : choose_interface(u, want, why, len);
	for (unsigned f = 0; !ret && f < u->nflows; f++) {
		ret = open_socket(u, want, f);
		if (ret)
			snprintf(why, len, "socket on %s: %s", u->ifname, strerror(errno));
	}
	if (!ret)
		size_datagrams(u, u->fd[0], want);
	if (ret) {
		close_endpoint(&u->base);
		return ret;
	}
	*out = &u->base;
	return 0;
}
