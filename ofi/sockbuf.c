/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Socket buffers of a socket-backed datagram endpoint (libfabric's udp).
 *
 * A kernel socket buffer of the default size (~200 KB, about 75 datagrams) overflows in
 * a millisecond when a rank is descheduled on a busy host, and libfabric has no call to
 * size it.  The endpoint's socket is found by its bound address among this process's
 * descriptors and resized with SO_RCVBUF (capped by net.core.rmem_max), then, if that
 * fell short, SO_RCVBUFFORCE (needs CAP_NET_ADMIN).  Best effort: an endpoint without a
 * socket (verbs UD, EFA) simply has none to find.
 */
#include <dirent.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>

#include "ofi.h"
#include "ofi_int.h"
#include "sock.h"

/* Same family and port, and the same address unless one side is the wildcard. */
static int same_endpoint(const struct sockaddr_storage *a, const void *name, size_t len)
{
	const struct sockaddr *n = name;

	if (len < sizeof(struct sockaddr_in) || a->ss_family != n->sa_family)
		return 0;
	if (n->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = name;
		return x->sin_port == y->sin_port && (x->sin_addr.s_addr == y->sin_addr.s_addr ||
		                                      x->sin_addr.s_addr == htonl(INADDR_ANY));
	}
	if (n->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *x = (const void *)a, *y = name;
		return x->sin6_port == y->sin6_port &&
		       (!memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(y->sin6_addr)) ||
		        !memcmp(&x->sin6_addr, &in6addr_any, sizeof(in6addr_any)));
	}
	return 0;
}

static size_t sockbuf_of(int fd, int opt)
{
	int v = 0;
	socklen_t l = sizeof(v);
	return getsockopt(fd, SOL_SOCKET, opt, &v, &l) == 0 && v > 0 ? (size_t)v : 0;
}

static size_t rcvbuf_of(int fd)
{
	return sockbuf_of(fd, SO_RCVBUF);
}

int or_ofi_find_socket(const void *name, size_t len)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = -1;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL && found < 0) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		struct stat st;
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		int type = 0;
		socklen_t tl = sizeof(type);

		if (*end || fd < 0 || fstat((int)fd, &st) || !S_ISSOCK(st.st_mode))
			continue;
		if (getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &tl) || type != SOCK_DGRAM)
			continue;
		if (getsockname((int)fd, (struct sockaddr *)&ss, &sl) ||
		    !same_endpoint(&ss, name, len))
			continue;
		found = (int)fd;
	}
	closedir(d);
	return found;
}

/* A datagram socket of this process bound to no address yet (port 0). */
static int unbound_udp(long fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct stat st;
	int type = 0;
	socklen_t tl = sizeof(type);

	if (fstat((int)fd, &st) || !S_ISSOCK(st.st_mode) ||
	    getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &tl) || type != SOCK_DGRAM ||
	    getsockname((int)fd, (struct sockaddr *)&ss, &sl))
		return 0;
	return ss.ss_family == AF_INET && ((struct sockaddr_in *)&ss)->sin_port == 0;
}

int or_ofi_unbound_sockets(int *fds, int max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL && n < max) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (!*end && fd >= 0 && fd != dirfd(d) && unbound_udp(fd))
			fds[n++] = (int)fd;
	}
	closedir(d);
	return n;
}

size_t or_ofi_resize_socket(int fd, size_t bytes)
{
	int want = bytes > (size_t)(1 << 30) ? 1 << 30 : (int)bytes;

	/* The kernel doubles the value asked for (bookkeeping) and reports the double. */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &want, sizeof(want));
	if (rcvbuf_of(fd) < bytes)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &want, sizeof(want));
	return rcvbuf_of(fd);
}

/* The endpoint's own socket, -1 when it has none; looked up once (a scan of the fds). */
static int endpoint_socket(struct or_ofi *o)
{
	unsigned char name[128];
	size_t len = sizeof(name);

	if (o->sock_fd != -2)
		return o->sock_fd;
	o->sock_fd = -1;
	if (!or_ofi_getname(o, name, &len) && len <= sizeof(name))
		o->sock_fd = or_ofi_find_socket(name, len);
	return o->sock_fd;
}

size_t or_ofi_resize_sndbuf(int fd, size_t bytes)
{
	int want = bytes > (size_t)(1 << 30) ? 1 << 30 : (int)bytes;

	/* Below the kernel's floor the floor applies; the report is the doubled value. */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof(want));
	return sockbuf_of(fd, SO_SNDBUF);
}

int or_ofi_group_joined(const struct or_ofi *o)
{
	return o && o->gep && !o->closed;
}

static int group_socket(struct or_ofi *o)
{
	unsigned char name[128];
	size_t len = sizeof(name);

	if (!or_ofi_group_joined(o) || fi_getname(&o->gep->fid, name, &len) || len > sizeof(name))
		return -1;
	return or_ofi_find_socket(name, len);
}

void or_ofi_group_resize(struct or_ofi *o, size_t bytes, size_t (*resize)(int, size_t))
{
	int fd = group_socket(o);

	if (fd >= 0)
		resize(fd, bytes);
}

/* The endpoint's socket, and the group's, which takes as much (group.c), resized. */
static size_t set_buffer(struct or_ofi *o, size_t bytes, size_t (*resize)(int, size_t))
{
	int fd = bytes ? endpoint_socket(o) : -1;

	if (fd < 0)
		return 0;
	or_ofi_group_resize(o, bytes, resize);
	return resize(fd, bytes);
}

size_t or_ofi_set_rcvbuf(struct or_ofi *o, size_t bytes)
{
	return set_buffer(o, bytes, or_ofi_resize_socket);
}

size_t or_ofi_set_sndbuf(struct or_ofi *o, size_t bytes)
{
	return set_buffer(o, bytes, or_ofi_resize_sndbuf);
}

size_t or_ofi_sndbuf(struct or_ofi *o)
{
	int fd = endpoint_socket(o);
	return fd < 0 ? 0 : sockbuf_of(fd, SO_SNDBUF);
}

long or_ofi_send_queued(struct or_ofi *o)
{
	int fd = endpoint_socket(o), v = 0;

	if (fd < 0 || ioctl(fd, SIOCOUTQ, &v) != 0 || v < 0)
		return -1;
	return v;
}
