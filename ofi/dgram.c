/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libfabric's datagram endpoints as a datagram transport of the bounded channel
 * (dgram/dgram.h): each operation is the or_ofi_* call of the same name.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dgram/dgram.h"
#include "ofi.h"
#include "optireduce.h"

struct or_ofi_dgram {
	struct or_dgram base;
	struct or_ofi *o;
};

static struct or_ofi *ep(const struct or_dgram *d)
{
	return ((const struct or_ofi_dgram *)d)->o;
}

static void dg_close(struct or_dgram *d)
{
	or_ofi_close(ep(d));
	free(d);
}

static const char *dg_name(const struct or_dgram *d)
{
	return or_ofi_provider_name(ep(d));
}

static const char *dg_domain(const struct or_dgram *d)
{
	return or_ofi_domain_name(ep(d));
}

static size_t dg_max_msg(const struct or_dgram *d)
{
	return or_ofi_max_msg(ep(d));
}

static size_t dg_prefix(const struct or_dgram *d)
{
	return or_ofi_prefix(ep(d));
}

static int dg_registers(const struct or_dgram *d)
{
	return or_ofi_registers(ep(d));
}

static int dg_register(struct or_dgram *d, void *base, size_t len)
{
	return or_ofi_register(ep(d), base, len);
}

static size_t dg_rx_depth(const struct or_dgram *d)
{
	return or_ofi_rx_depth(ep(d));
}

static int dg_getname(struct or_dgram *d, void *buf, size_t *len)
{
	return or_ofi_getname(ep(d), buf, len);
}

static int dg_av_insert(struct or_dgram *d, const void *names, size_t stride, uint32_t n)
{
	return or_ofi_av_insert(ep(d), names, stride, n);
}

static int dg_send(struct or_dgram *d, uint32_t peer, const void *buf, size_t len,
                   struct or_xport_xfer *x)
{
	return or_ofi_send(ep(d), peer, buf, len, x);
}

static int dg_recv(struct or_dgram *d, void *buf, size_t len, struct or_xport_xfer *x)
{
	return or_ofi_recv(ep(d), buf, len, x);
}

static const char *dg_send_error(const struct or_dgram *d)
{
	return or_ofi_send_error(ep(d));
}

/* libfabric sends each datagram when it is posted. */
static int dg_flush(struct or_dgram *d)
{
	(void)d;
	return 0;
}

static int dg_poll(struct or_dgram *d, int max)
{
	return or_ofi_poll(ep(d), max);
}

static int dg_wait(struct or_dgram *d, int timeout_ms)
{
	return or_ofi_wait(ep(d), timeout_ms);
}

static int dg_wait_fd(struct or_dgram *d)
{
	return or_ofi_wait_fd(ep(d));
}

static int dg_trywait(struct or_dgram *d)
{
	return or_ofi_trywait(ep(d));
}

static size_t dg_set_rcvbuf(struct or_dgram *d, size_t bytes)
{
	return or_ofi_set_rcvbuf(ep(d), bytes);
}

static size_t dg_set_sndbuf(struct or_dgram *d, size_t bytes)
{
	return or_ofi_set_sndbuf(ep(d), bytes);
}

static size_t dg_sndbuf(struct or_dgram *d)
{
	return or_ofi_sndbuf(ep(d));
}

static long dg_send_queued(struct or_dgram *d)
{
	return or_ofi_send_queued(ep(d));
}

static int dg_group_join(struct or_dgram *d, uint32_t group, uint16_t port, int loop, char *why,
                         size_t len)
{
	return or_ofi_group_join(ep(d), group, port, loop, why, len);
}

static void dg_group_leave(struct or_dgram *d)
{
	or_ofi_group_leave(ep(d));
}

static size_t dg_group_rx_depth(const struct or_dgram *d)
{
	return or_ofi_group_rx_depth(ep(d));
}

static int dg_group_recv(struct or_dgram *d, void *buf, size_t len, struct or_xport_xfer *x)
{
	return or_ofi_group_recv(ep(d), buf, len, x);
}

static int dg_group_send(struct or_dgram *d, const void *buf, size_t len, struct or_xport_xfer *x)
{
	return or_ofi_group_send(ep(d), buf, len, x);
}

static void dg_describe(const struct or_dgram *d, char *buf, size_t len)
{
	snprintf(buf, len, "libfabric %s on %s, %zu-byte datagrams, one per call",
	         or_ofi_provider_name(ep(d)), or_ofi_domain_name(ep(d)), or_ofi_max_msg(ep(d)));
}

static const struct or_dgram_ops ofi_dgram_ops = {
    .close = dg_close,
    .name = dg_name,
    .domain = dg_domain,
    .max_msg = dg_max_msg,
    .prefix = dg_prefix,
    .registers = dg_registers,
    .reg = dg_register,
    .rx_depth = dg_rx_depth,
    .getname = dg_getname,
    .av_insert = dg_av_insert,
    .send = dg_send,
    .recv = dg_recv,
    .send_error = dg_send_error,
    .flush = dg_flush,
    .poll = dg_poll,
    .wait = dg_wait,
    .wait_fd = dg_wait_fd,
    .trywait = dg_trywait,
    .set_rcvbuf = dg_set_rcvbuf,
    .set_sndbuf = dg_set_sndbuf,
    .sndbuf = dg_sndbuf,
    .send_queued = dg_send_queued,
    .group_join = dg_group_join,
    .group_leave = dg_group_leave,
    .group_rx_depth = dg_group_rx_depth,
    .group_recv = dg_group_recv,
    .group_send = dg_group_send,
    .describe = dg_describe,
};

int or_ofi_dgram_open(const struct or_ofi_want *want, struct or_dgram **out)
{
	struct or_ofi_dgram *d = calloc(1, sizeof(*d));
	int ret;

	if (!d)
		return -OPTIREDUCE_ENOMEM;
	ret = or_ofi_open(OR_OFI_DGRAM, want, &d->o);
	if (ret) {
		free(d);
		return ret;
	}
	d->base.ops = &ofi_dgram_ops;
	d->base.kind = OR_DGRAM_LIBFABRIC;
	*out = &d->base;
	return 0;
}
