/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A datagram endpoint's multicast group (docs/design.md, "Multicast").
 *
 * libfabric's udp provider joins a group on the endpoint's own socket (IP_ADD_MEMBERSHIP),
 * but a socket bound to a unicast address and an ephemeral port never receives datagrams
 * sent to group:port: the kernel delivers them to sockets bound to that port and to the
 * group's address or the wildcard.  So the group gets an endpoint of its own, bound to
 * group:port, sharing the endpoint's domain, address vector and completion queue: its
 * datagrams complete like the endpoint's, and their sources (the senders' endpoints, which
 * send to the group with fi_sendmsg and FI_MULTICAST) resolve to ranks.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "load.h"
#include "ofi_int.h"
#include "optireduce.h"
#include "sock.h"

/* TTL 1: the group never leaves the hosts' own network segment. */
#define OR_GROUP_TTL   1
#define OR_MAX_UNBOUND 64

/* The endpoint's info without an address: udp then leaves the socket unbound until
 * fi_setname (group_ep_bind). */
static struct fi_info *group_info(const struct or_ofi *o)
{
	struct fi_info *fi = fi_dupinfo(o->info);

	if (!fi)
		return NULL;
	free(fi->src_addr);
	free(fi->dest_addr);
	fi->src_addr = fi->dest_addr = NULL;
	fi->src_addrlen = fi->dest_addrlen = 0;
	fi->addr_format = FI_SOCKADDR_IN;
	return fi;
}

/*
 * Binds the group's endpoint to group:port.  Ranks of one host (hierarchy off) each bind
 * it, which needs SO_REUSEADDR on every such socket before its bind, and libfabric has no
 * call for it: the sockets that appeared unbound since before[] are the endpoint's (another
 * thread's new socket would get the option too, which only lets it share an address).
 */
static int group_ep_bind(struct or_ofi *o, const struct sockaddr_in *sin, const int *before,
                         int nbefore)
{
	int now[OR_MAX_UNBOUND], n = or_ofi_unbound_sockets(now, OR_MAX_UNBOUND), one = 1;

	for (int i = 0; i < n; i++) {
		int old = 0;
		for (int j = 0; j < nbefore && !old; j++)
			old = now[i] == before[j];
		if (!old)
			setsockopt(now[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	}
	return fi_setname(&o->gep->fid, (void *)sin, sizeof(*sin));
}

/* The join's outcome from the event queue (udp writes it during fi_join). */
static int join_result(struct or_ofi *o, char *why, size_t len)
{
	struct fi_eq_err_entry e;
	uint32_t event = 0;
	ssize_t n;

	memset(&e, 0, sizeof(e));
	n = fi_eq_read(o->geq, &event, &e, sizeof(e), 0);
	if (n == -FI_EAVAIL) {
		memset(&e, 0, sizeof(e));
		if (fi_eq_readerr(o->geq, &e, 0) < 0)
			e.err = FI_EOTHER;
		snprintf(why, len, "join: %s", strerror(e.err < 0 ? -e.err : e.err));
		return -OPTIREDUCE_EFABRIC;
	}
	if (n < 0 || event != FI_JOIN_COMPLETE) {
		snprintf(why, len, "join: no completion (%s)", n < 0 ? fi_strerror((int)-n) : "?");
		return -OPTIREDUCE_EFABRIC;
	}
	/* udp reports a failed IP_ADD_MEMBERSHIP as a completion carrying -errno. */
	if ((size_t)n >= sizeof(e) && e.err) {
		snprintf(why, len, "join: %s", strerror(e.err < 0 ? -e.err : e.err));
		return -OPTIREDUCE_EFABRIC;
	}
	return 0;
}

static int open_group_ep(struct or_ofi *o, const struct sockaddr_in *sin, char *why, size_t len)
{
	struct fi_eq_attr eq_attr = {.size = 16, .wait_obj = FI_WAIT_NONE};
	struct fi_info *fi = group_info(o);
	int before[OR_MAX_UNBOUND], nbefore = or_ofi_unbound_sockets(before, OR_MAX_UNBOUND);
	int ret;

	if (!fi)
		return -OPTIREDUCE_ENOMEM;
	ret = fi_endpoint(o->domain, fi, &o->gep, NULL);
	fi_freeinfo(fi);
	if (ret) {
		o->gep = NULL;
		snprintf(why, len, "the group's endpoint: %s", fi_strerror(-ret));
		return or_fi_to_or(ret);
	}
	ret = group_ep_bind(o, sin, before, nbefore);
	if (ret) {
		snprintf(why, len, "binding the group's endpoint: %s", fi_strerror(-ret));
		return or_fi_to_or(ret);
	}
	ret = fi_eq_open(o->fabric, &eq_attr, &o->geq, NULL);
	if (!ret)
		ret = fi_ep_bind(o->gep, &o->geq->fid, 0);
	if (!ret)
		ret = fi_ep_bind(o->gep, &o->av->fid, 0);
	if (!ret)
		ret = fi_ep_bind(o->gep, &o->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_enable(o->gep);
	if (ret)
		snprintf(why, len, "the group's endpoint: %s", fi_strerror(-ret));
	return or_fi_to_or(ret);
}

/* TTL, and loopback only when asked (ranks of this host in the group); without the socket
 * the kernel's defaults (TTL 1, looped back) hold and the receiver drops its own datagrams. */
static void sender_options(struct or_ofi *o, int looped)
{
	unsigned char name[128];
	size_t len = sizeof(name);
	int fd, ttl = OR_GROUP_TTL;
	unsigned char loop = looped != 0;

	if (fi_getname(&o->ep->fid, name, &len) || len > sizeof(name))
		return;
	fd = or_ofi_find_socket(name, len);
	if (fd < 0)
		return;
	setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl));
	setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof(loop));
}

int or_ofi_group_join(struct or_ofi *o, uint32_t group, uint16_t port, int loop, char *why,
                      size_t len)
{
	struct sockaddr_in sin;
	int ret;

	if (!o || !why || !len)
		return -OPTIREDUCE_EINVAL;
	if (o->kind != OR_OFI_DGRAM || !o->multicast || o->info->addr_format != FI_SOCKADDR_IN) {
		snprintf(why, len, "provider %s offers no IPv4 multicast (FI_MULTICAST)",
		         o->prov_name);
		return -OPTIREDUCE_ENOTSUP;
	}
	if (o->gep)
		return 0;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(group);
	sin.sin_port = htons(port);
	ret = open_group_ep(o, &sin, why, len);
	if (!ret)
		ret = or_fi_to_or(fi_join(o->gep, &sin, 0, &o->gmc, NULL));
	if (!ret)
		ret = join_result(o, why, len);
	if (ret) {
		if (!*why)
			snprintf(why, len, "join: %s", optireduce_strerror(ret));
		or_ofi_group_leave(o);
		return ret;
	}
	o->gaddr = fi_mc_addr(o->gmc);
	sender_options(o, loop);
	return 0;
}

size_t or_ofi_group_rx_depth(const struct or_ofi *o)
{
	return or_ofi_group_joined(o) ? or_ofi_rx_depth(o) : 0;
}
