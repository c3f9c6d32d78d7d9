/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a communicator is made of, for tools and logs: its providers, its host layout, and
 * where its endpoints and progress thread went.  Nothing here changes it.
 */
#include <stdio.h>
#include <string.h>

#include "lib/bounded/bounded.h"
#include "internal.h"

const char *optireduce_comm_provider(const optireduce_comm_t *comm, enum optireduce_mode mode)
{
	if (!or_comm_valid(comm))
		return NULL;
	if (comm->hier) {
		comm = or_hier_net(comm->hier);
		if (!comm)
			return mode == OPTIREDUCE_MODE_BOUNDED ? NULL : "shm";
	}
	if (mode == OPTIREDUCE_MODE_BOUNDED)
		return comm->bounded ? or_bounded_provider(comm->bounded) : NULL;
	return or_ofi_provider_name(comm->rdm);
}

int optireduce_comm_layout(const optireduce_comm_t *comm, char *buf, size_t len)
{
	int n, ret;

	if (!or_comm_valid(comm))
		return -OPTIREDUCE_EBADHANDLE;
	if (!buf || len == 0)
		return -OPTIREDUCE_EINVAL;
	if (!comm->hier) {
		n = snprintf(buf, len, "hosts %u, one rank per host", comm->size);
		return n >= 0 && (size_t)n < len ? 0 : -OPTIREDUCE_EOVERFLOW;
	}
	ret = or_hier_describe(comm->hier, buf, len);
	n = (int)strlen(buf);
	if (!ret && snprintf(buf + n, len - (size_t)n, ", shared memory %s",
	                     comm->hier->shm.path) >= (int)(len - (size_t)n))
		ret = -OPTIREDUCE_EOVERFLOW;
	return ret;
}

int optireduce_comm_placement(const optireduce_comm_t *comm, char *buf, size_t len)
{
	const optireduce_comm_t *net;
	int n;

	if (!or_comm_valid(comm))
		return -OPTIREDUCE_EBADHANDLE;
	if (!buf || len == 0)
		return -OPTIREDUCE_EINVAL;
	net = comm->hier ? or_hier_net(comm->hier) : comm;
	if (net && net->placed)
		return or_placement_describe(&net->place, buf, len);
	n = snprintf(buf, len, "no endpoint on this rank: %s",
	             comm->hier && or_hier_net_hosts(comm->hier) > 1
	                 ? "its host leader's carry its data"
	                 : "every rank shares this host");
	return n >= 0 && (size_t)n < len ? 0 : -OPTIREDUCE_EOVERFLOW;
}

int optireduce_comm_multicast(const optireduce_comm_t *comm, char *buf, size_t len)
{
	const optireduce_comm_t *net;
	int n, on = 0;

	if (!or_comm_valid(comm))
		return -OPTIREDUCE_EBADHANDLE;
	if (!buf || len == 0)
		return -OPTIREDUCE_EINVAL;
	net = comm->hier ? or_hier_net(comm->hier) : comm;
	if (net && net->bounded) {
		char why[256];
		on = or_bounded_mcast_describe(net->bounded, why, sizeof(why));
		n = snprintf(buf, len, "%s", why);
	} else {
		n = snprintf(buf, len, "none: %s",
		             comm->mode != OPTIREDUCE_MODE_BOUNDED ? "exact communicator"
		             : net                                 ? "no bounded channel"
		                   : "its host leader's channel carries "
		                     "its data");
	}
	return n >= 0 && (size_t)n < len ? on : -OPTIREDUCE_EOVERFLOW;
}
