/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whether a bounded communicator uses multicast (docs/design.md, "Multicast").  Every rank
 * decides from the same facts, so that all take part in the same allgathers and end with the
 * same answer: first the members' states from the names exchange (parameter, joined), then,
 * when every member joined, how many ranks each heard in the probe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dgram/dgram.h"
#include "lib/bounded/bounded.h"
#include "multicast.h"

/* What one rank reports after the probe. */
struct probe_report {
	int32_t status;
	uint32_t heard;
	uint32_t member; /* has a bounded channel */
};

/* From the names exchange alone: 1 to probe, 0 not, with the reason in why. */
static int worth_probing(const struct optireduce_oob *oob, const uint8_t *state, int *on,
                         uint32_t *members, char *why, size_t len)
{
	int probe = 1;

	*on = 0;
	*members = 0;
	for (uint32_t i = 0; i < oob->size; i++) {
		unsigned s = state[i];
		if (!(s & OR_MCAST_PRESENT))
			continue;
		++*members;
		*on |= (s & OR_MCAST_WANT) == OR_MCAST_ON;
		if (probe && (s & OR_MCAST_WANT) == OR_MCAST_OFF) {
			snprintf(why, len, "rank %u has multicast off (parameter, or one host)", i);
			probe = 0;
		} else if (probe && !(s & OR_MCAST_JOINED)) {
			snprintf(why, len, "rank %u could not join the group (its log says why)",
			         i);
			probe = 0;
		}
	}
	if (*members < 2) {
		snprintf(why, len, "one host: nothing to multicast to");
		return 0;
	}
	return probe;
}

/* The probe and its verdicts: 1 when every member heard every other. */
static int probe_all(optireduce_comm_t *net, const struct optireduce_oob *oob, uint32_t members,
                     int *status, char *why, size_t len)
{
	struct or_bounded *b = net ? net->bounded : NULL;
	struct probe_report me = {*status, 0, b != NULL}, *all = calloc(oob->size, sizeof(me));
	int ok = 1;

	if (b && !*status)
		me.heard = or_bounded_mcast_probe(b);
	if (!all)
		me.status = -OPTIREDUCE_ENOMEM; /* the others wait in the allgather: tell them */
	if (!all || oob->allgather(&me, all, sizeof(me), oob->coll_info)) {
		free(all);
		*status = *status ? *status : (all ? -OPTIREDUCE_EOOB : -OPTIREDUCE_ENOMEM);
		return 0;
	}
	for (uint32_t i = 0; i < oob->size; i++) {
		if (all[i].status < 0 && !*status)
			*status = all[i].status;
		if (ok && all[i].member && all[i].heard + 1 < members) {
			snprintf(why, len, "rank %u heard %u of the other %u ranks on the group", i,
			         all[i].heard, members - 1);
			ok = 0;
		}
	}
	free(all);
	return ok;
}

int or_mcast_agree(optireduce_comm_t *net, const struct optireduce_oob *oob, const uint8_t *state,
                   int status)
{
	struct or_bounded *b = net ? net->bounded : NULL;
	char why[200] = "";
	uint32_t members;
	int on, use;

	use = worth_probing(oob, state, &on, &members, why, sizeof(why));
	if (use)
		use = probe_all(net, oob, members, &status, why, sizeof(why));
	if (status)
		return status;
	if (b)
		or_bounded_mcast_use(b, use, why);
	if (!use && on && members > 1) {
		or_log(OR_LOG_WARN, "parameter multicast is on, but multicast does not work: %s",
		       why);
		return -OPTIREDUCE_ENOTSUP;
	}
	return 0;
}

int optireduce_multicast_check(optireduce_ctx_t *ctx, char *buf, size_t len)
{
	struct or_dgram *d;
	uint32_t base, group;
	unsigned prefix;
	char why[256];
	int ret, n;

	if (!or_ctx_valid(ctx))
		return -OPTIREDUCE_EBADHANDLE;
	if (!buf || !len)
		return -OPTIREDUCE_EINVAL;
	if (or_bounded_mcast_range(or_param_str(&ctx->params, OR_P_MULTICAST_RANGE), &base,
	                           &prefix)) {
		n = snprintf(buf, len, "multicast_range is no IPv4 multicast range");
		return n >= 0 && (size_t)n < len ? 0 : -OPTIREDUCE_EOVERFLOW;
	}
	/* A group of the range no communicator of this process uses: its last address. */
	group = base | (prefix == 32 ? 0 : ~0u >> prefix);
	ret = or_ctx_open_dgram(ctx, 1, &d, why, sizeof(why), buf, len);
	if (ret)
		return ret == 1 ? 0 : ret;
	ret = or_dg_group_join(d, group, (uint16_t)(49152 + getpid() % 16384), 0, buf, len);
	if (!ret)
		n = snprintf(buf, len, "%s joined %u.%u.%u.%u on this host (%s)", or_dg_name(d),
		             group >> 24, (group >> 16) & 255, (group >> 8) & 255, group & 255,
		             or_dg_domain(d));
	else
		n = (int)strlen(buf);
	or_dg_close(d);
	return n >= 0 && (size_t)n < len ? ret == 0 : -OPTIREDUCE_EOVERFLOW;
}
