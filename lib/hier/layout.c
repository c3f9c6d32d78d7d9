/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Building the host layout of a communicator whose ranks share hosts: which ranks share
 * this host, which rank leads each host, the host's shared segment, and the leaders'
 * communicator that carries the network step (docs/design.md, "Ranks that share a host").
 *
 * Collective, in three out-of-band allgathers after the hello: the leader creates the
 * segment, then every rank sends its endpoint names (only leaders have endpoints) and
 * its outcome, then the others attach and every rank says whether it did, then the
 * leader unlinks the name.  Any rank's failure fails every rank's creation.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/core/internal.h"

int or_hier_wanted(const uint64_t *hosts, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = i + 1; j < n; j++)
			if (hosts[i] == hosts[j])
				return 1;
	return 0;
}

/* Hosts in the order of their lowest rank, so every rank numbers them alike. */
static int build_layout(struct or_hier *h, const uint64_t *hosts, uint32_t n, uint32_t rank)
{
	h->leaders = calloc(n, sizeof(*h->leaders));
	h->host_ranks = calloc(n, sizeof(*h->host_ranks));
	h->local_ranks = calloc(n, sizeof(*h->local_ranks));
	if (!h->leaders || !h->host_ranks || !h->local_ranks)
		return -OPTIREDUCE_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = 0;
		while (k < h->nhosts && hosts[h->leaders[k]] != hosts[i])
			k++;
		if (k == h->nhosts)
			h->leaders[h->nhosts++] = i;
		h->host_ranks[k]++;
		if (hosts[i] == hosts[rank]) {
			if (i == rank) {
				h->host = k;
				h->local = h->nlocal;
			}
			h->local_ranks[h->nlocal++] = i;
		}
	}
	return 0;
}

static int is_leader(const struct or_hier *h)
{
	return h->local == 0;
}

static void segment_path(const struct or_hier *h, uint32_t id, const uint32_t *pids, char *buf,
                         size_t len)
{
	uint32_t leader = h->leaders[h->host];
	snprintf(buf, len, "/optireduce-%08" PRIx32 "-%" PRIu32 "-%" PRIu32, id, leader,
	         pids[leader]);
}

/* The leaders' communicator: rank = host index, the parent's id, mode and parameters. */
static int open_net(struct or_hier *h, optireduce_comm_t *c, int one_machine)
{
	h->net = or_comm_alloc(c->ctx, h->host, h->nhosts);
	if (!h->net)
		return -OPTIREDUCE_ENOMEM;
	h->net->params = c->params;
	h->net->mode = c->mode;
	h->net->id = c->id;
	return or_comm_open_channels(h->net, one_machine);
}

static int agree(const struct optireduce_oob *oob, int status)
{
	int32_t me = status, *all = calloc(oob->size, sizeof(*all));
	int ret = status;

	if (!all)
		return -OPTIREDUCE_ENOMEM;
	if (oob->allgather(&me, all, sizeof(me), oob->coll_info))
		ret = -OPTIREDUCE_EOOB;
	for (uint32_t i = 0; i < oob->size && !ret; i++)
		if (all[i] < 0)
			ret = all[i];
	free(all);
	return ret;
}

static size_t chunk_bytes(const optireduce_comm_t *c)
{
	size_t chunk = (size_t)or_param_int(&c->params, OR_P_SHM_CHUNK);
	return chunk - chunk % 64; /* every dtype size divides it, and slots stay aligned */
}

int or_hier_create(optireduce_comm_t *c, const struct optireduce_oob *oob, const uint64_t *hosts,
                   const uint32_t *pids, int one_machine)
{
	struct or_hier *h = calloc(1, sizeof(*h));
	char path[OR_SHM_PATH_MAX];
	int ret;

	if (!h)
		return -OPTIREDUCE_ENOMEM; /* the peers wait in the allgather: as with a crash */
	c->hier = h;
	h->comm = c;
	h->shm.fd = -1;
	ret = build_layout(h, hosts, c->size, c->rank);
	if (!ret)
		segment_path(h, c->id, pids, path, sizeof(path));
	if (!ret && is_leader(h))
		ret = or_shm_create(&h->shm, path, h->nlocal, chunk_bytes(c));
	if (!ret && is_leader(h) && h->nhosts > 1)
		ret = open_net(h, c, one_machine);
	ret = or_comm_exchange_names(h->net, oob, h->leaders, ret);
	if (!ret && !is_leader(h))
		ret = or_shm_attach(&h->shm, path, h->nlocal, chunk_bytes(c));
	ret = agree(oob, ret);
	if (is_leader(h))
		or_shm_unlink(&h->shm);
	return ret;
}

void or_hier_destroy(struct or_hier *h)
{
	if (!h)
		return;
	or_comm_free(h->net);
	or_shm_unlink(&h->shm);
	or_shm_detach(&h->shm);
	free(h->leaders);
	free(h->local_ranks);
	free(h->host_ranks);
	free(h);
}

optireduce_comm_t *or_hier_net(const struct or_hier *h)
{
	return h ? h->net : NULL;
}

uint32_t or_hier_net_hosts(const struct or_hier *h)
{
	return h->nhosts;
}

int or_hier_busy(const struct or_hier *h)
{
	return h->head != NULL;
}

/* "hosts 2, ranks per host 2,2, leaders 0,1, host 0 local 1/2": the same on every rank. */
int or_hier_describe(const struct or_hier *h, char *buf, size_t len)
{
	size_t n = 0;

#define OR_PUT(...)                                                                                \
	do {                                                                                       \
		int w_ = snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__);                    \
		n += w_ > 0 ? (size_t)w_ : 0;                                                      \
	} while (0)
	OR_PUT("hosts %u, ranks per host", h->nhosts);
	for (uint32_t i = 0; i < h->nhosts; i++)
		OR_PUT("%s%u", i ? "," : " ", h->host_ranks[i]);
	OR_PUT(", leaders");
	for (uint32_t i = 0; i < h->nhosts; i++)
		OR_PUT("%s%u", i ? "," : " ", h->leaders[i]);
	OR_PUT(", this rank: host %u, local %u of %u", h->host, h->local, h->nlocal);
#undef OR_PUT
	return n < len ? 0 : -OPTIREDUCE_EOVERFLOW;
}

void or_hier_log(const struct or_hier *h, uint32_t id)
{
	char buf[512];

	if (or_log_level < OR_LOG_INFO)
		return;
	if (or_hier_describe(h, buf, sizeof(buf)))
		snprintf(buf + sizeof(buf) - 4, 4, "...");
	or_log(OR_LOG_INFO, "communicator %08x: %s, shared memory %s (%zu-byte chunks)%s", id, buf,
	       h->shm.path, h->shm.chunk,
	       h->net ? ", leads its host on the network" : "");
}
