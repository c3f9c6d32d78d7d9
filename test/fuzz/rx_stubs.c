/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the receive-path fuzz target (fuzz_rx.c) puts in place of the endpoint and the
 * clock: the bounded channel's files are compiled as they are, and only the calls that
 * would reach libfabric or read the time land here.  Sends vanish, receives are posted
 * nowhere (the harness hands each datagram to the drain itself), and time advances by
 * one microsecond per reading unless the harness moves it.
 */
#include <stddef.h>

#include "dgram/dgram.h"
#include "lib/core/internal.h"
#include "fuzz_rx.h"

static double fake_now;

void fuzz_clock_reset(void)
{
	fake_now = 1e6;
}

void fuzz_clock_advance(double us)
{
	fake_now += us;
}

double or_now_us(void)
{
	return fake_now += 1;
}

double or_thread_cpu_us(void)
{
	return fake_now;
}

static int no_recv(struct or_dgram *d, void *buf, size_t len, struct or_xport_xfer *x)
{
	(void)d, (void)buf, (void)len, (void)x;
	return 0;
}

static int no_send(struct or_dgram *d, uint32_t peer, const void *buf, size_t len,
                   struct or_xport_xfer *x)
{
	(void)d, (void)peer, (void)buf, (void)len, (void)x;
	return 0;
}

static int no_group_send(struct or_dgram *d, const void *buf, size_t len,
                         struct or_xport_xfer *x)
{
	(void)d, (void)buf, (void)len, (void)x;
	return 0;
}

static int nothing(struct or_dgram *d)
{
	(void)d;
	return 0;
}

static int no_poll(struct or_dgram *d, int max)
{
	(void)d, (void)max;
	return 0;
}

static size_t no_prefix(const struct or_dgram *d)
{
	(void)d;
	return 0;
}

static const char *no_error(const struct or_dgram *d)
{
	(void)d;
	return "no error";
}

/* No socket behind the endpoint: nothing is queued, sized or held. */
static size_t no_resize(struct or_dgram *d, size_t bytes)
{
	(void)d, (void)bytes;
	return 0;
}

static size_t no_sndbuf(struct or_dgram *d)
{
	(void)d;
	return 0;
}

static long no_queue(struct or_dgram *d)
{
	(void)d;
	return -1;
}

/* The calls the receive path makes; any other would crash the harness, as it should. */
static const struct or_dgram_ops fuzz_ops = {
    .prefix = no_prefix,
    .send = no_send,
    .recv = no_recv,
    .send_error = no_error,
    .flush = nothing,
    .poll = no_poll,
    .set_sndbuf = no_resize,
    .sndbuf = no_sndbuf,
    .send_queued = no_queue,
    .group_recv = no_recv,
    .group_send = no_group_send,
};

struct or_dgram fuzz_endpoint = {.ops = &fuzz_ops};
