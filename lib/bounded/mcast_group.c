/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bounded channel's multicast group (docs/design.md, "Multicast"): its address and port,
 * chosen by the communicator's id from the multicast_range parameter, the join at creation,
 * and the probe that checks that every rank hears every other on it.  Whether the group is
 * used is decided by the core with every rank (lib/core/multicast.c).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/bounded/bounded_int.h"
#include "lib/bounded/wire.h"

/* "a.b.c.d/p" inside 224.0.0.0/4: 0, or -OPTIREDUCE_EINVAL. */
int or_bounded_mcast_range(const char *s, uint32_t *base, unsigned *prefix)
{
	char addr[32];
	const char *slash = s ? strchr(s, '/') : NULL;
	struct in_addr in;
	char *end;
	long p;

	if (!slash || (size_t)(slash - s) >= sizeof(addr))
		return -OPTIREDUCE_EINVAL;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = 0;
	p = strtol(slash + 1, &end, 10);
	if (end == slash + 1 || *end || p < 4 || p > 32 || inet_pton(AF_INET, addr, &in) != 1)
		return -OPTIREDUCE_EINVAL;
	if ((ntohl(in.s_addr) & 0xF0000000u) != 0xE0000000u)
		return -OPTIREDUCE_EINVAL;
	if (base)
		*base = ntohl(in.s_addr) & (p == 32 ? ~0u : ~(~0u >> p));
	if (prefix)
		*prefix = (unsigned)p;
	return 0;
}

/* The group of communicator id: address bits below the prefix and the port from a hash of
 * it, so two communicators (or jobs) rarely share either. */
static void group_of(struct or_bounded *b, uint32_t base, unsigned prefix)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (int i = 0; i < 4; i++)
		h = (h ^ ((b->ch.comm->id >> (8 * i)) & 0xff)) * 0x100000001b3ull;
	h ^= h >> 29;
	b->mc.group = base | (prefix == 32 ? 0 : (uint32_t)h & (~0u >> prefix));
	b->mc.port = (uint16_t)(49152 + (h >> 40) % 16384);
}

static const char *group_str(const struct or_bounded *b, char *buf, size_t len)
{
	struct in_addr in = {htonl(b->mc.group)};
	char a[INET_ADDRSTRLEN] = "?";

	inet_ntop(AF_INET, &in, a, sizeof(a));
	snprintf(buf, len, "%s:%u", a, b->mc.port);
	return buf;
}

/* At creation, before the buffers: joins the group unless the parameter says off.  A join
 * that fails is no error here: the ranks decide together (or_bounded_mcast_use). */
int or_bd_mcast_open(struct or_bounded *b, int same_host)
{
	uint32_t base;
	unsigned prefix;
	char g[40];

	b->mc.want = (int)or_bd_param_i(b, OR_P_MULTICAST);
	if (b->mc.want == OR_MCAST_OFF) {
		snprintf(b->mc.why, sizeof(b->mc.why), "parameter multicast is off");
		return 0;
	}
	/* Loopback gains nothing: one host's ranks multicast only when asked to (on). */
	if (same_host && b->mc.want == OR_MCAST_AUTO) {
		b->mc.want = OR_MCAST_OFF;
		snprintf(b->mc.why, sizeof(b->mc.why), "every rank on one host");
		return 0;
	}
	b->mc.heard = calloc(b->ch.comm->size, 1);
	if (!b->mc.heard)
		return -OPTIREDUCE_ENOMEM;
	if (or_bounded_mcast_range(or_bd_param_s(b, OR_P_MULTICAST_RANGE), &base, &prefix)) {
		snprintf(b->mc.why, sizeof(b->mc.why),
		         "multicast_range \"%.100s\" is no IPv4 range",
		         or_bd_param_s(b, OR_P_MULTICAST_RANGE));
		return 0;
	}
	group_of(b, base, prefix);
	/* Looped back when the ranks share this host (multicast on): they hear each other so. */
	if (or_dg_group_join(b->ep, b->mc.group, b->mc.port, same_host, b->mc.why,
	                      sizeof(b->mc.why)) == 0)
		b->mc.joined = 1;
	or_log(OR_LOG_DEBUG, "multicast group %s: %s", group_str(b, g, sizeof(g)),
	       b->mc.joined ? "joined" : b->mc.why);
	return 0;
}

void or_bd_mcast_free(struct or_bounded *b)
{
	free(b->mc.heard);
	b->mc.heard = NULL;
}

/* To the group, then a copy to each peer: that one says this rank has begun probing. */
static void send_probe(struct or_bounded *b)
{
	struct or_wire_hdr h = {0};
	static const uint8_t none[1];

	h.magic = OR_WIRE_MAGIC;
	h.version = OR_WIRE_VERSION;
	h.flags = OR_WIRE_FLAG_CONTROL | OR_WIRE_FLAG_PROBE;
	h.comm_id = b->ch.comm->id;
	h.sender = b->ch.comm->rank;
	if (or_bd_send_datagram(b, NULL, OR_BD_GROUP, &h, none) < 0)
		or_log(OR_LOG_DEBUG, "multicast probe not sent: %s", or_dg_send_error(b->ep));
	h.offset = OR_WIRE_PROBE_UNICAST;
	for (uint32_t p = 0; p < b->ch.comm->size; p++)
		if (p != b->ch.comm->rank)
			or_bd_send_datagram(b, NULL, p, &h, none);
}

#define OR_PROBE_COPIES   3    /* a lost probe does not decide alone */
#define OR_PROBE_APART_US 1000 /* between copies */
#define OR_PROBE_LATE_MS  2000 /* longest wait for a rank that has not begun probing */

/*
 * Every rank joined before this (the names exchange is between): probes sent now reach every
 * member where multicast works.  Ranks leave the names exchange at different times (a loaded
 * host: tens of milliseconds), so a rank is waited for on the group until
 * multicast_probe_ms after its unicast copy came, which says it has begun; a rank not even
 * begun is waited for up to OR_PROBE_LATE_MS.
 */
uint32_t or_bounded_mcast_probe(struct or_bounded *b)
{
	double t0 = or_now_us(), grace = 1e3 * (double)or_bd_param_i(b, OR_P_MULTICAST_PROBE_MS);
	uint32_t heard = 0, begun = 0, others = b->ch.comm->size - 1;
	unsigned sent = 0;

	if (!b->mc.joined)
		return 0;
	for (;;) {
		double now = or_now_us(), last_begun;
		if (sent < OR_PROBE_COPIES && now >= t0 + sent * OR_PROBE_APART_US) {
			send_probe(b);
			sent++;
		}
		or_bounded_lock(b);
		or_bd_reap(b);
		or_bd_drain_ready(b);
		heard = b->mc.nheard;
		begun = b->mc.nbegun;
		last_begun = b->mc.begun_us;
		or_bounded_unlock(b);
		if (sent == OR_PROBE_COPIES &&
		    (heard >= others || (begun >= others && now >= last_begun + grace) ||
		     now >= t0 + 1e3 * OR_PROBE_LATE_MS))
			break;
		or_bd_sleep_us(200);
	}
	or_log(OR_LOG_DEBUG, "multicast probe: heard %u of %u ranks (%u began) in %.1f ms", heard,
	       others, begun, (or_now_us() - t0) / 1e3);
	return heard;
}

void or_bounded_mcast_use(struct or_bounded *b, int use, const char *why)
{
	char g[40];

	or_bounded_lock(b);
	b->mc.on = use && b->mc.joined;
	b->mc.share = 1.0 / (double)(b->ch.comm->size > 1 ? b->ch.comm->size - 1 : 1);
	b->mc.clean_ops = OR_MCAST_FIRST_TRY;
	if (b->mc.on) {
		snprintf(b->mc.why, sizeof(b->mc.why), "group %s, TTL 1",
		         group_str(b, g, sizeof(g)));
	} else {
		/* A rank that did not join keeps its own reason: the others' names it. */
		if (why && *why && b->mc.joined)
			snprintf(b->mc.why, sizeof(b->mc.why), "%s", why);
		pthread_mutex_lock(&b->ofi_lock);
		or_dg_group_leave(b->ep);
		pthread_mutex_unlock(&b->ofi_lock);
		b->mc.joined = 0;
	}
	or_bounded_unlock(b);
	or_log(b->mc.on || b->mc.want == OR_MCAST_OFF ? OR_LOG_DEBUG : OR_LOG_INFO,
	       "multicast %s: %s", b->mc.on ? "on" : "off", b->mc.why);
}

unsigned or_bounded_mcast_state(const struct or_bounded *b)
{
	if (!b)
		return 0;
	return OR_MCAST_PRESENT | ((unsigned)b->mc.want & OR_MCAST_WANT) |
	       (b->mc.joined ? OR_MCAST_JOINED : 0);
}

int or_bounded_mcast_describe(const struct or_bounded *b, char *buf, size_t len)
{
	snprintf(buf, len, "%s", b->mc.why[0] ? b->mc.why : "not decided");
	return b->mc.on;
}

