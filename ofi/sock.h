/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to ofi/: the kernel sockets behind socket-backed endpoints (libfabric's udp), for
 * what libfabric has no call for: buffer sizes, multicast options (sockbuf.c).
 */
#ifndef OR_OFI_SOCK_H
#define OR_OFI_SOCK_H

#include <stddef.h>

/* The datagram socket of this process bound to name (a sockaddr); -1 when there is none. */
int or_ofi_find_socket(const void *name, size_t len);
/* Up to max IPv4 datagram sockets of this process not bound yet, into fds; how many. */
int or_ofi_unbound_sockets(int *fds, int max);
/* Best effort: the socket's receive buffer to bytes; returns what the kernel reports then. */
size_t or_ofi_resize_socket(int fd, size_t bytes);
/* Best effort: the socket's send buffer to bytes; returns what the kernel reports then. */
size_t or_ofi_resize_sndbuf(int fd, size_t bytes);

#endif /* OR_OFI_SOCK_H */
