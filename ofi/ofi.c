/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Endpoint set-up and data movement over libfabric.
 *
 * Provider choice for RDM: shared memory when every rank shares this host and
 * network namespace, else tcp;ofi_rxm, else net, else whatever libfabric
 * offers except "sockets" (unmaintained) and layered-over-UDP providers.
 * For DGRAM the default is udp.  OPTIREDUCE_PROVIDER overrides both.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "load.h"
#include "ofi.h"
#include "optireduce.h"

#define OR_FI_VERSION FI_VERSION(1, 9)
#define OR_CQ_BATCH   64

struct or_ofi {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t *addrs;
	uint32_t naddrs;
	int can_wait;    /* the CQ has a wait object: fi_cq_sread blocks in the kernel */
	int has_source;  /* DGRAM with FI_SOURCE: receives say who sent them */
	int av_identity; /* addrs[i] == i: a source fi_addr is the peer's index */
	int kind;
	int send_err; /* libfabric's code of the last failed or_ofi_send, for the log */
	char prov_name[64];
};

static int fi_to_or(int ret)
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

static struct fi_info *make_hints(enum or_ofi_kind kind, const char *prov, int source)
{
	struct fi_info *h = fi_dupinfo(NULL); /* fi_allocinfo, through the opened library */
	if (!h)
		return NULL;
	if (kind == OR_OFI_RDM) {
		h->ep_attr->type = FI_EP_RDM;
		h->caps = FI_TAGGED | FI_MSG | FI_DIRECTED_RECV;
	} else {
		h->ep_attr->type = FI_EP_DGRAM;
		h->caps = FI_MSG | (source ? FI_SOURCE : 0);
	}
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->domain_attr->threading = FI_THREAD_DOMAIN;
	h->domain_attr->mr_mode = 0;
	if (prov && *prov)
		h->fabric_attr->prov_name = strdup(prov);
	return h;
}

static int is_loopback(const struct fi_info *fi)
{
	const char *d = fi->domain_attr && fi->domain_attr->name ? fi->domain_attr->name : "";
	return strcmp(d, "lo") == 0;
}

/* Lower is better; negative means never choose automatically. */
static int rank_provider(const struct fi_info *fi, enum or_ofi_kind kind, int same_host)
{
	const char *p = fi->fabric_attr->prov_name;
	int score;

	if (!p || strcmp(p, "sockets") == 0 || strstr(p, "ofi_rxd") || strstr(p, "ofi_mrail") ||
	    strstr(p, "ofi_hook"))
		return -1;
	if (kind == OR_OFI_DGRAM)
		score = strcmp(p, "udp") == 0 ? 0 : 10;
	else if (strcmp(p, "shm") == 0)
		return -1; /* opt-in only (OPTIREDUCE_PROVIDER=shm): hangs at 4 ranks with
		              libfabric 1.17 */
	else if (strcmp(p, "tcp;ofi_rxm") == 0)
		score = 1;
	else if (strcmp(p, "net") == 0)
		score = 2;
	else if (strncmp(p, "psm", 3) == 0)
		return -1; /* needs Omni-Path hardware; fails late without it */
	else
		score = 5;
	if (score < 0)
		return score;
	/* A loopback domain only reaches peers inside this namespace, and is all they need. */
	if (is_loopback(fi))
		score += same_host ? 0 : 100;
	else if (same_host)
		score += 1;
	/* IPv6 link-local fabrics need scoped addresses; IPv4 is what launchers use. */
	if (fi->fabric_attr->name && strchr(fi->fabric_attr->name, ':'))
		score += 10;
	return score;
}

#define OR_MAX_TRIES 16

/*
 * The providers for kind.  Datagram endpoints are asked for FI_SOURCE, so that a datagram from
 * an address outside the communicator can be told apart; a provider without it still serves
 * (*source = 0), and the header checks are then all there is.
 */
static int get_list(enum or_ofi_kind kind, const char *prov, struct fi_info **list, int *source)
{
	int ret = -FI_ENODATA;

	/* No libfabric to open reads as no provider. */
	if (or_fi_load())
		return ret;
	for (*source = kind == OR_OFI_DGRAM; *source >= 0; --*source) {
		struct fi_info *hints = make_hints(kind, prov, *source);
		if (!hints)
			return -FI_ENOMEM;
		ret = or_fi_getinfo_cached(OR_FI_VERSION, hints, list);
		fi_freeinfo(hints);
		if (ret != -FI_ENODATA)
			break;
	}
	if (*source < 0)
		*source = 0;
	return ret;
}

static int tried(struct fi_info *fi, struct fi_info *const *failed, int nfailed)
{
	for (int i = 0; i < nfailed; i++)
		if (failed[i] == fi)
			return 1;
	return 0;
}

static struct fi_info *choose(struct fi_info *list, enum or_ofi_kind kind, const char *prov,
                              int same_host, struct fi_info *const *failed, int nfailed)
{
	struct fi_info *best = NULL;
	int best_score = 1 << 30;

	for (struct fi_info *fi = list; fi; fi = fi->next) {
		int s = rank_provider(fi, kind, same_host);
		if (tried(fi, failed, nfailed))
			continue;
		if (prov && *prov && strcmp(fi->fabric_attr->prov_name, prov) == 0)
			s = is_loopback(fi) && !same_host ? 100 : 0;
		if (s >= 0 && s < best_score) {
			best = fi;
			best_score = s;
		}
	}
	return best;
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

static void close_fids(struct or_ofi *o)
{
	if (o->ep)
		fi_close(&o->ep->fid);
	if (o->cq)
		fi_close(&o->cq->fid);
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

int or_ofi_open(enum or_ofi_kind kind, const char *provider, int same_host, struct or_ofi **out)
{
	struct fi_info *list = NULL, *fi, *failed[OR_MAX_TRIES];
	struct or_ofi *o;
	int ret, nfailed = 0, source;

	if (!out || (kind != OR_OFI_RDM && kind != OR_OFI_DGRAM))
		return -OPTIREDUCE_EINVAL;
	ret = get_list(kind, provider, &list, &source);
	if (ret)
		return ret == -FI_ENODATA ? -OPTIREDUCE_ENOPROVIDER : fi_to_or(ret);
	o = calloc(1, sizeof(*o));
	if (!o) {
		fi_freeinfo(list);
		return -OPTIREDUCE_ENOMEM;
	}
	/* Try the best candidate; if it fails to open, drop it and try the next. */
	for (;;) {
		fi = nfailed < OR_MAX_TRIES
		         ? choose(list, kind, provider, same_host, failed, nfailed)
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
		return ret == -FI_ENODATA ? -OPTIREDUCE_ENOPROVIDER : fi_to_or(ret);
	}
	o->kind = kind;
	o->has_source = source;
	snprintf(o->prov_name, sizeof(o->prov_name), "%s", o->info->fabric_attr->prov_name);
	*out = o;
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

size_t or_ofi_max_msg(const struct or_ofi *o)
{
	return o->info->ep_attr->max_msg_size;
}

size_t or_ofi_rx_depth(const struct or_ofi *o)
{
	return o->info->rx_attr ? o->info->rx_attr->size : 0;
}

int or_ofi_getname(struct or_ofi *o, void *buf, size_t *len)
{
	return fi_to_or(fi_getname(&o->ep->fid, buf, len));
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
			return ret < 0 ? fi_to_or(ret) : -OPTIREDUCE_EFABRIC;
	}
	o->naddrs = n;
	o->av_identity = 1;
	for (uint32_t i = 0; i < n; i++)
		o->av_identity &= o->addrs[i] == i;
	return 0;
}

static uint32_t src_index(const struct or_ofi *o, fi_addr_t a)
{
	if (a == FI_ADDR_NOTAVAIL)
		return OR_OFI_SRC_STRANGER;
	if (o->av_identity)
		return a < o->naddrs ? (uint32_t)a : OR_OFI_SRC_STRANGER;
	for (uint32_t i = 0; i < o->naddrs; i++)
		if (o->addrs[i] == a)
			return i;
	return OR_OFI_SRC_STRANGER;
}

static void mark_done(struct or_ofi_xfer *x, int error, size_t len)
{
	x->error = error;
	x->len = len;
	x->done = 1;
	if (x->cb)
		x->cb(x->cb_arg);
}

int or_ofi_tsend(struct or_ofi *o, uint32_t peer, uint64_t tag, const void *buf, size_t len,
                 struct or_ofi_xfer *x)
{
	ssize_t ret;

	if (peer >= o->naddrs)
		return -OPTIREDUCE_EINVAL;
	x->done = 0;
	x->error = 0;
	if (len <= o->info->tx_attr->inject_size) {
		ret = fi_tinject(o->ep, buf, len, o->addrs[peer], tag);
		if (ret == 0)
			mark_done(x, 0, len);
		return fi_to_or((int)ret);
	}
	ret = fi_tsend(o->ep, buf, len, NULL, o->addrs[peer], tag, x);
	return fi_to_or((int)ret);
}

int or_ofi_trecv(struct or_ofi *o, uint32_t peer, uint64_t tag, void *buf, size_t len,
                 struct or_ofi_xfer *x)
{
	if (peer >= o->naddrs)
		return -OPTIREDUCE_EINVAL;
	x->done = 0;
	x->error = 0;
	return fi_to_or((int)fi_trecv(o->ep, buf, len, NULL, o->addrs[peer], tag, 0, x));
}

int or_ofi_send(struct or_ofi *o, uint32_t peer, const void *buf, size_t len, struct or_ofi_xfer *x)
{
	ssize_t ret;

	if (peer >= o->naddrs)
		return -OPTIREDUCE_EINVAL;
	x->done = 0;
	x->error = 0;
	ret = fi_send(o->ep, buf, len, NULL, o->addrs[peer], x);
	if (ret < 0)
		o->send_err = (int)-ret;
	return fi_to_or((int)ret);
}

const char *or_ofi_send_error(const struct or_ofi *o)
{
	return o->send_err ? fi_strerror(o->send_err) : "no error";
}

int or_ofi_recv(struct or_ofi *o, void *buf, size_t len, struct or_ofi_xfer *x)
{
	x->done = 0;
	x->error = 0;
	return fi_to_or((int)fi_recv(o->ep, buf, len, NULL, FI_ADDR_UNSPEC, x));
}

static int read_error(struct or_ofi *o)
{
	struct fi_cq_err_entry err = {0};
	ssize_t ret = fi_cq_readerr(o->cq, &err, 0);

	if (ret < 0)
		return ret == -FI_EAGAIN ? 0 : fi_to_or((int)ret);
	if (err.op_context) {
		int code =
		    err.err == FI_ECANCELED ? -OPTIREDUCE_ECANCELED : fi_to_or(-(int)err.err);
		((struct or_ofi_xfer *)err.op_context)->src = OR_OFI_SRC_UNKNOWN;
		if (code == -OPTIREDUCE_EFABRIC && err.err == FI_ETRUNC)
			code = -OPTIREDUCE_EMSGSIZE;
		mark_done(err.op_context, code, err.len);
	}
	return 1;
}

/* src: the sources fi_cq_readfrom gave, or NULL. */
static int consume(struct or_ofi *o, struct fi_cq_msg_entry *e, const fi_addr_t *src, ssize_t n)
{
	for (ssize_t i = 0; i < n; i++) {
		struct or_ofi_xfer *x = e[i].op_context;
		if (!x)
			continue;
		x->src = src && (e[i].flags & FI_RECV) ? src_index(o, src[i]) : OR_OFI_SRC_UNKNOWN;
		mark_done(x, 0, e[i].len);
	}
	return (int)n;
}

int or_ofi_poll(struct or_ofi *o, int max)
{
	struct fi_cq_msg_entry e[OR_CQ_BATCH];
	fi_addr_t src[OR_CQ_BATCH];
	int total = 0;

	while (total < max) {
		size_t want =
		    (size_t)(max - total) < OR_CQ_BATCH ? (size_t)(max - total) : OR_CQ_BATCH;
		ssize_t n = o->has_source ? fi_cq_readfrom(o->cq, e, want, src)
		                          : fi_cq_read(o->cq, e, want);
		if (n == -FI_EAGAIN)
			break;
		if (n == -FI_EAVAIL) {
			int r = read_error(o);
			if (r < 0)
				return r;
			total += r;
			continue;
		}
		if (n < 0)
			return fi_to_or((int)n);
		/* No early exit on a short batch: udp reads one datagram per fi_cq_read, so only
		 * -FI_EAGAIN says the socket is empty. */
		total += consume(o, e, o->has_source ? src : NULL, n);
	}
	return total;
}

int or_ofi_wait(struct or_ofi *o, int timeout_ms)
{
	struct fi_cq_msg_entry e[OR_CQ_BATCH];
	fi_addr_t src[OR_CQ_BATCH];
	ssize_t n;

	if (!o->can_wait) {
		struct timespec ts = {0, 50 * 1000};
		nanosleep(&ts, NULL);
		return 0;
	}
	n = o->has_source ? fi_cq_sreadfrom(o->cq, e, OR_CQ_BATCH, src, NULL, timeout_ms)
	                  : fi_cq_sread(o->cq, e, OR_CQ_BATCH, NULL, timeout_ms);
	/*
	 * -FI_EINTR: on Linux epoll_wait fails with EINTR after SIGSTOP and SIGCONT even
	 * without a handler (signal(7)); a job suspended and resumed, a debugger, or the
	 * emulated cloud's stopped straggler must not fail the operation (it did, in
	 * iteration 2 of a run with hosts stopped 10 % of the time).
	 */
	if (n == -FI_EAGAIN || n == -FI_ETIMEDOUT || n == -FI_EINTR)
		return 0;
	if (n == -FI_EAVAIL)
		return read_error(o);
	if (n < 0)
		return fi_to_or((int)n);
	return consume(o, e, o->has_source ? src : NULL, n);
}

int or_ofi_wait_fd(struct or_ofi *o)
{
	enum fi_wait_obj obj;
	int fd = -1;

	if (!o->can_wait || fi_control(&o->cq->fid, FI_GETWAITOBJ, &obj) || obj != FI_WAIT_FD)
		return -1;
	if (fi_control(&o->cq->fid, FI_GETWAIT, &fd) || fd < 0)
		return -1;
	return fd;
}

int or_ofi_trywait(struct or_ofi *o)
{
	struct fid *cq = &o->cq->fid;

	return fi_to_or(fi_trywait(o->fabric, &cq, 1));
}

int or_ofi_list(enum or_ofi_kind kind, or_ofi_list_cb cb, void *arg)
{
	struct fi_info *list = NULL;
	int ret, source;

	ret = get_list(kind, NULL, &list, &source);
	if (ret)
		return ret == -FI_ENODATA ? 0 : fi_to_or(ret);
	for (struct fi_info *fi = list; fi; fi = fi->next)
		cb(fi->fabric_attr->prov_name, fi->fabric_attr->name, fi->domain_attr->name,
		   fi->ep_attr->max_msg_size, arg);
	fi_freeinfo(list);
	return 0;
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
