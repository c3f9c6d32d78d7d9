/*
 * Communicator creation: two out-of-band allgathers.  The first agrees on
 * identity (communicator id, mode, which ranks share a host); the second
 * exchanges endpoint names once every rank has opened its endpoints.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bounded/bounded.h"
#include "internal.h"
#include "topology.h"

#define OR_NAME_MAX 256

struct or_hello {
	uint64_t host; /* hostname and network namespace: same value = same host */
	uint32_t id;   /* proposed communicator id; rank 0's wins */
	uint32_t mode;
};

struct or_names {
	char prov[64];
	uint32_t rdm_len;
	uint32_t dgram_len;
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

/* Namespaces share a hostname, so the network namespace is part of "host". */
static uint64_t host_identity(void)
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

static int exchange_hello(optireduce_comm_t *c, const struct optireduce_oob *oob, int *same_host)
{
	struct or_hello me = {host_identity(), random_id(), (uint32_t)c->mode}, *all;
	int ret;

	all = calloc(c->size, sizeof(*all));
	if (!all)
		return -OPTIREDUCE_ENOMEM;
	ret = oob->allgather(&me, all, sizeof(me), oob->coll_info);
	if (ret) {
		free(all);
		return ret < 0 ? -OPTIREDUCE_EOOB : -OPTIREDUCE_EOOB;
	}
	*same_host = 1;
	for (uint32_t i = 0; i < c->size; i++) {
		if (all[i].host != me.host)
			*same_host = 0;
		if (all[i].mode != me.mode)
			ret = -OPTIREDUCE_EMISMATCH;
	}
	c->id = all[0].id;
	free(all);
	return ret;
}

static int exchange_names(optireduce_comm_t *c, const struct optireduce_oob *oob)
{
	struct or_names me, *all;
	size_t len;
	int ret;

	memset(&me, 0, sizeof(me));
	snprintf(me.prov, sizeof(me.prov), "%s", or_ofi_provider_name(c->rdm));
	len = sizeof(me.rdm);
	ret = or_ofi_getname(c->rdm, me.rdm, &len);
	if (ret)
		return ret;
	me.rdm_len = (uint32_t)len;
	if (c->bounded) {
		len = sizeof(me.dgram);
		ret = or_bounded_getname(c->bounded, me.dgram, &len);
		if (ret)
			return ret;
		me.dgram_len = (uint32_t)len;
	}
	all = calloc(c->size, sizeof(*all));
	if (!all)
		return -OPTIREDUCE_ENOMEM;
	if (oob->allgather(&me, all, sizeof(me), oob->coll_info)) {
		free(all);
		return -OPTIREDUCE_EOOB;
	}
	for (uint32_t i = 0; i < c->size && !ret; i++)
		if (strcmp(all[i].prov, me.prov) != 0) {
			or_log(OR_LOG_WARN, "rank %u chose provider %s, rank %u chose %s", i,
			       all[i].prov, c->rank, me.prov);
			ret = -OPTIREDUCE_EMISMATCH;
		}
	if (!ret)
		ret = or_ofi_av_insert(c->rdm, all[0].rdm, sizeof(all[0]), c->size);
	if (!ret && c->bounded)
		ret = or_bounded_connect(c->bounded, all[0].dgram, sizeof(all[0]));
	free(all);
	return ret;
}

static void comm_free(optireduce_comm_t *c)
{
	or_handle_remove(c);
	or_bounded_destroy(c->bounded);
	or_codec_cache_free(&c->codec_cache);
	or_ofi_close(c->rdm);
	c->magic = OR_MAGIC_DEAD;
	free(c);
}

int optireduce_comm_create(optireduce_ctx_t *ctx, const struct optireduce_comm_attr *attr,
                           optireduce_comm_t **comm)
{
	optireduce_comm_t *c;
	int ret, same_host = 0;

	if (!or_ctx_valid(ctx))
		return -OPTIREDUCE_EBADHANDLE;
	if (!comm || (ret = check_attr(attr)))
		return -OPTIREDUCE_EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c || or_handle_add(c)) {
		free(c);
		return -OPTIREDUCE_ENOMEM;
	}
	c->magic = OR_MAGIC_COMM;
	c->ctx = ctx;
	c->rank = attr->oob.rank;
	c->size = attr->oob.size;
	c->params = ctx->params;
	c->mode = attr->mode != OPTIREDUCE_MODE_DEFAULT
	              ? attr->mode
	              : (or_param_int(&c->params, OR_P_MODE) == 1 ? OPTIREDUCE_MODE_BOUNDED
	                                                          : OPTIREDUCE_MODE_EXACT);
	or_log_set_rank((int)c->rank);
	ret = exchange_hello(c, &attr->oob, &same_host);
	if (!ret)
		ret = or_ofi_open(OR_OFI_RDM, or_param_str(&c->params, OR_P_PROVIDER), same_host,
		                  &c->rdm);
	if (!ret && c->mode == OPTIREDUCE_MODE_BOUNDED)
		ret = or_bounded_create(c, same_host, &c->bounded);
	if (!ret)
		ret = exchange_names(c, &attr->oob);
	if (ret) {
		or_log(OR_LOG_WARN, "communicator creation failed: %s", optireduce_strerror(ret));
		comm_free(c);
		return ret;
	}
	or_log(OR_LOG_INFO, "communicator %08x: %u ranks, mode %s, exact provider %s%s%s", c->id,
	       c->size, c->mode == OPTIREDUCE_MODE_BOUNDED ? "bounded" : "exact",
	       or_ofi_provider_name(c->rdm), c->bounded ? ", bounded provider " : "",
	       c->bounded ? or_bounded_provider(c->bounded) : "");
	/* Here, not in optireduce_init, so the line carries the rank. */
	if (or_log_level >= OR_LOG_INFO && !ctx->topology_logged) {
		char topo[512];
		int tr = or_topology_describe(topo, sizeof(topo));
		ctx->topology_logged = 1;
		if (tr == 0 || tr == -OPTIREDUCE_EOVERFLOW) /* nothing to say without hwloc */
			or_log(OR_LOG_INFO, "topology: %s", topo);
	}
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

const char *optireduce_comm_provider(const optireduce_comm_t *comm, enum optireduce_mode mode)
{
	if (!or_comm_valid(comm))
		return NULL;
	if (mode == OPTIREDUCE_MODE_BOUNDED)
		return comm->bounded ? or_bounded_provider(comm->bounded) : NULL;
	return or_ofi_provider_name(comm->rdm);
}

/* These fix the transport (the bounded channel sizes its buffers by the payload), so they
 * cannot change once it exists: accepting them would be a silent no-op. */
static int creation_only(int id)
{
	/* Read once, when the communicator's channels and controller are built. */
	static const int ids[] = {OR_P_MODE,
	                          OR_P_PROVIDER,
	                          OR_P_BOUNDED_PROVIDER,
	                          OR_P_PACKET_PAYLOAD,
	                          OR_P_TIMEOUT_MIN_US,
	                          OR_P_TIMEOUT_MAX_US,
	                          OR_P_INJECT_SEED,
	                          OR_P_PROGRESS_THREAD,
	                          OR_P_PROGRESS_WAIT,
	                          OR_P_PROGRESS_IDLE_US,
	                          OR_P_SOCKET_RCVBUF,
	                          OR_P_CALIB_OPS,
	                          OR_P_CALIB_PERCENTILE,
	                          OR_P_CALIB_MARGIN,
	                          OR_P_EARLY_FRACTION,
	                          OR_P_EARLY_TIMEOUT,
	                          OR_P_ABSENT_FACTOR,
	                          OR_P_BACKOFF_AFTER_US};

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
