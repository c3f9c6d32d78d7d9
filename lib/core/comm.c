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

struct or_hello {
	uint64_t host;    /* same value = same host: machine, or the host_id parameter */
	uint64_t machine; /* hostname and network namespace: which addresses reach a peer */
	uint32_t id;      /* proposed communicator id; rank 0's wins */
	uint32_t mode;
	uint32_t pid;       /* names the host's shared segment when this rank leads it */
	uint32_t hierarchy; /* the parameters every rank must agree on */
	uint64_t shm_chunk;
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

/* The host layout first: it is above the building blocks (comm_build.c), which free the rest. */
static void comm_free(optireduce_comm_t *c)
{
	if (c) {
		or_hier_destroy(c->hier);
		c->hier = NULL;
	}
	or_comm_free(c);
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
		comm_free(c);
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
	comm_free(comm);
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
