/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communicator building blocks, shared by communicator creation (comm.c) and the host
 * layout (lib/hier/layout.c), which builds the leaders' communicator with them: allocate,
 * open the channels, exchange endpoint names, free.  Nothing here knows of hosts, so that
 * lib/hier/ sits above these and comm.c above both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/bounded/bounded.h"
#include "internal.h"
#include "multicast.h"
#include "lib/topo/topology.h"
#include "lib/op/wake.h"

#define OR_NAME_MAX 256

struct or_names {
	char prov[64];
	int32_t status; /* 0, or this rank's error: then every rank fails together */
	uint32_t rdm_len;
	uint32_t dgram_len;
	uint32_t mcast; /* or_bounded_mcast_state(): 0 without a bounded channel */
	uint8_t rdm[OR_NAME_MAX];
	uint8_t dgram[OR_NAME_MAX];
};

static int fill_names(optireduce_comm_t *net, struct or_names *me)
{
	size_t len;
	int ret;

	snprintf(me->prov, sizeof(me->prov), "%s", or_ofi_provider_name(net->rdm));
	len = sizeof(me->rdm);
	ret = or_ofi_getname(net->rdm, me->rdm, &len);
	if (ret)
		return ret;
	me->rdm_len = (uint32_t)len;
	if (net->bounded) {
		len = sizeof(me->dgram);
		ret = or_bounded_getname(net->bounded, me->dgram, &len);
		if (ret)
			return ret;
		me->dgram_len = (uint32_t)len;
		me->mcast = or_bounded_mcast_state(net->bounded);
	}
	return 0;
}

/* The members' names, in member order, into net's address vectors. */
static int connect_members(optireduce_comm_t *net, const struct or_names *all,
                           const uint32_t *members)
{
	struct or_names *sel = calloc(net->size, sizeof(*sel));
	int ret = 0;

	if (!sel)
		return -OPTIREDUCE_ENOMEM;
	for (uint32_t i = 0; i < net->size; i++)
		sel[i] = all[members ? members[i] : i];
	for (uint32_t i = 0; i < net->size && !ret; i++)
		if (strcmp(sel[i].prov, sel[net->rank].prov) != 0) {
			or_log(OR_LOG_WARN, "rank %u chose provider %s, rank %u chose %s", i,
			       sel[i].prov, net->rank, sel[net->rank].prov);
			ret = -OPTIREDUCE_EMISMATCH;
		}
	if (!ret)
		ret = or_ofi_av_insert(net->rdm, sel[0].rdm, sizeof(sel[0]), net->size);
	if (!ret && net->bounded)
		ret = or_bounded_connect(net->bounded, sel[0].dgram, sizeof(sel[0]));
	free(sel);
	return ret;
}

/* Whether the bounded channel multicasts, decided by every rank alike (lib/core/multicast.c). */
static int agree_multicast(optireduce_comm_t *net, const struct optireduce_oob *oob,
                           const struct or_names *all, int ret)
{
	uint8_t *state = calloc(oob->size, 1);

	if (!state)
		return -OPTIREDUCE_ENOMEM;
	for (uint32_t i = 0; i < oob->size; i++)
		state[i] = (uint8_t)all[i].mcast;
	ret = or_mcast_agree(net, oob, state, ret);
	free(state);
	return ret;
}

int or_comm_exchange_names(optireduce_comm_t *net, const struct optireduce_oob *oob,
                           const uint32_t *members, int status)
{
	struct or_names me, *all;
	int ret = status;

	memset(&me, 0, sizeof(me));
	if (!ret && net)
		ret = fill_names(net, &me);
	me.status = ret;
	all = calloc(oob->size, sizeof(*all));
	if (!all)
		return -OPTIREDUCE_ENOMEM; /* the peers wait in the allgather: as with a crash */
	if (oob->allgather(&me, all, sizeof(me), oob->coll_info)) {
		free(all);
		return -OPTIREDUCE_EOOB;
	}
	for (uint32_t i = 0; i < oob->size && !ret; i++)
		if (all[i].status < 0)
			ret = all[i].status;
	if (!ret && net)
		ret = connect_members(net, all, members);
	ret = agree_multicast(net, oob, all, ret);
	free(all);
	return ret;
}

optireduce_comm_t *or_comm_alloc(optireduce_ctx_t *ctx, uint32_t rank, uint32_t size)
{
	optireduce_comm_t *c = calloc(1, sizeof(*c));

	if (c)
		c->wake = or_wake_new();
	if (!c || !c->wake || or_handle_add(c)) {
		if (c)
			or_wake_free(c->wake);
		free(c);
		return NULL;
	}
	c->magic = OR_MAGIC_COMM;
	c->ctx = ctx;
	c->rank = rank;
	c->size = size;
	c->params = ctx->params;
	c->choose = or_select_algorithm;
	c->record = or_measure_record;
	return c;
}

/* Why no exact endpoint opened, when the user's provider or device explains it. */
static void explain_open(const optireduce_comm_t *c, const char *prov)
{
	char why[256];

	if (or_ofi_explain(OR_OFI_RDM, prov, why, sizeof(why)) == 0)
		or_log(OR_LOG_WARN, "%s: choose another for exact mode (parameter provider)", why);
	else if (c->place.nic.only)
		or_placement_warn_unoffered(&c->place.nic, "exact");
}

int or_comm_open_channels(optireduce_comm_t *c, int same_host)
{
	struct or_ofi_want want = {
	    or_param_str(&c->params, OR_P_PROVIDER), NULL, 0, same_host, 0, 0};
	int ret;

	/* docs/design.md, "Placement": the core decides, ofi/ and the channel are told. */
	or_placement_decide(&c->ctx->topo, or_param_str(&c->params, OR_P_IFACE),
	                    (int)or_param_int(&c->params, OR_P_PROGRESS_BIND), &c->place);
	c->placed = 1;
	want.domains = c->place.nic.names;
	want.domains_only = c->place.nic.only;
	ret = or_ofi_open(OR_OFI_RDM, &want, &c->rdm);
	if (ret == -OPTIREDUCE_ENOPROVIDER)
		explain_open(c, want.provider);
	if (!ret && c->mode == OPTIREDUCE_MODE_BOUNDED)
		ret = or_bounded_create(c, same_host, &c->bounded);
	return ret;
}

void or_comm_free(optireduce_comm_t *c)
{
	if (!c)
		return;
	or_handle_remove(c);
	or_bounded_destroy(c->bounded);
	or_codec_cache_free(&c->codec_cache);
	or_measure_free(c);
	or_ofi_close(c->rdm);
	or_wake_free(c->wake);
	c->magic = OR_MAGIC_DEAD;
	free(c);
}
