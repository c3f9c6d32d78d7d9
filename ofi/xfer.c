/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Data movement over libfabric: posting transfers, reaping completions, waiting, and
 * giving posted transfers back after a failure (or_ofi_quiesce).
 */
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "load.h"
#include "ofi_int.h"
#include "optireduce.h"

static uint32_t src_index(const struct or_ofi *o, fi_addr_t a)
{
	if (a == FI_ADDR_NOTAVAIL)
		return OR_SRC_STRANGER;
	if (o->av_identity)
		return a < o->naddrs ? (uint32_t)a : OR_SRC_STRANGER;
	for (uint32_t i = 0; i < o->naddrs; i++)
		if (o->addrs[i] == a)
			return i;
	return OR_SRC_STRANGER;
}

/* Posted transfers are listed on RDM endpoints only: the datagram channel's buffers live as
 * long as its endpoint, which is closed before they are freed. */
static void track(struct or_ofi *o, struct or_xport_xfer *x)
{
	if (o->kind != OR_OFI_RDM)
		return;
	x->flags |= OR_XPORT_POSTED;
	x->posted_prev = NULL;
	x->posted_next = o->posted;
	if (o->posted)
		o->posted->posted_prev = x;
	o->posted = x;
	o->nposted++;
}

static void untrack(struct or_ofi *o, struct or_xport_xfer *x)
{
	if (o->kind != OR_OFI_RDM || !(x->flags & OR_XPORT_POSTED))
		return;
	x->flags &= ~OR_XPORT_POSTED;
	if (x->posted_prev)
		x->posted_prev->posted_next = x->posted_next;
	else
		o->posted = x->posted_next;
	if (x->posted_next)
		x->posted_next->posted_prev = x->posted_prev;
	x->posted_next = x->posted_prev = NULL;
	o->nposted--;
}

/* What a tagged transfer checks and resets before it is posted: 0 or a negative code. */
static int tagged_begin(const struct or_ofi *o, uint32_t peer, struct or_xport_xfer *x)
{
	if (o->closed)
		return -OPTIREDUCE_EPEER;
	if (peer >= o->naddrs)
		return -OPTIREDUCE_EINVAL;
	x->done = 0;
	x->error = 0;
	x->flags = 0;
	x->data = NULL; /* a receive's buffer, set by or_ofi_trecv */
	return 0;
}

int or_ofi_tsend(struct or_ofi *o, uint32_t peer, uint64_t tag, const void *buf, size_t len,
                 struct or_xport_xfer *x)
{
	ssize_t ret = tagged_begin(o, peer, x);

	if (ret)
		return (int)ret;
	if (len <= o->info->tx_attr->inject_size) {
		ret = fi_tinject(o->ep, buf, len, o->addrs[peer], tag);
		if (ret == 0)
			or_xport_done(x, 0, len);
		return or_fi_to_or((int)ret);
	}
	ret = fi_tsend(o->ep, buf, len, NULL, o->addrs[peer], tag, x);
	if (ret == 0)
		track(o, x);
	return or_fi_to_or((int)ret);
}

int or_ofi_trecv(struct or_ofi *o, uint32_t peer, uint64_t tag, void *buf, size_t len,
                 struct or_xport_xfer *x)
{
	ssize_t ret = tagged_begin(o, peer, x);

	if (ret)
		return (int)ret;
	x->data = buf;
	ret = fi_trecv(o->ep, buf, len, NULL, o->addrs[peer], tag, 0, x);
	if (ret == 0)
		track(o, x);
	return or_fi_to_or((int)ret);
}

/* The descriptor of the registered region holding [buf, buf + len), or NULL. */
static void *desc_of(const struct or_ofi *o, const void *buf, size_t len)
{
	const char *p = buf;

	for (unsigned i = 0; i < o->nmr; i++)
		if (p >= o->mr[i].base && p + len <= o->mr[i].base + o->mr[i].len)
			return o->mr[i].desc;
	return NULL;
}

/*
 * With FI_MSG_PREFIX the provider is given the buffer from the start of its prefix, and the
 * length with it (fi_getinfo(3)); the prefix is the provider's, the rest ours.
 */
int or_ofi_send(struct or_ofi *o, uint32_t peer, const void *buf, size_t len, struct or_xport_xfer *x)
{
	const char *start = (const char *)buf - o->prefix;
	ssize_t ret;

	if (o->closed)
		return -OPTIREDUCE_EPEER;
	if (peer >= o->naddrs)
		return -OPTIREDUCE_EINVAL;
	x->done = 0;
	x->error = 0;
	ret = fi_send(o->ep, start, len + o->prefix, desc_of(o, start, len + o->prefix),
	              o->addrs[peer], x);
	if (ret < 0)
		o->send_err = (int)-ret;
	return or_fi_to_or((int)ret);
}

const char *or_ofi_send_error(const struct or_ofi *o)
{
	return o->send_err ? fi_strerror(o->send_err) : "no error";
}

/* A completed receive's bytes are where they were posted: data says so from the start. */
int or_ofi_recv(struct or_ofi *o, void *buf, size_t len, struct or_xport_xfer *x)
{
	char *start = (char *)buf - o->prefix;

	if (o->closed)
		return -OPTIREDUCE_EPEER;
	x->done = 0;
	x->error = 0;
	x->data = buf;
	return or_fi_to_or((int)fi_recv(o->ep, start, len + o->prefix,
	                                desc_of(o, start, len + o->prefix), FI_ADDR_UNSPEC, x));
}

int or_ofi_group_recv(struct or_ofi *o, void *buf, size_t len, struct or_xport_xfer *x)
{
	char *start = (char *)buf - o->prefix;

	if (o->closed || !o->gep)
		return -OPTIREDUCE_EPEER;
	x->done = 0;
	x->error = 0;
	x->data = buf;
	return or_fi_to_or((int)fi_recv(o->gep, start, len + o->prefix,
	                                desc_of(o, start, len + o->prefix), FI_ADDR_UNSPEC, x));
}

/* From the endpoint, not the group's: receivers know its address (FI_SOURCE). */
int or_ofi_group_send(struct or_ofi *o, const void *buf, size_t len, struct or_xport_xfer *x)
{
	struct iovec iov = {(char *)buf - o->prefix, len + o->prefix};
	void *desc = desc_of(o, iov.iov_base, iov.iov_len);
	struct fi_msg msg = {.msg_iov = &iov, .desc = &desc, .iov_count = 1, .context = x};
	ssize_t ret;

	if (o->closed || !o->gep)
		return -OPTIREDUCE_EPEER;
	msg.addr = o->gaddr;
	x->done = 0;
	x->error = 0;
	ret = fi_sendmsg(o->ep, &msg, FI_MULTICAST);
	if (ret < 0)
		o->send_err = (int)-ret;
	return or_fi_to_or((int)ret);
}

/* A completion's length counts the prefix: ours does not.  A datagram no longer than the
 * prefix carries none of our data (providers may send such packets of their own). */
static size_t data_len(const struct or_ofi *o, size_t len)
{
	return len > o->prefix ? len - o->prefix : 0;
}

static int read_error(struct or_ofi *o)
{
	struct fi_cq_err_entry err = {0};
	ssize_t ret = fi_cq_readerr(o->cq, &err, 0);

	if (ret < 0)
		return ret == -FI_EAGAIN ? 0 : or_fi_to_or((int)ret);
	if (err.op_context) {
		struct or_xport_xfer *x = err.op_context;
		int code = or_fi_to_or(-(int)err.err);
		/* Canceled without our asking: rxm gives up a transfer whose connection was lost
		 * (its peer died) so. */
		if (err.err == FI_ECANCELED)
			code = (x->flags & OR_XPORT_CANCEL_ASKED) || o->kind != OR_OFI_RDM
			           ? -OPTIREDUCE_ECANCELED
			           : -OPTIREDUCE_EPEER;
		x->src = OR_SRC_UNKNOWN;
		if (code == -OPTIREDUCE_EFABRIC && err.err == FI_ETRUNC)
			code = -OPTIREDUCE_EMSGSIZE;
		untrack(o, x);
		or_xport_done(x, code, data_len(o, err.len));
	}
	return 1;
}

/* src: the sources fi_cq_readfrom gave, or NULL. */
static int consume(struct or_ofi *o, struct fi_cq_msg_entry *e, const fi_addr_t *src, ssize_t n)
{
	for (ssize_t i = 0; i < n; i++) {
		struct or_xport_xfer *x = e[i].op_context;
		if (!x)
			continue;
		x->src = src && (e[i].flags & FI_RECV) ? src_index(o, src[i]) : OR_SRC_UNKNOWN;
		untrack(o, x);
		or_xport_done(x, 0, data_len(o, e[i].len));
	}
	return (int)n;
}

int or_ofi_poll(struct or_ofi *o, int max)
{
	struct fi_cq_msg_entry e[OR_CQ_BATCH];
	fi_addr_t src[OR_CQ_BATCH];
	int total = 0;

	if (o->closed)
		return 0;
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
			return or_fi_to_or((int)n);
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

	if (!o->can_wait || o->closed) {
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
		return or_fi_to_or((int)n);
	return consume(o, e, o->has_source ? src : NULL, n);
}

/* Closes the endpoint and what completes into it, keeping the names and addresses. */
static void close_endpoint(struct or_ofi *o)
{
	if (o->ep)
		fi_close(&o->ep->fid);
	if (o->cq)
		fi_close(&o->cq->fid);
	o->ep = NULL;
	o->cq = NULL;
	o->closed = 1;
}

int or_ofi_quiesce(struct or_ofi *o, int timeout_ms)
{
	struct timespec t0, t;
	unsigned abandoned;

	if (!o || o->closed || !o->nposted)
		return 0;
	for (struct or_xport_xfer *x = o->posted; x; x = x->posted_next) {
		x->flags |= OR_XPORT_CANCEL_ASKED;
		fi_cancel(&o->ep->fid, x); /* a transfer already matched may complete anyway */
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int ret = or_ofi_poll(o, OR_CQ_BATCH);
		if (!o->nposted || ret < 0)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >=
		    timeout_ms)
			break;
		if (ret == 0) {
			struct timespec nap = {0, 100 * 1000};
			nanosleep(&nap, NULL);
		}
	}
	abandoned = o->nposted;
	if (!abandoned)
		return 0;
	close_endpoint(o);
	while (o->posted) {
		struct or_xport_xfer *x = o->posted;
		untrack(o, x);
		x->src = OR_SRC_UNKNOWN;
		or_xport_done(x, -OPTIREDUCE_ECANCELED, 0);
	}
	return (int)abandoned;
}
