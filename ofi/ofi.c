/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Endpoint set-up over libfabric; which of libfabric's candidates to open is
 * choose.c's, data movement is in xfer.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "load.h"
#include "ofi_int.h"
#include "optireduce.h"

#define OR_FI_VERSION FI_VERSION(1, 9)
/* Registration modes the datagram channel honours: local registration of memory it
 * allocated, with the provider's keys and virtual addresses.  FI_MR_ENDPOINT (binding each
 * region to the endpoint) and the RMA modes are not needed by any datagram provider. */
#define OR_DGRAM_MR_MODES (FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR)

int or_fi_to_or(int ret)
{
	if (ret >= 0)
		return ret;
	switch (-ret) {
	case FI_EAGAIN:
		return -OPTIREDUCE_EAGAIN;
	case FI_ENOMEM:
		return -OPTIREDUCE_ENOMEM;
	case FI_EINVAL:
		return -OPTIREDUCE_EINVAL;
	case FI_EMSGSIZE:
		return -OPTIREDUCE_EMSGSIZE;
	case FI_ETIMEDOUT:
		return -OPTIREDUCE_ETIMEDOUT;
	case FI_ECANCELED:
		return -OPTIREDUCE_ECANCELED;
	case FI_ENODATA:
		return -OPTIREDUCE_ENOPROVIDER;
	case FI_ECONNREFUSED:
	case FI_ECONNRESET:
	case FI_ECONNABORTED:
	case FI_EHOSTUNREACH:
	case FI_ENOTCONN:
	case FI_ESHUTDOWN:
		return -OPTIREDUCE_EPEER;
	default:
		return -OPTIREDUCE_EFABRIC;
	}
}
static struct fi_info *make_hints(enum or_ofi_kind kind, const char *prov, int source,
                                  int multicast)
{
	struct fi_info *h = fi_dupinfo(NULL); /* fi_allocinfo, through the opened library */
	if (!h)
		return NULL;
	if (kind == OR_OFI_RDM) {
		h->ep_attr->type = FI_EP_RDM;
		h->caps = FI_TAGGED | FI_MSG | FI_DIRECTED_RECV;
	} else {
		h->ep_attr->type = FI_EP_DGRAM;
		h->caps = FI_MSG | (source ? FI_SOURCE : 0) | (multicast ? FI_MULTICAST : 0);
	}
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->domain_attr->threading = FI_THREAD_DOMAIN;
	h->domain_attr->mr_mode = 0;
	/* The datagram channel's buffers are its own pools: it can give every one prefix room
	 * and register them (docs/design.md, "Datagram providers"). */
	if (kind == OR_OFI_DGRAM) {
		h->mode |= FI_MSG_PREFIX;
		h->domain_attr->mr_mode = OR_DGRAM_MR_MODES;
	}
	if (prov && *prov)
		h->fabric_attr->prov_name = strdup(prov);
	return h;
}

#define OR_MAX_TRIES 16

/*
 * The providers for kind.  Datagram endpoints are asked for FI_SOURCE, so that a datagram from
 * an address outside the communicator can be told apart; a provider without it still serves
 * (*source = 0), and the header checks are then all there is.  With *multicast they are asked
 * for FI_MULTICAST first (docs/design.md, "Multicast"); *multicast is 0 when none offers it.
 */
static int get_list(enum or_ofi_kind kind, const char *prov, struct fi_info **list, int *source,
                    int *multicast)
{
	int ret = -FI_ENODATA;

	/* No libfabric to open reads as no provider. */
	if (or_fi_load())
		return ret;
	for (; *multicast >= 0; --*multicast) {
		for (*source = kind == OR_OFI_DGRAM; *source >= 0; --*source) {
			struct fi_info *hints = make_hints(kind, prov, *source, *multicast);
			if (!hints)
				return -FI_ENOMEM;
			ret = or_fi_getinfo_cached(OR_FI_VERSION, hints, list);
			fi_freeinfo(hints);
			if (ret != -FI_ENODATA)
				break;
		}
		if (ret != -FI_ENODATA)
			break;
	}
	if (*source < 0)
		*source = 0;
	if (*multicast < 0)
		*multicast = 0;
	return ret;
}

static int open_cq(struct or_ofi *o)
{
	struct fi_cq_attr attr = {
	    .format = FI_CQ_FORMAT_MSG,
	    .wait_obj = FI_WAIT_UNSPEC,
	    .size = 4096,
	};
	int ret = fi_cq_open(o->domain, &attr, &o->cq, NULL);
	if (ret == 0) {
		o->can_wait = 1;
		return 0;
	}
	attr.wait_obj = FI_WAIT_NONE;
	o->can_wait = 0;
	return fi_cq_open(o->domain, &attr, &o->cq, NULL);
}

static int open_info(struct or_ofi *o, struct fi_info *fi)
{
	struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
	int ret;

	o->info = fi_dupinfo(fi);
	if (!o->info)
		return -FI_ENOMEM;
	ret = fi_fabric(o->info->fabric_attr, &o->fabric, NULL);
	if (!ret)
		ret = fi_domain(o->fabric, o->info, &o->domain, NULL);
	if (!ret)
		ret = fi_av_open(o->domain, &av_attr, &o->av, NULL);
	if (!ret)
		ret = open_cq(o);
	if (!ret)
		ret = fi_endpoint(o->domain, o->info, &o->ep, NULL);
	if (!ret)
		ret = fi_ep_bind(o->ep, &o->av->fid, 0);
	if (!ret)
		ret = fi_ep_bind(o->ep, &o->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_enable(o->ep);
	return ret;
}

/* The multicast group's endpoint (group.c) closes with the endpoint it was joined beside. */
void or_ofi_group_leave(struct or_ofi *o)
{
	if (!o)
		return;
	if (o->gmc)
		fi_close(&o->gmc->fid);
	if (o->gep)
		fi_close(&o->gep->fid);
	if (o->geq)
		fi_close(&o->geq->fid);
	o->gmc = NULL;
	o->gep = NULL;
	o->geq = NULL;
	o->gaddr = 0;
}

static void close_fids(struct or_ofi *o)
{
	or_ofi_group_leave(o);
	if (o->ep)
		fi_close(&o->ep->fid);
	if (o->cq)
		fi_close(&o->cq->fid);
	for (unsigned i = 0; i < o->nmr; i++)
		fi_close(&o->mr[i].mr->fid);
	if (o->av)
		fi_close(&o->av->fid);
	if (o->domain)
		fi_close(&o->domain->fid);
	if (o->fabric)
		fi_close(&o->fabric->fid);
	if (o->info)
		fi_freeinfo(o->info);
	free(o->addrs);
	memset(o, 0, sizeof(*o));
}

/* The prefix and registration the provider asks for, or the emulated ones. */
static void take_modes(struct or_ofi *o, int emulate)
{
	if (o->kind != OR_OFI_DGRAM)
		return;
	if (o->info->mode & FI_MSG_PREFIX)
		o->prefix = o->info->ep_attr->msg_prefix_size;
	o->need_mr = (o->info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
	if (emulate && !o->prefix) {
		o->prefix = OR_OFI_EMULATED_PREFIX;
		o->prefix_emulated = 1;
	}
	if (emulate)
		o->need_mr = 1;
}

int or_ofi_open(enum or_ofi_kind kind, const struct or_ofi_want *want, struct or_ofi **out)
{
	struct fi_info *list = NULL, *fi, *failed[OR_MAX_TRIES];
	struct or_ofi *o;
	int ret, nfailed = 0, source, multicast;

	if (!want || !out || (kind != OR_OFI_RDM && kind != OR_OFI_DGRAM))
		return -OPTIREDUCE_EINVAL;
	multicast = kind == OR_OFI_DGRAM && want->multicast;
	ret = get_list(kind, want->provider, &list, &source, &multicast);
	if (ret)
		return ret == -FI_ENODATA ? -OPTIREDUCE_ENOPROVIDER : or_fi_to_or(ret);
	o = calloc(1, sizeof(*o));
	if (!o) {
		fi_freeinfo(list);
		return -OPTIREDUCE_ENOMEM;
	}
	o->sock_fd = -2;
	/* Try the best candidate; if it fails to open, drop it and try the next. */
	for (;;) {
		fi = nfailed < OR_MAX_TRIES ? or_ofi_choose(list, kind, want, failed, nfailed)
		                            : NULL;
		if (!fi) {
			ret = -FI_ENODATA;
			break;
		}
		ret = open_info(o, fi);
		if (!ret)
			break;
		close_fids(o);
		failed[nfailed++] = fi;
	}
	fi_freeinfo(list);
	if (ret) {
		free(o);
		return ret == -FI_ENODATA ? -OPTIREDUCE_ENOPROVIDER : or_fi_to_or(ret);
	}
	o->kind = kind;
	o->has_source = source;
	o->multicast = multicast && (o->info->caps & FI_MULTICAST);
	take_modes(o, want->emulate_modes);
	snprintf(o->prov_name, sizeof(o->prov_name), "%s", o->info->fabric_attr->prov_name);
	*out = o;
	return 0;
}

/* What a provider's info asks that the channel of kind does not do, or NULL. */
static const char *unmet_need(const struct fi_info *fi, enum or_ofi_kind kind)
{
	uint64_t mr = (uint64_t)fi->domain_attr->mr_mode;
	uint64_t modes = kind == OR_OFI_DGRAM ? FI_CONTEXT | FI_CONTEXT2 | FI_MSG_PREFIX
	                                      : FI_CONTEXT | FI_CONTEXT2;
	uint64_t mr_ok = kind == OR_OFI_DGRAM ? OR_DGRAM_MR_MODES : 0;

	if (mr & FI_MR_LOCAL & ~mr_ok)
		return "local memory registration (FI_MR_LOCAL), which exact mode does not do: it "
		       "sends from the application's buffers";
	if (fi->mode & FI_MSG_PREFIX & ~modes)
		return "a message prefix (FI_MSG_PREFIX), which exact mode does not give";
	if (mr & ~mr_ok & ~(uint64_t)FI_MR_LOCAL)
		return "memory registration modes the library does not honour (e.g. "
		       "FI_MR_ENDPOINT)";
	if (fi->mode & ~modes)
		return "endpoint modes the library does not honour";
	return NULL;
}

int or_ofi_explain(enum or_ofi_kind kind, const char *provider, char *buf, size_t len)
{
	struct fi_info *hints, *list = NULL;
	const char *why = NULL;
	int ret;

	if (!provider || !*provider || !buf || !len || or_fi_load())
		return -OPTIREDUCE_ENOPROVIDER;
	hints = make_hints(kind, provider, 0, 0);
	if (!hints)
		return -OPTIREDUCE_ENOMEM;
	/* Every mode and registration mode allowed: what does the provider need? Not cached:
	 * the cache is keyed by endpoint type, capabilities and provider, not by modes. */
	hints->mode = ~0ull;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_RAW | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
	                              FI_MR_PROV_KEY | FI_MR_MMU_NOTIFY | FI_MR_RMA_EVENT |
	                              FI_MR_ENDPOINT | FI_MR_HMEM;
	ret = fi_getinfo(OR_FI_VERSION, NULL, NULL, 0, hints, &list);
	fi_freeinfo(hints);
	for (struct fi_info *fi = ret ? NULL : list; fi && !why; fi = fi->next)
		why = unmet_need(fi, kind);
	if (list)
		fi_freeinfo(list);
	if (!why)
		return -OPTIREDUCE_ENOPROVIDER;
	snprintf(buf, len, "provider %s offers %s endpoints only with %s", provider,
	         kind == OR_OFI_RDM ? "reliable (RDM)" : "datagram", why);
	return 0;
}

size_t or_ofi_prefix(const struct or_ofi *o)
{
	return o->prefix;
}

int or_ofi_registers(const struct or_ofi *o)
{
	return o->need_mr;
}

int or_ofi_register(struct or_ofi *o, void *base, size_t len)
{
	struct or_ofi_mr *m;
	int ret;

	if (!o->need_mr)
		return 0;
	if (o->nmr >= OR_OFI_MR_MAX)
		return -OPTIREDUCE_ENOMEM;
	m = &o->mr[o->nmr];
	/* The requested key matters only without FI_MR_PROV_KEY: distinct per region. */
	ret = fi_mr_reg(o->domain, base, len, FI_SEND | FI_RECV, 0, o->nmr + 1, 0, &m->mr, NULL);
	if (ret)
		return or_fi_to_or(ret);
	m->base = base;
	m->len = len;
	m->desc = fi_mr_desc(m->mr);
	o->nmr++;
	return 0;
}

void or_ofi_close(struct or_ofi *o)
{
	if (!o)
		return;
	close_fids(o);
	free(o);
}

const char *or_ofi_provider_name(const struct or_ofi *o)
{
	return o ? o->prov_name : "none";
}

const char *or_ofi_domain_name(const struct or_ofi *o)
{
	return o && o->info->domain_attr && o->info->domain_attr->name ? o->info->domain_attr->name
	                                                               : "none";
}

/* A provider's own prefix does not count toward max_msg_size; an emulated one does, as it
 * travels in the datagram. */
size_t or_ofi_max_msg(const struct or_ofi *o)
{
	size_t max = o->info->ep_attr->max_msg_size;

	return o->prefix_emulated ? (max > o->prefix ? max - o->prefix : 0) : max;
}

size_t or_ofi_rx_depth(const struct or_ofi *o)
{
	return o->info->rx_attr ? o->info->rx_attr->size : 0;
}

int or_ofi_getname(struct or_ofi *o, void *buf, size_t *len)
{
	return or_fi_to_or(fi_getname(&o->ep->fid, buf, len));
}

int or_ofi_av_insert(struct or_ofi *o, const void *names, size_t stride, uint32_t n)
{
	o->addrs = calloc(n, sizeof(*o->addrs));
	if (!o->addrs)
		return -OPTIREDUCE_ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		int ret = fi_av_insert(o->av, (const char *)names + (size_t)i * stride, 1,
		                       &o->addrs[i], 0, NULL);
		if (ret != 1)
			return ret < 0 ? or_fi_to_or(ret) : -OPTIREDUCE_EFABRIC;
	}
	o->naddrs = n;
	o->av_identity = 1;
	for (uint32_t i = 0; i < n; i++)
		o->av_identity &= o->addrs[i] == i;
	return 0;
}

int or_ofi_wait_fd(struct or_ofi *o)
{
	enum fi_wait_obj obj;
	int fd = -1;

	if (!o->can_wait || o->closed || fi_control(&o->cq->fid, FI_GETWAITOBJ, &obj) ||
	    obj != FI_WAIT_FD)
		return -1;
	if (fi_control(&o->cq->fid, FI_GETWAIT, &fd) || fd < 0)
		return -1;
	return fd;
}

int or_ofi_trywait(struct or_ofi *o)
{
	struct fid *cq;

	if (o->closed)
		return 0;
	cq = &o->cq->fid;
	return or_fi_to_or(fi_trywait(o->fabric, &cq, 1));
}

int or_ofi_list(enum or_ofi_kind kind, or_ofi_list_cb cb, void *arg)
{
	struct fi_info *list = NULL;
	int ret, source, multicast = 0;

	ret = get_list(kind, NULL, &list, &source, &multicast);
	if (ret)
		return ret == -FI_ENODATA ? 0 : or_fi_to_or(ret);
	for (struct fi_info *fi = list; fi; fi = fi->next)
		cb(fi->fabric_attr->prov_name, fi->fabric_attr->name, fi->domain_attr->name,
		   fi->ep_attr->max_msg_size, arg);
	fi_freeinfo(list);
	return 0;
}

/* Providers that move datagrams through the kernel's sockets: the kernel path does better. */
static int over_sockets(const char *prov)
{
	static const char *const names[] = {"udp", "sockets", "net", "tcp", "shm", "sm2"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(prov, names[i], strlen(names[i])))
			return 1;
	return 0;
}

/* Whether the comma-separated list names the domain or its device ("mlx5_0" for
 * "mlx5_0-dgram"), or is empty. */
static int domain_listed(const char *domains, const char *domain)
{
	if (!domains || !*domains)
		return 1;
	for (const char *p = domains; *p;) {
		size_t len = strcspn(p, ",");
		if (len && !strncmp(domain, p, len) && (domain[len] == '\0' || domain[len] == '-'))
			return 1;
		p += len + (p[len] == ',');
	}
	return 0;
}

int or_ofi_device_dgram(const char *domains, char *buf, size_t len)
{
	struct fi_info *list = NULL;
	int source = 0, multicast = 0, found = 0;

	if (get_list(OR_OFI_DGRAM, NULL, &list, &source, &multicast))
		return 0;
	for (struct fi_info *fi = list; fi && !found; fi = fi->next) {
		const char *prov = fi->fabric_attr->prov_name;
		if (over_sockets(prov) || !domain_listed(domains, fi->domain_attr->name))
			continue;
		snprintf(buf, len, "%s on %s", prov, fi->domain_attr->name);
		found = 1;
	}
	fi_freeinfo(list);
	return found;
}

const char *or_ofi_libfabric_version(void)
{
	static char buf[32];
	uint32_t v;

	if (or_fi_load())
		return "not found";
	v = fi_version();
	snprintf(buf, sizeof(buf), "%u.%u", FI_MAJOR(v), FI_MINOR(v));
	return buf;
}
