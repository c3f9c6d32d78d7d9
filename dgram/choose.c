/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which datagram transport a bounded channel runs on (docs/design.md, "Datagram
 * transports").  The kernel path moves 64 KB per system call each way where libfabric's
 * udp provider moves one 1,472-byte datagram, so it serves every plain IP interface;
 * libfabric serves devices with a datagram provider of their own (EFA, verbs UD), a
 * provider the user names, and the emulated prefix and registration of its test mode.
 */
#include <stdio.h>

#include "ofi/ofi.h"
#include "udp/udp.h"
#include "dgram.h"
#include "optireduce.h"

const char *or_dgram_kind_name(enum or_dgram_kind kind)
{
	return kind == OR_DGRAM_KERNEL ? "kernel" : kind == OR_DGRAM_LIBFABRIC ? "libfabric" : "auto";
}

static int open_libfabric(const struct or_dgram_want *want, struct or_dgram **out)
{
	struct or_ofi_want w = {want->provider,  want->domains,       want->domains_only,
	                        want->same_host, want->emulate_modes, want->multicast};

	return or_ofi_dgram_open(&w, out);
}

/* For kind auto: why libfabric, or NULL for the kernel path. */
static const char *libfabric_reason(const struct or_dgram_want *want, char *dev, size_t len)
{
	if (want->provider && *want->provider)
		return "bounded_provider names a libfabric provider";
	if (want->emulate_modes)
		return "emulate_dgram_modes tests libfabric's prefix and registration";
	if (!want->same_host && or_ofi_device_dgram(want->domains, dev, len))
		return "libfabric offers the device's own datagram provider";
	return NULL;
}

int or_dgram_open(const struct or_dgram_want *want, struct or_dgram **out, char *why,
                  size_t len)
{
	char dev[96] = "", err[128] = "";
	const char *reason = NULL;
	int ret;

	if (want->kind == OR_DGRAM_AUTO)
		reason = libfabric_reason(want, dev, sizeof(dev));
	if (want->kind == OR_DGRAM_LIBFABRIC || reason) {
		ret = open_libfabric(want, out);
		if (!ret)
			snprintf(why, len, "%s%s%s", reason ? reason : "bounded_transport=libfabric",
			         *dev ? ": " : "", dev);
		else
			snprintf(why, len, "libfabric: %s", optireduce_strerror(ret));
		return ret;
	}
	ret = or_udp_open(want, out, err, sizeof(err));
	if (!ret) {
		snprintf(why, len, "%s",
		         want->kind == OR_DGRAM_KERNEL ? "bounded_transport=kernel"
		                                       : "a plain IP interface: the kernel's UDP");
		return 0;
	}
	if (want->kind == OR_DGRAM_KERNEL) {
		snprintf(why, len, "kernel UDP: %s", err);
		return ret;
	}
	/* Sockets the kernel refuses (a sandbox, no IPv4): libfabric may still have a way. */
	ret = open_libfabric(want, out);
	snprintf(why, len, "kernel UDP: %s; libfabric%s%s", err, ret ? ": " : " instead",
	         ret ? optireduce_strerror(ret) : "");
	return ret;
}
