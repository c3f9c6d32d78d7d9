/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which rank sent a datagram: (address, port) -> rank, open addressing.  Filled when the
 * endpoint learns its peers (ep.c), read for every datagram received (rx.c).
 */
#include <netinet/in.h>
#include <stdint.h>

#include "udp_int.h"

static uint64_t src_key(uint32_t addr, uint16_t port)
{
	return ((uint64_t)addr << 16 | port) + 1; /* 0 is an empty slot */
}

static uint32_t src_slot(uint64_t key, uint32_t mask)
{
	return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

uint32_t or_udp_source(const struct or_udp *u, const struct sockaddr_in *from)
{
	uint64_t key = src_key(from->sin_addr.s_addr, from->sin_port);

	if (!u->src_key)
		return OR_SRC_STRANGER;
	for (uint32_t s = src_slot(key, u->src_mask);; s = (s + 1) & u->src_mask) {
		if (u->src_key[s] == key)
			return u->src_rank[s];
		if (!u->src_key[s])
			return OR_SRC_STRANGER;
	}
}

void or_udp_src_add(struct or_udp *u, uint32_t addr, uint16_t port, uint32_t rank)
{
	uint64_t key = src_key(addr, port);
	uint32_t s = src_slot(key, u->src_mask);

	while (u->src_key[s] && u->src_key[s] != key)
		s = (s + 1) & u->src_mask;
	u->src_key[s] = key;
	u->src_rank[s] = rank;
}
