/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the receive-path fuzz target (fuzz_rx.c) puts in place of the endpoint and the
 * clock: the bounded channel's files are compiled as they are, and only the calls that
 * would reach libfabric or read the time land here.  Sends vanish, receives are posted
 * nowhere (the harness hands each datagram to the drain itself), and time advances by
 * one microsecond per reading unless the harness moves it.
 */
#include <stddef.h>

#include "internal.h"
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

int or_ofi_recv(struct or_ofi *o, void *buf, size_t len, struct or_xport_xfer *x)
{
	(void)o, (void)buf, (void)len, (void)x;
	return 0;
}

int or_ofi_send(struct or_ofi *o, uint32_t peer, const void *buf, size_t len,
                struct or_xport_xfer *x)
{
	(void)o, (void)peer, (void)buf, (void)len, (void)x;
	return 0;
}

int or_ofi_group_recv(struct or_ofi *o, void *buf, size_t len, struct or_xport_xfer *x)
{
	(void)o, (void)buf, (void)len, (void)x;
	return 0;
}

int or_ofi_group_send(struct or_ofi *o, const void *buf, size_t len, struct or_xport_xfer *x)
{
	(void)o, (void)buf, (void)len, (void)x;
	return 0;
}

int or_ofi_poll(struct or_ofi *o, int max)
{
	(void)o, (void)max;
	return 0;
}

size_t or_ofi_prefix(const struct or_ofi *o)
{
	(void)o;
	return 0;
}

const char *or_ofi_send_error(const struct or_ofi *o)
{
	(void)o;
	return "no error";
}

/* No socket behind the endpoint: nothing is queued, sized or held. */
size_t or_ofi_set_sndbuf(struct or_ofi *o, size_t bytes)
{
	(void)o, (void)bytes;
	return 0;
}

size_t or_ofi_sndbuf(struct or_ofi *o)
{
	(void)o;
	return 0;
}

long or_ofi_send_queued(struct or_ofi *o)
{
	(void)o;
	return -1;
}
