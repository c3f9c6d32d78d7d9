/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communicator creation: out-of-band allgathers.  The first agrees on identity
 * (communicator id, mode, which ranks share a host); the second exchanges endpoint
 * names once every rank has opened its endpoints, and every rank's outcome, so that
 * all fail together.  Ranks that share a host go through lib/hier/layout.c, which adds one.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/bounded/bounded.h"
#include "internal.h"
#include "multicast.h"
#include "lib/topo/topology.h"
#include "lib/op/wake.h"

#define OR_NAME_MAX 256

struct or_hello {
	uint64_t host;    /* same value = same host: machine, or the host_id parameter */
	uint64_t machine; /* hostname and network namespace: which addresses reach a peer */
	uint32_t id;      /* proposed communicator id; rank 0's wins */
	uint32_t mode;
	uint32_t pid;       /* names the host's shared segment when this rank leads it */
	uint32_t hierarchy; /* the parameters every rank must agree on */
	uint64_t shm_chunk;
};

struct or_names {
	char prov[64];
	int32_t status; /* 0, or this rank's error: then every rank fails together */
	uint32_t rdm_len;
	uint32_t dgram_len;
	uint32_t mcast; /* or_bounded_mcast_state(): 0 without a bounded channel */
	uint8_t rdm[OR_NAME_MAX];
	uint8_t dgram[OR_NAME_MAX];
};

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* Namespaces share a hostname, so the network namespace is part of the machine. */
static uint64_t machine_identity(void)
{
	char name[256] = "";
	struct stat st;
	uint64_t h = 0xcbf29ce484222325ull;

	gethostname(name, sizeof(name) - 1);
	h = fnv1a(h, name, strlen(name));
	if (stat("/proc/self/ns/net", &st) == 0)
		h = fnv1a(h, &st.st_ino, sizeof(st.st_ino));
	return h;
}

/* The host_id parameter replaces the machine: tests give ranks of one machine distinct
 * hosts with it. */
static uint64_t host_identity(const struct or_params *p)
{
	const char *forced = or_param_str(p, OR_P_HOST_ID);
	uint64_t h = 0xcbf29ce484222325ull;

	if (forced && *forced)
		return fnv1a(fnv1a(h, "host_id", 7), forced, strlen(forced));
	return machine_identity();
}

static uint32_t random_id(void)
{
	return (uint32_t)fnv1a(fnv1a(0xcbf29ce484222325ull, &(pid_t){getpid()}, sizeof(pid_t)),
	                       &(double){or_now_us()}, sizeof(double));
}

static int check_attr(const struct optireduce_comm_attr *a)
{
	if (!a || !a->oob.allgather || a->oob.size == 0 || a->oob.rank >= a->oob.size)
		return -OPTIREDUCE_EINVAL;
	if (a->mode != OPTIREDUCE_MODE_DEFAULT && a->mode != OPTIREDUCE_MODE_EXACT &&
	    a->mode != OPTIREDUCE_MODE_BOUNDED)
		return -OPTIREDUCE_EINVAL;
	return 0;
}

/* On success *out is every rank's hello, the caller's to free. */
static int exchange_hello(optireduce_comm_t *c, const struct optireduce_oob *oob,
                          struct or_hello **out)
{
	struct or_hello me = {host_identity(&c->params),
	                      machine_identity(),
	                      random_id(),
	                      (uint32_t)c->mode,
	                      (uint32_t)getpid(),
	                      (uint32_t)or_param_int(&c->params, OR_P_HIERARCHY),
	                      (uint64_t)or_param_int(&c->params, OR_P_SHM_CHUNK)};
	struct or_hello *all;
	int ret;

	all = calloc(c->size, sizeof(*all));
	if (!all)
		return -OPTIREDUCE_ENOMEM;
	if (oob->allgather(&me, all, sizeof(me), oob->coll_info)) {
		free(all);
		return -OPTIREDUCE_EOOB;
	}
	ret = 0;
	for (uint32_t i = 0; i < c->size; i++)
		if (all[i].mode != me.mode || all[i].hierarchy != me.hierarchy ||
		    all[i].shm_chunk != me.shm_chunk)
			ret = -OPTIREDUCE_EMISMATCH;
	c->id = all[0].id;
	*out = all;
	return ret;
}

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
	or_hier_destroy(c->hier);
	or_bounded_destroy(c->bounded);
	or_codec_cache_free(&c->codec_cache);
	or_measure_free(c);
	or_ofi_close(c->rdm);
	or_wake_free(c->wake);
	c->magic = OR_MAGIC_DEAD;
	free(c);
}

/* Every rank on one host and network namespace, or each on its own: today's transport. */
static int create_flat(optireduce_comm_t *c, const struct optireduce_oob *oob,
                       const struct or_hello *all)
{
	int same_host = 1, ret;
	double t0 = or_now_us(), t1;

	for (uint32_t i = 0; i < c->size; i++)
		if (all[i].machine != all[c->rank].machine)
			same_host = 0;
	ret = or_comm_open_channels(c, same_host);
	t1 = or_now_us();
	ret = or_comm_exchange_names(c, oob, NULL, ret);
	or_log(OR_LOG_DEBUG, "endpoints opened in %.1f ms, names exchanged in %.1f ms",
	       (t1 - t0) / 1e3, (or_now_us() - t1) / 1e3);
	return ret;
}

static int create_transport(optireduce_comm_t *c, const struct optireduce_oob *oob,
                            const struct or_hello *all)
{
	uint64_t *hosts = calloc(c->size, sizeof(*hosts));
	uint32_t *pids = calloc(c->size, sizeof(*pids));
	int ret = hosts && pids ? 0 : -OPTIREDUCE_ENOMEM, one_machine = 1;

	for (uint32_t i = 0; !ret && i < c->size; i++) {
		hosts[i] = all[i].host;
		pids[i] = all[i].pid;
		one_machine &= all[i].machine == all[0].machine;
	}
	if (!ret && all[0].hierarchy && or_hier_wanted(hosts, c->size))
		ret = or_hier_create(c, oob, hosts, pids, one_machine);
	else if (!ret)
		ret = create_flat(c, oob, all);
	free(hosts);
	free(pids);
	return ret;
}

static void log_created(optireduce_ctx_t *ctx, optireduce_comm_t *c)
{
	optireduce_comm_t *net = c->hier ? or_hier_net(c->hier) : c;

	or_log(OR_LOG_INFO, "communicator %08x: %u ranks, mode %s, exact provider %s%s%s%s%s%s%s",
	       c->id, c->size, c->mode == OPTIREDUCE_MODE_BOUNDED ? "bounded" : "exact",
	       net                                         ? or_ofi_provider_name(net->rdm)
	       : c->hier && or_hier_net_hosts(c->hier) > 1 ? "its host leader's"
	                                                   : "none (one host)",
	       net ? " on " : "", net ? or_ofi_domain_name(net->rdm) : "",
	       net && net->bounded ? ", bounded provider " : "",
	       net && net->bounded ? or_bounded_provider(net->bounded) : "",
	       net && net->bounded ? " on " : "",
	       net && net->bounded ? or_bounded_domain(net->bounded) : "");
	if (c->hier)
		or_hier_log(c->hier, c->id);
	if (net && net->placed && or_log_level >= OR_LOG_INFO) {
		char place[2 * OR_PLACE_WHY + 8];
		or_placement_describe(&net->place, place, sizeof(place));
		or_log(OR_LOG_INFO, "placement: %s", place);
	}
	/* Here, not in optireduce_init, so the line carries the rank. */
	if (or_log_level >= OR_LOG_INFO && !ctx->topology_logged) {
		char topo[512];
		int tr = or_topology_describe(topo, sizeof(topo));
		ctx->topology_logged = 1;
		if (tr == 0 || tr == -OPTIREDUCE_EOVERFLOW) /* nothing to say without hwloc */
			or_log(OR_LOG_INFO, "topology: %s", topo);
	}
}

int optireduce_comm_create(optireduce_ctx_t *ctx, const struct optireduce_comm_attr *attr,
                           optireduce_comm_t **comm)
{
	struct or_hello *all = NULL;
	optireduce_comm_t *c;
	int ret;

	if (!or_ctx_valid(ctx))
		return -OPTIREDUCE_EBADHANDLE;
	if (!comm || (ret = check_attr(attr)))
		return -OPTIREDUCE_EINVAL;
	c = or_comm_alloc(ctx, attr->oob.rank, attr->oob.size);
	if (!c)
		return -OPTIREDUCE_ENOMEM;
	c->mode = attr->mode != OPTIREDUCE_MODE_DEFAULT
	              ? attr->mode
	              : (or_param_int(&c->params, OR_P_MODE) == 1 ? OPTIREDUCE_MODE_BOUNDED
	                                                          : OPTIREDUCE_MODE_EXACT);
	or_log_set_rank((int)c->rank);
	ret = exchange_hello(c, &attr->oob, &all);
	if (!ret)
		ret = create_transport(c, &attr->oob, all);
	free(all);
	if (ret) {
		or_log(OR_LOG_WARN, "communicator creation failed: %s", optireduce_strerror(ret));
		or_comm_free(c);
		return ret;
	}
	log_created(ctx, c);
	ctx->ncomms++;
	*comm = c;
	return 0;
}

int optireduce_comm_destroy(optireduce_comm_t *comm)
{
	if (!or_comm_valid(comm))
		return -OPTIREDUCE_EBADHANDLE;
	if (comm->head)
		return -OPTIREDUCE_EBUSY;
	if (comm->hier && or_hier_busy(comm->hier))
		return -OPTIREDUCE_EBUSY;
	comm->ctx->ncomms--;
	or_comm_free(comm);
	return 0;
}

int optireduce_comm_rank(const optireduce_comm_t *comm)
{
	return or_comm_valid(comm) ? (int)comm->rank : -OPTIREDUCE_EBADHANDLE;
}

int optireduce_comm_size(const optireduce_comm_t *comm)
{
	return or_comm_valid(comm) ? (int)comm->size : -OPTIREDUCE_EBADHANDLE;
}

/* These fix the transport (the bounded channel sizes its buffers by the payload), so they
 * cannot change once it exists: accepting them would be a silent no-op. */
static int creation_only(int id)
{
	/* Read once, when the communicator's channels and controller are built. */
	static const int ids[] = {OR_P_MODE,
	                          OR_P_PROVIDER,
	                          OR_P_BOUNDED_PROVIDER,
	                          OR_P_IFACE,
	                          OR_P_EMULATE_DGRAM_MODES,
	                          OR_P_HIERARCHY,
	                          OR_P_HOST_ID,
	                          OR_P_SHM_CHUNK,
	                          OR_P_PACKET_PAYLOAD,
	                          OR_P_TIMEOUT_MIN_US,
	                          OR_P_TIMEOUT_MAX_US,
	                          OR_P_INJECT_SEED,
	                          OR_P_PROGRESS_THREAD,
	                          OR_P_PROGRESS_WAIT,
	                          OR_P_PROGRESS_IDLE_US,
	                          OR_P_PROGRESS_BIND,
	                          OR_P_SOCKET_RCVBUF,
	                          OR_P_SOCKET_SNDBUF,
	                          OR_P_SEND_QUEUE_US,
	                          OR_P_QUEUE_HOLD_US,
	                          OR_P_CALIB_OPS,
	                          OR_P_CALIB_PERCENTILE,
	                          OR_P_CALIB_MARGIN,
	                          OR_P_CALIB_SLACK_US,
	                          OR_P_EARLY_FRACTION,
	                          OR_P_EARLY_TIMEOUT,
	                          OR_P_ABSENT_FACTOR,
	                          OR_P_BACKOFF_AFTER_US,
	                          OR_P_LOSS_BUDGET,
	                          OR_P_MULTICAST,
	                          OR_P_MULTICAST_RANGE,
	                          OR_P_MULTICAST_PROBE_MS};

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

int optireduce_comm_set_param(optireduce_comm_t *comm, const char *name, const char *value)
{
	int id;

	if (!or_comm_valid(comm))
		return -OPTIREDUCE_EBADHANDLE;
	id = or_params_find(name);
	if (id < 0)
		return id;
	if (creation_only(id))
		return -OPTIREDUCE_EBUSY;
	/* The leaders' communicator runs the network step with the same parameters. */
	if (comm->hier && comm->hier->net) {
		int ret = or_params_set(&comm->hier->net->params, name, value, OPTIREDUCE_PARAM_API,
		                        or_select_check_param);
		if (ret)
			return ret;
	}
	return or_params_set(&comm->params, name, value, OPTIREDUCE_PARAM_API,
	                     or_select_check_param);
}

int optireduce_comm_get_param(optireduce_comm_t *comm, const char *name, char *value, size_t len,
                              enum optireduce_param_source *source)
{
	int id;

	if (!or_comm_valid(comm))
		return -OPTIREDUCE_EBADHANDLE;
	id = or_params_find(name);
	if (id < 0)
		return id;
	if (!value || len == 0)
		return -OPTIREDUCE_EINVAL;
	if (strlen(comm->params.v[id].s) >= len)
		return -OPTIREDUCE_EOVERFLOW;
	strcpy(value, comm->params.v[id].s);
	if (source)
		*source = comm->params.v[id].source;
	return 0;
}
